/* EGL on the platform an output is on, with a GLES2 context that is made
 * current without any surface (EGL_KHR_surfaceless_context): Mesa's
 * surfaceless platform for headless outputs and tests, X11 for duet-xwm's
 * overlay window, GBM for duet-compositor's KMS output. The caller owns the
 * platform's native display (an Xlib Display, a gbm_device) and passes it
 * as EGL takes it, so render/ includes no header of X or GBM. Offscreen
 * targets are framebuffer objects, so no pbuffer or window is needed; a
 * window target binds its surface when it draws (target-window.c).
 *
 * On X11 and GBM the config is the window config whose native visual the
 * caller names (an X visual, a GBM fourcc such as XRGB8888): the context is
 * tied to it, and GBM buffers can go on a plane as they are. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render-private.h"

#ifndef EGL_PLATFORM_SURFACELESS_MESA
#define EGL_PLATFORM_SURFACELESS_MESA 0x31DD
#endif
#ifndef EGL_PLATFORM_X11_KHR
#define EGL_PLATFORM_X11_KHR 0x31D5
#endif
#ifndef EGL_PLATFORM_GBM_KHR
#define EGL_PLATFORM_GBM_KHR 0x31D7
#endif
#ifndef EGL_NO_CONFIG_KHR
#define EGL_NO_CONFIG_KHR ((EGLConfig)0)
#endif

static const char *egl_error_string(EGLint err)
{
	switch (err) {
	case EGL_SUCCESS: return "EGL_SUCCESS";
	case EGL_NOT_INITIALIZED: return "EGL_NOT_INITIALIZED";
	case EGL_BAD_ACCESS: return "EGL_BAD_ACCESS";
	case EGL_BAD_ALLOC: return "EGL_BAD_ALLOC";
	case EGL_BAD_ATTRIBUTE: return "EGL_BAD_ATTRIBUTE";
	case EGL_BAD_CONFIG: return "EGL_BAD_CONFIG";
	case EGL_BAD_CONTEXT: return "EGL_BAD_CONTEXT";
	case EGL_BAD_DISPLAY: return "EGL_BAD_DISPLAY";
	case EGL_BAD_MATCH: return "EGL_BAD_MATCH";
	case EGL_BAD_PARAMETER: return "EGL_BAD_PARAMETER";
	case EGL_BAD_SURFACE: return "EGL_BAD_SURFACE";
	default: return "EGL error";
	}
}

static void log_egl_failure(const char *what)
{
	EGLint err = eglGetError();
	render_log("%s failed: %s (0x%x)", what, egl_error_string(err), (unsigned)err);
}

/* The config of a context that only renders into framebuffer objects. */
static bool choose_config(struct render_egl *egl)
{
	static const EGLint attribs[] = {
		EGL_RENDERABLE_TYPE, EGL_OPENGL_ES2_BIT,
		EGL_RED_SIZE, 8, EGL_GREEN_SIZE, 8, EGL_BLUE_SIZE, 8,
		EGL_NONE,
	};
	EGLint n = 0;
	const char *exts = eglQueryString(egl->display, EGL_EXTENSIONS);

	/* With EGL_KHR_no_config_context the context is not tied to a config;
	 * it renders only into FBOs anyway. */
	if (render_extension_in_list(exts, "EGL_KHR_no_config_context")) {
		egl->config = EGL_NO_CONFIG_KHR;
		return true;
	}
	if (!eglChooseConfig(egl->display, attribs, &egl->config, 1, &n) || n < 1) {
		log_egl_failure("eglChooseConfig (GLES2, RGB888)");
		return false;
	}
	return true;
}

static bool config_matches(EGLDisplay dpy, EGLConfig config, uint32_t visual_id,
                           EGLint *surface_type, EGLint *alpha)
{
	EGLint vid = 0;

	if (!eglGetConfigAttrib(dpy, config, EGL_NATIVE_VISUAL_ID, &vid) ||
	    !eglGetConfigAttrib(dpy, config, EGL_SURFACE_TYPE, surface_type) ||
	    !eglGetConfigAttrib(dpy, config, EGL_ALPHA_SIZE, alpha))
		return false;
	return visual_id == 0 || (uint32_t)vid == visual_id;
}

/* Best config for a window surface of native visual visual_id (an X visual,
 * a GBM format): no alpha (outputs are opaque), with
 * EGL_SWAP_BEHAVIOR_PRESERVED_BIT when one has it, because that lets a
 * frame repaint only its damage (see target-window.c). */
static bool choose_window_config(struct render_egl *egl, uint32_t visual_id)
{
	static const EGLint attribs[] = {
		EGL_SURFACE_TYPE, EGL_WINDOW_BIT,
		EGL_RENDERABLE_TYPE, EGL_OPENGL_ES2_BIT,
		EGL_RED_SIZE, 8, EGL_GREEN_SIZE, 8, EGL_BLUE_SIZE, 8,
		EGL_NONE,
	};
	EGLConfig configs[128];
	EGLint n = 0;
	int best = -1, best_score = -1;

	if (!eglChooseConfig(egl->display, attribs, configs, 128, &n) || n < 1) {
		render_log("eglChooseConfig (GLES2 window, RGB888) found nothing: 0x%x",
		           (unsigned)eglGetError());
		return false;
	}
	for (int i = 0; i < n; i++) {
		EGLint surface_type = 0, alpha = 0;
		if (!config_matches(egl->display, configs[i], visual_id, &surface_type, &alpha))
			continue;
		int score = (alpha == 0 ? 2 : 0) +
		            ((surface_type & EGL_SWAP_BEHAVIOR_PRESERVED_BIT) ? 1 : 0);
		if (score > best_score) {
			best = i;
			best_score = score;
		}
	}
	if (best < 0) {
		render_log("no EGL config for native visual 0x%x", (unsigned)visual_id);
		return false;
	}
	egl->config = configs[best];
	return true;
}

/* What each platform is to EGL. The KHR and EXT/MESA platform enums are
 * the same values; either client extension provides them. */
static const struct platform {
	EGLenum platform;
	const char *label;
	const char *extension[2];
	bool window_config; /* tied to the caller's native visual */
	/* A GBM display holds the caller's gbm_device, which the caller
	 * destroys after us (render_egl_destroy). */
	bool terminate;
} platforms[] = {
	[RENDER_EGL_SURFACELESS] = { EGL_PLATFORM_SURFACELESS_MESA, "surfaceless",
	                             { "EGL_MESA_platform_surfaceless", NULL }, false, false },
	[RENDER_EGL_X11] = { EGL_PLATFORM_X11_KHR, "on X11",
	                     { "EGL_KHR_platform_x11", "EGL_EXT_platform_x11" }, true, false },
	[RENDER_EGL_GBM] = { EGL_PLATFORM_GBM_KHR, "on GBM",
	                     { "EGL_KHR_platform_gbm", "EGL_MESA_platform_gbm" }, true, true },
};

static bool platform_supported(const struct platform *p)
{
	const char *client_exts = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);

	if (render_extension_in_list(client_exts, "EGL_EXT_platform_base"))
		for (int i = 0; i < 2; i++)
			if (p->extension[i] && render_extension_in_list(client_exts, p->extension[i]))
				return true;
	render_log("EGL lacks EGL_EXT_platform_base or the %s platform (client extensions: %s)",
	           p->label, client_exts ? client_exts : "none");
	return false;
}

struct render_egl *render_egl_create(enum render_egl_platform platform, void *native_display,
                                     uint32_t native_visual)
{
	PFNEGLGETPLATFORMDISPLAYEXTPROC get_platform_display;
	EGLint major, minor;
	struct render_egl *egl;
	static const EGLint context_attribs[] = {
		EGL_CONTEXT_CLIENT_VERSION, 2,
		EGL_NONE,
	};

	if ((unsigned)platform >= sizeof(platforms) / sizeof(platforms[0])) {
		render_log("render_egl_create: no EGL platform %d", (int)platform);
		return NULL;
	}
	const struct platform *p = &platforms[platform];
	if (!platform_supported(p))
		return NULL;
	get_platform_display = (PFNEGLGETPLATFORMDISPLAYEXTPROC)
		eglGetProcAddress("eglGetPlatformDisplayEXT");
	if (!get_platform_display) {
		render_log("eglGetPlatformDisplayEXT not found");
		return NULL;
	}
	egl = calloc(1, sizeof(*egl));
	if (!egl)
		return NULL;
	egl->context = EGL_NO_CONTEXT;
	egl->label = p->label;
	egl->display = get_platform_display(p->platform, native_display ? native_display
	                                                                : EGL_DEFAULT_DISPLAY,
	                                    NULL);
	if (egl->display == EGL_NO_DISPLAY) {
		log_egl_failure("eglGetPlatformDisplayEXT");
		free(egl);
		return NULL;
	}
	if (!eglInitialize(egl->display, &major, &minor)) {
		log_egl_failure("eglInitialize");
		free(egl);
		return NULL;
	}
	egl->terminate = p->terminate;
	/* render/ keeps its context current between frames and binds FBOs for
	 * offscreen work, which needs surfaceless contexts on every platform. */
	if (!render_extension_in_list(eglQueryString(egl->display, EGL_EXTENSIONS),
	                              "EGL_KHR_surfaceless_context")) {
		render_log("EGL_KHR_surfaceless_context missing (%s)", p->label);
		goto fail;
	}
	if (!eglBindAPI(EGL_OPENGL_ES_API)) {
		log_egl_failure("eglBindAPI(GLES)");
		goto fail;
	}
	if (!(p->window_config ? choose_window_config(egl, native_visual) : choose_config(egl)))
		goto fail;
	egl->context = eglCreateContext(egl->display, egl->config, EGL_NO_CONTEXT,
	                                context_attribs);
	if (egl->context == EGL_NO_CONTEXT) {
		log_egl_failure("eglCreateContext(GLES2)");
		goto fail;
	}
	if (!eglMakeCurrent(egl->display, EGL_NO_SURFACE, EGL_NO_SURFACE, egl->context)) {
		log_egl_failure("eglMakeCurrent(no surface)");
		goto fail;
	}
	/* Fences let a frame be flushed and checked later instead of waited
	 * for (render_target_flush); a display without them still works. */
	if (render_extension_in_list(eglQueryString(egl->display, EGL_EXTENSIONS),
	                             "EGL_KHR_fence_sync")) {
		egl->create_sync = (PFNEGLCREATESYNCKHRPROC)eglGetProcAddress("eglCreateSyncKHR");
		egl->destroy_sync = (PFNEGLDESTROYSYNCKHRPROC)eglGetProcAddress("eglDestroySyncKHR");
		egl->client_wait_sync =
			(PFNEGLCLIENTWAITSYNCKHRPROC)eglGetProcAddress("eglClientWaitSyncKHR");
		if (!egl->create_sync || !egl->destroy_sync || !egl->client_wait_sync)
			egl->create_sync = NULL;
	}
	snprintf(egl->description, sizeof(egl->description), "%s / %s / %s",
	         (const char *)glGetString(GL_VENDOR), (const char *)glGetString(GL_RENDERER),
	         (const char *)glGetString(GL_VERSION));
	render_log("EGL %d.%d %s: %s", major, minor, p->label, egl->description);
	return egl;

fail:
	render_egl_destroy(egl);
	return NULL;
}

struct render_egl *render_egl_create_surfaceless(void)
{
	return render_egl_create(RENDER_EGL_SURFACELESS, NULL, 0);
}

void render_egl_destroy(struct render_egl *egl)
{
	if (!egl)
		return;
	if (egl->display != EGL_NO_DISPLAY) {
		eglMakeCurrent(egl->display, EGL_NO_SURFACE, EGL_NO_SURFACE, EGL_NO_CONTEXT);
		if (egl->context != EGL_NO_CONTEXT)
			eglDestroyContext(egl->display, egl->context);
		/* A GBM display holds the caller's gbm_device, which the caller
		 * destroys after us: Mesa's own atexit cleanup of a display
		 * left initialised would then use freed memory. The device's
		 * destruction dlcloses the driver: kept loaded (render.h), what
		 * the driver holds for the process stays reachable. */
		if (egl->terminate) {
			render_keep_loaded();
			eglTerminate(egl->display);
		}
		/* No eglTerminate: the platform display is a per-process
		 * singleton that exit() reclaims, and terminating it makes Mesa
		 * dlclose its driver, whose static state (llvmpipe keeps some
		 * after any draw) LeakSanitizer then reports as leaked. Skipping
		 * it keeps our ASan runs able to find leaks of our own; a later
		 * eglInitialize on the same display simply succeeds again. */
	}
	eglReleaseThread();
	free(egl);
}

const char *render_egl_describe(const struct render_egl *egl)
{
	return egl->description;
}

bool render_egl_has_extension(const struct render_egl *egl, const char *name)
{
	if (strncmp(name, "EGL_", 4) == 0)
		return render_extension_in_list(eglQueryString(egl->display, EGL_EXTENSIONS),
		                                name);
	/* GL extensions of the context, which must be current (it always is:
	 * render/ keeps one context current for its whole life). */
	return render_extension_in_list((const char *)glGetString(GL_EXTENSIONS), name);
}

/* $DUET_RENDER_DISABLE lists GL extensions to act as if missing, so the
 * fallback paths that other GPUs take can be tested on this one. */
bool render_usable_extension(const struct render_egl *egl, const char *name)
{
	const char *disabled = getenv("DUET_RENDER_DISABLE");
	char list[512];

	if (disabled) {
		snprintf(list, sizeof(list), "%s", disabled);
		for (char *c = list; *c; c++)
			if (*c == ',')
				*c = ' ';
		if (render_extension_in_list(list, name))
			return false;
	}
	return render_egl_has_extension(egl, name);
}
