/*
 * bench/session.c - where a `generate: act` step's time goes (issue 28).
 *
 *   sh bench/session.sh [N]     (builds this against build/libsluice.a)
 *
 * A step's command runs in the jail on a layer over a small tree, through
 * the jail spawner, as in a run.  N rounds (default 100), each timing, in
 * turn so that drift hits them alike:
 *
 *   jail+wrapper   a jail of its own per step running the old wrapper
 *                  (timeout, the output to a file, wc, head/tail) around
 *                  `true`: how steps ran before the session's jail;
 *   jail           the same jail running `true` alone: the jail's build,
 *                  teardown and the spawner's round trip;
 *   session        one command (`true`) in the session's jail (opened once):
 *                  what a step costs now;
 *   session+wrapper the old wrapper in the session's jail: the wrapper's
 *                  own cost, apart from the jail's.
 *
 * Prints p50 and p90 of each, and the differences that make up a step:
 * jail - session (building and tearing down a jail per step) and
 * session+wrapper - session (the wrapper's four more programs).  The jail's
 * own steps (namespaces, mounts, cgroup, pivot_root, teardown) are in
 * bench/jail.sh's breakdown.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/bench.h"
#include "common/util.h"
#include "validators/validators.h"

/* The wrapper every step ran in before the session's jail (pipeline/generate/act.c, 2026-11). */
static const char wrapper[] =
	"timeout -k 2 60 sh -c \"$SLUICE_STEP\" </dev/null >/tmp/.sluice-step 2>&1; s=$?; "
	"n=$(wc -c </tmp/.sluice-step); echo \"$n\"; if [ \"$n\" -le 8000 ]; then "
	"cat /tmp/.sluice-step; else head -c 4000 /tmp/.sluice-step; "
	"tail -c 4000 /tmp/.sluice-step; fi; exit $s";

enum { JAIL_WRAPPED, JAIL, SESSION, SESSION_WRAPPED, NSERIES };
static const char *const names[NSERIES] = {
	"jail+wrapper (before)", "jail (true)", "session (true: now)", "session+wrapper",
};

static int fail(const char *what, const sl_err *err)
{
	fprintf(stderr, "bench/session: %s: %s\n", what, err->msg);
	return 1;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;
	double *t[NSERIES], p50[NSERIES];
	char dir[] = "/tmp/bench-session.XXXXXX", path[256];
	const char *env[] = { "SLUICE_STEP=true", NULL };
	sl_jail_opts o = SL_JAIL_OPTS_INIT;
	sl_jail_result r;
	sl_jail_session *j = NULL;
	sl_err err = SL_ERR_INIT;

	if (n < 1 || !mkdtemp(dir))
		return 2;
	for (int s = 0; s < NSERIES; s++)
		t[s] = calloc((size_t)n, sizeof(double));
	snprintf(path, sizeof(path), "%s/tree", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/tree/calc.c", dir);
	sl_write_file(path, "int main(void) { return 0; }\n", 29, NULL);
	snprintf(path, sizeof(path), "%s/layer", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/layer/u", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/layer/w", dir);
	mkdir(path, 0755);
	if (sl_jail_spawner_start(&err))
		return fail("spawner", &err);
	snprintf(path, sizeof(path), "%s/tree", dir);
	o.workdir = sl_xstrdup(path);
	snprintf(path, sizeof(path), "%s/layer", dir);
	o.layer = path;
	o.env = env;
	o.timeout_ms = 600000;
	o.output_cap = 8064;
	sl_jail_result_init(&r);
	if (sl_jail_session_open(&j, &o, &err))
		return fail("session", &err);
	for (int i = 0; i < n; i++) {
		for (int s = 0; s < NSERIES; s++) {
			double a = bench_now_ms();
			int ret;

			o.command = s == JAIL_WRAPPED ? wrapper : "true";
			if (s == JAIL_WRAPPED || s == JAIL)
				ret = sl_jail_run(&r, &o, &err);
			else
				ret = sl_jail_session_exec(j, &r, s == SESSION ? "true" : wrapper,
							   60000, 4000, 4000, &err);
			t[s][i] = bench_now_ms() - a;
			if (ret || !r.exited || r.exit_status)
				return fail(names[s], &err);
		}
	}
	printf("rounds: %d (a step's command, through the spawner, on a layer)\n", n);
	printf("%-24s %8s %8s\n", "", "p50 ms", "p90 ms");
	for (int s = 0; s < NSERIES; s++) {
		double p90 = bench_pct(t[s], n, 90);

		p50[s] = bench_pct(t[s], n, 50);
		printf("%-24s %8.2f %8.2f\n", names[s], p50[s], p90);
	}
	printf("a jail per step (build + teardown + spawner): %.2f ms\n", p50[JAIL] - p50[SESSION]);
	printf("the wrapper (timeout, wc, cat; in the jail):  %.2f ms\n",
	       p50[SESSION_WRAPPED] - p50[SESSION]);
	printf("a step now: %.2f ms, before: %.2f ms\n", p50[SESSION], p50[JAIL_WRAPPED]);
	sl_jail_session_free(j);
	sl_jail_result_release(&r);
	sl_jail_spawner_stop();
	sl_rm_rf(dir, NULL);
	return 0;
}
