/* The trace log: valid one-line JSON objects with name, ns and pid, whole
 * lines even with two processes writing at once, a no-op when off, and
 * each trace its opener's (two in one process write to their own files). */
#include <ctype.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"

#define PER_PROCESS 300

/* Parses a JSON string at p; returns the character after it or NULL. */
static const char *json_string(const char *p, char *out, size_t cap)
{
	size_t n = 0;

	if (*p++ != '"')
		return NULL;
	while (*p && *p != '"') {
		if (*p == '\\') {
			p++;
			if (!*p)
				return NULL;
		}
		if ((unsigned char)*p < 0x20)
			return NULL;
		if (n + 1 < cap)
			out[n++] = *p;
		p++;
	}
	if (out)
		out[n < cap ? n : cap - 1] = '\0';
	return *p == '"' ? p + 1 : NULL;
}

static const char *json_number(const char *p, unsigned long long *v)
{
	char *end;

	if (!isdigit((unsigned char)*p) && *p != '-')
		return NULL;
	*v = strtoull(p, &end, 10);
	while (isdigit((unsigned char)*end) || *end == '.' || *end == 'e' || *end == 'E' ||
	       *end == '-' || *end == '+')
		end++;
	return end;
}

struct event {
	char name[64];
	unsigned long long ns, pid, seq;
	bool has_ns, has_pid, has_seq;
	char text[1024];
};

static void copy_string(char *dst, size_t cap, const char *src)
{
	size_t n = strnlen(src, cap - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* A flat JSON object of string and number members, exactly one line. */
static bool parse_line(const char *line, struct event *ev)
{
	const char *p = line;

	memset(ev, 0, sizeof(*ev));
	if (*p++ != '{')
		return false;
	for (;;) {
		char key[64];
		unsigned long long num = 0;

		p = json_string(p, key, sizeof(key));
		if (!p || *p++ != ':')
			return false;
		if (*p == '"') {
			char val[1024];
			p = json_string(p, val, sizeof(val));
			if (!p)
				return false;
			if (strcmp(key, "name") == 0)
				copy_string(ev->name, sizeof(ev->name), val);
			if (strcmp(key, "text") == 0)
				copy_string(ev->text, sizeof(ev->text), val);
		} else {
			p = json_number(p, &num);
			if (!p)
				return false;
			if (strcmp(key, "ns") == 0) {
				ev->ns = num;
				ev->has_ns = true;
			} else if (strcmp(key, "pid") == 0) {
				ev->pid = num;
				ev->has_pid = true;
			} else if (strcmp(key, "seq") == 0) {
				ev->seq = num;
				ev->has_seq = true;
			}
		}
		if (*p == ',') {
			p++;
			continue;
		}
		return *p == '}' && p[1] == '\0' && ev->name[0] && ev->has_ns && ev->has_pid;
	}
}

static void write_events(struct render_trace *trace, const char *who)
{
	for (unsigned i = 0; i < PER_PROCESS; i++)
		render_trace(trace, "tick", "\"seq\":%u,\"who\":\"%s\"", i, who);
}

/* Lines in path, -1 if it cannot be read. */
static int count_lines(const char *path)
{
	FILE *f = fopen(path, "r");
	int n = 0, c;
	if (!f)
		return -1;
	while ((c = fgetc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}

int main(void)
{
	char path[] = "/tmp/duet-test-trace-XXXXXX";
	char longtext[700];
	int fd = mkstemp(path);
	FILE *f;
	char line[4096];
	int lines = 0, ticks_parent = 0, ticks_child = 0, plain = 0, longs = 0;
	unsigned long long last_seq[2] = { 0, 0 }, last_ns[2] = { 0, 0 };
	bool order_ok = true;
	pid_t child, parent = getpid();
	int status;

	CHECK(fd >= 0, "mkstemp");
	if (fd < 0)
		return 1;
	close(fd);

	struct render_trace *trace = (struct render_trace *)&trace, *other = NULL;
	unit_say("without a path or $DUET_TRACE tracing is off and a no-op");
	unsetenv("DUET_TRACE");
	CHECK(render_trace_open(NULL, &trace) == 0, "open(NULL) without env");
	CHECK(trace == NULL, "a trace without a file");
	render_trace(trace, "nothing", NULL);

	unit_say("$DUET_TRACE names the file");
	setenv("DUET_TRACE", path, 1);
	CHECK(render_trace_open(NULL, &trace) == 0 && trace, "open via env");
	render_trace(trace, "plain", NULL);
	memset(longtext, 'x', sizeof(longtext) - 1);
	longtext[sizeof(longtext) - 1] = '\0';
	/* longer than the stack buffer */
	render_trace(trace, "long", "\"text\":\"%s\"", longtext);

	unit_say("a second trace in the process writes to its own file");
	char other_path[] = "/tmp/duet-test-trace-other-XXXXXX";
	int other_fd = mkstemp(other_path);
	CHECK(other_fd >= 0, "mkstemp");
	if (other_fd >= 0)
		close(other_fd);
	CHECK(render_trace_open(other_path, &other) == 0 && other, "open a second trace");
	for (int i = 0; i < 3; i++)
		render_trace(other, "elsewhere", "\"seq\":%d", i);
	render_trace_close(other);
	CHECK(count_lines(other_path) == 3, "the second trace has %d lines, want 3",
	      count_lines(other_path));
	unlink(other_path);

	unit_say("two processes writing %d events each give whole lines", PER_PROCESS);
	fflush(NULL);
	child = fork();
	CHECK(child >= 0, "fork");
	if (child == 0) {
		write_events(trace, "child");
		render_trace_close(trace);
		_exit(0);
	}
	write_events(trace, "parent");
	waitpid(child, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child failed");
	render_trace_close(trace);
	CHECK(render_trace_open("/nonexistent-dir/trace", &trace) == -1 && !trace,
	      "bad path accepted");

	f = fopen(path, "r");
	CHECK(f != NULL, "reopen");
	while (f && fgets(line, sizeof(line), f)) {
		struct event ev;
		size_t len = strlen(line);

		lines++;
		CHECK(len > 0 && line[len - 1] == '\n', "line %d not terminated", lines);
		line[len - 1] = '\0';
		if (!parse_line(line, &ev)) {
			CHECK(false, "line %d is not a flat JSON object with name/ns/pid: %.80s",
			      lines, line);
			continue;
		}
		if (strcmp(ev.name, "plain") == 0)
			plain++;
		else if (strcmp(ev.name, "long") == 0)
			longs += strcmp(ev.text, longtext) == 0;
		else if (strcmp(ev.name, "tick") == 0) {
			int who = ev.pid == (unsigned long long)parent ? 0 : 1;
			unsigned long long want = who ? (unsigned long long)ticks_child :
			                                (unsigned long long)ticks_parent;
			if (!ev.has_seq || ev.seq != want || ev.ns < last_ns[who])
				order_ok = false;
			last_seq[who] = ev.seq;
			last_ns[who] = ev.ns;
			if (who)
				ticks_child++;
			else
				ticks_parent++;
		}
	}
	if (f)
		fclose(f);
	unlink(path);
	(void)last_seq;
	CHECK(plain == 1, "plain events: %d", plain);
	CHECK(longs == 1, "long event intact: %d", longs);
	CHECK(ticks_parent == PER_PROCESS && ticks_child == PER_PROCESS,
	      "ticks parent %d child %d", ticks_parent, ticks_child);
	CHECK(order_ok, "per-process events out of order or with decreasing ns");
	CHECK(lines == 2 + 2 * PER_PROCESS, "lines %d", lines);

	return unit_finish("test-trace");
}
