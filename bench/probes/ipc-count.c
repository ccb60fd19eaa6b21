/* libduet-ipc-count.so: an LD_PRELOAD library counting the IPC syscalls a
 * process makes (sendmsg, recvmsg, writev, readv, read, write, send, recv
 * and the poll family), per call, per kind of file descriptor and, for
 * Unix sockets, per peer process (SO_PEERCRED).
 *
 * Why not strace: ptrace stops the process on every syscall, which
 * distorts the timing being measured, and qemu-user has no ptrace. Here a
 * counted call costs two relaxed atomic adds and an array lookup; the fd's
 * kind and peer are looked up once and cached per fd number.
 *
 * Dumps JSON to $DUET_IPC_COUNT_DIR/<pid>.json (written to a temporary
 * name, then renamed, so a reader never sees half a file) at exit and on
 * SIGUSR2 (or the signal numbered $DUET_IPC_COUNT_SIGNAL; 0 = none), unless
 * the program has its own handler for it. The dump code only uses async-signal-safe
 * calls: it runs inside the signal handler. Without DUET_IPC_COUNT_DIR the
 * library only counts. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

enum call {
	C_SENDMSG, C_RECVMSG, C_SEND, C_RECV, C_SENDTO, C_RECVFROM, C_WRITEV, C_READV,
	C_READ, C_WRITE, C_POLL, C_PPOLL, C_SELECT, C_PSELECT, C_EPOLL_WAIT, C_EPOLL_PWAIT,
	N_CALLS
};
static const char *const call_names[N_CALLS] = {
	"sendmsg", "recvmsg", "send", "recv", "sendto", "recvfrom", "writev", "readv",
	"read", "write", "poll", "ppoll", "select", "pselect", "epoll_wait", "epoll_pwait",
};

/* Kind of fd a call went to. Waits (poll family) are not per fd. */
enum kind { K_UNIX, K_SOCKET, K_PIPE, K_OTHER, K_WAIT, N_KINDS };
static const char *const kind_names[N_KINDS] = { "unix", "socket", "pipe", "other", "wait" };

struct counter {
	uint64_t calls, bytes;
};
static struct counter counts[N_CALLS][N_KINDS];

/* Per-peer counts of Unix-socket traffic. Slots are claimed with a CAS on
 * the pid and never released: a process rarely talks to more than a few
 * dozen peers over its life. Overflow goes to the last slot (pid -1). */
#define N_PEERS 64
struct peer {
	int pid; /* 0 = free */
	struct counter c[N_CALLS];
};
static struct peer peers[N_PEERS];

/* fd -> kind and peer slot. 0 = not looked up yet; else
 * 1 + kind + 8 * (1 + peer slot) (peer slot part 0 when there is none). */
#define N_FDS 4096
static uint32_t fd_cache[N_FDS];

static pid_t owner_pid;
static int dump_seq;

#define ADD(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)

/* ------------------------------------------------------------ real calls */
static ssize_t (*real_sendmsg)(int, const struct msghdr *, int);
static ssize_t (*real_recvmsg)(int, struct msghdr *, int);
static ssize_t (*real_send)(int, const void *, size_t, int);
static ssize_t (*real_recv)(int, void *, size_t, int);
static ssize_t (*real_sendto)(int, const void *, size_t, int, const struct sockaddr *, socklen_t);
static ssize_t (*real_recvfrom)(int, void *, size_t, int, struct sockaddr *, socklen_t *);
static ssize_t (*real_writev)(int, const struct iovec *, int);
static ssize_t (*real_readv)(int, const struct iovec *, int);
static ssize_t (*real_read)(int, void *, size_t);
static ssize_t (*real_write)(int, const void *, size_t);
static int (*real_poll)(struct pollfd *, nfds_t, int);
static int (*real_ppoll)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *);
static int (*real_select)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
static int (*real_pselect)(int, fd_set *, fd_set *, fd_set *, const struct timespec *,
                           const sigset_t *);
static int (*real_epoll_wait)(int, struct epoll_event *, int, int);
static int (*real_epoll_pwait)(int, struct epoll_event *, int, int, const sigset_t *);
static int (*real_close)(int);
static int (*real_dup2)(int, int);
static int (*real_dup3)(int, int, int);
static int (*real_socket)(int, int, int);
static int (*real_accept)(int, struct sockaddr *, socklen_t *);
static int (*real_accept4)(int, struct sockaddr *, socklen_t *, int);
static int (*real_socketpair)(int, int, int, int[2]);
static int (*real_pipe)(int[2]);
static int (*real_pipe2)(int[2], int);
static ssize_t (*real_read_chk)(int, void *, size_t, size_t);
static ssize_t (*real_recv_chk)(int, void *, size_t, size_t, int);
static int (*real_poll_chk)(struct pollfd *, nfds_t, int, size_t);

#define RESOLVE(var, name) \
	do { \
		if (!var) \
			*(void **)&var = dlsym(RTLD_NEXT, name); \
	} while (0)

static void resolve_all(void)
{
	RESOLVE(real_sendmsg, "sendmsg");
	RESOLVE(real_recvmsg, "recvmsg");
	RESOLVE(real_send, "send");
	RESOLVE(real_recv, "recv");
	RESOLVE(real_sendto, "sendto");
	RESOLVE(real_recvfrom, "recvfrom");
	RESOLVE(real_writev, "writev");
	RESOLVE(real_readv, "readv");
	RESOLVE(real_read, "read");
	RESOLVE(real_write, "write");
	RESOLVE(real_poll, "poll");
	RESOLVE(real_ppoll, "ppoll");
	RESOLVE(real_select, "select");
	RESOLVE(real_pselect, "pselect");
	RESOLVE(real_epoll_wait, "epoll_wait");
	RESOLVE(real_epoll_pwait, "epoll_pwait");
	RESOLVE(real_close, "close");
	RESOLVE(real_dup2, "dup2");
	RESOLVE(real_dup3, "dup3");
	RESOLVE(real_socket, "socket");
	RESOLVE(real_accept, "accept");
	RESOLVE(real_accept4, "accept4");
	RESOLVE(real_socketpair, "socketpair");
	RESOLVE(real_pipe, "pipe");
	RESOLVE(real_pipe2, "pipe2");
	RESOLVE(real_read_chk, "__read_chk");
	RESOLVE(real_recv_chk, "__recv_chk");
	RESOLVE(real_poll_chk, "__poll_chk");
}

/* Every wrapper goes through this: a call made before the constructor ran
 * (another library's constructor) resolves lazily. */
#define REAL(var, name) (var ? var : (*(void **)&var = dlsym(RTLD_NEXT, name), var))

/* ------------------------------------------------------------ fd kinds */
static int peer_slot(int pid)
{
	for (int i = 0; i < N_PEERS - 1; i++) {
		int cur = __atomic_load_n(&peers[i].pid, __ATOMIC_RELAXED);
		if (cur == pid)
			return i;
		if (cur == 0) {
			int expected = 0;
			if (__atomic_compare_exchange_n(&peers[i].pid, &expected, pid, false,
			                                __ATOMIC_RELAXED, __ATOMIC_RELAXED) ||
			    expected == pid)
				return i;
		}
	}
	__atomic_store_n(&peers[N_PEERS - 1].pid, -1, __ATOMIC_RELAXED);
	return N_PEERS - 1;
}

static uint32_t classify(int fd)
{
	struct stat st;
	int saved = errno;
	uint32_t v = 1 + K_OTHER;
	if (fstat(fd, &st) == 0) {
		if (S_ISSOCK(st.st_mode)) {
			int domain = 0;
			socklen_t len = sizeof(domain);
			if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) == 0 &&
			    domain == AF_UNIX) {
				v = 1 + K_UNIX;
				struct ucred cred;
				len = sizeof(cred);
				/* A listening or unconnected socket has no peer (pid 0). */
				if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 &&
				    cred.pid > 0)
					v += 8u * (uint32_t)(1 + peer_slot(cred.pid));
			} else {
				v = 1 + K_SOCKET;
			}
		} else if (S_ISFIFO(st.st_mode)) {
			v = 1 + K_PIPE;
		}
	}
	errno = saved;
	return v;
}

static uint32_t fd_info(int fd)
{
	if (fd < 0 || fd >= N_FDS)
		return fd < 0 ? 1 + K_OTHER : classify(fd);
	uint32_t v = __atomic_load_n(&fd_cache[fd], __ATOMIC_RELAXED);
	if (!v) {
		v = classify(fd);
		__atomic_store_n(&fd_cache[fd], v, __ATOMIC_RELAXED);
	}
	return v;
}

/* Returns fd, so that a wrapper can pass on the call's result through it. */
static int forget_fd(int fd)
{
	if (fd >= 0 && fd < N_FDS)
		__atomic_store_n(&fd_cache[fd], 0, __ATOMIC_RELAXED);
	return fd;
}

/* The two fds a successful pipe or socketpair made (r == 0); returns r. */
static int forget_fds(int r, const int fds[2])
{
	if (r == 0) {
		forget_fd(fds[0]);
		forget_fd(fds[1]);
	}
	return r;
}

/* A counted call under way on this thread (COUNTED), and a dump its
 * signal asked for meanwhile. The signal comes back from the kernel right
 * after the call's syscall, before count_fd has added it: a dump made
 * there would leave out a call strace times inside the interval (the
 * bench's counters disagreed by one sendmsg under load, 2026-11-28). So
 * the dump waits for the add. The bench signals the main thread
 * (tgkill), where the servers make their calls. */
static __thread __attribute__((tls_model("initial-exec"))) volatile sig_atomic_t in_counted;
static __thread __attribute__((tls_model("initial-exec"))) volatile sig_atomic_t dump_deferred;
static void dump(const char *reason);

#define COUNTED(c, fd, call) (in_counted = 1, count_fd((c), (fd), (call)))

/* Returns result, which the wrappers pass on, as wait_end does. */
static ssize_t count_fd(enum call c, int fd, ssize_t result)
{
	uint32_t v = fd_info(fd);
	uint64_t bytes = result > 0 ? (uint64_t)result : 0;
	unsigned kind = (v - 1) % 8;
	ADD(&counts[c][kind].calls, 1);
	ADD(&counts[c][kind].bytes, bytes);
	if (v >= 8) {
		struct peer *p = &peers[(v - 1) / 8 - 1];
		ADD(&p->c[c].calls, 1);
		ADD(&p->c[c].bytes, bytes);
	}
	in_counted = 0;
	if (dump_deferred) {
		dump_deferred = 0;
		dump("signal"); /* keeps errno */
	}
	return result;
}

/* Set by the dump's signal handler on the thread it interrupted: the wait
 * that thread was blocked in then returns EINTR because of us. */
static __thread __attribute__((tls_model("initial-exec"))) bool dump_interrupted;

static void wait_begin(void)
{
	dump_interrupted = false;
}

/* A wait counts when it returns, unless a dump interrupted it: a process
 * idle in one wait across two dumps shows no wait between them (counted
 * on entry, the wait re-entered after the first dump's EINTR would). */
static int wait_end(enum call c, int r)
{
	int saved = errno;
	if (!(r < 0 && saved == EINTR && dump_interrupted))
		ADD(&counts[c][K_WAIT].calls, 1);
	dump_interrupted = false;
	errno = saved;
	return r;
}

/* ------------------------------------------------------------ wrappers */
EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	return COUNTED(C_SENDMSG, fd, REAL(real_sendmsg, "sendmsg")(fd, msg, flags));
}

EXPORT ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	return COUNTED(C_RECVMSG, fd, REAL(real_recvmsg, "recvmsg")(fd, msg, flags));
}

EXPORT ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	return COUNTED(C_SEND, fd, REAL(real_send, "send")(fd, buf, len, flags));
}

EXPORT ssize_t recv(int fd, void *buf, size_t len, int flags)
{
	return COUNTED(C_RECV, fd, REAL(real_recv, "recv")(fd, buf, len, flags));
}

EXPORT ssize_t __recv_chk(int fd, void *buf, size_t len, size_t buflen, int flags)
{
	return COUNTED(C_RECV, fd, REAL(real_recv_chk, "__recv_chk")(fd, buf, len, buflen, flags));
}

EXPORT ssize_t sendto(int fd, const void *buf, size_t len, int flags,
                      const struct sockaddr *addr, socklen_t alen)
{
	return COUNTED(C_SENDTO, fd, REAL(real_sendto, "sendto")(fd, buf, len, flags, addr, alen));
}

EXPORT ssize_t recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *addr,
                        socklen_t *alen)
{
	return COUNTED(C_RECVFROM, fd,
	                REAL(real_recvfrom, "recvfrom")(fd, buf, len, flags, addr, alen));
}

EXPORT ssize_t writev(int fd, const struct iovec *iov, int n)
{
	return COUNTED(C_WRITEV, fd, REAL(real_writev, "writev")(fd, iov, n));
}

EXPORT ssize_t readv(int fd, const struct iovec *iov, int n)
{
	return COUNTED(C_READV, fd, REAL(real_readv, "readv")(fd, iov, n));
}

EXPORT ssize_t read(int fd, void *buf, size_t len)
{
	return COUNTED(C_READ, fd, REAL(real_read, "read")(fd, buf, len));
}

/* _FORTIFY_SOURCE builds (Debian's packages) call these instead. */
EXPORT ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen)
{
	return COUNTED(C_READ, fd, REAL(real_read_chk, "__read_chk")(fd, buf, len, buflen));
}

EXPORT ssize_t write(int fd, const void *buf, size_t len)
{
	return COUNTED(C_WRITE, fd, REAL(real_write, "write")(fd, buf, len));
}

EXPORT int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	wait_begin();
	return wait_end(C_POLL, REAL(real_poll, "poll")(fds, n, timeout));
}

EXPORT int __poll_chk(struct pollfd *fds, nfds_t n, int timeout, size_t fdslen)
{
	wait_begin();
	return wait_end(C_POLL, REAL(real_poll_chk, "__poll_chk")(fds, n, timeout, fdslen));
}

EXPORT int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *t, const sigset_t *mask)
{
	wait_begin();
	return wait_end(C_PPOLL, REAL(real_ppoll, "ppoll")(fds, n, t, mask));
}

EXPORT int select(int n, fd_set *r, fd_set *w, fd_set *e, struct timeval *t)
{
	wait_begin();
	return wait_end(C_SELECT, REAL(real_select, "select")(n, r, w, e, t));
}

EXPORT int pselect(int n, fd_set *r, fd_set *w, fd_set *e, const struct timespec *t,
                   const sigset_t *mask)
{
	wait_begin();
	return wait_end(C_PSELECT, REAL(real_pselect, "pselect")(n, r, w, e, t, mask));
}

EXPORT int epoll_wait(int epfd, struct epoll_event *ev, int max, int timeout)
{
	wait_begin();
	return wait_end(C_EPOLL_WAIT, REAL(real_epoll_wait, "epoll_wait")(epfd, ev, max, timeout));
}

EXPORT int epoll_pwait(int epfd, struct epoll_event *ev, int max, int timeout,
                       const sigset_t *mask)
{
	wait_begin();
	return wait_end(C_EPOLL_PWAIT, REAL(real_epoll_pwait, "epoll_pwait")(epfd, ev, max, timeout, mask));
}

/* fd numbers are reused: forget what we knew when one is closed or made
 * anew. (An fd closed inside libc, e.g. by fclose, is not seen; the calls
 * that make sockets and pipes clear their entry, which covers what
 * matters here.) */
EXPORT int close(int fd)
{
	forget_fd(fd);
	return REAL(real_close, "close")(fd);
}

EXPORT int dup2(int old, int new)
{
	return forget_fd(REAL(real_dup2, "dup2")(old, new));
}

EXPORT int dup3(int old, int new, int flags)
{
	return forget_fd(REAL(real_dup3, "dup3")(old, new, flags));
}

EXPORT int socket(int domain, int type, int proto)
{
	return forget_fd(REAL(real_socket, "socket")(domain, type, proto));
}

EXPORT int accept(int fd, struct sockaddr *addr, socklen_t *len)
{
	return forget_fd(REAL(real_accept, "accept")(fd, addr, len));
}

EXPORT int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags)
{
	return forget_fd(REAL(real_accept4, "accept4")(fd, addr, len, flags));
}

EXPORT int socketpair(int domain, int type, int proto, int sv[2])
{
	return forget_fds(REAL(real_socketpair, "socketpair")(domain, type, proto, sv), sv);
}

EXPORT int pipe(int fds[2])
{
	return forget_fds(REAL(real_pipe, "pipe")(fds), fds);
}

EXPORT int pipe2(int fds[2], int flags)
{
	return forget_fds(REAL(real_pipe2, "pipe2")(fds, flags), fds);
}

/* ------------------------------------------------------------ dumping */
/* A fixed buffer and hand-made formatting: this runs in a signal handler,
 * where stdio and malloc are off limits. */
struct out {
	char buf[32768];
	size_t len;
};

static void put(struct out *o, const char *s)
{
	while (*s && o->len < sizeof(o->buf) - 1)
		o->buf[o->len++] = *s++;
}

static void put_u64(struct out *o, uint64_t v)
{
	char tmp[24];
	int n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n && o->len < sizeof(o->buf) - 1)
		o->buf[o->len++] = tmp[--n];
}

static void put_i64(struct out *o, int64_t v)
{
	if (v < 0) {
		put(o, "-");
		put_u64(o, (uint64_t)(-(v + 1)) + 1);
	} else {
		put_u64(o, (uint64_t)v);
	}
}

/* o becomes the NUL-terminated path DIR<before>PID<after>. */
static void put_path(struct out *o, const char *dir, const char *before, pid_t pid,
                     const char *after)
{
	o->len = 0;
	put(o, dir);
	put(o, before);
	put_i64(o, pid);
	put(o, after);
	o->buf[o->len] = 0;
}

/* A JSON string of at most 64 bytes, unusual bytes dropped. */
static void put_str(struct out *o, const char *s, size_t n)
{
	put(o, "\"");
	for (size_t i = 0; i < n && i < 64 && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
			char one[2] = { (char)c, 0 };
			put(o, one);
		}
	}
	put(o, "\"");
}

static void put_counter(struct out *o, const char *name, const struct counter *c, bool *first)
{
	uint64_t calls = __atomic_load_n(&c->calls, __ATOMIC_RELAXED);
	if (!calls)
		return;
	put(o, *first ? "\"" : ",\"");
	*first = false;
	put(o, name);
	put(o, "\":[");
	put_u64(o, calls);
	put(o, ",");
	put_u64(o, __atomic_load_n(&c->bytes, __ATOMIC_RELAXED));
	put(o, "]");
}

static void dump(const char *reason)
{
	const char *dir = getenv("DUET_IPC_COUNT_DIR");
	if (!dir || !*dir)
		return;
	int saved = errno;
	static struct out o; /* static: too big for a signal stack */
	o.len = 0;
	pid_t pid = getpid();
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	char comm[64] = "";
	ssize_t comm_len = 0;
	int cfd = open("/proc/self/comm", O_RDONLY | O_CLOEXEC);
	if (cfd >= 0) {
		comm_len = REAL(real_read, "read")(cfd, comm, sizeof(comm) - 1);
		REAL(real_close, "close")(cfd);
		while (comm_len > 0 && comm[comm_len - 1] == '\n')
			comm_len--;
	}

	put(&o, "{\"pid\":");
	put_i64(&o, pid);
	put(&o, ",\"comm\":");
	put_str(&o, comm, comm_len > 0 ? (size_t)comm_len : 0);
	put(&o, ",\"reason\":\"");
	put(&o, reason);
	put(&o, "\",\"seq\":");
	put_i64(&o, __atomic_add_fetch(&dump_seq, 1, __ATOMIC_RELAXED));
	put(&o, ",\"ns\":");
	put_u64(&o, (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec);
	/* counts: {call: {kind: [calls, bytes]}} with zero entries left out. */
	put(&o, ",\"counts\":{");
	bool first_call = true;
	for (int c = 0; c < N_CALLS; c++) {
		bool any = false;
		for (int k = 0; k < N_KINDS; k++)
			any |= __atomic_load_n(&counts[c][k].calls, __ATOMIC_RELAXED) != 0;
		if (!any)
			continue;
		put(&o, first_call ? "\"" : ",\"");
		first_call = false;
		put(&o, call_names[c]);
		put(&o, "\":{");
		bool first = true;
		for (int k = 0; k < N_KINDS; k++)
			put_counter(&o, kind_names[k], &counts[c][k], &first);
		put(&o, "}");
	}
	/* peers: {"pid": {call: [calls, bytes]}}, Unix-socket traffic only. */
	put(&o, "},\"peers\":{");
	bool first_peer = true;
	for (int i = 0; i < N_PEERS; i++) {
		int ppid = __atomic_load_n(&peers[i].pid, __ATOMIC_RELAXED);
		if (!ppid)
			continue;
		put(&o, first_peer ? "\"" : ",\"");
		first_peer = false;
		put_i64(&o, ppid);
		put(&o, "\":{");
		bool first = true;
		for (int c = 0; c < N_CALLS; c++)
			put_counter(&o, call_names[c], &peers[i].c[c], &first);
		put(&o, "}");
	}
	put(&o, "}}\n");

	/* DIR/PID.json via DIR/.PID.json.tmp and rename. */
	static struct out path;
	put_path(&path, dir, "/.", pid, ".json.tmp");
	static struct out final_path;
	put_path(&final_path, dir, "/", pid, ".json");

	int fd = open(path.buf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd >= 0) {
		size_t off = 0;
		while (off < o.len) {
			ssize_t w = REAL(real_write, "write")(fd, o.buf + off, o.len - off);
			if (w <= 0 && errno != EINTR)
				break;
			if (w > 0)
				off += (size_t)w;
		}
		REAL(real_close, "close")(fd);
		if (off == o.len)
			rename(path.buf, final_path.buf);
		else
			unlink(path.buf);
	}
	errno = saved;
}

static void on_usr2(int sig)
{
	/* The dump's own calls went through the real functions, so they do
	 * not count. */
	if (in_counted) {
		dump_deferred = 1;
		return;
	}
	dump_interrupted = true;
	dump("signal");
}

static void on_exit_dump(void)
{
	if (getpid() == owner_pid)
		dump("exit");
}

/* A forked child starts its own counts (exec would reset them anyway). */
static void after_fork_child(void)
{
	memset(counts, 0, sizeof(counts));
	memset(peers, 0, sizeof(peers));
	memset(fd_cache, 0, sizeof(fd_cache));
	dump_seq = 0;
	owner_pid = getpid();
}

__attribute__((constructor)) static void ipc_count_init(void)
{
	resolve_all();
	owner_pid = getpid();
	pthread_atfork(NULL, NULL, after_fork_child);
	atexit(on_exit_dump);
	/* The dump signal: SIGUSR2, or the number in DUET_IPC_COUNT_SIGNAL (0 =
	 * none). Some programs use SIGUSR2 themselves (openbox reconfigures on
	 * it), so the bench picks a real-time signal nobody uses. */
	const char *sig = getenv("DUET_IPC_COUNT_SIGNAL");
	int signo = SIGUSR2;
	if (sig && *sig)
		signo = atoi(sig);
	if (signo <= 0 || signo >= 65)
		return;
	struct sigaction old;
	if (sigaction(signo, NULL, &old) == 0 && old.sa_handler == SIG_DFL &&
	    !(old.sa_flags & SA_SIGINFO)) {
		struct sigaction sa;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_usr2;
		sa.sa_flags = SA_RESTART;
		sigemptyset(&sa.sa_mask);
		sigaction(signo, &sa, NULL);
	}
}
