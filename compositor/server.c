/* The server: display, renderer, output, globals and the listening socket,
 * created in dependency order and torn down in reverse. */
#include <stdlib.h>
#include <string.h>
#include <wayland-server-protocol.h>

#include "comp.h"
#include "xwayland.h"

#define BACKGROUND_ARGB 0xff202020u

/* How core's surfaces reach the layers above them (comp.h). */
static const struct comp_surface_listener surface_listener = {
	.surface_placed = comp_layout_update_surface,
	.scene_damaged = comp_layout_repaint_damaged,
	.pointer_scene_changed = comp_seat_pointer_refresh,
	.frames_wanted = comp_output_schedule_repaint,
};

static const struct comp_backend *find_backend(const char *name)
{
	if (!name || strcmp(name, comp_backend_headless.name) == 0)
		return &comp_backend_headless;
#ifdef DUET_HAVE_DRM
	if (strcmp(name, comp_backend_drm.name) == 0)
		return &comp_backend_drm;
#endif
	return NULL;
}

int comp_server_init(struct comp_server *server, const struct comp_options *options)
{
	memset(server, 0, sizeof(*server));
	server->options = *options;
	server->policy = &comp_policy_listener;
	server->surface_listener = &surface_listener;
	/* Windows, then X menus and tooltips above every window, as X stacks them. */
	comp_stack_add_layer(server, &comp_shell_windows_layer);
	if (options->xwayland)
		comp_stack_add_layer(server, &comp_xwayland_unmanaged_layer);
	if (!server->options.texture_budget)
		server->options.texture_budget = COMP_DEFAULT_TEXTURE_BUDGET;
	if (!server->options.client_texture_budget)
		server->options.client_texture_budget = COMP_DEFAULT_CLIENT_TEXTURE_BUDGET;
	wl_list_init(&server->surfaces);
	wl_list_init(&server->outputs);
	wl_list_init(&server->windows);
	wl_signal_init(&server->new_surface);
	wl_signal_init(&server->window_mapped);
	wl_signal_init(&server->window_unmapped);
	wl_signal_init(&server->output_presented);
	wl_signal_init(&server->keyboard_client_changed);

	const struct comp_backend *backend = find_backend(options->backend);
	if (!backend) {
		comp_log("unknown backend '%s'", options->backend);
		return -1;
	}

	server->display = wl_display_create();
	if (!server->display) {
		comp_log("wl_display_create failed");
		return -1;
	}
	server->loop = wl_display_get_event_loop(server->display);
	/* First, so that a missing Xwayland is the one line the server says
	 * before it refuses to start. */
	if (options->xwayland) {
		server->xwayland = comp_xwayland_create(server);
		if (!server->xwayland)
			goto fail;
	}
	comp_protocol_log_init(server);
	comp_client_log_init(server);
	if (options->trace_path && *options->trace_path &&
	    render_trace_open(options->trace_path, &server->trace) != 0)
		goto fail;

	server->backend = backend;
	if (options->pixman) {
		/* Scanout needs GBM buffers that only GL draws into. */
		if (backend->init) {
			comp_log("--renderer pixman: the %s backend needs --renderer gl", backend->name);
			goto fail;
		}
		comp_log("rendering with pixman %s (no EGL)", pixman_version_string());
		server->renderer = renderer_create_pixman();
	} else {
		if (backend->init) {
			if (backend->init(server) != 0)
				goto fail;
		} else {
			server->egl = render_egl_create_surfaceless();
		}
		if (!server->egl)
			goto fail;
		comp_log("rendering with %s", render_egl_describe(server->egl));
		server->renderer = renderer_create(server->egl);
	}
	if (!server->renderer) {
		comp_log("cannot create the renderer");
		goto fail;
	}
	/* Sized by the views that show it: the scene's own is empty. */
	server->scene = render_scene_create(server->renderer, 0, 0, BACKGROUND_ARGB);
	if (!server->scene)
		goto fail;
	int n = backend->output_count(server);
	if (n > COMP_MAX_OUTPUTS) {
		comp_log("%d outputs: using the first %d", n, COMP_MAX_OUTPUTS);
		n = COMP_MAX_OUTPUTS;
	}
	for (int i = 0; i < n; i++) {
		if (!comp_output_create(server, backend, i))
			goto fail;
	}
	if (wl_list_empty(&server->outputs)) {
		comp_log("%s backend: no output", backend->name);
		goto fail;
	}

	/* wl_shm with libwayland's own pool and buffer validation (sizes,
	 * strides, offsets against the pool). ARGB8888/XRGB8888 only. */
	if (wl_display_init_shm(server->display) != 0) {
		comp_log("wl_display_init_shm failed");
		goto fail;
	}
	comp_server_offers(server, wl_shm_interface.name, wl_shm_interface.version);
	comp_compositor_create(server);
	comp_subcompositor_create(server);
	comp_xdg_shell_create(server);
	comp_seat_create(server);
	comp_data_device_manager_create(server);
	comp_presentation_create(server);
	comp_viewporter_create(server);
	comp_xdg_output_create(server);
	comp_single_pixel_buffer_create(server);
	comp_linux_dmabuf_create(server);
	if (options->test_protocol)
		comp_test_protocol_create(server);

	if (options->no_listen) {
		/* The library's caller makes the clients. */
	} else if (options->socket) {
		if (wl_display_add_socket(server->display, options->socket) != 0) {
			comp_log("cannot listen on socket '%s' (in use, or XDG_RUNTIME_DIR unusable?)",
			         options->socket);
			goto fail;
		}
		server->socket_name = options->socket;
	} else {
		server->socket_name = wl_display_add_socket_auto(server->display);
		if (!server->socket_name) {
			comp_log("cannot create a Wayland socket in XDG_RUNTIME_DIR");
			goto fail;
		}
	}
	if (options->test_protocol) {
		server->test_socket_name = comp_test_access_init(server);
		if (!server->test_socket_name) {
			comp_log("cannot listen on the test socket");
			goto fail;
		}
	}
	if (server->xwayland)
		comp_xwayland_run(server->xwayland);
	return 0;

fail:
	comp_server_finish(server);
	return -1;
}

void comp_server_finish(struct comp_server *server)
{
	if (!server->display)
		return;
	/* Before the clients: Xwayland's is one, and its sources are on the
	 * display's loop. */
	comp_xwayland_destroy(server->xwayland);
	server->xwayland = NULL;
	/* Clients first: their resources' destructors still use the output,
	 * the scene and the renderer. */
	wl_display_destroy_clients(server->display);
	comp_seat_destroy(server);
	while (!wl_list_empty(&server->outputs))
		comp_output_destroy(comp_layout_first_output(server));
	if (server->scene)
		render_scene_destroy(server->scene);
	server->scene = NULL;
	if (server->renderer)
		renderer_destroy(server->renderer);
	server->renderer = NULL;
	if (server->egl)
		render_egl_destroy(server->egl);
	server->egl = NULL;
	/* The device goes after the EGL display that uses it. */
	if (server->backend && server->backend->finish)
		server->backend->finish(server);
	server->backend = NULL;
	wl_display_destroy(server->display);
	server->display = NULL;
	comp_linux_dmabuf_finish(server);
	render_trace_close(server->trace);
	server->trace = NULL;
}
