/* X protocol counts of duet-xwm's own connection, for the bench: the X
 * counterpart of compositor/core/protocol-log.c, in the same JSON shape.
 *
 * With DUET_PROTOCOL_LOG=FILE set, every request is counted per kind with
 * its size, every reply it expects, and every event and error received.
 * Requests are counted where every XCB request passes (ours, xcb-ewmh's and
 * Mesa's alike): xcb_send_request_with_fds64, which libxcb's own request
 * functions reach through the PLT, so the definition below wraps it and
 * calls libxcb's. Requests Xlib writes itself (a few inside XOpenDisplay,
 * before counting starts) are not seen. FILE is rewritten (temporary name
 * + rename) at exit and on SIGUSR2 (main.c's signalfd). Without the
 * variable the wrapper costs one branch per request.
 *
 * Replies waited for are counted too ("reply_waits"): every blocking
 * collection of a reply passes xcb_wait_for_reply (or its 64-bit twin),
 * which the generated xcb_*_reply functions reach through the PLT, so the
 * wrappers below see ours, xcb-ewmh's and Mesa's alike. A wait is a round
 * trip the caller sits in unless the reply happened to be read already;
 * duet-xwm's repaint path collects its replies with xcb_poll_for_reply
 * instead (fetch.c), so a client that animates adds none (tests:
 * xwm-perf-*).
 *
 * All requests are sent from the main thread (Mesa's X11 calls happen
 * inside our eglSwapBuffers), so the counters need no locking. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xcb/xcbext.h>

#include "duet-file.h"
#include "xwm.h"

#define MAX_KINDS 96

struct kind {
	const xcb_extension_t *ext; /* NULL = core */
	uint8_t opcode;
	bool event;
	uint64_t count, replies;
};

static struct {
	const char *path;
	uint64_t requests, request_bytes, request_fds, replies, events, errors, event_bytes;
	uint64_t reply_waits;
	uint64_t other;
	struct kind kinds[MAX_KINDS];
	int nkinds;
	const struct xwm_cm *cm;
} plog;

typedef uint64_t (*send_fn)(xcb_connection_t *, int, struct iovec *,
                            const xcb_protocol_request_t *, unsigned int, int *);

static struct kind *kind_of(const xcb_extension_t *ext, uint8_t opcode, bool event)
{
	for (int i = 0; i < plog.nkinds; i++)
		if (plog.kinds[i].ext == ext && plog.kinds[i].opcode == opcode &&
		    plog.kinds[i].event == event)
			return &plog.kinds[i];
	if (plog.nkinds == MAX_KINDS)
		return NULL;
	plog.kinds[plog.nkinds] = (struct kind){ .ext = ext, .opcode = opcode, .event = event };
	return &plog.kinds[plog.nkinds++];
}

/* libxcb's own definition of a function wrapped here. libxcb without it
 * could not have linked us, so there is no going on without it. */
static void *libxcb_symbol(const char *name)
{
	void *sym = dlsym(RTLD_NEXT, name);

	if (!sym)
		abort();
	return sym;
}

uint64_t xcb_send_request_with_fds64(xcb_connection_t *c, int flags, struct iovec *vector,
                                     const xcb_protocol_request_t *req, unsigned int num_fds,
                                     int *fds)
{
	static send_fn real;

	if (!real)
		real = (send_fn)libxcb_symbol("xcb_send_request_with_fds64");
	if (plog.path && req) {
		size_t bytes = 0;
		for (size_t i = 0; i < req->count; i++)
			bytes += vector[i].iov_len;
		plog.requests++;
		plog.request_bytes += bytes;
		plog.request_fds += num_fds;
		struct kind *k = kind_of(req->ext, req->opcode, false);
		if (k)
			k->count++;
		else
			plog.other++;
		if (!req->isvoid) {
			/* Exactly one reply (or an error, counted apart). */
			plog.replies++;
			if (k)
				k->replies++;
		}
	}
	return real(c, flags, vector, req, num_fds, fds);
}

typedef void *(*wait_fn)(xcb_connection_t *, unsigned int, xcb_generic_error_t **);
typedef void *(*wait64_fn)(xcb_connection_t *, uint64_t, xcb_generic_error_t **);

/* What both wait wrappers do before libxcb's wait: count it and find
 * libxcb's function (*real, resolved on first use). */
static void *counted_wait(void **real, const char *name)
{
	if (!*real)
		*real = libxcb_symbol(name);
	if (plog.path)
		plog.reply_waits++;
	return *real;
}

void *xcb_wait_for_reply(xcb_connection_t *c, unsigned int request, xcb_generic_error_t **e)
{
	static void *real;

	return ((wait_fn)counted_wait(&real, "xcb_wait_for_reply"))(c, request, e);
}

void *xcb_wait_for_reply64(xcb_connection_t *c, uint64_t request, xcb_generic_error_t **e)
{
	static void *real;

	return ((wait64_fn)counted_wait(&real, "xcb_wait_for_reply64"))(c, request, e);
}

void xwm_protolog_event(const xcb_generic_event_t *ev)
{
	if (!plog.path)
		return;
	uint8_t type = ev->response_type & 0x7f;
	if (type == 0) {
		plog.errors++;
		plog.event_bytes += 32;
		return;
	}
	plog.events++;
	plog.event_bytes += 32;
	if (type == XCB_GE_GENERIC)
		plog.event_bytes += 4u * ((const xcb_ge_generic_event_t *)(const void *)ev)->length;
	struct kind *k = kind_of(NULL, type, true);
	if (k)
		k->count++;
	else
		plog.other++;
}

static const char *core_request_name(uint8_t op)
{
	static const char *names[] = {
		[1] = "CreateWindow", [2] = "ChangeWindowAttributes", [3] = "GetWindowAttributes",
		[4] = "DestroyWindow", [8] = "MapWindow", [10] = "UnmapWindow",
		[12] = "ConfigureWindow", [14] = "GetGeometry", [15] = "QueryTree",
		[16] = "InternAtom", [18] = "ChangeProperty", [19] = "DeleteProperty",
		[20] = "GetProperty", [22] = "SetSelectionOwner", [23] = "GetSelectionOwner",
		[25] = "SendEvent", [28] = "GrabButton", [29] = "UngrabButton",
		[35] = "AllowEvents", [36] = "GrabServer", [37] = "UngrabServer",
		[42] = "SetInputFocus", [43] = "GetInputFocus", [53] = "CreatePixmap",
		[54] = "FreePixmap", [55] = "CreateGC", [60] = "FreeGC", [72] = "PutImage",
		[73] = "GetImage", [98] = "QueryExtension", [127] = "NoOperation",
	};
	return op < sizeof(names) / sizeof(names[0]) ? names[op] : NULL;
}

static const char *core_event_name(uint8_t type)
{
	static const char *names[] = {
		[2] = "KeyPress", [3] = "KeyRelease", [4] = "ButtonPress", [5] = "ButtonRelease",
		[6] = "MotionNotify", [7] = "EnterNotify", [8] = "LeaveNotify", [9] = "FocusIn",
		[10] = "FocusOut", [12] = "Expose", [16] = "CreateNotify", [17] = "DestroyNotify",
		[18] = "UnmapNotify", [19] = "MapNotify", [20] = "MapRequest",
		[21] = "ReparentNotify", [22] = "ConfigureNotify", [23] = "ConfigureRequest",
		[28] = "PropertyNotify", [29] = "SelectionClear", [33] = "ClientMessage",
		[34] = "MappingNotify", [35] = "GenericEvent",
	};
	return type < sizeof(names) / sizeof(names[0]) ? names[type] : NULL;
}

static void kind_name(const struct kind *k, char *buf, size_t size)
{
	const struct xwm_cm *cm = plog.cm;
	const char *name;

	if (k->event) {
		name = core_event_name(k->opcode);
		if (name)
			snprintf(buf, size, "X->%s", name);
		else if (cm && cm->damage_event && k->opcode == cm->damage_event)
			snprintf(buf, size, "DAMAGE->Notify");
		else if (cm && cm->sync_event && k->opcode == cm->sync_event + 1)
			snprintf(buf, size, "SYNC->AlarmNotify");
		else
			snprintf(buf, size, "X->event%u", k->opcode);
	} else if (k->ext) {
		snprintf(buf, size, "%s.%u", k->ext->name, k->opcode);
	} else {
		name = core_request_name(k->opcode);
		if (name)
			snprintf(buf, size, "X.%s", name);
		else
			snprintf(buf, size, "X.request%u", k->opcode);
	}
}

static void write_json(FILE *f, void *data)
{
	unsigned long long u;
	fprintf(f, "{\"pid\":%d,\"clients\":[{\"pid\":%d,\"connected\":true,", (int)getpid(),
	        (int)getpid());
	fprintf(f, "\"requests\":%llu,\"replies\":%llu,\"events\":%llu,\"errors\":%llu,"
	        "\"request_bytes\":%llu,\"event_bytes\":%llu,\"request_fds\":%llu,"
	        "\"event_fds\":0,\"other_messages\":%llu,\"reply_waits\":%llu,\"messages\":{",
	        (unsigned long long)plog.requests, (unsigned long long)plog.replies,
	        (unsigned long long)plog.events, (unsigned long long)plog.errors,
	        (unsigned long long)plog.request_bytes, (unsigned long long)plog.event_bytes,
	        (unsigned long long)plog.request_fds, (unsigned long long)plog.other,
	        (unsigned long long)plog.reply_waits);
	for (int i = 0; i < plog.nkinds; i++) {
		char name[64];
		kind_name(&plog.kinds[i], name, sizeof(name));
		u = plog.kinds[i].count;
		fprintf(f, "%s\"%s\":%llu", i ? "," : "", name, u);
	}
	fprintf(f, "},\"reply_messages\":{");
	bool first = true;
	for (int i = 0; i < plog.nkinds; i++) {
		if (!plog.kinds[i].replies)
			continue;
		char name[64];
		kind_name(&plog.kinds[i], name, sizeof(name));
		u = plog.kinds[i].replies;
		fprintf(f, "%s\"%s\":%llu", first ? "" : ",", name, u);
		first = false;
	}
	fprintf(f, "}}]}\n");
}

void xwm_protolog_write(void)
{
	if (plog.path && !duet_write_replace(plog.path, write_json, NULL))
		xwm_log("protocol log: cannot write %s", plog.path);
}

void xwm_protolog_start(const struct xwm_cm *cm)
{
	const char *path = getenv("DUET_PROTOCOL_LOG");
	plog.cm = cm;
	if (!path || !path[0])
		return;
	plog.path = path;
	xwm_log("counting X protocol messages into %s", path);
}
