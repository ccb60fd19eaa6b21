/* A client of duet_test (protocol/duet-test.xml) as duet-testctl and
 * tests/clients' duet-late-screenshot use it: the global bound, then the
 * window list and a screenshot's end as their events come in. */
#ifndef DUET_CTL_TEST_H
#define DUET_CTL_TEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <wayland-client.h>

struct ctl_window {
	uint32_t id;
	int32_t pid, x, y, width, height;
	uint32_t focused;
	char *app_id, *title; /* NULL when unset */
};

/* duet_test.screenshot_done: the PNG is written, of a frame this size. */
struct ctl_shot {
	bool done;
	int32_t width, height;
};

struct ctl_test {
	struct wl_display *display;
	struct wl_registry *registry;
	struct duet_test *test; /* NULL where the compositor offers none */
	uint32_t version;       /* the version bound */
	bool list_globals;      /* print every global ("interface version") */
	/* duet_test.list_windows' answer, topmost first, and its end. */
	struct ctl_window *windows;
	size_t n_windows;
	bool windows_done;
	struct ctl_shot shot;
};

/* Binds the first duet_test global of t->display, at most at max_version,
 * in one round trip: that round trip's result. */
int ctl_test_bind(struct ctl_test *t, uint32_t max_version);

/* Forgets the windows listed so far. */
void ctl_test_windows_clear(struct ctl_test *t);

/* Frees what ctl_test_bind made (on a failed connection too) and
 * disconnects. */
void ctl_test_close(struct ctl_test *t);

#endif
