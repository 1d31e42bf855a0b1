/*
 * jail_session.c - one jail for a session of commands (`generate: act`).
 *
 * A session step used to build a jail of its own (namespaces, mounts, a
 * cgroup, a mount point: about 8 ms, most of a `true` step's cost).  Here
 * the jail is built once, by sl_jail_run_session() (jail.c) in a
 * supervising thread of this process or, while the spawner is active, in
 * the spawner; its pid 1 then runs each command the session sends it as a
 * fresh payload, with the same limits, filters and ids as any jail's.
 * After each command every other process of the jail is killed and
 * reaped, /tmp and /dev/shm are made anew and each payload has an IPC
 * namespace of its own: a command leaves the next one only the files of
 * /src (its layer).  The cgroup (memory, pids, CPU) holds for the session.
 *
 * The client (this file) holds one end of a SOCK_SEQPACKET control socket;
 * pid 1 the other (jail.h: the messages).  A command's output comes on a
 * pipe made for it, whose write end goes to pid 1 with the command; its
 * head and tail are kept, as the session shows them.  The command's time
 * running out, a stop of the run, or the end of the session close the
 * control socket: pid 1 exits and the kernel kills everything left in the
 * jail; the supervisor then removes its cgroup and mount point.  A run
 * killed with -9 closes the socket too (the spawner, seeing the run gone,
 * stops its jails; without the spawner pid 1 dies with its supervising
 * thread), so nothing outlives it.
 *
 * Calling sequence: sl_jail_session_open(); sl_jail_session_exec() for each
 * command, from one thread at a time; sl_jail_session_free().  A session
 * whose jail is gone (a timeout) says so (sl_jail_session_alive()); the
 * caller opens another on the same layer.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/util.h"
#include "validators/jail.h"

/* How long to keep reading a command's output once it has ended. */
#define DRAIN_MS 1000
#define CHUNK 65536

struct sl_jail_session {
	int ctl;                  /* our end of pid 1's control socket; -1 once closed */
	int jail_ctl;             /* pid 1's end, until the supervisor takes it */
	int req;                  /* the spawner's request, or -1 */
	int threaded;             /* thread supervises the jail */
	pthread_t thread;
	sl_jail_opts opts;        /* the supervisor's (strings borrowed during open) */
	sl_jail_result res;       /* the supervisor's, once the jail is gone */
	sl_err err;
	int ret;
};

static void *supervisor_main(void *arg)
{
	sl_jail_session *j = arg;

	j->ret = sl_jail_run_session(&j->res, &j->opts, j->jail_ctl, &j->err);
	return NULL;
}

static void close_ctl(sl_jail_session *j)
{
	if (j->ctl >= 0)
		close(j->ctl);
	j->ctl = -1;
}

/* Close the session and wait for its supervisor: its return, its error in err. */
static int session_end(sl_jail_session *j, sl_err *err)
{
	int ret = 0;

	close_ctl(j);
	if (j->threaded) {
		pthread_join(j->thread, NULL);
		j->threaded = 0;
		ret = j->ret;
		if (ret && err)
			sl_err_set(err, j->err.code ? j->err.code : SL_ERROR, "%s", j->err.msg);
	} else if (j->req >= 0) {
		sl_err e = SL_ERR_INIT;

		ret = sl_jail_spawner_reply(j->req, &j->res, &e);
		j->req = -1;
		if (ret && err)
			sl_err_set(err, e.code ? e.code : SL_ERROR, "%s", e.msg);
	}
	return ret;
}

/*
 * One report of pid 1 into r, waiting at most until deadline (0: no
 * deadline; a stop of the run counts as one).  1: got it; 0: the deadline
 * or the stop; -1: pid 1 is gone (end of file) or broke the protocol.
 */
static int recv_report(sl_jail_session *j, char *r, int64_t deadline)
{
	for (;;) {
		struct pollfd pfd = { .fd = j->ctl, .events = POLLIN };
		int64_t now = sl_now_ms();
		int wait_ms = 100;
		ssize_t n;

		if (sl_jail_stopping() || (deadline && now >= deadline))
			return 0;
		if (deadline && deadline - now < wait_ms)
			wait_ms = (int)(deadline - now);
		if (poll(&pfd, 1, wait_ms) <= 0)
			continue;
		n = recv(j->ctl, r, SL_JAIL_SESSION_REPORT, MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		return n == SL_JAIL_SESSION_REPORT ? 1 : -1;
	}
}

int sl_jail_session_open(sl_jail_session **out, const sl_jail_opts *opts, sl_err *err)
{
	sl_jail_session *j = sl_xcalloc(1, sizeof(*j));
	char rep[SL_JAIL_SESSION_REPORT];
	int sv[2], ret = SL_ERROR, kind;

	*out = NULL;
	j->ctl = j->jail_ctl = j->req = -1;
	sl_jail_result_init(&j->res);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv)) {
		sl_err_set(err, SL_ERROR, "jail: socketpair: %s", strerror(errno));
		goto done;
	}
	j->ctl = sv[0];
	j->opts = *opts;
	if (!j->opts.command)
		j->opts.command = "true";
	if (sl_jail_spawner_active()) {
		j->req = sl_jail_spawner_session(&j->opts, sv[1], err);
		close(sv[1]);
		if (j->req < 0)
			goto done;
	} else {
		j->jail_ctl = sv[1];
		if (pthread_create(&j->thread, NULL, supervisor_main, j)) {
			close(sv[1]);
			sl_err_set(err, SL_ERROR, "jail: cannot start the session's supervisor");
			goto done;
		}
		j->threaded = 1;
	}
	/* pid 1 says the jail is set up, or its end says why it is not */
	if (recv_report(j, rep, 0) == 1) {
		memcpy(&kind, rep, sizeof(kind));
		if (kind == SL_JAIL_REP_STARTED) {
			ret = 0;
			goto done;
		}
	}
	if (!session_end(j, err))
		sl_err_set(err, SL_ERROR, "jail: the session's jail ended before it was set up%s",
			   sl_jail_stopping() ? " (the run was stopped)" : "");
done:
	if (ret)
		sl_jail_session_free(j);
	else
		*out = j;
	return ret;
}

int sl_jail_session_alive(const sl_jail_session *j)
{
	return j && j->ctl >= 0;
}

/* Send the command with its output pipe's write end w. */
static int send_command(int ctl, const char *command, size_t len, unsigned timeout_s, int w)
{
	struct sl_jail_session_cmd h = { .timeout_s = timeout_s, .len = (uint32_t)len };
	sl_buf m = SL_BUF_INIT;
	int r;

	sl_buf_add(&m, &h, sizeof(h));
	sl_buf_add(&m, command, len);
	r = sl_send_fd_with(ctl, m.buf, m.len, w);
	sl_buf_release(&m);
	return r;
}

/* Keep the first head and the last tail bytes of b (amortised; all of them once final). */
static void keep_ends(sl_buf *b, size_t head, size_t tail, int final)
{
	size_t keep = head + tail;

	if (b->len <= keep || (!final && b->len < keep + tail + CHUNK))
		return;
	memmove(b->buf + head, b->buf + b->len - tail, tail);
	sl_buf_setlen(b, keep);
}

/* The state of one command, as exec reads it. */
struct cmd_run {
	int out_fd;
	int got;                  /* pid 1 reported the status */
	int status;
	int64_t drain_until;      /* once the command ended: stop reading then */
};

/* Read what is ready on the output pipe and the control socket. */
static void cmd_read(sl_jail_session *j, struct cmd_run *c, sl_jail_result *out,
		     size_t head, size_t tail, char *chunk)
{
	struct pollfd pfd[2];
	int nfd = 0, i_out = -1, i_ctl = -1;
	char rep[SL_JAIL_SESSION_REPORT];
	int64_t now = sl_now_ms();
	int wait_ms = 100;
	ssize_t n;

	if (c->drain_until && c->drain_until - now < wait_ms)
		wait_ms = c->drain_until > now ? (int)(c->drain_until - now) : 0;
	if (c->out_fd >= 0) {
		pfd[nfd].fd = c->out_fd;
		pfd[nfd].events = POLLIN;
		i_out = nfd++;
	}
	if (j->ctl >= 0 && !c->got) {
		pfd[nfd].fd = j->ctl;
		pfd[nfd].events = POLLIN;
		i_ctl = nfd++;
	}
	if (poll(pfd, (nfds_t)nfd, wait_ms) <= 0)
		return;
	if (i_out >= 0 && pfd[i_out].revents) {
		n = read(c->out_fd, chunk, CHUNK);
		if (n > 0) {
			out->output_total += (size_t)n;
			sl_buf_add(&out->output, chunk, (size_t)n);
			keep_ends(&out->output, head, tail, 0);
		} else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
			close(c->out_fd);
			c->out_fd = -1;
		}
	}
	if (i_ctl >= 0 && pfd[i_ctl].revents) {
		int kind;

		n = recv(j->ctl, rep, sizeof(rep), MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			return;
		memcpy(&kind, rep, sizeof(kind));
		if (n == (ssize_t)sizeof(rep) && kind == SL_JAIL_REP_STATUS) {
			memcpy(&c->status, rep + 2 * sizeof(int), sizeof(int));
			c->got = 1;
		} else {
			/* pid 1 is gone: killed (the OOM killer, the session's time) */
			close_ctl(j);
			out->term_signal = SIGKILL;
		}
		c->drain_until = sl_now_ms() + DRAIN_MS;
	}
}

int sl_jail_session_exec(sl_jail_session *j, sl_jail_result *out, const char *command,
			 unsigned timeout_ms, size_t head, size_t tail, sl_err *err)
{
	struct cmd_run c = { .out_fd = -1 };
	size_t len = strlen(command);
	int64_t start = sl_now_ms(), deadline = start + (timeout_ms ? timeout_ms : 600000u);
	char *chunk = NULL;
	int pp[2] = { -1, -1 };

	out->exited = out->exit_status = out->term_signal = out->timed_out = out->oom = 0;
	out->drain_cut = 0;
	out->duration_ms = out->cpu_ms = out->setup_ms = 0;
	out->output_total = 0;
	sl_buf_reset(&out->output);
	if (j->ctl < 0)
		return sl_err_set(err, SL_ERROR, "jail: the session's jail is gone");
	if (len > SL_JAIL_SESSION_CMD_MAX) {
		/* as exec would say it, without asking the jail */
		sl_buf_addf(&out->output, "sluice: the command is %zu bytes long; at most %u "
			    "fit in one argument\n", len, SL_JAIL_SESSION_CMD_MAX);
		out->output_total = out->output.len;
		out->exited = 1;
		out->exit_status = 126;
		return 0;
	}
	if (pipe2(pp, O_CLOEXEC))
		return sl_err_set(err, SL_ERROR, "jail: cannot create a pipe: %s", strerror(errno));
	if (send_command(j->ctl, command, len, (timeout_ms + 999) / 1000, pp[1])) {
		close(pp[0]);
		close(pp[1]);
		close_ctl(j);
		return sl_err_set(err, SL_ERROR, "jail: the session's jail is gone");
	}
	close(pp[1]);
	c.out_fd = pp[0];
	chunk = sl_xmalloc(CHUNK);
	for (;;) {
		int64_t now = sl_now_ms();

		if (c.out_fd < 0 && (c.got || j->ctl < 0))
			break;
		if (c.drain_until && now >= c.drain_until) {
			out->drain_cut = 1;
			break;
		}
		if (!c.got && j->ctl >= 0 && (now >= deadline || sl_jail_stopping())) {
			/* pid 1 exits; the kernel kills the rest: the output pipe ends */
			close_ctl(j);
			out->timed_out = 1;
			out->term_signal = SIGKILL;
			c.drain_until = now + DRAIN_MS;
		}
		cmd_read(j, &c, out, head, tail, chunk);
	}
	if (c.out_fd >= 0)
		close(c.out_fd);
	free(chunk);
	if (c.got && WIFEXITED(c.status)) {
		out->exited = 1;
		out->exit_status = WEXITSTATUS(c.status);
	} else if (c.got && WIFSIGNALED(c.status)) {
		out->term_signal = WTERMSIG(c.status);
	}
	keep_ends(&out->output, head, tail, 1);
	out->output.truncated = out->output_total > out->output.len;
	out->duration_ms = sl_now_ms() - start;
	return 0;
}

void sl_jail_session_free(sl_jail_session *j)
{
	if (!j)
		return;
	session_end(j, NULL);
	sl_jail_result_release(&j->res);
	free(j);
}
