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
 * group id cannot have been reused).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
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

/* Keep the last STDERR_KEEP bytes of stderr. */
static void keep_tail(sl_buf *b, const char *data, size_t n)
{
	if (n >= STDERR_KEEP) {
		sl_buf_reset(b);
		sl_buf_add(b, data + n - STDERR_KEEP, STDERR_KEEP);
		return;
	}
	if (b->len + n > STDERR_KEEP) {
		size_t drop = b->len + n - STDERR_KEEP;

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

int sl_provider_command_complete(sl_provider *p, const sl_chat_msg *msgs, size_t n,
			    sl_completion *out, sl_err *err)
{
	int sv[2] = { -1, -1 }, po[2] = { -1, -1 }, pe[2] = { -1, -1 };
	int ret = SL_ERROR, status = 0, timed_out = 0, killed = 0;
	char *argv[] = { "/bin/sh", "-c", p->command, NULL };
	sl_buf input = SL_BUF_INIT, errtail = SL_BUF_INIT, msg = SL_BUF_INIT;
	int64_t deadline = sl_now_ms() + (int64_t)p->timeout_ms;
	size_t woff = 0;
	pid_t pid = -1;
	char chunk[65536];

	sl_provider_flatten_chat(&input, msgs, n);
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
		if (dup2(sv[1], 0) < 0 || dup2(po[1], 1) < 0 || dup2(pe[1], 2) < 0)
			_exit(127);
		close_range(3, ~0U, 0);
		execve("/bin/sh", argv, environ);
		_exit(127);
	}
	setpgid(pid, pid);       /* also here: no window where the group does not exist */
	close_fd(&sv[1]);
	close_fd(&po[1]);
	close_fd(&pe[1]);
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	fcntl(po[0], F_SETFL, O_NONBLOCK);
	fcntl(pe[0], F_SETFL, O_NONBLOCK);
	if (!input.len)
		close_fd(&sv[0]);

	while (po[0] >= 0 || pe[0] >= 0) {
		struct pollfd fds[3];
		int nf = 0, r;
		int64_t left = deadline - sl_now_ms();

		if (left <= 0) {
			timed_out = 1;
			break;
		}
		if (sv[0] >= 0)
			fds[nf++] = (struct pollfd){ sv[0], POLLOUT, 0 };
		if (po[0] >= 0)
			fds[nf++] = (struct pollfd){ po[0], POLLIN, 0 };
		if (pe[0] >= 0)
			fds[nf++] = (struct pollfd){ pe[0], POLLIN, 0 };
		r = poll(fds, (nfds_t)nf, left > 1000 ? 1000 : (int)left);
		if (r < 0 && errno != EINTR) {
			sl_err_set(err, SL_ERROR, "poll failed: %s", strerror(errno));
			killpg(pid, SIGKILL);
			killed = 1;
			break;
		}
		for (int i = 0; r > 0 && i < nf; i++) {
			int fd = fds[i].fd;
			ssize_t k;

			if (!fds[i].revents)
				continue;
			if (fd == sv[0]) {
				k = send(fd, input.buf + woff, input.len - woff,
					 MSG_NOSIGNAL | MSG_DONTWAIT);
				if (k > 0)
					woff += (size_t)k;
				/* EPIPE and friends: the command stopped reading */
				if (woff == input.len || (k < 0 && errno != EAGAIN && errno != EINTR) ||
				    (fds[i].revents & (POLLERR | POLLHUP)))
					close_fd(&sv[0]);
				continue;
			}
			k = read(fd, chunk, sizeof(chunk));
			if (k < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			if (k <= 0) {
				close_fd(fd == po[0] ? &po[0] : &pe[0]);
				continue;
			}
			if (fd == po[0])
				sl_buf_add(&out->text, chunk, (size_t)k);   /* past the cap: drained */
			else
				keep_tail(&errtail, chunk, (size_t)k);
		}
	}
	if (timed_out && !killed) {
		killpg(pid, SIGKILL);
		killed = 1;
	}

	/* wait for the exit without reaping, so the group id stays ours */
	for (long nap = 1; ; nap = nap < 20 ? nap * 2 : 20) {
		siginfo_t si;
		int rc;

		memset(&si, 0, sizeof(si));
		rc = waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT);
		if (!rc && si.si_pid == pid)
			break;
		if (rc && errno == ECHILD) {
			sl_err_set(err, SL_ERROR, "lost the command's process %ld", (long)pid);
			pid = -1;
			goto done;
		}
		if (!killed && sl_now_ms() >= deadline) {
			killpg(pid, SIGKILL);
			killed = timed_out = 1;
		}
		sl_provider_sleep_ms(nap);
	}
	killpg(pid, SIGKILL);      /* stragglers: background children of the command */
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	pid = -1;

	out->http_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (timed_out) {
		sl_buf_adds(&msg, "the command timed out after ");
		sl_provider_add_duration(&msg, p->timeout_ms);
		sl_err_set(err, SL_ERROR, "%s and was killed", msg.buf);
		goto done;
	}
	if (WIFSIGNALED(status))
		sl_buf_addf(&msg, "the command was killed by signal %d", WTERMSIG(status));
	else if (WEXITSTATUS(status))
		sl_buf_addf(&msg, "the command exited with status %d", WEXITSTATUS(status));
	if (msg.len) {
		if (errtail.len) {
			sl_buf_adds(&msg, ": ");
			last_line(&msg, &errtail);
		}
		sl_err_set(err, SL_ERROR, "%s", msg.buf);
		goto done;
	}
	ret = SL_OK;
done:
	if (pid > 0) {
		killpg(pid, SIGKILL);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	close_fd(&sv[0]);
	close_fd(&sv[1]);
	close_fd(&po[0]);
	close_fd(&po[1]);
	close_fd(&pe[0]);
	close_fd(&pe[1]);
	sl_buf_release(&input);
	sl_buf_release(&errtail);
	sl_buf_release(&msg);
	return ret;
}
