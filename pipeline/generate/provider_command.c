/*
 * provider_command.c - the command kind: an external program asked on its
 * stdin, answering on its stdout.
 *
 * fork, then in the child a new process group, stdin/stdout/stderr on a
 * socket and two pipes, every other descriptor closed, and exec of
 * /bin/sh -c COMMAND with the host environment.  stdin is a socket so the
 * parent can write with MSG_NOSIGNAL: a command that exits without reading
 * cannot kill sluice with SIGPIPE.  The parent writes the flattened chat and
 * reads both outputs with poll() until they close or the deadline passes,
 * then waits for the child; at the deadline, and after every run, the whole
 * process group is killed (while the leader is an unreaped zombie, so the
 * group id cannot have been reused).  The leader also has SIGKILL as its
 * parent-death signal, so it does not outlive sluice when sluice is killed
 * or exits at a second signal without ending the group.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pipeline/generate/provider_internal.h"
#include "common/util.h"

extern char **environ;

/* Move fd out of 0..2 so the child's dup2 calls cannot clobber it. */
static int above_stdio(int fd)
{
	int nfd;

	if (fd < 0 || fd > 2)
		return fd;
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	close(fd);
	return nfd;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* Keep the last SL_CAP_COMMAND_STDERR bytes of stderr. */
static void keep_tail(sl_buf *b, const char *data, size_t n)
{
	if (n >= SL_CAP_COMMAND_STDERR) {
		sl_buf_reset(b);
		sl_buf_add(b, data + n - SL_CAP_COMMAND_STDERR, SL_CAP_COMMAND_STDERR);
		return;
	}
	if (b->len + n > SL_CAP_COMMAND_STDERR) {
		size_t drop = b->len + n - SL_CAP_COMMAND_STDERR;

		memmove(b->buf, b->buf + drop, b->len - drop);
		sl_buf_setlen(b, b->len - drop);
	}
	sl_buf_add(b, data, n);
}

static void last_line(sl_buf *out, sl_buf *text)
{
	const char *nl;

	sl_buf_rtrim(text);
	nl = strrchr(text->buf, '\n');
	nl = nl ? nl + 1 : text->buf;
	sl_provider_add_snippet(out, nl, strlen(nl));
}

/*
 * The usage trailer: when the last line of stderr is
 * "sluice-usage: prompt=N completion=M" (either part may be left out),
 * the numbers go to out and the line is taken off errtail, so an error
 * quotes the line before it.  Numbers that do not parse are not taken
 * (the caller then counts from bytes).
 */
static void take_usage(sl_buf *errtail, sl_completion *out)
{
	static const char tag[] = "sluice-usage:";
	const char *nl, *p;

	sl_buf_rtrim(errtail);
	nl = strrchr(errtail->buf, '\n');
	p = nl ? nl + 1 : errtail->buf;
	if (strncmp(p, tag, sizeof(tag) - 1))
		return;
	for (p += sizeof(tag) - 1; *p; ) {
		int64_t *dst = NULL;
		char *end;
		long long v;

		while (*p == ' ' || *p == '\t')
			p++;
		if (!strncmp(p, "prompt=", 7))
			dst = &out->tokens_in, p += 7;
		else if (!strncmp(p, "completion=", 11))
			dst = &out->tokens_out, p += 11;
		else
			break;
		errno = 0;
		v = strtoll(p, &end, 10);
		if (end == p || errno || v < 0 || (*end && *end != ' ' && *end != '\t'))
			break;
		*dst = v;
		p = end;
	}
	sl_buf_setlen(errtail, nl ? (size_t)(nl - errtail->buf) : 0);
}

/* Check and copy opts->command. */
static int command_new(sl_provider *p, const sl_provider_opts *opts, sl_err *err)
{
	if (!opts->command || !*opts->command)
		return sl_err_set(err, SL_EINPUT, "the command provider needs a command");
	p->command = sl_xstrdup(opts->command);
	return SL_OK;
}

/* Why the command's process group was killed. */
enum { CUT_NONE, CUT_TIMEOUT, CUT_DEADLINE, CUT_STOP, CUT_BROKEN };

/* One run of the command: the child and the parent's ends of its stdio. */
typedef struct cmd_run {
	const sl_provider *p;
	char *const *argv;          /* NULL: /bin/sh -c COMMAND */
	pid_t pid;                  /* the child, leader of its group; -1 once reaped */
	int in, out, errout;        /* its stdin, stdout, stderr; -1 once closed */
	int64_t timeout_at;         /* sl_now_ms() at which the timeout passes */
	int cut;                    /* CUT_*: the group was killed, and why */
} cmd_run;

/* The limit that has passed (CUT_*), CUT_NONE while the command may go on. */
static int limit_passed(const cmd_run *c)
{
	const sl_provider *p = c->p;
	int64_t now;

	if (p->stop && *p->stop)
		return CUT_STOP;
	now = sl_now_ms();
	if (p->deadline_ms && now >= p->deadline_ms && p->deadline_ms < c->timeout_at)
		return CUT_DEADLINE;
	return now >= c->timeout_at ? CUT_TIMEOUT : CUT_NONE;
}

/* Kill the whole group, once, remembering why. */
static void cut(cmd_run *c, int why)
{
	if (c->cut)
		return;
	killpg(c->pid, SIGKILL);
	c->cut = why;
}

/*
 * Start /bin/sh -c COMMAND in a process group of its own, stdin on a
 * socket, stdout and stderr on pipes, nothing else inherited; c->in, out
 * and errout get the parent's ends, non-blocking.
 */
static int spawn(cmd_run *c, sl_err *err)
{
	int sv[2] = { -1, -1 }, po[2] = { -1, -1 }, pe[2] = { -1, -1 };
	char *sh[] = { "/bin/sh", "-c", c->p->command, NULL };
	char *const *argv = c->argv ? c->argv : sh;
	int ret = SL_ERROR;
	pid_t pid, self = getpid();

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) ||
	    pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC)) {
		sl_err_set(err, SL_ERROR, "cannot create pipes for the command: %s", strerror(errno));
		goto done;
	}
	sv[1] = above_stdio(sv[1]);
	po[1] = above_stdio(po[1]);
	pe[1] = above_stdio(pe[1]);
	if (sv[1] < 0 || po[1] < 0 || pe[1] < 0) {
		sl_err_set(err, SL_ERROR, "cannot create pipes for the command: %s", strerror(errno));
		goto done;
	}

	pid = fork();
	if (pid < 0) {
		sl_err_set(err, SL_ERROR, "cannot run the command: fork: %s", strerror(errno));
		goto done;
	}
	if (!pid) {
		/* the child: async-signal-safe calls only */
		struct sigaction sa;
		sigset_t none;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = SIG_DFL;
		sigaction(SIGPIPE, &sa, NULL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		setpgid(0, 0);
		/* should sluice die without killing the group (kill -9, a second
		   signal), the leader dies with it */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != self)
			_exit(127);
		if (dup2(sv[1], 0) < 0 || dup2(po[1], 1) < 0 || dup2(pe[1], 2) < 0)
			_exit(127);
		close_range(3, ~0U, 0);
		execve("/bin/sh", (char **)argv, environ);
		_exit(127);
	}
	setpgid(pid, pid);       /* also here: no window where the group does not exist */
	c->pid = pid;
	c->in = sv[0];
	c->out = po[0];
	c->errout = pe[0];
	sv[0] = po[0] = pe[0] = -1;
	fcntl(c->in, F_SETFL, O_NONBLOCK);
	fcntl(c->out, F_SETFL, O_NONBLOCK);
	fcntl(c->errout, F_SETFL, O_NONBLOCK);
	ret = SL_OK;
done:
	for (int i = 0; i < 2; i++) {
		close_fd(&sv[i]);
		close_fd(&po[i]);
		close_fd(&pe[i]);
	}
	return ret;
}

/*
 * Write input to the command's stdin and read its stdout into out->text
 * (past its cap: drained) and the tail of its stderr into errtail, until
 * both outputs close or a limit passes (then the group is killed).  Checks
 * the limits at least every 100 ms, so a stop is seen promptly.
 */
static void exchange(cmd_run *c, const sl_buf *input, sl_completion *out, sl_buf *errtail,
		     sl_err *err)
{
	size_t woff = 0;
	char chunk[65536];

	if (!input->len)
		close_fd(&c->in);
	while (c->out >= 0 || c->errout >= 0) {
		struct pollfd fds[3];
		int nf = 0, r, why;
		int64_t left = c->timeout_at - sl_now_ms();

		if ((why = limit_passed(c))) {
			cut(c, why);
			return;
		}
		if (c->in >= 0)
			fds[nf++] = (struct pollfd){ c->in, POLLOUT, 0 };
		if (c->out >= 0)
			fds[nf++] = (struct pollfd){ c->out, POLLIN, 0 };
		if (c->errout >= 0)
			fds[nf++] = (struct pollfd){ c->errout, POLLIN, 0 };
		r = poll(fds, (nfds_t)nf, left > 100 ? 100 : (int)left);
		if (r < 0 && errno != EINTR) {
			sl_err_set(err, SL_ERROR, "poll failed: %s", strerror(errno));
			cut(c, CUT_BROKEN);
			return;
		}
		for (int i = 0; r > 0 && i < nf; i++) {
			int fd = fds[i].fd;
			ssize_t k;

			if (!fds[i].revents)
				continue;
			if (fd == c->in) {
				k = send(fd, input->buf + woff, input->len - woff,
					 MSG_NOSIGNAL | MSG_DONTWAIT);
				if (k > 0)
					woff += (size_t)k;
				/* EPIPE and friends: the command stopped reading */
				if (woff == input->len || (k < 0 && errno != EAGAIN && errno != EINTR) ||
				    (fds[i].revents & (POLLERR | POLLHUP)))
					close_fd(&c->in);
				continue;
			}
			k = read(fd, chunk, sizeof(chunk));
			if (k < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			if (k <= 0) {
				close_fd(fd == c->out ? &c->out : &c->errout);
				continue;
			}
			if (fd == c->out)
				sl_buf_add(&out->text, chunk, (size_t)k);   /* past the cap: drained */
			else
				keep_tail(errtail, chunk, (size_t)k);
		}
	}
}

/*
 * Wait for the leader to exit (killing the group when a limit passes),
 * without reaping it, so the group id stays ours while the group is
 * killed for stragglers (background children); then reap it into *status.
 */
static int reap(cmd_run *c, int *status, sl_err *err)
{
	for (long nap = 1; ; nap = nap < 20 ? nap * 2 : 20) {
		siginfo_t si;
		int rc, why;

		memset(&si, 0, sizeof(si));
		rc = waitid(P_PID, (id_t)c->pid, &si, WEXITED | WNOHANG | WNOWAIT);
		if (!rc && si.si_pid == c->pid)
			break;
		if (rc && errno == ECHILD) {
			sl_err_set(err, SL_ERROR, "lost the command's process %ld", (long)c->pid);
			c->pid = -1;
			return SL_ERROR;
		}
		if ((why = limit_passed(c)))
			cut(c, why);
		sl_provider_sleep_ms(nap);
	}
	killpg(c->pid, SIGKILL);
	while (waitpid(c->pid, status, 0) < 0 && errno == EINTR)
		;
	c->pid = -1;
	return SL_OK;
}

/* The run is stopping or out of wall time: a failure a later run may not have. */
static int cut_short(sl_completion *out, sl_err *err, int why, int ran)
{
	out->transient = 1;
	return sl_err_set(err, SL_ERROR, "%s; the command %s",
			  why == CUT_STOP ? "the run is stopping" :
			  "the run's wall-time budget is spent", ran ? "was killed" : "was not run");
}

/* The error of a run that did not succeed; SL_OK if it did. */
static int report(const cmd_run *c, int status, sl_buf *errtail, sl_completion *out,
		  sl_err *err)
{
	sl_buf msg = SL_BUF_INIT;
	int ret;

	switch (c->cut) {
	case CUT_BROKEN:
		return SL_ERROR;            /* err says why */
	case CUT_STOP:
	case CUT_DEADLINE:
		return cut_short(out, err, c->cut, 1);
	case CUT_TIMEOUT:
		sl_buf_adds(&msg, "the command timed out after ");
		sl_provider_add_duration(&msg, c->p->timeout_ms);
		sl_buf_adds(&msg, " and was killed");
		break;
	default:
		if (WIFSIGNALED(status))
			sl_buf_addf(&msg, "the command was killed by signal %d", WTERMSIG(status));
		else if (WEXITSTATUS(status))
			sl_buf_addf(&msg, "the command exited with status %d", WEXITSTATUS(status));
		if (msg.len && errtail->len) {
			sl_buf_adds(&msg, ": ");
			last_line(&msg, errtail);
		}
	}
	ret = msg.len ? sl_err_set(err, SL_ERROR, "%s", msg.buf) : SL_OK;
	sl_buf_release(&msg);
	return ret;
}

/* Kill and reap what is left of a run, close its descriptors. */
static void run_release(cmd_run *c)
{
	int status;

	if (c->pid > 0) {
		killpg(c->pid, SIGKILL);
		while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR)
			;
		c->pid = -1;
	}
	close_fd(&c->in);
	close_fd(&c->out);
	close_fd(&c->errout);
}

static int command_complete(sl_provider *p, const sl_provider_call *call, sl_completion *out,
			    sl_err *err)
{
	cmd_run c = { .p = p, .pid = -1, .in = -1, .out = -1, .errout = -1,
		      .timeout_at = sl_now_ms() + (int64_t)p->timeout_ms };
	sl_buf input = SL_BUF_INIT, errtail = SL_BUF_INIT;
	int ret = SL_ERROR, status = 0, why;

	if ((why = limit_passed(&c)) == CUT_STOP || why == CUT_DEADLINE)
		return cut_short(out, err, why, 0);
	sl_provider_flatten_chat(&input, call->msgs, call->n);
	if (spawn(&c, err))
		goto done;
	exchange(&c, &input, out, &errtail, err);
	if (reap(&c, &status, err))
		goto done;
	out->http_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	take_usage(&errtail, out);
	ret = report(&c, status, &errtail, out, err);
done:
	run_release(&c);
	sl_buf_release(&input);
	sl_buf_release(&errtail);
	return ret;
}

/*
 * The program a command line starts with, when it can be told without
 * running anything: its first word after VAR=value assignments, if that
 * word has no quotes, expansions or operators.  "" when it cannot be told.
 */
static void first_program(sl_buf *out, const char *cmd)
{
	const char *p = cmd;

	for (;;) {
		size_t n;

		p += strspn(p, " \t\n");
		n = strcspn(p, " \t\n;&|()<>");
		if (!n || memchr(p, '\'', n) || memchr(p, '"', n) || memchr(p, '$', n) ||
		    memchr(p, '`', n) || memchr(p, '\\', n) || *p == '-' || *p == '~' ||
		    *p == '=' || memchr(p, '*', n) || memchr(p, '?', n) || memchr(p, '[', n))
			return;
		if (memchr(p, '=', n)) {
			p += n;
			continue;
		}
		sl_buf_add(out, p, n);
		return;
	}
}

/*
 * Can the command start?  The shell checks its syntax (sh -n) and finds
 * its first program (command -v), without running it: exit 2 is a syntax
 * error, 127 a program not found.  Nothing is sent and nothing is spent.
 */
static int command_probe(sl_provider *p, sl_err *err)
{
	static const char script[] = "/bin/sh -n -c \"$1\" || exit 2; "
		"[ -z \"$2\" ] || command -v \"$2\" >/dev/null 2>&1 || exit 127";
	sl_buf prog = SL_BUF_INIT, input = SL_BUF_INIT, errtail = SL_BUF_INIT;
	sl_completion out;
	char *argv[] = { "/bin/sh", "-c", (char *)script, "sh", p->command, NULL, NULL };
	cmd_run c = { .p = p, .argv = argv, .pid = -1, .in = -1, .out = -1, .errout = -1,
		      .timeout_at = sl_now_ms() + 10000 };
	int ret = SL_ERROR, status = 0;

	sl_completion_init(&out);
	first_program(&prog, p->command);
	argv[5] = prog.buf;
	if (spawn(&c, err))
		goto done;
	exchange(&c, &input, &out, &errtail, err);
	if (reap(&c, &status, err))
		goto done;
	ret = SL_OK;
	if (c.cut == CUT_TIMEOUT || !WIFEXITED(status))
		;                   /* a slow shell is not the command's fault */
	else if (WEXITSTATUS(status) == 2) {
		sl_buf msg = SL_BUF_INIT;

		last_line(&msg, &errtail);
		ret = sl_err_set(err, SL_EINPUT, "the command is not valid shell%s%s",
				 msg.len ? ": " : "", msg.buf);
		sl_buf_release(&msg);
	} else if (WEXITSTATUS(status) == 127) {
		ret = sl_err_set(err, SL_EINPUT, "the command cannot start: '%s' is "
				 "not a program, builtin or function the shell finds", prog.buf);
	}
done:
	run_release(&c);
	sl_completion_release(&out);
	sl_buf_release(&prog);
	sl_buf_release(&input);
	sl_buf_release(&errtail);
	return ret;
}

const sl_provider_ops sl_provider_command = {
	.open = command_new, .complete = command_complete, .probe = command_probe,
};
