/*
 * test_jail.c - the jail (validators/jail.h) and the gate runner
 * (validators/gate.h), against real namespaces and real processes.
 *
 * Every test runs commands in a jail on a fresh scratch directory under
 * $TMPDIR (or /tmp) and checks what they could see and do.  Works as root and
 * as an unprivileged user; the test that needs a mount of its own (locked
 * mount flags) only runs as root.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"
#include "util.h"
#include "validators/gate.h"
#include "validators/jail.h"

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
static int run_in(sl_jail_result *r, const char *dir, const char *cmd, unsigned timeout_ms,
		  sl_err *err)
{
	sl_jail_opts o = SL_JAIL_OPTS_INIT;

	o.workdir = dir;
	o.command = cmd;
	o.timeout_ms = timeout_ms;
	return sl_jail_run(r, &o, err);
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

/* Host processes (other than us) whose command line contains marker. */
static int host_procs_with(const char *marker)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;

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
		if (strstr(buf, marker))
			n++;
	}
	closedir(d);
	return n;
}

static void test_exit_status(void)
{
	sl_jail_result r;
	sl_err err = SL_ERR_INIT;
	char *dir = scratch();

	sl_jail_result_init(&r);
	CHECK_INT(run_in(&r, dir, "exit 7", 0, &err), 0);
	CHECK_INT(r.exited, 1);
	CHECK_INT(r.exit_status, 7);
	CHECK_INT(r.term_signal, 0);
	CHECK_INT(r.timed_out, 0);
	CHECK(r.duration_ms >= 0 && r.duration_ms < 5000);

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

	sl_jail_result_init(&r);
	CHECK_INT(run_in(&r, dir, "echo before; sleep 100", 400, &err), 0);
	took = sl_now_ms() - t0;
	CHECK_INT(r.timed_out, 1);
	CHECK_INT(r.exited, 0);
	CHECK(r.duration_ms >= 400);
	CHECK(took < 400 + 1500);
	CHECK_STR(r.output.buf, "before\n");
	CHECK_INT(host_procs_with("sleep 100"), 0);
	sl_jail_result_release(&r);
	unscratch(dir);
}

/* A daemon (setsid, double fork) does not outlive the jail, even when it holds the output pipe. */
static void test_daemons_die(void)
{
	sl_jail_result r;
	sl_err err = SL_ERR_INIT;
	char *dir = scratch(), m1[64], m2[64], m3[64], cmd[512];

	/* fractional sleeps make command lines no other process has */
	snprintf(m1, sizeof(m1), "sleep 300.%d1", (int)getpid());
	snprintf(m2, sizeof(m2), "sleep 300.%d2", (int)getpid());
	snprintf(m3, sizeof(m3), "sleep 300.%d3", (int)getpid());
	snprintf(cmd, sizeof(cmd),
		 "(setsid %s & echo $! >/tmp/d1); (setsid %s >/dev/null 2>&1 </dev/null &);"
		 "sleep 0.2; test -d /proc/$(cat /tmp/d1) && echo alive; exit 0", m1, m2);
	sl_jail_result_init(&r);
	CHECK_INT(run_in(&r, dir, cmd, 20000, &err), 0);
	CHECK_INT(r.exited, 1);
	CHECK_INT(r.exit_status, 0);
	CHECK_STR(r.output.buf, "alive\n");
	CHECK(r.duration_ms < 3000);
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
	CHECK_INT(run_in(&r, dir, cmd, 0, &err), 0);
	for (int i = 0; i < 3; i++) {
		snprintf(host, sizeof(host), "/%s/%s", host_dirs[i], name);
		CHECK(access(host, F_OK));
		unlink(host);
	}
	CHECK_STR(r.output.buf, "src-ok\ntmp-ok\nshm-ok\nnull-ok\nno-shadow\n");
	file = sl_path_join(dir, "out.txt");
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

	if (access("/usr/bin/cc", X_OK)) {
		printf("# skip test_compiles: no /usr/bin/cc\n");
		return;
	}
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

	if (geteuid() != 0) {
		printf("# skip test_locked_mount_flags: not root\n");
		return;
	}
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
		ok = !run_in(&r, dir, "echo hi > /src/f && cat /src/f; cp /bin/true /src/t;"
			     " /src/t 2>/dev/null || echo noexec; grep -c ' /src .*noexec' /proc/self/mountinfo",
			     0, &err);
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
	int id, bad;
	int64_t slowest;
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
		if (r.duration_ms > p->slowest)
			p->slowest = r.duration_ms;
	}
	sl_jail_result_release(&r);
	unscratch(dir);
	return NULL;
}

/* Jails started from several threads at once neither mix output nor wait for each other. */
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
		CHECK(p[i].slowest < 900);   /* below the 1 s pipe drain */
	}
}

static void test_gate_verdicts(void)
{
	sl_gate_def g = { "g", NULL, 0 };
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
	CHECK(r.duration_ms >= 1000 && r.duration_ms < 3000);

	g.command = "head -c 200000 /dev/zero | tr '\\0' a; echo; echo end";
	g.timeout_s = 0;
	CHECK_INT(sl_gate_run(&r, &g, dir), 0);
	CHECK_INT(r.verdict, SL_VERDICT_PASS);
	CHECK_INT(r.output_total, 200005);
	CHECK_INT(r.output.len, 64 * 1024);
	CHECK(r.output.len >= 5 && !strcmp(r.output.buf + r.output.len - 5, "\nend\n"));

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

int main(void)
{
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
	return unit_done();
}
