/* The apps' trace output: the same JSON lines as render/trace.c writes
 * ({"name":..,"ns":..,"pid":..,<fields>}), so the bench reads one format.
 * Written here rather than linked from render/, because the apps must not
 * pull in the servers' renderer. Unlike render_trace, the default sink is
 * stdout: the apps' results are their output. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tk.h"

static int trace_fd = -2; /* -2: not opened yet */

static void trace_open(void)
{
	const char *path = getenv("DUET_TRACE");
	trace_fd = STDOUT_FILENO;
	if (!path || !*path)
		return;
	/* O_APPEND: whole lines even with other processes writing the file. */
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "trace: cannot open DUET_TRACE=%s: %s; using stdout\n", path,
		        strerror(errno));
		return;
	}
	trace_fd = fd;
}

void tk_trace(const char *name, const char *fields, ...)
{
	char stack[512];
	char *line = stack;
	int head, body = 0;
	va_list ap;

	if (trace_fd == -2)
		trace_open();
	unsigned long long ns = (unsigned long long)tk_now_ns();
	int pid = (int)getpid();
	if (fields && *fields) {
		va_start(ap, fields);
		body = vsnprintf(NULL, 0, fields, ap);
		va_end(ap);
		if (body < 0)
			return;
	}
	head = snprintf(NULL, 0, "{\"name\":\"%s\",\"ns\":%llu,\"pid\":%d", name, ns, pid);
	if (head < 0)
		return;
	size_t total = (size_t)head + (body ? 1 + (size_t)body : 0) + 2;
	if (total + 1 > sizeof(stack)) {
		line = malloc(total + 1);
		if (!line)
			return;
	}
	snprintf(line, (size_t)head + 1, "{\"name\":\"%s\",\"ns\":%llu,\"pid\":%d", name, ns, pid);
	if (body) {
		line[head] = ',';
		va_start(ap, fields);
		vsnprintf(line + head + 1, (size_t)body + 1, fields, ap);
		va_end(ap);
	}
	line[total - 2] = '}';
	line[total - 1] = '\n';
	/* One write() per event, so concurrent writers never interleave lines. */
	size_t off = 0;
	while (off < total) {
		ssize_t n = write(trace_fd, line + off, total - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		off += (size_t)n;
	}
	if (line != stack)
		free(line);
}
