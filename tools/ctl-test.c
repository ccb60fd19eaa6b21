#include "ctl-test.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "duet-test-client-protocol.h"

static const struct duet_test_listener test_listener;

/* While binding, t->version holds the highest version the caller knows. */
static void handle_global(void *data, struct wl_registry *registry, uint32_t name,
                          const char *interface, uint32_t version)
{
	struct ctl_test *t = data;
	if (t->list_globals)
		printf("%s %u\n", interface, version);
	if (strcmp(interface, duet_test_interface.name) == 0 && !t->test) {
		t->version = version < t->version ? version : t->version;
		t->test = wl_registry_bind(registry, name, &duet_test_interface, t->version);
		duet_test_add_listener(t->test, &test_listener, t);
	}
}

static void handle_global_remove(void *data, struct wl_registry *registry, uint32_t name)
{
}

static const struct wl_registry_listener registry_listener = {
	.global = handle_global,
	.global_remove = handle_global_remove,
};

int ctl_test_bind(struct ctl_test *t, uint32_t max_version)
{
	t->version = max_version;
	t->registry = wl_display_get_registry(t->display);
	wl_registry_add_listener(t->registry, &registry_listener, t);
	return wl_display_roundtrip(t->display);
}

/* ------------------------------------------------------------- events */

static void handle_window(void *data, struct duet_test *test, uint32_t id, int32_t pid,
                          int32_t x, int32_t y, int32_t width, int32_t height, uint32_t focused,
                          const char *app_id, const char *title)
{
	struct ctl_test *t = data;
	struct ctl_window *grown = realloc(t->windows, (t->n_windows + 1) * sizeof(*grown));
	if (!grown) {
		fprintf(stderr, "%s: out of memory\n", program_invocation_short_name);
		exit(1);
	}
	t->windows = grown;
	t->windows[t->n_windows++] = (struct ctl_window){
		.id = id, .pid = pid, .x = x, .y = y, .width = width, .height = height,
		.focused = focused,
		.app_id = app_id ? strdup(app_id) : NULL,
		.title = title ? strdup(title) : NULL,
	};
}

static void handle_windows_done(void *data, struct duet_test *test)
{
	struct ctl_test *t = data;
	t->windows_done = true;
}

static void handle_screenshot_done(void *data, struct duet_test *test, int32_t width,
                                   int32_t height)
{
	struct ctl_test *t = data;
	t->shot = (struct ctl_shot){ .done = true, .width = width, .height = height };
}

static const struct duet_test_listener test_listener = {
	.window = handle_window,
	.windows_done = handle_windows_done,
	.screenshot_done = handle_screenshot_done,
};

void ctl_test_windows_clear(struct ctl_test *t)
{
	for (size_t i = 0; i < t->n_windows; i++) {
		free(t->windows[i].app_id);
		free(t->windows[i].title);
	}
	free(t->windows);
	t->windows = NULL;
	t->n_windows = 0;
	t->windows_done = false;
}

void ctl_test_close(struct ctl_test *t)
{
	ctl_test_windows_clear(t);
	/* On a failed connection too: the request is not sent, but the
	 * destructor still frees the proxy. */
	if (t->test)
		duet_test_destroy(t->test);
	if (t->registry)
		wl_registry_destroy(t->registry);
	wl_display_disconnect(t->display);
}
