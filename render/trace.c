/* The trace log: JSON lines with CLOCK_MONOTONIC timestamps, shared by
 * every process of a run (compositor, window manager, clients, bench). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "render-private.h"

struct render_trace {
	int fd;
};

int render_trace_open(const char *path, struct render_trace **trace)
{
	int fd;

	*trace = NULL;
	if (!path)
		path = getenv("DUET_TRACE");
	if (!path || !*path)
		return 0; /* tracing off, every render_trace is a no-op */
	/* O_APPEND makes each write() land whole at the end of the file even
	 * when several processes share it. */
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0) {
		render_log("trace: cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	*trace = render_trace_from_fd(fd);
	if (!*trace) {
		close(fd);
		return -1;
	}
	return 0;
}

struct render_trace *render_trace_from_fd(int fd)
{
	struct render_trace *t = malloc(sizeof(*t));
	if (t)
		t->fd = fd;
	return t;
}

void render_trace_close(struct render_trace *trace)
{
	if (!trace)
		return;
	close(trace->fd);
	free(trace);
}

void render_tracev(struct render_trace *trace, const char *name, const char *fields,
                   va_list args)
{
	char stack[512];
	char *line = stack;
	unsigned long long ns;
	int pid, head, body = 0;
	size_t total;
	va_list ap;

	if (!trace)
		return;
	ns = (unsigned long long)render_now_ns();
	pid = (int)getpid();
	if (fields && *fields) {
		va_copy(ap, args);
		body = vsnprintf(NULL, 0, fields, ap);
		va_end(ap);
		if (body < 0)
			return;
	}
	head = snprintf(NULL, 0, "{\"name\":\"%s\",\"ns\":%llu,\"pid\":%d", name, ns, pid);
	if (head < 0)
		return;
	/* head, ',' and fields, "}\n", and snprintf's terminating NUL. */
	total = (size_t)head + (body ? 1 + (size_t)body : 0) + 2;
	if (total + 1 > sizeof(stack)) {
		line = malloc(total + 1);
		if (!line)
			return;
	}
	snprintf(line, (size_t)head + 1, "{\"name\":\"%s\",\"ns\":%llu,\"pid\":%d", name, ns, pid);
	if (body) {
		line[head] = ',';
		va_copy(ap, args);
		vsnprintf(line + head + 1, (size_t)body + 1, fields, ap);
		va_end(ap);
	}
	line[total - 2] = '}';
	line[total - 1] = '\n';
	/* One write() per event: lines of concurrent writers never interleave
	 * (a pipe may still take a long line in parts). */
	for (size_t off = 0; off < total;) {
		ssize_t n = write(trace->fd, line + off, total - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	if (line != stack)
		free(line);
}

void render_trace(struct render_trace *trace, const char *name, const char *fields, ...)
{
	va_list ap;

	va_start(ap, fields);
	render_tracev(trace, name, fields, ap);
	va_end(ap);
}
