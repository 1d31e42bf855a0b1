/*
 * test_jail.c - the jail (validators/jail.h) and the gate runner
 * (validators/gate.h), against real namespaces and real processes.
 *
 * Sessions (one jail, many commands) are tested at the end, with and
 * without the spawner.
 *
 * Every test runs commands in a jail on a fresh scratch directory under
 * $TMPDIR (or /tmp) and checks what they could see and do.  Works as root and
 * as an unprivileged user; the test that needs a mount of its own (locked
 * mount flags) only runs as root.
 */
#include <dirent.h>
#include <poll.h>
#include <pty.h>
#include <termios.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"
#include "common/util.h"
#include "validators/gate.h"
#include "validators/jail.h"
#include "validators/landlock.h"
#include "validators/sysfilter.h"

static char *scratch(void)
{
	const char *t = getenv("TMPDIR");
	char *dir = sl_path_join(t && *t == '/' ? t : "/tmp", "test_jail.XXXXXX");

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		exit(2);
	}
	return dir;
}

static void unscratch(char *dir)
{
	sl_rm_rf(dir, NULL);
	free(dir);
}

/* Run cmd in the jail on dir with the given timeout (0: default). */
/* writable: the workdir bound read-write, not behind the overlay */
static int run_in_as(sl_jail_result *r, const char *dir, const char *cmd, unsigned timeout_ms,
		     int writable, sl_err *err)
{
	sl_jail_opts o = SL_JAIL_OPTS_INIT;

	o.workdir = dir;
	o.command = cmd;
	o.timeout_ms = timeout_ms;
	o.writable_workdir = writable;
	return sl_jail_run(r, &o, err);
}

static int run_in(sl_jail_result *r, const char *dir, const char *cmd, unsigned timeout_ms,
		  sl_err *err)
{
	return run_in_as(r, dir, cmd, timeout_ms, 0, err);
}

/* Run cmd on a scratch dir, expect success, return the output (caller frees). */
static char *run_out(const char *cmd)
{
	sl_jail_result r;
	sl_err err = SL_ERR_INIT;
	char *dir = scratch(), *out;

	sl_jail_result_init(&r);
	if (run_in(&r, dir, cmd, 20000, &err)) {
		fprintf(stderr, "jail failed: %s\n", err.msg);
		unit_cur_failed = 1;
	}
	out = sl_buf_detach(&r.output, NULL);
	sl_jail_result_release(&r);
	unscratch(dir);
	return out;
}

/*
 * Walk the host's processes (other than us) whose command line contains
 * marker (and, with no_shell, is not "sh -c ..."): how many, and the first
 * one's pid in *first (if not NULL).
 */
static int host_procs_find(const char *marker, int no_shell, pid_t *first)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

	if (first)
		*first = -1;
	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char path[300], buf[4096];
		ssize_t len;
		int fd;

		if (e->d_name[0] < '0' || e->d_name[0] > '9' || atoi(e->d_name) == getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cmdline", e->d_name);
		if ((fd = open(path, O_RDONLY)) < 0)
			continue;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			continue;
		for (ssize_t i = 0; i < len; i++)
			if (!buf[i])
				buf[i] = ' ';
		buf[len] = '\0';
		if (!strstr(buf, marker) || (no_shell && strstr(buf, "sh -c")))
			continue;
		if (first && *first < 0)
			*first = (pid_t)atoi(e->d_name);
		n++;
	}
	closedir(d);
	return n;
}

/* Host processes (other than us) whose command line contains marker. */
static int host_procs_with(const char *marker)
{
	return host_procs_find(marker, 0, NULL);
}

static void test_exit_status(void)
{
	sl_jail_result r;
	sl_err err = SL_ERR_INIT;
	char *dir = scratch();

	int64_t t0 = sl_now_ms(), took;

	sl_jail_result_init(&r);
	CHECK_INT(run_in(&r, dir, "exit 7", 0, &err), 0);
	took = sl_now_ms() - t0;
	CHECK_INT(r.exited, 1);
	CHECK_INT(r.exit_status, 7);
	CHECK_INT(r.term_signal, 0);
	CHECK_INT(r.timed_out, 0);
	/* measured, and within the wall-clock time the call took */
	CHECK(r.duration_ms >= 0 && r.duration_ms <= took);

	CHECK_INT(run_in(&r, dir, "true", 0, &err), 0);
	CHECK_INT(r.exited, 1);
	CHECK_INT(r.exit_status, 0);

	CHECK_INT(run_in(&r, dir, "kill -KILL $$", 0, &err), 0);
	CHECK_INT(r.exited, 0);
	CHECK_INT(r.term_signal, SIGKILL);
	CHECK_INT(r.timed_out, 0);
	sl_jail_result_release(&r);
	unscratch(dir);
}

static void test_output(void)
{
	char *out = run_out("echo to-stdout; echo to-stderr >&2; printf no-newline");

	CHECK_STR(out, "to-stdout\nto-stderr\nno-newline");
	free(out);
}

static void test_output_cap_keeps_tail(void)
{
	sl_jail_opts o = SL_JAIL_OPTS_INIT;
	sl_jail_result r;
	sl_err err = SL_ERR_INIT;
	sl_buf want = SL_BUF_INIT;
	char *dir = scratch();

	for (int i = 1; i <= 200000; i++)
		sl_buf_addf(&want, "%d\n", i);
	o.workdir = dir;
	o.command = "seq 1 200000";
	o.output_cap = 5000;
	sl_jail_result_init(&r);
	CHECK_INT(sl_jail_run(&r, &o, &err), 0);
	CHECK_INT(r.exit_status, 0);
	CHECK_INT(r.output_total, want.len);
	CHECK(want.len > 1000000);
	CHECK_INT(r.output.len, 5000);
	CHECK(r.output.truncated);
	CHECK_STR(r.output.buf, want.buf + want.len - 5000);
	sl_jail_result_release(&r);
	sl_buf_release(&want);
	unscratch(dir);
}

static void test_timeout_kills(void)
{
	sl_jail_result r;
	sl_err err = SL_ERR_INIT;
	char *dir = scratch();
	int64_t t0 = sl_now_ms(), took;
	char cmd[64], marker[32];

	/* a marker of our own: other test runs may share the machine */
	snprintf(marker, sizeof(marker), "sleep 100.%ds", (int)getpid());
	snprintf(cmd, sizeof(cmd), "echo before; %s", marker);
	sl_jail_result_init(&r);
	/* long enough that "echo" runs first on a loaded machine; the sleep
	   outlasts it whatever the load */
	CHECK_INT(run_in(&r, dir, cmd, 5000, &err), 0);
	took = sl_now_ms() - t0;
	CHECK_INT(r.timed_out, 1);
	CHECK_INT(r.exited, 0);
	CHECK(r.duration_ms >= 5000);
	CHECK(took >= 5000);
	CHECK_STR(r.output.buf, "before\n");
	CHECK_INT(host_procs_with(marker), 0);
	sl_jail_result_release(&r);
	unscratch(dir);
}

/* A daemon (setsid, double fork) does not outlive the jail, even when it holds the output pipe. */
static void test_daemons_die(void)
{
	sl_jail_result r;
	sl_err err = SL_ERR_INIT;
	char *dir = scratch(), m1[64], m2[64], m3[64], cmd[512];

	/*
	 * fractional sleeps make command lines no other process has (the "s"
	 * ends the number, so a longer pid's marker does not contain ours)
	 */
	snprintf(m1, sizeof(m1), "sleep 300.%d1s", (int)getpid());
	snprintf(m2, sizeof(m2), "sleep 300.%d2s", (int)getpid());
	snprintf(m3, sizeof(m3), "sleep 300.%d3s", (int)getpid());
	snprintf(cmd, sizeof(cmd),
		 "(setsid %s & echo $! >/tmp/d1); (setsid %s >/dev/null 2>&1 </dev/null &);"
		 "sleep 0.2; test -d /proc/$(cat /tmp/d1) && echo alive; exit 0", m1, m2);
	sl_jail_result_init(&r);
	/* had the jail waited for the daemons (300 s) it would time out at 60 s */
	CHECK_INT(run_in(&r, dir, cmd, 60000, &err), 0);
	CHECK_INT(r.timed_out, 0);
	CHECK_INT(r.exited, 1);
	CHECK_INT(r.exit_status, 0);
	CHECK_STR(r.output.buf, "alive\n");
	CHECK_INT(host_procs_with(m1), 0);
	CHECK_INT(host_procs_with(m2), 0);

	snprintf(cmd, sizeof(cmd), "(setsid %s &); sleep 100", m3);
	CHECK_INT(run_in(&r, dir, cmd, 300, &err), 0);
	CHECK_INT(r.timed_out, 1);
	CHECK_INT(host_procs_with(m3), 0);
	sl_jail_result_release(&r);
	unscratch(dir);
}

static void test_env_cleared(void)
{
	sl_jail_opts o = SL_JAIL_OPTS_INIT;
	sl_jail_result r;
	sl_err err = SL_ERR_INIT;
	const char *extra[] = { "GATE_VAR=yes", "HOME=/src", NULL };
	char *dir = scratch();

	setenv("SLUICE_SECRET", "hunter2-do-not-leak", 1);
	o.workdir = dir;
	o.env = extra;
	/* a bracket in the pattern so grep does not find its own command line */
	o.command = "env | sort; cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null |"
		" tr '\\0' '\\n' | grep -c 'hunter[2]-do-not-leak'; cat /proc/1/environ";
	sl_jail_result_init(&r);
	CHECK_INT(sl_jail_run(&r, &o, &err), 0);
	CHECK_STR(r.output.buf,
		  "GATE_VAR=yes\nHOME=/src\nLANG=C.UTF-8\nPATH=/usr/local/bin:/usr/bin:/bin\n"
		  "PWD=/src\nTERM=dumb\nTMPDIR=/tmp\n0\n"
		  "cat: /proc/1/environ: Permission denied\n");
	CHECK_INT(r.exit_status, 1);
	unsetenv("SLUICE_SECRET");
	sl_jail_result_release(&r);
	unscratch(dir);
}

static void test_identity(void)
{
	char *out = run_out("id -u; id -g; id -G; grep -E '^(Cap|NoNewPrivs)' /proc/self/status;"
			    " uname -n; cat /proc/1/comm; tr -d '\\0' </proc/1/cmdline; echo");

	CHECK_STR(out, "1000\n1000\n1000\n"
		  "CapInh:\t0000000000000000\nCapPrm:\t0000000000000000\n"
		  "CapEff:\t0000000000000000\nCapBnd:\t0000000000000000\n"
		  "CapAmb:\t0000000000000000\nNoNewPrivs:\t1\n"
		  "sluice\nsluice-init\nsluice-init\n");
	free(out);
}

static void test_proc_is_private(void)
{
	char cmd[128], *out;
	int n;

	/* pid 1, sh, ls, wc */
	out = run_out("ls /proc | grep -c '^[0-9]'");
	n = atoi(out);
	CHECK(n >= 2 && n <= 5);
	free(out);
	snprintf(cmd, sizeof(cmd), "test -e /proc/%d || echo hidden", (int)getpid());
	out = run_out(cmd);
	CHECK_STR(out, "hidden\n");
	free(out);
}

static void test_writes_confined(void)
{
	static const char *const host_dirs[] = { "usr", "etc", "bin" };
	sl_jail_result r;
	sl_err err = SL_ERR_INIT;
	sl_buf got = SL_BUF_INIT;
	char *dir = scratch(), *file, name[64], host[128], cmd[1024];

	/* a name nothing else uses, removed again should the jail have failed */
	snprintf(name, sizeof(name), "sluice-test-jail-%d", (int)getpid());
	snprintf(cmd, sizeof(cmd),
		 "for p in /%s /usr/%s /etc/%s /etc/passwd /dev/x /bin/%s /src/../x; do"
		 "  touch $p 2>/dev/null && echo \"wrote $p\"; done;"
		 "echo hi > /src/out.txt && echo src-ok; echo t > /tmp/t && echo tmp-ok;"
		 "echo s > /dev/shm/s && echo shm-ok; echo > /dev/null && echo null-ok;"
		 "test -e /etc/shadow || echo no-shadow", name, name, name, name);
	sl_jail_result_init(&r);
	file = sl_path_join(dir, "out.txt");
	/* behind the overlay (the default) /src's writes stay in the jail */
	for (int writable = 0; writable < 2; writable++) {
		CHECK_INT(run_in_as(&r, dir, cmd, 0, writable, &err), 0);
		for (int i = 0; i < 3; i++) {
			snprintf(host, sizeof(host), "/%s/%s", host_dirs[i], name);
			CHECK(access(host, F_OK));
			unlink(host);
		}
		CHECK_STR(r.output.buf, "src-ok\ntmp-ok\nshm-ok\nnull-ok\nno-shadow\n");
		CHECK_INT(access(file, F_OK) == 0, writable);
	}
	CHECK_INT(sl_read_file(&got, file, 0, NULL), 0);
	CHECK_STR(got.buf, "hi\n");
	free(file);
	sl_buf_release(&got);
	sl_jail_result_release(&r);
	unscratch(dir);
}

static void test_no_inherited_fds(void)
{
	int fd = open("/dev/null", O_RDONLY);   /* no O_CLOEXEC on purpose */
	int fd2 = dup2(fd, 42);
	char *out = run_out("ls /proc/self/fd; readlink /proc/self/fd/0");

	CHECK(fd >= 0 && fd2 == 42);
	CHECK_STR(out, "0\n1\n2\n3\n/dev/null\n");
	free(out);
	close(fd);
	close(fd2);
}

static void test_limits(void)
{
	sl_jail_opts o = SL_JAIL_OPTS_INIT;
	sl_jail_result r;
	sl_err err = SL_ERR_INIT;
	char *dir = scratch(), *out;

	o.workdir = dir;
	o.tmp_mb = 1;
	o.command = "head -c 2000000 /dev/zero > /tmp/big 2>/dev/null || echo tmp-full;"
		" ulimit -c; ulimit -n";
	sl_jail_result_init(&r);
	CHECK_INT(sl_jail_run(&r, &o, &err), 0);
	CHECK_STR(r.output.buf, "tmp-full\n0\n1024\n");
	sl_jail_result_release(&r);
	unscratch(dir);

	/* forking still works under RLIMIT_NPROC; nested user namespaces do not */
	out = run_out("for i in 1 2 3 4 5 6 7 8; do (sleep 0.01) & done; wait; echo forked;"
		      " unshare -U true 2>/dev/null || echo no-userns");
	CHECK_STR(out, "forked\nno-userns\n");
	free(out);
}

static void test_no_network(void)
{
	/* loopback is up but is the jail's own; nothing else exists */
	char *out = run_out("grep : /proc/net/dev | cut -d: -f1 | tr -d ' '");

	CHECK_STR(out, "lo\n");
	free(out);
}

static void test_setup_errors(void)
{
	sl_jail_result r;
	sl_err err = SL_ERR_INIT;
	char *dir = scratch(), *file = sl_path_join(dir, "plain");

	CHECK_INT(sl_write_file(file, "x", 1, NULL), 0);
	sl_jail_result_init(&r);
	CHECK_INT(run_in(&r, file, "true", 0, &err), SL_ERROR);
	CHECK(strstr(err.msg, "bind /src") != NULL);
	CHECK(strstr(err.msg, "Not a directory") != NULL);

	sl_err_clear(&err);
	CHECK(run_in(&r, "/nonexistent/sluice/dir", "true", 0, &err) < 0);
	CHECK(strstr(err.msg, "/nonexistent/sluice/dir") != NULL);
	sl_jail_result_release(&r);
	free(file);
	unscratch(dir);
}

static void test_compiles(void)
{
	sl_jail_result r;
	sl_err err = SL_ERR_INIT;
	char *dir, *src;
	const char prog[] = "#include <stdio.h>\nint main(void) { puts(\"built in jail\"); return 0; }\n";

	if (access("/usr/bin/cc", X_OK))
		SKIP("no /usr/bin/cc");
	dir = scratch();
	src = sl_path_join(dir, "hello.c");
	CHECK_INT(sl_write_file(src, prog, sizeof(prog) - 1, NULL), 0);
	sl_jail_result_init(&r);
	CHECK_INT(run_in(&r, dir, "cc -o hello hello.c && ./hello", 60000, &err), 0);
	CHECK_INT(r.exit_status, 0);
	CHECK_STR(r.output.buf, "built in jail\n");
	sl_jail_result_release(&r);
	free(src);
	unscratch(dir);
}

/*
 * A workdir on a nosuid,nodev,noexec,noatime mount: the bind at /src must
 * keep those locked flags (else the remount fails with EPERM) and noexec
 * must still hold inside.  Needs a mount of our own, so root only.
 */
static void test_locked_mount_flags(void)
{
	char *dir;
	pid_t pid;
	int st = -1;

	if (geteuid() != 0)
		SKIP("not root");
	dir = scratch();
	pid = fork();
	if (pid == 0) {
		sl_jail_result r;
		sl_err err = SL_ERR_INIT;
		int ok;

		if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		    mount("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_NOATIME,
			  "mode=0755")) {
			perror("test mount");
			_exit(2);
		}
		sl_jail_result_init(&r);
		/* the overlay is a mount of its own: bind the workdir to see its flags */
		ok = !run_in_as(&r, dir, "echo hi > /src/f && cat /src/f; cp /bin/true /src/t;"
			     " /src/t 2>/dev/null || echo noexec; grep -c ' /src .*noexec' /proc/self/mountinfo",
			     0, 1, &err);
		if (!ok)
			fprintf(stderr, "jail: %s\n", err.msg);
		ok = ok && !strcmp(r.output.buf, "hi\nnoexec\n1\n");
		if (!ok)
			fprintf(stderr, "got: '%s'\n", r.output.buf);
		_exit(ok ? 0 : 1);
	}
	CHECK(pid > 0 && waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	unscratch(dir);
}

struct par {
	int id, bad, cut;
};

static void *par_run(void *arg)
{
	struct par *p = arg;
	char *dir = scratch(), cmd[64], want[64];
	sl_jail_result r;

	sl_jail_result_init(&r);
	for (int i = 0; i < 8; i++) {
		sl_err err = SL_ERR_INIT;

		snprintf(cmd, sizeof(cmd), "echo %d-%d", p->id, i);
		snprintf(want, sizeof(want), "%d-%d\n", p->id, i);
		if (run_in(&r, dir, cmd, 20000, &err) || strcmp(r.output.buf, want))
			p->bad++;
		if (r.drain_cut)
			p->cut++;
	}
	sl_jail_result_release(&r);
	unscratch(dir);
	return NULL;
}

/*
 * Jails started from several threads at once neither mix output nor wait for
 * each other: no jail's pipes are held open past its pid 1 by another's
 * processes (the drain would run out), whatever the machine's load.
 */
static void test_concurrent(void)
{
	pthread_t t[4];
	struct par p[4];

	for (int i = 0; i < 4; i++) {
		memset(&p[i], 0, sizeof(p[i]));
		p[i].id = i;
		CHECK_INT(pthread_create(&t[i], NULL, par_run, &p[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		CHECK_INT(p[i].bad, 0);
		CHECK_INT(p[i].cut, 0);   /* no jail held another's pipes open */
	}
}

static void test_gate_verdicts(void)
{
	sl_gate_def g = { .name = "g" };
	sl_gate_result r;
	char *dir = scratch(), *file = sl_path_join(dir, "plain");

	sl_gate_result_init(&r);
	g.command = "echo building; exit 0";
	CHECK_INT(sl_gate_run(&r, &g, dir), 0);
	CHECK_STR(sl_verdict_name(r.verdict), "pass");
	CHECK_INT(r.exit_status, 0);
	CHECK_STR(r.output.buf, "building\n");
	CHECK_INT(r.output_total, 9);

	g.command = "echo broken >&2; exit 3";
	CHECK_INT(sl_gate_run(&r, &g, dir), 0);
	CHECK_STR(sl_verdict_name(r.verdict), "fail");
	CHECK_INT(r.exit_status, 3);
	CHECK_STR(r.output.buf, "broken\n");

	g.command = "kill -SEGV $$";
	CHECK_INT(sl_gate_run(&r, &g, dir), 0);
	CHECK_INT(r.verdict, SL_VERDICT_FAIL);
	CHECK_INT(r.exit_status, -1);

	g.command = "sleep 30";
	g.timeout_s = 1;
	CHECK_INT(sl_gate_run(&r, &g, dir), 0);
	CHECK_STR(sl_verdict_name(r.verdict), "timeout");
	CHECK_INT(r.exit_status, -1);
	/* killed at the timeout: the sleep alone would have taken 30 s */
	CHECK(r.duration_ms >= 1000 && r.duration_ms < 30000);

	g.command = "head -c 200000 /dev/zero | tr '\\0' a; echo; echo end";
	g.timeout_s = 0;
	CHECK_INT(sl_gate_run(&r, &g, dir), 0);
	CHECK_INT(r.verdict, SL_VERDICT_PASS);
	CHECK_INT(r.output_total, 200005);
	CHECK_INT(r.output.len, 64 * 1024);
	CHECK(r.output.len >= 5 && !strcmp(r.output.buf + r.output.len - 5, "\nend\n"));

	/* a failure anywhere in a pipeline fails the gate: bash's pipefail */
	CHECK_INT(sl_gate_pipefail(), 1);
	g.command = "false | cat";
	CHECK_INT(sl_gate_run(&r, &g, dir), 0);
	CHECK_INT(r.verdict, SL_VERDICT_FAIL);
	CHECK_INT(r.exit_status, 1);
	g.command = "echo a | (exit 3) | cat";
	CHECK_INT(sl_gate_run(&r, &g, dir), 0);
	CHECK_INT(r.exit_status, 3);
	g.command = "false || true; echo $BASH_VERSION | grep -q .";
	CHECK_INT(sl_gate_run(&r, &g, dir), 0);
	CHECK_INT(r.verdict, SL_VERDICT_PASS);

	CHECK_INT(sl_write_file(file, "x", 1, NULL), 0);
	g.command = "true";
	CHECK_INT(sl_gate_run(&r, &g, file), 0);
	CHECK_STR(sl_verdict_name(r.verdict), "error");
	CHECK(strstr(r.error, "Not a directory") != NULL);
	CHECK_STR(sl_verdict_name((sl_verdict)99), "unknown");
	sl_gate_result_release(&r);
	free(file);
	unscratch(dir);
}

/* Which commands hold a pipeline whose status would hide its first stage without pipefail. */
static void test_gate_command_pipes(void)
{
	static const char *const pipes[] = { "make | tail", "make 2>&1|tail -20",
		"a || b | c", "make |& tee log", "x=\"'\"; a | b", "echo \\\\ | cat",
		"# note\nmake | tail", "$(make | tail)", "a #c\nb | c", "make#|tail" };
	static const char *const none[] = { "make", "a || b", "a||b", "echo 'a | b'",
		"echo \"a | b\"", "echo a\\|b", "make # | tail", "echo \"it's\" '|'", "",
		"echo \"x\\\" | y\"" };

	for (size_t i = 0; i < sizeof(pipes) / sizeof(*pipes); i++)
		if (!sl_gate_command_pipes(pipes[i]))
			CHECK_STR(pipes[i], "a pipeline");
	for (size_t i = 0; i < sizeof(none) / sizeof(*none); i++)
		if (sl_gate_command_pipes(none[i]))
			CHECK_STR(none[i], "no pipeline");
}

/*
 * The filter on a real terminal: TIOCSTI works without it (the control:
 * root may always inject; others where dev.tty.legacy_tiocsti allows) and
 * fails with EPERM under it, with and without high bits in the request.
 */
static void test_seccomp_tiocsti(void)
{
	const struct sock_fprog *prog;
	sl_err err = SL_ERR_INIT;
	struct pollfd pfd;
	struct termios tio;
	int master, slave, st;
	char c = 'Q', got = 0;
	pid_t pid;

	CHECK_INT(sl_seccomp_filter(&prog, 0, &err), 0);
	if (openpty(&master, &slave, NULL, NULL, NULL))
		SKIP("no pty");
	/* raw mode: a byte is readable at once, no newline needed */
	if (!tcgetattr(slave, &tio)) {
		cfmakeraw(&tio);
		tcsetattr(slave, TCSANOW, &tio);
	}
	fcntl(slave, F_SETFL, fcntl(slave, F_GETFL) | O_NONBLOCK);
	pfd.fd = slave;
	pfd.events = POLLIN;
	if (!ioctl(slave, TIOCSTI, &c)) {
		/* the injected byte is input of the slave side */
		CHECK_INT(poll(&pfd, 1, 1000), 1);
		CHECK_INT(read(slave, &got, 1), 1);
		CHECK_INT(got, 'Q');
	} else {
		printf("# no control: TIOCSTI refused without the filter (%s)\n", strerror(errno));
	}
	pid = fork();
	if (pid == 0) {
		int bad = 0;

		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || sl_seccomp_install(prog))
			_exit(10);
		if (ioctl(slave, TIOCSTI, &c) != -1 || errno != EPERM)
			bad |= 1;
		if (syscall(SYS_ioctl, slave, (unsigned long)TIOCSTI | (1ul << 32), &c) != -1 ||
		    errno != EPERM)
			bad |= 2;
		if (syscall(SYS_ioctl, slave, (unsigned long)TIOCLINUX | (0xfful << 40), &c) != -1 ||
		    errno != EPERM)
			bad |= 4;
		if (socket(AF_INET, SOCK_STREAM, 0) != -1 || errno != EAFNOSUPPORT)
			bad |= 8;
		if (socket(AF_UNIX, SOCK_STREAM, 0) < 0)
			bad |= 16;
		if (syscall(SYS_clone3, NULL, 0) != -1 || errno != ENOSYS)
			bad |= 32;
		if (unshare(CLONE_NEWNS) != -1 || errno != EPERM)
			bad |= 64;
		_exit(bad);
	}
	CHECK(waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st));
	CHECK_INT(WEXITSTATUS(st), 0);
	CHECK_INT(poll(&pfd, 1, 100), 0);    /* nothing was injected */
	close(master);
	close(slave);
}

/*
 * Whether this kernel runs 32-bit system calls at all (int 0x80 outside
 * any filter): where it does not, the call dies with SIGSEGV whatever the
 * filter says, and the test below cannot tell the filter's work apart.
 */
static int kernel_runs_int80(void)
{
#if defined(__x86_64__)
	int st;
	pid_t pid = fork();

	if (pid == 0) {
		long r;

		__asm__ volatile("int $0x80" : "=a"(r) : "a"(20L));   /* i386 getpid */
		_exit(r > 0 ? 0 : 1);
	}
	return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st);
#else
	return 0;
#endif
}

/* A foreign-architecture system call (int 0x80) kills the payload. */
static void test_seccomp_foreign_arch(void)
{
	char *out;

	if (!kernel_runs_int80())
		SKIP("this kernel runs no 32-bit system calls (int 0x80 dies unfiltered)");
	out = run_out("cat >/tmp/i.c <<'EOF'\n"
		      "int main(void) { long r; __asm__ volatile(\"int $0x80\" : \"=a\"(r) : \"a\"(20L)); return 0; }\n"
		      "EOF\n"
		      "cc -o /tmp/i /tmp/i.c 2>/dev/null || { echo no-cc; exit 0; }; /tmp/i; echo status $?");

	CHECK(strstr(out, "status 159\n") || !strcmp(out, "no-cc\n"));   /* 128 + SIGSYS */
	free(out);
}

static void test_layers(void)
{
	sl_jail_result r;
	sl_err err = SL_ERR_INIT;
	sl_buf names = SL_BUF_INIT;
	char *dir = scratch();
	unsigned want = SL_JAIL_MINIMUM | SL_JAIL_IPCNS | SL_JAIL_UTSNS | SL_JAIL_CGROUPNS |
		SL_JAIL_ROOTFS | SL_JAIL_SECCOMP | SL_JAIL_RLIMITS | SL_JAIL_NNP;

	sl_jail_result_init(&r);
	CHECK_INT(run_in(&r, dir, "grep -E '^(Seccomp|NoNewPrivs):' /proc/self/status", 0, &err), 0);
	CHECK_STR(r.output.buf, "NoNewPrivs:\t1\nSeccomp:\t2\n");
	CHECK_INT(r.layers & want, want);
	CHECK(r.layers & SL_JAIL_OVERLAY);     /* the default */
	sl_jail_layers_format(&names, SL_JAIL_USERNS | SL_JAIL_SECCOMP | SL_JAIL_OVERLAY);
	CHECK_STR(names.buf, "userns,seccomp,overlay");
	CHECK_STR(sl_jail_layer_name(SL_JAIL_LANDLOCK), "landlock");
	CHECK(sl_jail_layer_name(3) == NULL);
	sl_buf_release(&names);
	sl_jail_result_release(&r);
	unscratch(dir);
}

/* Landlock, where the kernel has it: /proc/self/attr and friends are not writable. */
static void test_landlock(void)
{
	char *out;

	if (!sl_landlock_abi())
		SKIP("no Landlock");
	out = run_out("echo x 2>/dev/null >/proc/self/comm && echo wrote-proc;"
		      " echo ok >/src/f && echo ok >/tmp/f && echo ok >/dev/null && cat /src/f;"
		      " mkdir -p /src/a /src/b && touch /src/a/x && mv /src/a/x /src/b/x && echo moved");
	CHECK_STR(out, "ok\nmoved\n");
	free(out);
}

static void test_overlay_collect(void)
{
	sl_jail_opts o = SL_JAIL_OPTS_INIT;
	sl_jail_result r;
	sl_err err = SL_ERR_INIT;
	char *dir = scratch(), *f = sl_path_join(dir, "kept");
	const char *collect[] = { "report.xml", "kept", "missing", "../x", "link", "fifo",
		"big", NULL };
	sl_buf b = SL_BUF_INIT;
	char marker[32], cmd[512];

	sl_write_file(f, "before\n", 7, NULL);
	o.workdir = dir;
	o.disk_mb = 4;
	o.collect = collect;
	o.collect_cap = 1000;
	o.timeout_ms = 20000;
	/* a daemon of our own: other test runs may share the machine */
	snprintf(marker, sizeof(marker), "sleep 29.%ds", (int)getpid());
	snprintf(cmd, sizeof(cmd),
		 "echo '<ok/>' >report.xml; echo after >kept; ln -s /etc/passwd link;"
		 " mkfifo fifo; head -c 3000 /dev/zero >big;"
		 " (setsid %s &); dd if=/dev/zero of=fill bs=1M count=10 2>/dev/null"
		 " && echo not-capped; df -m /src | tail -1 | tr -s ' ' | cut -d' ' -f2", marker);
	o.command = cmd;
	sl_jail_result_init(&r);
	CHECK_INT(sl_jail_run(&r, &o, &err), 0);
	CHECK_STR(r.output.buf, "4\n");
	CHECK(r.layers & SL_JAIL_OVERLAY);
	CHECK_INT(r.nfiles, 7);
	if (r.nfiles == 7) {
		CHECK_STR(r.files[0].path, "report.xml");
		CHECK_INT(r.files[0].err, 0);
		CHECK_STR(r.files[0].data.buf, "<ok/>\n");
		CHECK_STR(r.files[1].data.buf, "after\n");
		CHECK_INT(r.files[2].err, ENOENT);
		CHECK_INT(r.files[3].err, EXDEV);
		CHECK_INT(r.files[4].err, ELOOP);
		CHECK_INT(r.files[5].err, EINVAL);
		CHECK_INT(r.files[6].err, 0);
		CHECK_INT(r.files[6].truncated, 1);
		CHECK_INT(r.files[6].data.len, 1000);
	}
	/* nothing reached the host */
	CHECK_INT(sl_read_file(&b, f, 0, NULL), 0);
	CHECK_STR(b.buf, "before\n");
	sl_buf_release(&b);
	free(f);
	f = sl_path_join(dir, "report.xml");
	CHECK(access(f, F_OK) != 0);
	free(f);
	CHECK_INT(host_procs_with(marker), 0);
	sl_jail_result_release(&r);
	unscratch(dir);
}

/* Memory and process limits through cgroups, where this user may make one. */
static void test_cgroup_limits(void)
{
	sl_jail_opts o = SL_JAIL_OPTS_INIT;
	sl_jail_result r;
	sl_err err = SL_ERR_INIT;
	char *dir = scratch();

	o.workdir = dir;
	o.mem_mb = 64;
	o.pids_max = 20;
	o.timeout_ms = 60000;
	o.command = "for i in $(seq 40); do sleep 300 & done 2>/dev/null; echo spawned;"
		" head -c 200m /dev/zero | tail -c 1 >/dev/null; echo alive";
	sl_jail_result_init(&r);
	CHECK_INT(sl_jail_run(&r, &o, &err), 0);
	if (!(r.layers & SL_JAIL_CG_MEMORY)) {
		sl_jail_result_release(&r);
		unscratch(dir);
		SKIP("no cgroup for this user");
	}
	CHECK(r.layers & SL_JAIL_CG_PIDS);
	CHECK(r.oom || !strstr(r.output.buf, "alive"));
	/* the jail does not wait for the sleeps (300 s): no timeout at 60 s */
	CHECK_INT(r.timed_out, 0);
	sl_jail_result_release(&r);
	unscratch(dir);
}

/*
 * The CPU settings a command sees: where a CPU cgroup holds the jail, nice 0
 * and a quota of every online CPU by default (or the one asked for); else
 * nice 10 and no quota.
 */
static void cpu_settings(unsigned ask)
{
	sl_jail_opts o = SL_JAIL_OPTS_INIT;
	sl_jail_result r;
	sl_err err = SL_ERR_INIT;
	char *dir = scratch();
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	char want[16];
	int base;

	o.workdir = dir;
	o.cpu_milli = ask;
	o.accept = SL_JAIL_CG_CPU;
	o.timeout_ms = 60000;
	o.command = "nice";
	sl_jail_result_init(&r);
	CHECK_INT(sl_jail_run(&r, &o, &err), 0);
	/* the niceness the test runs at (nice make test) carries into the jail */
	errno = 0;
	base = getpriority(PRIO_PROCESS, 0);
	CHECK_INT(errno, 0);
	if (r.layers & SL_JAIL_CG_CPU) {
		snprintf(want, sizeof(want), "%d\n", base);
		CHECK_STR(r.output.buf, want);
		CHECK_INT(r.nice, 0);
		CHECK_INT(r.cpu_milli, ask ? ask : (unsigned)(ncpu > 1 ? ncpu : 1) * 1000);
	} else {
		snprintf(want, sizeof(want), "%d\n", base + 10 > 19 ? 19 : base + 10);
		CHECK_STR(r.output.buf, want);
		CHECK_INT(r.nice, 10);
		CHECK_INT(r.cpu_milli, 0);
	}
	sl_jail_result_release(&r);
	unscratch(dir);
}

static void test_cpu_settings(void)
{
	cpu_settings(0);
	cpu_settings(1500);
}

static void test_probe(void)
{
	sl_jail_layers l;
	sl_err err = SL_ERR_INIT;

	CHECK_INT(sl_jail_probe(&l, &err), 0);
	CHECK_INT(l.available & SL_JAIL_MINIMUM, SL_JAIL_MINIMUM);
	CHECK(l.available & SL_JAIL_ROOTFS);
	CHECK(l.available & SL_JAIL_SECCOMP);
	CHECK_STR(l.run_error, "");
	CHECK_INT(!!(l.available & SL_JAIL_LANDLOCK), l.landlock_abi > 0);
}

/* ---- the jail spawner (jail_spawner.c) ---- */

/* The parent of a host process, or -1. */
static pid_t parent_of(pid_t pid)
{
	char path[64], buf[4096], *p;
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
	if ((fd = open(path, O_RDONLY)) < 0)
		return -1;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return -1;
	buf[len] = '\0';
	p = strstr(buf, "\nPPid:");
	return p ? (pid_t)atol(p + 7) : -1;
}

/* The host process whose command line holds marker (not its shell), or -1. */
static pid_t host_proc_with(const char *marker)
{
	pid_t pid;

	host_procs_find(marker, 1, &pid);
	return pid;
}

/* A jail run in a thread of its own: "sleep 100.<marker>", timeout 120 s. */
struct bg_jail {
	pthread_t t;
	char *dir;
	char cmd[64];
	sl_jail_result r;
	sl_err err;
	int ret;
};

static void *bg_run(void *arg)
{
	struct bg_jail *b = arg;

	b->ret = run_in(&b->r, b->dir, b->cmd, 120000, &b->err);
	return NULL;
}

static int bg_start(struct bg_jail *b, const char *marker)
{
	memset(b, 0, sizeof(*b));
	b->dir = scratch();
	snprintf(b->cmd, sizeof(b->cmd), "%s", marker);
	sl_jail_result_init(&b->r);
	return pthread_create(&b->t, NULL, bg_run, b);
}

/* Wait (at most 60 s) for the marker's process on the host; its pid or -1. */
static pid_t wait_for_proc(const char *marker)
{
	for (int i = 0; i < 600; i++) {
		pid_t pid = host_proc_with(marker);

		if (pid > 0)
			return pid;
		usleep(100000);
	}
	return -1;
}

static void bg_finish(struct bg_jail *b)
{
	pthread_join(b->t, NULL);
	sl_jail_result_release(&b->r);
	unscratch(b->dir);
}

/* The jail's process 1 is the spawner's child, not this process's. */
static void test_spawner_is_the_parent(void)
{
	struct bg_jail b;
	char marker[32];
	pid_t pid, up, init = -1, spawner = sl_jail_spawner_pid();

	CHECK(spawner > 0);
	snprintf(marker, sizeof(marker), "sleep 100.%d1s", (int)getpid());
	CHECK_INT(bg_start(&b, marker), 0);
	pid = wait_for_proc(marker);
	CHECK(pid > 0);
	/* up the chain: command, (sh,) process 1 of the jail, its parent */
	for (up = pid; up > 1 && up != getpid() && up != spawner; up = parent_of(up))
		init = up;
	CHECK_INT(up, spawner);
	CHECK(init > 0 && init != pid);
	if (pid > 0)
		kill(pid, SIGKILL);
	bg_finish(&b);
	CHECK_INT(b.ret, 0);
	/* killed, or its shell saying so */
	CHECK(b.r.term_signal == SIGKILL || (b.r.exited && b.r.exit_status == 128 + SIGKILL));
	CHECK_INT(b.r.timed_out, 0);
}

/* A stop of this process reaches the jails in the spawner, which stays stopped. */
static void test_spawner_stop(void)
{
	static volatile int stop;
	struct bg_jail b;
	char marker[32];
	sl_jail_result r;
	sl_err err = SL_ERR_INIT;
	char *dir = scratch();

	snprintf(marker, sizeof(marker), "sleep 100.%d2s", (int)getpid());
	stop = 0;
	sl_jail_set_stop(&stop);
	CHECK_INT(bg_start(&b, marker), 0);
	CHECK(wait_for_proc(marker) > 0);
	stop = 1;
	bg_finish(&b);
	CHECK_INT(b.ret, 0);
	CHECK_INT(b.r.timed_out, 1);
	CHECK_INT(host_procs_with(marker), 0);
	/* the spawner's stop holds for the rest of its run, like the run's */
	stop = 0;
	sl_jail_result_init(&r);
	CHECK_INT(run_in(&r, dir, "sleep 100", 120000, &err), 0);
	CHECK_INT(r.timed_out, 1);
	sl_jail_result_release(&r);
	sl_jail_set_stop(NULL);
	sl_jail_spawner_stop();
	CHECK_INT(sl_jail_spawner_start(&err), 0);
	unscratch(dir);
}

/* A spawner that died is an error naming it, not a hang nor a verdict. */
static void test_spawner_gone(void)
{
	sl_jail_result r;
	sl_err err = SL_ERR_INIT;
	char *dir = scratch();
	pid_t spawner = sl_jail_spawner_pid();

	CHECK(spawner > 0);
	if (spawner > 0)
		kill(spawner, SIGKILL);
	sl_jail_result_init(&r);
	CHECK_INT(run_in(&r, dir, "true", 0, &err), SL_ERROR);
	CHECK(strstr(err.msg, "jail spawner") != NULL);
	CHECK_INT(r.exited, 0);
	sl_jail_result_release(&r);
	sl_jail_spawner_stop();
	CHECK_INT(sl_jail_spawner_pid(), -1);
	/* without the spawner, the caller runs the jail itself again */
	sl_jail_result_init(&r);
	sl_err_clear(&err);
	CHECK_INT(run_in(&r, dir, "exit 3", 0, &err), 0);
	CHECK_INT(r.exit_status, 3);
	sl_jail_result_release(&r);
	unscratch(dir);
}

/*
 * Sessions (validators/jail_session.c): one jail for many commands.  Files
 * in /src persist from one command to the next, nothing else does
 * (processes, /tmp, SysV IPC); pid 1 and its control socket are out of a
 * command's reach; a timeout takes the jail down; nothing is left behind.
 */

/* A session on dir/tree with dir/layer (u/ and w/) as its layer. */
static sl_jail_session *open_on(const char *dir, unsigned timeout_ms)
{
	sl_jail_opts o = SL_JAIL_OPTS_INIT;
	sl_jail_session *j = NULL;
	sl_err err = SL_ERR_INIT;
	char *tree = sl_path_join(dir, "tree"), *layer = sl_path_join(dir, "layer");
	char *u = sl_path_join(layer, "u"), *w = sl_path_join(layer, "w");

	mkdir(tree, 0755);
	mkdir(layer, 0755);
	mkdir(u, 0755);
	mkdir(w, 0755);
	o.workdir = tree;
	o.layer = layer;
	o.timeout_ms = timeout_ms;
	if (sl_jail_session_open(&j, &o, &err))
		fprintf(stderr, "sl_jail_session_open: %s\n", err.msg);
	free(tree);
	free(layer);
	free(u);
	free(w);
	return j;
}

/* Run cmd; its output (the caller frees), *status its exit status or 128+signal. */
static char *exec_out(sl_jail_session *j, const char *cmd, int *status)
{
	sl_jail_result r;
	sl_err err = SL_ERR_INIT;
	char *out;

	sl_jail_result_init(&r);
	*status = -1;
	if (sl_jail_session_exec(j, &r, cmd, 30000, 4096, 4096, &err)) {
		fprintf(stderr, "sl_jail_session_exec: %s\n", err.msg);
		sl_jail_result_release(&r);
		return sl_xstrdup("");
	}
	*status = r.exited ? r.exit_status : 128 + r.term_signal;
	out = sl_xstrdup(r.output.buf);
	sl_jail_result_release(&r);
	return out;
}

/*
 * SESSION_TEST(name) { body }: a test whose body runs with j, a session on
 * a scratch directory dir, opened before and freed after.
 */
static void with_session(void (*body)(sl_jail_session *j, const char *dir))
{
	char *dir = scratch();
	sl_jail_session *j = open_on(dir, 0);

	CHECK(j != NULL);
	if (j)
		body(j, dir);
	sl_jail_session_free(j);
	unscratch(dir);
}
#define SESSION_TEST(name) \
	static void name##_body(sl_jail_session *j, const char *dir); \
	static void name(void) { with_session(name##_body); } \
	static void name##_body(sl_jail_session *j, const char *dir)

SESSION_TEST(test_session_files_persist_nothing_else)
{
	char *out;
	int st;

	out = exec_out(j, "echo kept >/src/f; echo gone >/tmp/t; echo shm >/dev/shm/s; "
		       "x=1; export Y=2; cd /tmp; ipcmk -M 4096 >/dev/null && echo ok", &st);
	CHECK_INT(st, 0);
	CHECK_STR(out, "ok\n");
	free(out);
	out = exec_out(j, "cat /src/f; pwd; ls -A /tmp /dev/shm; echo \"x=$x Y=$Y\"; "
		       "ipcs -m 2>/dev/null | grep -c 4096", &st);
	CHECK_STR(out, "kept\n/src\n/dev/shm:\n\n/tmp:\nx= Y=\n0\n");
	free(out);
	/* the layer holds the file on the host, nothing else */
	{
		char *f = sl_path_join(dir, "layer/u/f");

		CHECK(access(f, F_OK) == 0);
		free(f);
	}
	out = exec_out(j, "exit 7", &st);
	CHECK_INT(st, 7);
	free(out);
}

/* A background process of one command is gone before the next one runs. */
SESSION_TEST(test_session_background_killed)
{
	char *out, marker[64], cmd[256];
	int st;

	snprintf(marker, sizeof(marker), "100%d.5", (int)getpid());
	snprintf(cmd, sizeof(cmd), "sleep 1%s & setsid sleep 2%s & echo started", marker, marker);
	out = exec_out(j, cmd, &st);
	CHECK_STR(out, "started\n");
	free(out);
	CHECK_INT(host_procs_with(marker), 0);
	out = exec_out(j, "ls /proc | grep -c '^[0-9]'; cat /proc/[0-9]*/comm | sort | tr '\\n' ' '",
		       &st);
	/* pid 1, the shell, ls and grep or cat, sort, tr: no sleep */
	CHECK(strstr(out, "sleep") == NULL);
	CHECK(strstr(out, "sluice-init") != NULL);
	free(out);
}

/* Pid 1 and its control socket are out of a command's reach. */
SESSION_TEST(test_session_init_out_of_reach)
{
	char *out;
	int st;

	out = exec_out(j, "for s in TERM KILL INT HUP STOP CHLD USR1; do "
		       "kill -s $s 1 2>/dev/null; done; "
		       "ls /proc/1/fd 2>&1 >/dev/null | grep -c denied; "
		       "cat /proc/1/environ 2>&1 >/dev/null | grep -c denied; "
		       "ls -l /proc/self/fd | grep -c socket; "
		       "grep -c . /proc/1/cmdline", &st);
	CHECK_STR(out, "1\n1\n0\n1\n");
	free(out);
	/* a debugger is refused too (no ptrace in the filter, pid 1 not dumpable) */
	out = exec_out(j, "{ command -v gdb >/dev/null && gdb -batch -p 1 2>&1 || echo denied; } | "
		       "grep -q -i 'denied\\|not permitted' && echo refused; "
		       "head -c 1 /proc/1/mem 2>&1 | grep -c denied; "
		       "grep TracerPid /proc/1/status", &st);
	CHECK_STR(out, "refused\n1\nTracerPid:\t0\n");
	free(out);
	/* and it still serves */
	out = exec_out(j, "echo alive", &st);
	CHECK_STR(out, "alive\n");
	CHECK(sl_jail_session_alive(j));
	free(out);
}

/* A command's time running out takes the jail down; what it wrote stays. */
static void test_session_timeout_ends_jail(void)
{
	char *dir = scratch(), *out, marker[64], cmd[256];
	sl_jail_session *j = open_on(dir, 0);
	sl_jail_result r;
	sl_err err = SL_ERR_INIT;
	int st;

	CHECK(j != NULL);
	if (!j)
		goto done;
	snprintf(marker, sizeof(marker), "1000.%d4", (int)getpid());
	snprintf(cmd, sizeof(cmd), "echo before >/src/b; echo said; sleep %s", marker);
	sl_jail_result_init(&r);
	CHECK_INT(sl_jail_session_exec(j, &r, cmd, 300, 100, 100, &err), 0);
	CHECK_INT(r.timed_out, 1);
	CHECK_INT(r.term_signal, SIGKILL);
	CHECK_STR(r.output.buf, "said\n");
	CHECK(!sl_jail_session_alive(j));
	CHECK_INT(sl_jail_session_exec(j, &r, "true", 1000, 100, 100, &err), SL_ERROR);
	sl_jail_result_release(&r);
	sl_jail_session_free(j);
	CHECK_INT(host_procs_with(marker), 0);
	j = open_on(dir, 0);
	CHECK(j != NULL);
	if (!j)
		goto done;
	out = exec_out(j, "cat /src/b", &st);
	CHECK_STR(out, "before\n");
	free(out);
done:
	sl_jail_session_free(j);
	unscratch(dir);
}

/* Head and tail of a flood, the total counted; a command too long for exec refused. */
SESSION_TEST(test_session_output_ends)
{
	char *big;
	sl_jail_result r;
	sl_err err = SL_ERR_INIT;

	sl_jail_result_init(&r);
	CHECK_INT(sl_jail_session_exec(j, &r, "echo first; yes | head -c 3000000; echo; echo last",
				       30000, 6, 5, &err), 0);
	CHECK_INT(r.output_total, 6 + 3000000 + 1 + 5);
	CHECK_INT(r.output.len, 11);
	CHECK(!memcmp(r.output.buf, "first\n", 6) && !memcmp(r.output.buf + 6, "last\n", 5));
	big = sl_xmalloc(SL_JAIL_SESSION_CMD_MAX + 2);
	memset(big, ' ', SL_JAIL_SESSION_CMD_MAX + 1);
	big[SL_JAIL_SESSION_CMD_MAX + 1] = '\0';
	CHECK_INT(sl_jail_session_exec(j, &r, big, 30000, 100, 100, &err), 0);
	CHECK_INT(r.exit_status, 126);
	CHECK(strstr(r.output.buf, "bytes long") != NULL);
	free(big);
	CHECK_INT(sl_jail_session_exec(j, &r, "echo still", 30000, 100, 100, &err), 0);
	CHECK_STR(r.output.buf, "still\n");
	sl_jail_result_release(&r);
}

/* A setup error is an error with its message, as sl_jail_run's. */
static void test_session_setup_error(void)
{
	sl_jail_opts o = SL_JAIL_OPTS_INIT;
	sl_jail_session *j = NULL;
	sl_err err = SL_ERR_INIT;

	o.workdir = "/nonexistent/sluice-test";
	CHECK(sl_jail_session_open(&j, &o, &err) != 0);
	CHECK(j == NULL);
	CHECK(strstr(err.msg, "nonexistent") != NULL);
}

int main(void)
{
	sl_err err = SL_ERR_INIT;

	RUN(test_exit_status);
	RUN(test_output);
	RUN(test_output_cap_keeps_tail);
	RUN(test_timeout_kills);
	RUN(test_daemons_die);
	RUN(test_env_cleared);
	RUN(test_identity);
	RUN(test_proc_is_private);
	RUN(test_writes_confined);
	RUN(test_no_inherited_fds);
	RUN(test_limits);
	RUN(test_no_network);
	RUN(test_setup_errors);
	RUN(test_compiles);
	RUN(test_locked_mount_flags);
	RUN(test_concurrent);
	RUN(test_gate_verdicts);
	RUN(test_gate_command_pipes);
	RUN(test_seccomp_tiocsti);
	RUN(test_seccomp_foreign_arch);
	RUN(test_layers);
	RUN(test_landlock);
	RUN(test_overlay_collect);
	RUN(test_cgroup_limits);
	RUN(test_cpu_settings);
	RUN(test_probe);
	RUN(test_session_files_persist_nothing_else);
	RUN(test_session_background_killed);
	RUN(test_session_init_out_of_reach);
	RUN(test_session_timeout_ends_jail);
	RUN(test_session_output_ends);
	RUN(test_session_setup_error);

	/* again, the jails run by the spawner: the same behaviour */
	if (sl_jail_spawner_start(&err)) {
		fprintf(stderr, "sl_jail_spawner_start: %s\n", err.msg);
		return 1;
	}
	RUN(test_spawner_is_the_parent);
	RUN_AS(test_exit_status, "spawner: test_exit_status");
	RUN_AS(test_output, "spawner: test_output");
	RUN_AS(test_output_cap_keeps_tail, "spawner: test_output_cap_keeps_tail");
	RUN_AS(test_timeout_kills, "spawner: test_timeout_kills");
	RUN_AS(test_daemons_die, "spawner: test_daemons_die");
	RUN_AS(test_env_cleared, "spawner: test_env_cleared");
	RUN_AS(test_identity, "spawner: test_identity");
	RUN_AS(test_proc_is_private, "spawner: test_proc_is_private");
	RUN_AS(test_writes_confined, "spawner: test_writes_confined");
	RUN_AS(test_no_inherited_fds, "spawner: test_no_inherited_fds");
	RUN_AS(test_limits, "spawner: test_limits");
	RUN_AS(test_no_network, "spawner: test_no_network");
	RUN_AS(test_setup_errors, "spawner: test_setup_errors");
	RUN_AS(test_gate_verdicts, "spawner: test_gate_verdicts");
	RUN_AS(test_landlock, "spawner: test_landlock");
	RUN_AS(test_overlay_collect, "spawner: test_overlay_collect");
	RUN_AS(test_cgroup_limits, "spawner: test_cgroup_limits");
	RUN_AS(test_cpu_settings, "spawner: test_cpu_settings");
	RUN_AS(test_session_files_persist_nothing_else, "spawner: test_session_files_persist_nothing_else");
	RUN_AS(test_session_background_killed, "spawner: test_session_background_killed");
	RUN_AS(test_session_init_out_of_reach, "spawner: test_session_init_out_of_reach");
	RUN_AS(test_session_timeout_ends_jail, "spawner: test_session_timeout_ends_jail");
	RUN_AS(test_session_output_ends, "spawner: test_session_output_ends");
	RUN_AS(test_session_setup_error, "spawner: test_session_setup_error");
	RUN(test_spawner_stop);
	RUN(test_spawner_gone);
	sl_jail_spawner_stop();
	return unit_done();
}
