/* Wayland protocol message counts per client, for the bench.
 *
 * With comp_options.protocol_log = FILE (duet-compositor takes it from
 * DUET_PROTOCOL_LOG), a libwayland protocol logger counts
 * every request received and event sent, per client, with their wire size
 * (header + arguments as libwayland marshals them; file descriptors travel
 * beside the bytes, in SCM_RIGHTS, and are counted apart) and per message
 * name. FILE is rewritten (temporary name + rename) whenever a client
 * disconnects and when the compositor exits, so it always holds the
 * complete counts of every client that has gone, plus the running counts
 * of the others. Without it nothing is installed and nothing costs
 * anything.
 *
 * Counting happens in the dispatch path; the logger is only installed for
 * the bench's counting runs, never for its timing runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "comp.h"
#include "duet-file.h"

#define MAX_MSG_KINDS 128

struct msg_count {
	const struct wl_message *msg; /* NULL = free slot */
	const char *interface;
	bool event;
	uint64_t count;
};

struct client_counts {
	struct wl_list link;
	struct comp_protocol_log *plog;
	struct wl_client *client; /* NULL once it disconnected */
	struct wl_listener destroy;
	pid_t pid;
	uint64_t requests, events, request_bytes, event_bytes, request_fds, event_fds;
	struct msg_count msgs[MAX_MSG_KINDS];
	uint64_t other_msgs; /* past MAX_MSG_KINDS distinct messages */
};

struct comp_protocol_log {
	const char *path;
	struct wl_protocol_logger *logger;
	struct wl_listener client_created;
	struct wl_listener display_destroy;
	struct wl_list clients; /* client_counts.link, oldest first */
};

/* Bytes a message takes on the wire: 8 bytes of header, 4 per integer,
 * fixed, object and new_id, strings and arrays as length + data padded to
 * 4. Also counts the fds it carries. */
static uint32_t wire_size(const struct wl_protocol_logger_message *m, uint32_t *fds)
{
	uint32_t size = 8;
	const char *sig = m->message->signature;
	int i = 0;
	for (const char *c = sig; *c && i < m->arguments_count; c++) {
		switch (*c) {
		case 'i': case 'u': case 'f': case 'o': case 'n':
			size += 4;
			i++;
			break;
		case 's': {
			const char *s = m->arguments[i].s;
			size += 4 + (s ? (uint32_t)((strlen(s) + 1 + 3) & ~3u) : 0);
			i++;
			break;
		}
		case 'a': {
			const struct wl_array *a = m->arguments[i].a;
			size += 4 + (a ? (uint32_t)((a->size + 3) & ~3u) : 0);
			i++;
			break;
		}
		case 'h':
			(*fds)++;
			i++;
			break;
		default: /* '?' (nullable) and the version digits take no room */
			break;
		}
	}
	return size;
}

static struct client_counts *counts_for(struct comp_protocol_log *plog, struct wl_client *client)
{
	struct client_counts *cc;
	wl_list_for_each(cc, &plog->clients, link)
		if (cc->client == client)
			return cc;
	return NULL;
}

static void count_message(struct client_counts *cc, const struct wl_protocol_logger_message *m,
                          bool event)
{
	uint32_t fds = 0;
	uint32_t bytes = wire_size(m, &fds);
	if (event) {
		cc->events++;
		cc->event_bytes += bytes;
		cc->event_fds += fds;
	} else {
		cc->requests++;
		cc->request_bytes += bytes;
		cc->request_fds += fds;
	}
	for (int i = 0; i < MAX_MSG_KINDS; i++) {
		struct msg_count *mc = &cc->msgs[i];
		if (mc->msg == m->message && mc->event == event) {
			mc->count++;
			return;
		}
		if (!mc->msg) {
			mc->msg = m->message;
			mc->interface = wl_resource_get_class(m->resource);
			mc->event = event;
			mc->count = 1;
			return;
		}
	}
	cc->other_msgs++;
}

static void on_message(void *data, enum wl_protocol_logger_type type,
                       const struct wl_protocol_logger_message *m)
{
	struct wl_client *client = wl_resource_get_client(m->resource);
	struct client_counts *cc = counts_for(data, client);
	if (cc)
		count_message(cc, m, type == WL_PROTOCOL_LOGGER_EVENT);
}

static void write_json(FILE *f, void *data)
{
	struct comp_protocol_log *plog = data;
	fprintf(f, "{\"pid\":%d,\"clients\":[", (int)getpid());
	struct client_counts *cc;
	bool first = true;
	wl_list_for_each(cc, &plog->clients, link) {
		fprintf(f, "%s{\"pid\":%d,\"connected\":%s,\"requests\":%llu,\"events\":%llu,"
		        "\"request_bytes\":%llu,\"event_bytes\":%llu,\"request_fds\":%llu,"
		        "\"event_fds\":%llu,\"other_messages\":%llu,\"messages\":{",
		        first ? "" : ",", (int)cc->pid, cc->client ? "true" : "false",
		        (unsigned long long)cc->requests, (unsigned long long)cc->events,
		        (unsigned long long)cc->request_bytes, (unsigned long long)cc->event_bytes,
		        (unsigned long long)cc->request_fds, (unsigned long long)cc->event_fds,
		        (unsigned long long)cc->other_msgs);
		first = false;
		for (int i = 0; i < MAX_MSG_KINDS && cc->msgs[i].msg; i++) {
			const struct msg_count *mc = &cc->msgs[i];
			/* "wl_surface.commit" (request) or "wl_callback->done" (event) */
			fprintf(f, "%s\"%s%s%s\":%llu", i ? "," : "", mc->interface,
			        mc->event ? "->" : ".", mc->msg->name, (unsigned long long)mc->count);
		}
		fprintf(f, "}}");
	}
	fprintf(f, "]}\n");
}

static void dump(struct comp_protocol_log *plog)
{
	if (!duet_write_replace(plog->path, write_json, plog))
		comp_log("protocol log: cannot write %s", plog->path);
}

static void on_client_destroy(struct wl_listener *listener, void *data)
{
	struct client_counts *cc = wl_container_of(listener, cc, destroy);
	cc->client = NULL;
	wl_list_remove(&cc->destroy.link);
	wl_list_init(&cc->destroy.link);
	dump(cc->plog);
}

static void on_client_created(struct wl_listener *listener, void *data)
{
	struct comp_protocol_log *plog = wl_container_of(listener, plog, client_created);
	struct wl_client *client = data;
	struct client_counts *cc = calloc(1, sizeof(*cc));
	if (!cc)
		return; /* this client goes uncounted; the dump shows it is missing */
	cc->plog = plog;
	cc->client = client;
	wl_client_get_credentials(client, &cc->pid, NULL, NULL);
	cc->destroy.notify = on_client_destroy;
	wl_client_add_destroy_listener(client, &cc->destroy);
	wl_list_insert(plog->clients.prev, &cc->link);
}

/* The display's end, after its clients': the last dump, then free
 * everything (libwayland does not free protocol loggers with the display). */
static void on_display_destroy(struct wl_listener *listener, void *data)
{
	struct comp_protocol_log *plog = wl_container_of(listener, plog, display_destroy);
	dump(plog);
	wl_protocol_logger_destroy(plog->logger);
	wl_list_remove(&plog->client_created.link);
	wl_list_remove(&plog->display_destroy.link);
	struct client_counts *cc, *tmp;
	wl_list_for_each_safe(cc, tmp, &plog->clients, link) {
		wl_list_remove(&cc->destroy.link);
		wl_list_remove(&cc->link);
		free(cc);
	}
	free(plog);
}

void comp_protocol_log_init(struct comp_server *server)
{
	const char *path = server->options.protocol_log;
	if (!path || !*path)
		return;
	struct comp_protocol_log *plog = calloc(1, sizeof(*plog));
	if (!plog) {
		comp_log("protocol log: out of memory, not counting");
		return;
	}
	plog->path = path;
	wl_list_init(&plog->clients);
	plog->client_created.notify = on_client_created;
	wl_display_add_client_created_listener(server->display, &plog->client_created);
	plog->logger = wl_display_add_protocol_logger(server->display, on_message, plog);
	plog->display_destroy.notify = on_display_destroy;
	wl_display_add_destroy_listener(server->display, &plog->display_destroy);
	comp_log("counting protocol messages into %s", path);
}
