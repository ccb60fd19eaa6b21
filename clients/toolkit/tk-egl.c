/* The GL engine's EGL side: one display and GLES2 context per app, one
 * window surface per window (wayland-egl window or X11 window), and
 * eglSwapInterval(0) so drawing is never throttled to a refresh rate. */
#include <stdio.h>

#include "render.h"
#include "tk-private.h"

#include <EGL/eglext.h>

static const char *egl_error(void)
{
	static char buf[32];
	snprintf(buf, sizeof(buf), "EGL error 0x%04x", (unsigned)eglGetError());
	return buf;
}

int tk_egl_init(struct tk_app *app)
{
	struct tk_egl *e = &app->egl;
	PFNEGLGETPLATFORMDISPLAYEXTPROC get_platform_display =
		(PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress("eglGetPlatformDisplayEXT");
	const EGLint xcb_attribs[] = { EGL_PLATFORM_XCB_SCREEN_EXT, app->egl_screen, EGL_NONE };
	const EGLint *attribs = app->backend->egl_platform == EGL_PLATFORM_XCB_EXT ? xcb_attribs : NULL;
	if (!get_platform_display) {
		fprintf(stderr, "EGL lacks eglGetPlatformDisplayEXT\n");
		return -1;
	}
	e->display = get_platform_display(app->backend->egl_platform,
	                                  app->backend->egl_native_display(app), attribs);
	if (e->display == EGL_NO_DISPLAY || !eglInitialize(e->display, NULL, NULL)) {
		fprintf(stderr, "cannot initialise EGL on %s: %s\n", app->backend->name, egl_error());
		return -1;
	}
	if (!eglBindAPI(EGL_OPENGL_ES_API)) {
		fprintf(stderr, "EGL has no OpenGL ES: %s\n", egl_error());
		goto fail;
	}
	static const EGLint config_attribs[] = {
		EGL_SURFACE_TYPE, EGL_WINDOW_BIT,
		EGL_RED_SIZE, 8, EGL_GREEN_SIZE, 8, EGL_BLUE_SIZE, 8,
		EGL_RENDERABLE_TYPE, EGL_OPENGL_ES2_BIT,
		EGL_NONE,
	};
	EGLConfig configs[64];
	EGLint n = 0;
	if (!eglChooseConfig(e->display, config_attribs, configs, 64, &n) || n < 1) {
		fprintf(stderr, "no EGL config for a GLES2 window: %s\n", egl_error());
		goto fail;
	}
	/* Prefer an opaque 24-bit config (what an X11 default visual matches);
	 * the apps draw opaque windows. */
	e->config = configs[0];
	for (EGLint i = 0; i < n; i++) {
		EGLint a = 0, r = 0;
		eglGetConfigAttrib(e->display, configs[i], EGL_ALPHA_SIZE, &a);
		eglGetConfigAttrib(e->display, configs[i], EGL_RED_SIZE, &r);
		if (a == 0 && r == 8) {
			e->config = configs[i];
			break;
		}
	}
	static const EGLint context_attribs[] = { EGL_CONTEXT_CLIENT_VERSION, 2, EGL_NONE };
	e->context = eglCreateContext(e->display, e->config, EGL_NO_CONTEXT, context_attribs);
	if (e->context == EGL_NO_CONTEXT) {
		fprintf(stderr, "cannot create a GLES2 context: %s\n", egl_error());
		goto fail;
	}
	app->egl_ready = true;
	return 0;
fail:
	render_keep_loaded(); /* the driver's static state stays reachable (render.h) */
	eglTerminate(e->display);
	e->display = EGL_NO_DISPLAY;
	return -1;
}

void tk_egl_fini(struct tk_app *app)
{
	struct tk_egl *e = &app->egl;
	if (!app->egl_ready)
		return;
	eglMakeCurrent(e->display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
	eglDestroyContext(e->display, e->context);
	/* eglTerminate dlcloses Mesa's driver; kept loaded, what it holds
	 * for the process stays reachable and LeakSanitizer reports only our
	 * own leaks (render_keep_loaded in render.h). */
	render_keep_loaded();
	eglTerminate(e->display);
	eglReleaseThread();
	app->egl_ready = false;
}

struct tk_draw *tk_egl_begin(struct tk_window *win)
{
	struct tk_app *app = win->app;
	struct tk_egl *e = &app->egl;
	if (win->egl_surface == EGL_NO_SURFACE) {
		void *native = app->backend->egl_native_window(win, win->width, win->height);
		if (!native)
			return NULL;
		win->egl_surface = eglCreatePlatformWindowSurface(e->display, e->config, native, NULL);
		if (win->egl_surface == EGL_NO_SURFACE) {
			fprintf(stderr, "cannot create an EGL window surface: %s\n", egl_error());
			return NULL;
		}
		win->egl_width = win->width;
		win->egl_height = win->height;
		if (!eglMakeCurrent(e->display, win->egl_surface, win->egl_surface, e->context)) {
			fprintf(stderr, "eglMakeCurrent failed: %s\n", egl_error());
			return NULL;
		}
		/* Unthrottled: the bench measures drawing, not the refresh rate. */
		eglSwapInterval(e->display, 0);
		win->draw = tk_draw_gl_create();
		if (!win->draw)
			return NULL;
	} else if (eglGetCurrentSurface(EGL_DRAW) != win->egl_surface) {
		eglMakeCurrent(e->display, win->egl_surface, win->egl_surface, e->context);
	}
	if (win->egl_width != win->width || win->egl_height != win->height) {
		/* Wayland: the next buffer gets the new size; X11: the window
		 * already has it and EGL follows. */
		if (app->backend->egl_window_resize)
			app->backend->egl_window_resize(win, win->width, win->height);
		win->egl_width = win->width;
		win->egl_height = win->height;
	}
	tk_draw_gl_begin(win->draw, win->width, win->height);
	return win->draw;
}

int tk_egl_swap(struct tk_window *win)
{
	struct tk_app *app = win->app;
	/* Never swap on a broken connection. With Mesa 22.3's software X11
	 * path (llvmpipe without DRI3, as under Xvfb) such a swap does not
	 * return for 2^32 no-op requests: once the connection is broken,
	 * Mesa's GetGeometry fails, the drawable reads as 0x0 and the back
	 * buffer made for it reaches PutImage 16 pixels (64 bytes) wide,
	 * and swrastPutImage (src/egl/drivers/dri2/platform_x11.c) splits
	 * the image by xcb_get_maximum_request_length(), 0 on a broken
	 * connection: (0 * 4 - 24) / 64 in 64 bits truncates to an int strip
	 * height of -1, and its loop counts y_todo up through all of int
	 * before it comes back to 0. Each xcb_put_image returns at once, so
	 * the thread spins in user space: about 30 s natively, minutes under
	 * qemu-user. apps-x11-server-dies-gl met it under qemu-user, where
	 * Xvfb died during duet-render's slow first (untimed) frame and the
	 * app drew on; tests/clients/x11-swap-after-loss.c swaps after a loss
	 * on purpose. Only the app's thread uses the connection and nothing
	 * in the swap talks to the server before that PutImage, so the
	 * connection cannot break between this check and the loop's bound. */
	if (app->backend->egl_connection_broken && app->backend->egl_connection_broken(app)) {
		fprintf(stderr, "not swapping: the %s connection is broken\n", app->backend->name);
		return -1;
	}
	if (!eglSwapBuffers(win->app->egl.display, win->egl_surface)) {
		fprintf(stderr, "eglSwapBuffers failed: %s\n", egl_error());
		return -1;
	}
	return 0;
}

void tk_egl_window_fini(struct tk_window *win)
{
	struct tk_app *app = win->app;
	if (!app->egl_ready)
		return;
	if (win->egl_surface != EGL_NO_SURFACE) {
		/* Images and the draw state live in the context: make it current
		 * with this surface one last time so they can be freed. */
		eglMakeCurrent(app->egl.display, win->egl_surface, win->egl_surface, app->egl.context);
		while (win->images)
			tk_image_destroy(win->images);
		if (win->draw) {
			win->draw->ops->destroy(win->draw);
			win->draw = NULL;
		}
		eglMakeCurrent(app->egl.display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
		eglDestroySurface(app->egl.display, win->egl_surface);
		win->egl_surface = EGL_NO_SURFACE;
	}
	if (app->backend->egl_window_destroy)
		app->backend->egl_window_destroy(win);
}
