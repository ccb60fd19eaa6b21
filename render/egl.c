/* EGL setup: Mesa's surfaceless platform and a GLES2 context that is made
 * current without any surface (EGL_KHR_surfaceless_context). Offscreen
 * targets are framebuffer objects, so no pbuffer or window is needed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render-private.h"

#ifndef EGL_PLATFORM_SURFACELESS_MESA
#define EGL_PLATFORM_SURFACELESS_MESA 0x31DD
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
bool render_egl_choose_window_config(struct render_egl *egl, uint32_t visual_id)
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

struct render_egl *render_egl_open(EGLenum platform, void *native_display,
                                   const char *label,
                                   bool (*choose)(struct render_egl *egl, void *data),
                                   void *choose_data)
{
	PFNEGLGETPLATFORMDISPLAYEXTPROC get_platform_display;
	EGLint major, minor;
	struct render_egl *egl;
	static const EGLint context_attribs[] = {
		EGL_CONTEXT_CLIENT_VERSION, 2,
		EGL_NONE,
	};

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
	egl->display = get_platform_display(platform, native_display, NULL);
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
	/* render/ keeps its context current between frames and binds FBOs for
	 * offscreen work, which needs surfaceless contexts on every platform. */
	if (!render_extension_in_list(eglQueryString(egl->display, EGL_EXTENSIONS),
	                              "EGL_KHR_surfaceless_context")) {
		render_log("EGL_KHR_surfaceless_context missing (%s)", label);
		goto fail;
	}
	if (!eglBindAPI(EGL_OPENGL_ES_API)) {
		log_egl_failure("eglBindAPI(GLES)");
		goto fail;
	}
	if (!choose(egl, choose_data))
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
	render_log("EGL %d.%d %s: %s", major, minor, label, egl->description);
	return egl;

fail:
	render_egl_destroy(egl);
	return NULL;
}

static bool choose_surfaceless_config(struct render_egl *egl, void *data)
{
	return choose_config(egl);
}

struct render_egl *render_egl_create_surfaceless(void)
{
	const char *client_exts = eglQueryString(EGL_NO_DISPLAY, EGL_EXTENSIONS);
	if (!render_extension_in_list(client_exts, "EGL_EXT_platform_base") ||
	    !render_extension_in_list(client_exts, "EGL_MESA_platform_surfaceless")) {
		render_log("EGL lacks EGL_EXT_platform_base or EGL_MESA_platform_surfaceless "
		           "(client extensions: %s)", client_exts ? client_exts : "none");
		return NULL;
	}
	return render_egl_open(EGL_PLATFORM_SURFACELESS_MESA, EGL_DEFAULT_DISPLAY, "surfaceless",
	                       choose_surfaceless_config, NULL);
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
