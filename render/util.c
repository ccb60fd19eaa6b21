/* Small helpers shared by render/: logging, extension lookup, and
 * keeping the GL driver loaded. */
#include <dlfcn.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "duet-log.h"
#include "render-private.h"

void render_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	duet_vlog("render", false, fmt, ap);
	va_end(ap);
}

bool render_extension_in_list(const char *list, const char *name)
{
	size_t len = strlen(name);
	const char *p = list;

	if (!list || len == 0)
		return false;
	while ((p = strstr(p, name)) != NULL) {
		bool starts = p == list || p[-1] == ' ';
		bool ends = p[len] == ' ' || p[len] == '\0';
		if (starts && ends)
			return true;
		p += len;
	}
	return false;
}

struct loaded_names {
	char **names;
	size_t n, cap;
	bool failed;
};

static int collect_loaded(struct dl_phdr_info *info, size_t size, void *data)
{
	struct loaded_names *l = data;

	/* The executable has an empty name, and is never unloaded. */
	if (!info->dlpi_name || !info->dlpi_name[0])
		return 0;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		char **names = realloc(l->names, cap * sizeof(*names));
		if (!names) {
			l->failed = true;
			return 1;
		}
		l->names = names;
		l->cap = cap;
	}
	l->names[l->n] = strdup(info->dlpi_name);
	if (!l->names[l->n]) {
		l->failed = true;
		return 1;
	}
	l->n++;
	return 0;
}

int render_keep_loaded(void)
{
	struct loaded_names l = { 0 };
	int kept = 0;

	/* Names first, dlopen after: no loader call from inside the loader's
	 * own iteration. */
	dl_iterate_phdr(collect_loaded, &l);
	for (size_t i = 0; i < l.n; i++) {
		/* RTLD_NOLOAD: only what is loaded already; RTLD_NODELETE stays
		 * on the object after this reference is dropped. */
		void *handle = dlopen(l.names[i], RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
		if (handle) {
			kept++;
			dlclose(handle);
		}
		free(l.names[i]);
	}
	free(l.names);
	return l.failed ? -1 : kept;
}
