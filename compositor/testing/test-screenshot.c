/* duet_test.screenshot without blocking the event loop.
 *
 * The PNG is encoded into memory when the request arrives (the frame it
 * shows is the one presented then), and written to the client's fd only as
 * fast as its reader takes it: non-blocking writes, resumed by a
 * writable-fd event source. A client that reads its pipe late, or never,
 * holds a buffer of its own and nothing else; everyone else's frames go on.
 * screenshot_done follows the last byte; a reader that closes early is a
 * bad_fd error, as a read-only fd is.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "comp.h"
#include "duet-test-server-protocol.h"

/* PNGs in flight per duet_test object; each holds up to a frame's worth
 * of memory until its reader catches up. */
#define MAX_SCREENSHOTS_IN_FLIGHT 4

struct screenshot_job {
	struct wl_list link; /* the duet_test object's list */
	struct wl_resource *resource;
	int fd;
	uint8_t *data;
	size_t len, written;
	int width, height;
	struct wl_event_source *source;
};

static void job_free(struct screenshot_job *job)
{
	wl_list_remove(&job->link);
	if (job->source)
		wl_event_source_remove(job->source);
	close(job->fd);
	free(job->data);
	free(job);
}

/* Writes what the fd takes now: 1 all written, 0 would block, -1 error. */
static int job_write(struct screenshot_job *job)
{
	while (job->written < job->len) {
		ssize_t n = write(job->fd, job->data + job->written, job->len - job->written);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n <= 0)
			return -1;
		job->written += (size_t)n;
	}
	return 1;
}

static void job_finish(struct screenshot_job *job, int status)
{
	struct wl_resource *resource = job->resource;
	int width = job->width, height = job->height;
	int err = errno;
	job_free(job);
	if (status > 0) {
		duet_test_send_screenshot_done(resource, width, height);
		return;
	}
	wl_resource_post_error(resource, DUET_TEST_ERROR_BAD_FD,
	                       "duet_test.screenshot: writing the PNG failed: %s",
	                       status < 0 ? strerror(err) : "cannot wait for the fd");
}

static int handle_writable(int fd, uint32_t mask, void *data)
{
	struct screenshot_job *job = data;
	int status = job_write(job);
	if (status != 0)
		job_finish(job, status);
	return 0;
}

void comp_test_screenshot_start(struct wl_resource *resource, struct wl_list *jobs,
                                struct comp_output *output, int fd)
{
	int flags = fcntl(fd, F_GETFL);
	int mode = flags & O_ACCMODE;
	if (flags < 0 || (mode != O_WRONLY && mode != O_RDWR)) {
		close(fd);
		wl_resource_post_error(resource, DUET_TEST_ERROR_BAD_FD,
		                       "duet_test.screenshot: fd is not open for writing");
		return;
	}
	if (wl_list_length(jobs) >= MAX_SCREENSHOTS_IN_FLIGHT) {
		close(fd);
		wl_resource_post_error(resource, DUET_TEST_ERROR_BAD_FD,
		                       "duet_test.screenshot: %d screenshots already in flight",
		                       MAX_SCREENSHOTS_IN_FLIGHT);
		return;
	}
	struct screenshot_job *job = calloc(1, sizeof(*job));
	if (!job) {
		close(fd);
		wl_client_post_no_memory(wl_resource_get_client(resource));
		return;
	}
	job->resource = resource;
	job->fd = fd;
	job->width = output->width;
	job->height = output->height;
	wl_list_insert(jobs->prev, &job->link);
	if (comp_output_encode_png(output, &job->data, &job->len) != 0) {
		job_free(job);
		wl_resource_post_error(resource, DUET_TEST_ERROR_BAD_FD,
		                       "duet_test.screenshot: reading or encoding the frame failed");
		return;
	}
	/* The client handed this open file description over to be written;
	 * O_NONBLOCK on it only changes writes through it. Regular files ignore
	 * the flag and never make us wait for a reader. */
	if (fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) {
		job_finish(job, -1);
		return;
	}
	int status = job_write(job);
	if (status != 0) {
		job_finish(job, status);
		return;
	}
	job->source = wl_event_loop_add_fd(output->server->loop, fd, WL_EVENT_WRITABLE,
	                                   handle_writable, job);
	if (!job->source)
		job_finish(job, 0);
}

void comp_test_screenshot_cancel_all(struct wl_list *jobs)
{
	struct screenshot_job *job, *tmp;
	wl_list_for_each_safe(job, tmp, jobs, link)
		job_free(job);
}
