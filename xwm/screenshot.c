/* Screenshots: the --screenshot FILE of the command line (on exit and on
 * SIGUSR1), and the _DUET_SCREENSHOT client message, which any X client
 * can send.
 *
 * duet-xwm runs as its user (root in CI), so a client must not choose
 * where it writes: _DUET_SCREENSHOT is refused unless duet-xwm was started
 * with --screenshot-dir DIR, and then it only creates a new file in DIR,
 * named by the client with a plain file name (no '/', not starting with
 * '.'). The file is created with openat() on a descriptor of DIR opened at
 * start, with O_CREAT | O_EXCL | O_NOFOLLOW: a name that already exists,
 * a symlink planted there included, is refused, so nothing outside DIR
 * and nothing already in it is ever written. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "xwm.h"

bool xwm_screenshot_name_ok(const char *name)
{
	size_t len = strlen(name);

	if (len == 0 || len > NAME_MAX || name[0] == '.')
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];
		if (c == '/' || c < 0x20 || c == 0x7f)
			return false;
	}
	return true;
}

int xwm_screenshot_dir_open(struct xwm_cm *cm, const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		xwm_log("--screenshot-dir %s: %s", dir, strerror(errno));
		return -1;
	}
	/* Published on the check window for duet-xctl, which moves the
	 * file where its caller wants it (props.c). */
	cm->screenshot_dir_path = realpath(dir, NULL);
	if (!cm->screenshot_dir_path) {
		xwm_log("--screenshot-dir %s: %s", dir, strerror(errno));
		close(fd);
		return -1;
	}
	cm->screenshot_dir_fd = fd;
	return 0;
}

void xwm_screenshot_dir_close(struct xwm_cm *cm)
{
	if (cm->screenshot_dir_fd >= 0)
		close(cm->screenshot_dir_fd);
	cm->screenshot_dir_fd = -1;
	free(cm->screenshot_dir_path);
	cm->screenshot_dir_path = NULL;
}

/* Writes the last composited frame (after finishing any frame in
 * progress, so that everything handled so far is in it). path comes from
 * the command line, never from a client. */
int xwm_screenshot(struct xwm_cm *cm, const char *path)
{
	if (!cm->target)
		return -1;
	xwm_repaint_now(cm);
	int ret = render_target_write_png(cm->target, path);
	if (ret == 0)
		xwm_log("screenshot written to %s", path);
	else
		xwm_log("screenshot to %s failed", path);
	return ret;
}

int xwm_screenshot_to_dir(struct xwm_cm *cm, const char *name)
{
	if (cm->screenshot_dir_fd < 0) {
		xwm_log("_DUET_SCREENSHOT refused: duet-xwm runs without --screenshot-dir");
		return -1;
	}
	if (!xwm_screenshot_name_ok(name)) {
		xwm_log("_DUET_SCREENSHOT refused: \"%s\" is not a plain file name in the "
		        "screenshot directory", name);
		return -1;
	}
	if (!cm->target)
		return -1;
	int fd = openat(cm->screenshot_dir_fd, name,
	                O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0) {
		xwm_log("_DUET_SCREENSHOT refused: cannot create %s in %s: %s", name,
		        cm->screenshot_dir_path, strerror(errno));
		return -1;
	}
	xwm_repaint_now(cm);
	int ret = render_target_write_png_fd(cm->target, fd);
	if (close(fd) != 0)
		ret = -1;
	if (ret == 0) {
		xwm_log("screenshot written to %s/%s", cm->screenshot_dir_path, name);
	} else {
		xwm_log("screenshot to %s/%s failed", cm->screenshot_dir_path, name);
		unlinkat(cm->screenshot_dir_fd, name, 0);
	}
	return ret;
}
