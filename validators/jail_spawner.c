/*
 * jail_spawner.c - jails cloned from a small process, not from the run.
 *
 * sl_jail_run() clones process 1 of the jail from its caller.  In a run that
 * holds 100,000 targets that caller is a process of 135 MB: every clone
 * copies its page tables, and while the jail lives every page the run
 * writes is copied once more (copy_process and copy-on-write faults were a
 * third of the CPU of such a run, bench/scale.sh).  sl_jail_spawner_start()
 * forks, early and while the process is still small, a spawner that runs
 * the jails instead: from then on sl_jail_run() in this process sends its
 * options to the spawner and waits for the result; the spawner calls
 * sl_jail_run() itself, in a thread per request, and the jail is a copy of
 * the spawner.  Nothing else changes: the same jail, the same result, the
 * same errors.
 *
 * Protocol.  The spawner has one control socket (SOCK_SEQPACKET).  A
 * request is a fresh stream socket pair: its one end goes to the spawner in
 * a one-byte message ('R') with SCM_RIGHTS; on its own end the caller writes
 * the options (a length, then the fields, encoded below) and reads the
 * reply (a length, then the return code, the error and the result).  A
 * session's jail (jail_session.c) is asked with 'Q': after the options the
 * caller sends the jail's end of the session's control socket on the
 * request's socket (one byte, SCM_RIGHTS); the spawner runs
 * sl_jail_run_session() and replies when that jail is gone.  'S' on
 * the control socket sets the spawner's stop flag: every jail in flight is
 * killed as at its timeout (sl_jail_set_stop); the caller sends it once
 * sl_jail_stopping() is true here.  End of file on the control socket (the
 * run ended, or died) stops the jails in flight too; the spawner waits for
 * them and exits.
 *
 * Calling sequence: sl_jail_spawner_start() from one thread before the
 * threads that run jails start; sl_jail_run() from any thread;
 * sl_jail_spawner_stop() once they are done.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"
#include "validators/jail.h"

#define MSG_MAX (64u << 20)     /* a request or a reply: 64 MiB (collected files) */
#define NIL_LEN 0xffffffffu     /* a NULL string or array */

static int ctl_fd = -1;         /* the caller's end of the control socket */
static pid_t spawner_pid = -1;
static pthread_mutex_t ctl_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_int stop_sent;

/* ---- encoding: little-endian integers, strings with a 32-bit length ---- */

static void put_u64(sl_buf *b, uint64_t v)
{
	unsigned char c[8];

	for (int i = 0; i < 8; i++)
		c[i] = (unsigned char)(v >> (8 * i));
	sl_buf_add(b, c, 8);
}

static void put_bytes(sl_buf *b, const char *s, size_t len)
{
	put_u64(b, s ? len : NIL_LEN);
	if (s)
		sl_buf_add(b, s, len);
}

static void put_str(sl_buf *b, const char *s)
{
	put_bytes(b, s, s ? strlen(s) : 0);
}

static void put_strv(sl_buf *b, const char *const *v)
{
	size_t n = 0;

	if (!v) {
		put_u64(b, NIL_LEN);
		return;
	}
	while (v[n])
		n++;
	put_u64(b, n);
	for (size_t i = 0; i < n; i++)
		put_str(b, v[i]);
}

/* A cursor over a received message; a short or bad message sets bad. */
struct rd {
	char *p;
	size_t left;
	int bad;
};

static uint64_t get_u64(struct rd *r)
{
	uint64_t v = 0;

	if (r->bad || r->left < 8) {
		r->bad = 1;
		return 0;
	}
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)(unsigned char)r->p[i] << (8 * i);
	r->p += 8;
	r->left -= 8;
	return v;
}

/* The next string, copied out and NUL-terminated; NULL for NIL_LEN. */
static char *get_str(struct rd *r, size_t *len_out)
{
	uint64_t len = get_u64(r);
	char *s;

	if (len_out)
		*len_out = 0;
	if (r->bad || len == NIL_LEN)
		return NULL;
	if (len > r->left) {
		r->bad = 1;
		return NULL;
	}
	s = sl_xmalloc(len + 1);
	memcpy(s, r->p, len);
	s[len] = '\0';
	r->p += len;
	r->left -= len;
	if (len_out)
		*len_out = len;
	return s;
}

static char **get_strv(struct rd *r)
{
	uint64_t n = get_u64(r);
	char **v;

	if (r->bad || n == NIL_LEN)
		return NULL;
	if (n > r->left / 8) {
		r->bad = 1;
		return NULL;
	}
	v = sl_xcalloc(n + 1, sizeof(*v));
	for (uint64_t i = 0; i < n && !r->bad; i++)
		v[i] = get_str(r, NULL);
	return v;
}

static void strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/*
 * A field added to sl_jail_opts or sl_jail_result must travel: these sizes
 * fail the build until encode_opts/decode_opts and encode_reply/
 * decode_reply know it.
 */
_Static_assert(sizeof(sl_jail_opts) == 120, "sl_jail_opts changed: update the spawner's encoding");
_Static_assert(sizeof(sl_jail_result) == 128, "sl_jail_result changed: update the spawner's encoding");
_Static_assert(sizeof(sl_jail_file) == 56, "sl_jail_file changed: update the spawner's encoding");

static void encode_opts(sl_buf *b, const sl_jail_opts *o)
{
	put_str(b, o->workdir);
	put_str(b, o->command);
	put_u64(b, o->timeout_ms);
	put_u64(b, o->output_cap);
	put_u64(b, o->tmp_mb);
	put_strv(b, o->env);
	put_u64(b, o->mem_mb);
	put_u64(b, o->pids_max);
	put_u64(b, o->disk_mb);
	put_strv(b, o->collect);
	put_u64(b, o->collect_cap);
	put_u64(b, (uint64_t)o->allow_inet);
	put_u64(b, (uint64_t)o->unsafe);
	put_u64(b, o->cpu_milli);
	put_u64(b, o->as_mb);
	put_u64(b, o->accept);
	put_u64(b, (uint64_t)o->no_landlock);
	put_u64(b, (uint64_t)o->writable_workdir);
	put_u64(b, (uint64_t)o->pipefail);
	put_str(b, o->layer);
}

/* The strings and arrays of *o are allocated: opts_free. */
static int decode_opts(struct rd *r, sl_jail_opts *o)
{
	o->workdir = get_str(r, NULL);
	o->command = get_str(r, NULL);
	o->timeout_ms = (unsigned)get_u64(r);
	o->output_cap = (size_t)get_u64(r);
	o->tmp_mb = (unsigned)get_u64(r);
	o->env = (const char *const *)get_strv(r);
	o->mem_mb = (unsigned)get_u64(r);
	o->pids_max = (unsigned)get_u64(r);
	o->disk_mb = (unsigned)get_u64(r);
	o->collect = (const char *const *)get_strv(r);
	o->collect_cap = (size_t)get_u64(r);
	o->allow_inet = (int)get_u64(r);
	o->unsafe = (int)get_u64(r);
	o->cpu_milli = (unsigned)get_u64(r);
	o->as_mb = (unsigned)get_u64(r);
	o->accept = (unsigned)get_u64(r);
	o->no_landlock = (int)get_u64(r);
	o->writable_workdir = (int)get_u64(r);
	o->pipefail = (int)get_u64(r);
	o->layer = get_str(r, NULL);
	return r->bad || r->left ? -1 : 0;
}

static void opts_free(sl_jail_opts *o)
{
	free((char *)o->workdir);
	free((char *)o->command);
	strv_free((char **)o->env);
	strv_free((char **)o->collect);
	free((char *)o->layer);
}

static void encode_reply(sl_buf *b, int ret, const sl_err *err, const sl_jail_result *res)
{
	put_u64(b, (uint64_t)(int64_t)ret);
	put_u64(b, (uint64_t)(int64_t)err->code);
	put_str(b, err->msg);
	put_u64(b, (uint64_t)res->exited);
	put_u64(b, (uint64_t)(int64_t)res->exit_status);
	put_u64(b, (uint64_t)res->term_signal);
	put_u64(b, (uint64_t)res->timed_out);
	put_u64(b, (uint64_t)res->oom);
	put_u64(b, (uint64_t)res->drain_cut);
	put_u64(b, (uint64_t)res->cpu_ms);
	put_u64(b, (uint64_t)res->duration_ms);
	put_u64(b, (uint64_t)res->setup_ms);
	put_bytes(b, res->output.buf, res->output.len);
	put_u64(b, (uint64_t)res->output.truncated);
	put_u64(b, res->output_total);
	put_u64(b, res->layers);
	put_u64(b, res->cpu_milli);
	put_u64(b, (uint64_t)(int64_t)res->nice);
	put_u64(b, res->nfiles);
	for (size_t i = 0; i < res->nfiles; i++) {
		const sl_jail_file *f = &res->files[i];

		put_str(b, f->path);
		put_u64(b, (uint64_t)(int64_t)f->err);
		put_u64(b, (uint64_t)f->truncated);
		put_bytes(b, f->data.buf, f->data.len);
		put_u64(b, (uint64_t)f->data.truncated);
	}
}

/* Into *res (initialized by the caller, output_cap as the output's cap). */
static int decode_reply(struct rd *r, int *ret, sl_err *err, sl_jail_result *res)
{
	char *msg, *s;
	size_t len, n;
	int code;

	*ret = (int)(int64_t)get_u64(r);
	code = (int)(int64_t)get_u64(r);
	msg = get_str(r, NULL);
	if (code)
		sl_err_set(err, code, "%s", msg ? msg : "");
	free(msg);
	res->exited = (int)get_u64(r);
	res->exit_status = (int)(int64_t)get_u64(r);
	res->term_signal = (int)get_u64(r);
	res->timed_out = (int)get_u64(r);
	res->oom = (int)get_u64(r);
	res->drain_cut = (int)get_u64(r);
	res->cpu_ms = (int64_t)get_u64(r);
	res->duration_ms = (int64_t)get_u64(r);
	res->setup_ms = (int64_t)get_u64(r);
	if ((s = get_str(r, &len))) {
		sl_buf_add(&res->output, s, len);
		free(s);
	}
	res->output.truncated = (int)get_u64(r);
	res->output_total = (size_t)get_u64(r);
	res->layers = (unsigned)get_u64(r);
	res->cpu_milli = (unsigned)get_u64(r);
	res->nice = (int)(int64_t)get_u64(r);
	n = (size_t)get_u64(r);
	if (r->bad || n > r->left / 8)
		return -1;
	if (n)
		res->files = sl_xcalloc(n, sizeof(*res->files));
	res->nfiles = n;
	for (size_t i = 0; i < n && !r->bad; i++) {
		sl_jail_file *f = &res->files[i];

		f->path = get_str(r, NULL);
		f->err = (int)(int64_t)get_u64(r);
		f->truncated = (int)get_u64(r);
		sl_buf_init(&f->data, 0);
		if ((s = get_str(r, &len))) {
			sl_buf_add(&f->data, s, len);
			free(s);
		}
		f->data.truncated = (int)get_u64(r);
	}
	return r->bad || r->left ? -1 : 0;
}

/* ---- moving messages ---- */

static int send_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int send_msg(int fd, const sl_buf *body)
{
	sl_buf head = SL_BUF_INIT;
	int ret;

	put_u64(&head, body->len);
	ret = send_all(fd, head.buf, head.len) || send_all(fd, body->buf, body->len) ? -1 : 0;
	sl_buf_release(&head);
	return ret;
}

/*
 * Read exactly len bytes.  With wait_stop, poll every 0.1 s and pass a stop
 * of this process on to the spawner.
 */
static int recv_all(int fd, char *p, size_t len, int wait_stop)
{
	while (len) {
		ssize_t n;

		if (wait_stop) {
			struct pollfd pfd = { .fd = fd, .events = POLLIN };
			int ready;

			if (sl_jail_stopping() && !atomic_exchange(&stop_sent, 1)) {
				pthread_mutex_lock(&ctl_lock);
				if (ctl_fd >= 0 && send(ctl_fd, "S", 1, MSG_NOSIGNAL) != 1) {
					/* the spawner is gone: the read below sees it */
				}
				pthread_mutex_unlock(&ctl_lock);
			}
			/* a signal (the stop) ends the poll early: check it again */
			ready = poll(&pfd, 1, 100);

			if (ready < 0 && errno != EINTR)
				return -1;
			if (ready <= 0)
				continue;
		}
		n = recv(fd, p, len, wait_stop ? MSG_DONTWAIT : 0);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* A whole message into *buf (allocated); -1 on end of file or a bad length. */
static int recv_msg(int fd, char **buf, size_t *len, int wait_stop)
{
	char head[8];
	struct rd r = { head, 8, 0 };
	uint64_t n;

	*buf = NULL;
	if (recv_all(fd, head, 8, wait_stop))
		return -1;
	n = get_u64(&r);
	if (n > MSG_MAX)
		return -1;
	*buf = sl_xmalloc(n ? n : 1);
	*len = n;
	if (recv_all(fd, *buf, n, wait_stop)) {
		free(*buf);
		*buf = NULL;
		return -1;
	}
	return 0;
}

/* ---- the spawner ---- */

static volatile int spawner_stop;
static pthread_mutex_t serving_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t serving_done = PTHREAD_COND_INITIALIZER;
static unsigned serving;

/*
 * One request: read the options, run the jail, write the reply.  A
 * session's request ('Q') is followed by the session's control socket.
 */
static void *serve(void *arg)
{
	int fd = (int)((intptr_t)arg >> 1), session = (int)((intptr_t)arg & 1), ctl = -1;
	char c;
	sl_jail_opts o = SL_JAIL_OPTS_INIT;
	sl_jail_result res;
	sl_err err = SL_ERR_INIT;
	sl_buf reply = SL_BUF_INIT;
	char *msg = NULL;
	size_t len = 0;
	int ret;

	sl_jail_result_init(&res);
	if (!recv_msg(fd, &msg, &len, 0)) {
		struct rd r = { msg, len, 0 };

		if (decode_opts(&r, &o))
			ret = sl_err_set(&err, SL_ERROR, "jail spawner: a malformed request");
		else if (!session)
			ret = sl_jail_run(&res, &o, &err);
		else if (sl_recv_fd(fd, &c, 1, &ctl) != 1 || ctl < 0)
			ret = sl_err_set(&err, SL_ERROR, "jail spawner: a session without its socket");
		else
			ret = sl_jail_run_session(&res, &o, ctl, &err);
		encode_reply(&reply, ret, &err, &res);
		send_msg(fd, &reply);
	}
	opts_free(&o);
	free(msg);
	sl_buf_release(&reply);
	sl_jail_result_release(&res);
	close(fd);
	pthread_mutex_lock(&serving_lock);
	serving--;
	pthread_cond_broadcast(&serving_done);
	pthread_mutex_unlock(&serving_lock);
	return NULL;
}

static void ignore_signal(int sig)
{
	(void)sig;
}

/* Every descriptor above 3 closed: the run's locks and files are not ours. */
static void close_from(int lowest)
{
	long max = sysconf(_SC_OPEN_MAX);

	if (!syscall(SYS_close_range, (unsigned)lowest, ~0u, 0))
		return;
	if (max < 0 || max > 65536)
		max = 65536;
	for (int fd = lowest; fd < max; fd++)
		close(fd);
}

static _Noreturn void spawner_main(int ctl)
{
	struct sigaction sa;
	pthread_attr_t attr;
	const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	int null_fd;

	/*
	 * The terminal's ^C reaches the whole process group: the run decides
	 * what a signal means and says 'S'.  A handler, not SIG_IGN, which the
	 * jails would inherit.
	 */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = ignore_signal;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	if (dup2(ctl, 3) < 0)
		_exit(126);
	close_from(4);
	/* stderr stays, for BUG(); nothing else of the run's terminal or pipes */
	if ((null_fd = open("/dev/null", O_RDWR | O_CLOEXEC)) >= 0) {
		dup2(null_fd, 0);
		dup2(null_fd, 1);
		if (null_fd > 3)
			close(null_fd);
	}
	ctl = 3;
	sl_jail_set_stop(&spawner_stop);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (;;) {
		char c = 0;
		int fd;
		pthread_t t;

		if (sl_recv_fd(ctl, &c, 1, &fd) <= 0)
			break;
		if (c == 'S')
			spawner_stop = 1;
		if (fd < 0)
			continue;
		if (c != 'R' && c != 'Q') {
			close(fd);
			continue;
		}
		pthread_mutex_lock(&serving_lock);
		serving++;
		pthread_mutex_unlock(&serving_lock);
		if (pthread_create(&t, &attr, serve, (void *)(((intptr_t)fd << 1) | (c == 'Q')))) {
			/* the caller reads end of file: "the spawner could not take it" */
			close(fd);
			pthread_mutex_lock(&serving_lock);
			serving--;
			pthread_mutex_unlock(&serving_lock);
		}
	}
	/* the run ended or died: stop what is in flight, wait for its cleanup */
	spawner_stop = 1;
	pthread_mutex_lock(&serving_lock);
	while (serving)
		pthread_cond_wait(&serving_done, &serving_lock);
	pthread_mutex_unlock(&serving_lock);
	_exit(0);
}

int sl_jail_spawner_start(sl_err *err)
{
	int sv[2];
	pid_t pid;

	if (ctl_fd >= 0)
		return SL_OK;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return sl_err_set(err, SL_ERROR, "jail spawner: socketpair: %s", strerror(errno));
	pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return sl_err_set(err, SL_ERROR, "jail spawner: fork: %s", strerror(errno));
	}
	if (pid == 0) {
		close(sv[0]);
		spawner_main(sv[1]);
	}
	close(sv[1]);
	ctl_fd = sv[0];
	spawner_pid = pid;
	atomic_store(&stop_sent, 0);
	return SL_OK;
}

void sl_jail_spawner_stop(void)
{
	int st;

	if (ctl_fd < 0)
		return;
	pthread_mutex_lock(&ctl_lock);
	close(ctl_fd);
	ctl_fd = -1;
	pthread_mutex_unlock(&ctl_lock);
	while (waitpid(spawner_pid, &st, 0) < 0 && errno == EINTR)
		;
	spawner_pid = -1;
}

pid_t sl_jail_spawner_pid(void)
{
	return ctl_fd >= 0 ? spawner_pid : -1;
}

/* ---- the caller's side ---- */

/* Hand one end of a new socket pair to the spawner (KIND 'R' or 'Q'); the other end, or -1. */
static int open_request(char kind)
{
	int sv[2], sent = -1;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return -1;
	pthread_mutex_lock(&ctl_lock);
	if (ctl_fd >= 0)
		sent = sl_send_fd(ctl_fd, kind, sv[1]) ? -1 : 1;
	pthread_mutex_unlock(&ctl_lock);
	close(sv[1]);
	if (sent != 1) {
		close(sv[0]);
		return -1;
	}
	return sv[0];
}

/*
 * Send a request of KIND with OPTS (and, for a session, its control socket
 * ctl); the request's socket, or -1 with err set.
 */
static int send_request(char kind, const sl_jail_opts *opts, int ctl, sl_err *err)
{
	sl_buf req = SL_BUF_INIT, abs_workdir = SL_BUF_INIT, abs_layer = SL_BUF_INIT;
	sl_jail_opts o = *opts;
	char cwd[4096];
	int fd;

	fd = open_request(kind);
	if (fd < 0) {
		sl_err_set(err, SL_ERROR, "jail spawner (pid %ld) is gone: %s",
			   (long)spawner_pid, strerror(errno));
		goto done;
	}
	/* the spawner's working directory is where this process started it */
	if (opts->workdir && opts->workdir[0] != '/' && getcwd(cwd, sizeof(cwd))) {
		sl_buf_addf(&abs_workdir, "%s/%s", cwd, opts->workdir);
		o.workdir = abs_workdir.buf;
	}
	if (opts->layer && opts->layer[0] != '/' && getcwd(cwd, sizeof(cwd))) {
		sl_buf_addf(&abs_layer, "%s/%s", cwd, opts->layer);
		o.layer = abs_layer.buf;
	}
	encode_opts(&req, &o);
	if (send_msg(fd, &req) || (ctl >= 0 && sl_send_fd(fd, 'C', ctl))) {
		sl_err_set(err, SL_ERROR, "jail spawner (pid %ld) ended without a reply",
			   (long)spawner_pid);
		close(fd);
		fd = -1;
	}
done:
	sl_buf_release(&req);
	sl_buf_release(&abs_workdir);
	sl_buf_release(&abs_layer);
	return fd;
}

int sl_jail_spawner_reply(int fd, sl_jail_result *out, sl_err *err)
{
	char *msg = NULL;
	size_t len = 0;
	int ret;

	if (recv_msg(fd, &msg, &len, 1)) {
		ret = sl_err_set(err, SL_ERROR, "jail spawner (pid %ld) ended without a reply",
				 (long)spawner_pid);
	} else {
		struct rd r = { msg, len, 0 };

		if (decode_reply(&r, &ret, err, out))
			ret = sl_err_set(err, SL_ERROR, "jail spawner: a malformed reply");
	}
	free(msg);
	close(fd);
	return ret;
}

int sl_jail_spawner_run(sl_jail_result *out, const sl_jail_opts *opts, sl_err *err)
{
	int fd = send_request('R', opts, -1, err);

	return fd < 0 ? SL_ERROR : sl_jail_spawner_reply(fd, out, err);
}

int sl_jail_spawner_session(const sl_jail_opts *opts, int ctl, sl_err *err)
{
	return send_request('Q', opts, ctl, err);
}

int sl_jail_spawner_active(void)
{
	return ctl_fd >= 0;
}
