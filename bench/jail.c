/*
 * bench/jail.c - spawn latency of the jail against bubblewrap, same run.
 *
 *   sh bench/jail.sh [N]        (builds this against build/libsluice.a)
 *
 * Runs N rounds (default 200); each round times one sl_jail_run() of
 * "true" on an empty workdir (every layer this machine offers: namespaces,
 * private root, the worktree overlay, masked /proc, seccomp, Landlock,
 * cgroups) and one bwrap given the same isolation it can express:
 * `--unshare-all --unshare-user --uid 1000 --gid 1000 --new-session
 * --die-with-parent --cap-drop ALL --clearenv`, read-only /usr (and the
 * merged-/usr links), --proc, --dev, a private --tmpfs /tmp, the workdir
 * bound at /src as its working directory, and the jail's own seccomp
 * filter through --seccomp FD; it runs `/bin/sh -c true`, as the jail runs
 * every command, alternating with the jail so that drift hits both alike.
 * Prints p50 and p90 of each and the ratio jail/bwrap (below 1: the jail
 * is faster).  Needs bwrap on PATH.
 *
 * bench/jail.sh compiles validators/jail.c with -DSL_JAIL_STEPS for this
 * program only: each step of a spawn stores when it ended in a page shared
 * with the jail's processes, and the time of each step (since the one
 * before) is printed as p50 and p90 over the rounds, to show where a slow
 * spawn spends its time.  A third series, alternating with the two others,
 * runs the jail without its cgroups (which bwrap does not make), to weigh
 * what they cost.
 */
#include <fcntl.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "validators/jail.h"
#include "validators/sysfilter.h"
#include "bench/bench.h"
#include "common/util.h"

extern char **environ;
/* validators/jail.c built with -DSL_JAIL_STEPS */
extern const char *const sl_jail_step_names[];
extern double *volatile sl_jail_steps;
#define NSTEPS 18

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 200;
	double *tj = calloc((size_t)n, sizeof(double)), *tb = calloc((size_t)n, sizeof(double));
	double *tn = calloc((size_t)n, sizeof(double));
	char dir[] = "/tmp/bench-jail.XXXXXX", fdarg[16];
	char *bw[] = { "bwrap", "--unshare-all", "--unshare-user", "--uid", "1000", "--gid", "1000",
		"--new-session", "--die-with-parent", "--cap-drop", "ALL", "--clearenv",
		"--setenv", "PATH", "/usr/bin:/bin", "--hostname", "sluice",
		"--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin",
		"--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
		"--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--bind", dir, "/src",
		"--chdir", "/src", "--seccomp", fdarg, "/bin/sh", "-c", "true", NULL };
	const struct sock_fprog *prog;
	sl_jail_opts o = SL_JAIL_OPTS_INIT;
	sl_jail_result r;
	sl_err err = SL_ERR_INIT;
	sl_buf layers = SL_BUF_INIT;
	unsigned full_layers = 0;

	double *steps = mmap(NULL, NSTEPS * sizeof(double), PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	double *dt = calloc((size_t)n * NSTEPS, sizeof(double));

	if (n < 1 || !tj || !tb || !tn || !dt || steps == MAP_FAILED || !mkdtemp(dir) ||
	    chmod(dir, 0755) || sl_seccomp_filter(&prog, 0, &err))
		return 2;
	sl_jail_steps = steps;
	o.workdir = dir;
	o.command = "true";
	sl_jail_result_init(&r);
	for (int i = 0; i < n; i++) {
		double t0 = bench_now_ms(), t1;
		pid_t pid;
		int st;

		memset(steps, 0, NSTEPS * sizeof(double));
		if (sl_jail_run(&r, &o, &err) || !r.exited || r.exit_status) {
			fprintf(stderr, "jail: %s\n", err.msg[0] ? err.msg : "true failed");
			return 1;
		}
		t1 = bench_now_ms();
		tj[i] = t1 - t0;
		full_layers = r.layers;
		/* each step since the last one seen (a step not taken stays 0) */
		for (int k = 1, last = 0; k < NSTEPS; k++)
			if (steps[k] > 0) {
				dt[k * n + i] = steps[k] - steps[last];
				last = k;
			}
		/* bwrap reads the filter from the descriptor, a fresh one each run */
		int sfd = memfd_create("seccomp", 0);
		size_t len = prog->len * sizeof(*prog->filter);

		if (sfd < 0 || write(sfd, prog->filter, len) != (ssize_t)len ||
		    lseek(sfd, 0, SEEK_SET)) {
			perror("seccomp memfd");
			return 1;
		}
		snprintf(fdarg, sizeof(fdarg), "%d", sfd);
		if (posix_spawnp(&pid, "bwrap", NULL, NULL, bw, environ)) {
			perror("bwrap");
			return 1;
		}
		close(sfd);
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "bwrap failed\n");
			return 1;
		}
		tb[i] = bench_now_ms() - t1;
		/* the jail again, without cgroups */
		setenv("SL_JAIL_BENCH_NO_CGROUP", "1", 1);
		t1 = bench_now_ms();
		if (sl_jail_run(&r, &o, &err) || !r.exited || r.exit_status) {
			fprintf(stderr, "jail: %s\n", err.msg[0] ? err.msg : "true failed");
			return 1;
		}
		tn[i] = bench_now_ms() - t1;
		unsetenv("SL_JAIL_BENCH_NO_CGROUP");
	}
	sl_jail_layers_format(&layers, full_layers);
		printf("jail layers: %s\n", layers.buf);
	printf("rounds: %d\n", n);
	printf("jail   p50 %6.2f ms  p90 %6.2f ms\n", bench_pct(tj, n, 50), bench_pct(tj, n, 90));
	printf("bwrap  p50 %6.2f ms  p90 %6.2f ms\n", bench_pct(tb, n, 50), bench_pct(tb, n, 90));
	printf("ratio jail/bwrap  p50 %.2f  p90 %.2f\n", bench_pct(tj, n, 50) / bench_pct(tb, n, 50),
	       bench_pct(tj, n, 90) / bench_pct(tb, n, 90));
	printf("jail without its cgroups  p50 %6.2f ms  p90 %6.2f ms  ratio to bwrap p50 %.2f  p90 %.2f\n",
	       bench_pct(tn, n, 50), bench_pct(tn, n, 90), bench_pct(tn, n, 50) / bench_pct(tb, n, 50),
	       bench_pct(tn, n, 90) / bench_pct(tb, n, 90));
	printf("jail steps (ms since the step before)       p50      p90\n");
	for (int k = 1; k < NSTEPS; k++) {
		printf("  %-40s %7.3f  %7.3f\n", sl_jail_step_names[k], bench_pct(dt + k * n, n, 50),
		       bench_pct(dt + k * n, n, 90));
	}
	sl_jail_result_release(&r);
	sl_buf_release(&layers);
	rmdir(dir);
	free(tj);
	free(tb);
	free(tn);
	free(dt);
	return 0;
}
