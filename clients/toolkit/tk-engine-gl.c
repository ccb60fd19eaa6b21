/* The gl engine: one EGL display and GLES2 context per app on the
 * platform's native display, one window surface per window on its native
 * window (a wayland-egl window, an X11 window), eglSwapInterval(0) so
 * drawing is never throttled to a refresh rate; tk-draw-gl.c draws. */
#include <stdio.h>
#include <stdlib.h>

#include "render.h"
#include "tk-private.h"

#include <EGL/eglext.h>

struct gl_app {
	EGLDisplay display;
	EGLConfig config;
	EGLContext context;
};

struct gl_window {
	EGLSurface surface;
	int width, height; /* the size EGL was last told */
};

static const char *egl_error(void)
{
	static char buf[32];
	snprintf(buf, sizeof(buf), "EGL error 0x%04x", (unsigned)eglGetError());
	return buf;
}

static int gl_init(struct tk_app *app)
{
	const struct tk_platform *platform = app->platform;
	PFNEGLGETPLATFORMDISPLAYEXTPROC get_platform_display =
		(PFNEGLGETPLATFORMDISPLAYEXTPROC)eglGetProcAddress("eglGetPlatformDisplayEXT");
	if (!get_platform_display) {
		fprintf(stderr, "EGL lacks eglGetPlatformDisplayEXT\n");
		return -1;
	}
	struct gl_app *e = calloc(1, sizeof(*e));
	if (!e)
		return -1;
	const EGLint *attribs = NULL;
	void *native = platform->native_display(app, &attribs);
	e->display = get_platform_display(platform->egl_platform, native, attribs);
	if (e->display == EGL_NO_DISPLAY || !eglInitialize(e->display, NULL, NULL)) {
		fprintf(stderr, "cannot initialise EGL on %s: %s\n", platform->name, egl_error());
		free(e);
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
	app->engine_data = e;
	return 0;
fail:
	render_keep_loaded(); /* the driver's static state stays reachable (render.h) */
	eglTerminate(e->display);
	free(e);
	return -1;
}

static void gl_fini(struct tk_app *app)
{
	struct gl_app *e = app->engine_data;
	if (!e)
		return;
	eglMakeCurrent(e->display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
	eglDestroyContext(e->display, e->context);
	/* eglTerminate dlcloses Mesa's driver; kept loaded, what it holds
	 * for the process stays reachable and LeakSanitizer reports only our
	 * own leaks (render_keep_loaded in render.h). */
	render_keep_loaded();
	eglTerminate(e->display);
	eglReleaseThread();
	free(e);
	app->engine_data = NULL;
}

static struct tk_draw *gl_begin_frame(struct tk_window *win)
{
	const struct tk_platform *platform = win->app->platform;
	struct gl_app *e = win->app->engine_data;
	struct gl_window *gw = win->engine_data;
	if (!gw) {
		gw = win->engine_data = calloc(1, sizeof(*gw));
		if (!gw)
			return NULL;
	}
	if (gw->surface == EGL_NO_SURFACE) {
		void *native = platform->native_window(win, win->width, win->height);
		if (!native)
			return NULL;
		gw->surface = eglCreatePlatformWindowSurface(e->display, e->config, native, NULL);
		if (gw->surface == EGL_NO_SURFACE) {
			fprintf(stderr, "cannot create an EGL window surface: %s\n", egl_error());
			return NULL;
		}
		gw->width = win->width;
		gw->height = win->height;
		if (!eglMakeCurrent(e->display, gw->surface, gw->surface, e->context)) {
			fprintf(stderr, "eglMakeCurrent failed: %s\n", egl_error());
			return NULL;
		}
		/* Unthrottled: the bench measures drawing, not the refresh rate. */
		eglSwapInterval(e->display, 0);
		win->draw = tk_draw_gl_create();
		if (!win->draw)
			return NULL;
	} else if (eglGetCurrentSurface(EGL_DRAW) != gw->surface) {
		eglMakeCurrent(e->display, gw->surface, gw->surface, e->context);
	}
	if (gw->width != win->width || gw->height != win->height) {
		/* Wayland: the next buffer gets the new size; X11: the window
		 * already has it and EGL follows. */
		if (platform->native_window_resize)
			platform->native_window_resize(win, win->width, win->height);
		gw->width = win->width;
		gw->height = win->height;
	}
	tk_draw_gl_begin(win->draw, win->width, win->height);
	return win->draw;
}

static int gl_present(struct tk_window *win)
{
	struct tk_app *app = win->app;
	struct gl_window *gw = win->engine_data;
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
	if (app->platform->connection_broken && app->platform->connection_broken(app)) {
		fprintf(stderr, "not swapping: the %s connection is broken\n", app->platform->name);
		return -1;
	}
	if (!eglSwapBuffers(((struct gl_app *)app->engine_data)->display, gw->surface)) {
		fprintf(stderr, "eglSwapBuffers failed: %s\n", egl_error());
		return -1;
	}
	return 0;
}

static void gl_window_fini(struct tk_window *win)
{
	const struct tk_platform *platform = win->app->platform;
	struct gl_app *e = win->app->engine_data;
	struct gl_window *gw = win->engine_data;
	if (gw && gw->surface != EGL_NO_SURFACE) {
		/* Images and the draw state live in the context: make it current
		 * with this surface one last time so they can be freed. */
		eglMakeCurrent(e->display, gw->surface, gw->surface, e->context);
		tk_window_free_drawing(win);
		eglMakeCurrent(e->display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
		eglDestroySurface(e->display, gw->surface);
	}
	if (platform->native_window_destroy)
		platform->native_window_destroy(win);
	/* Never drawn: its images made no texture yet. */
	tk_window_free_drawing(win);
	free(gw);
	win->engine_data = NULL;
}

const struct tk_engine tk_engine_gl = {
	.name = "gl",
	.path = "egl",
	.present_sends = true,
	.init = gl_init,
	.fini = gl_fini,
	.begin_frame = gl_begin_frame,
	.present = gl_present,
	.window_fini = gl_window_fini,
};
