/* Small helpers shared by render/: logging, extension lookup, lists. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render-private.h"

void render_log(const char *fmt, ...)
{
	va_list ap;
	char line[512];

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* One fprintf per line so concurrent processes do not interleave. */
	fprintf(stderr, "render: %s\n", line);
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

void render_link_init(struct render_link *head)
{
	head->prev = head;
	head->next = head;
}

void render_link_insert_after(struct render_link *pos, struct render_link *elm)
{
	elm->prev = pos;
	elm->next = pos->next;
	pos->next->prev = elm;
	pos->next = elm;
}

void render_link_remove(struct render_link *elm)
{
	elm->prev->next = elm->next;
	elm->next->prev = elm->prev;
	elm->prev = elm;
	elm->next = elm;
}
