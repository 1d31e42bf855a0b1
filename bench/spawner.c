/*
 * bench/spawner.c - a jail run from a big process, with and without the
 * jail spawner (validators/jail_spawner.c).
 *
 *   sh bench/spawner.sh [N] [MB]     (builds this against build/libsluice.a)
 *
 * A run of 100,000 targets is a process of about 135 MB whose threads keep
 * writing while gates run.  This program holds MB MiB (default 160),
 * touched, and runs N rounds (default 40) of three series, interleaved so
 * that drift hits all alike:
 *   - anchor: the spawner started while the process was small (before the
 *     ballast), as `sluice run` does;
 *   - direct: sl_jail_run() without the spawner, cloned from the big process;
 * each round runs the jail's command `sleep 0.3` and, 50 ms after it
 * started, writes one byte to every page of the ballast from another
 * thread, the way the run's workers go on while a gate runs.  Prints per
 * series p50 and p90 of the jail's wall time and of that write (a page
 * shared copy-on-write with the jail's process 1 is copied on its first
 * write), and the ratio direct/anchor.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"
#include "common/util.h"
#include "validators/jail.h"

static char *ballast;
static size_t ballast_len;

struct toucher {
	pthread_t t;
	double ms;
	unsigned char round;
};

static void *touch(void *arg)
{
	struct toucher *t = arg;
	double t0;

	usleep(50000);
	t0 = bench_now_ms();
	for (size_t i = 0; i < ballast_len; i += 4096)
		ballast[i] = (char)(t->round + i);
	t->ms = bench_now_ms() - t0;
	return NULL;
}

/* One round: the jail's wall time into *jail_ms, the write into *touch_ms. */
static int round_once(const sl_jail_opts *o, unsigned char k, double *jail_ms, double *touch_ms)
{
	struct toucher t = { .round = k };
	sl_jail_result r;
	sl_err err = SL_ERR_INIT;
	double t0 = bench_now_ms();
	int ret;

	sl_jail_result_init(&r);
	if (pthread_create(&t.t, NULL, touch, &t))
		return -1;
	ret = sl_jail_run(&r, o, &err);
	*jail_ms = bench_now_ms() - t0;
	pthread_join(t.t, NULL);
	*touch_ms = t.ms;
	if (ret || !r.exited || r.exit_status) {
		fprintf(stderr, "jail: %s\n", err.msg[0] ? err.msg : "sleep failed");
		ret = -1;
	}
	sl_jail_result_release(&r);
	return ret;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 40;
	size_t mb = argc > 2 ? (size_t)atol(argv[2]) : 160;
	double *aj, *at, *dj, *dt;
	char dir[] = "/tmp/bench-spawner.XXXXXX";
	sl_jail_opts o = SL_JAIL_OPTS_INIT;
	sl_err err = SL_ERR_INIT;

	if (n < 1 || n > 10000 || mb < 1 || mb > 65536 || !mkdtemp(dir) || chmod(dir, 0755))
		return 2;
	aj = sl_xcalloc((size_t)n, sizeof(double));
	at = sl_xcalloc((size_t)n, sizeof(double));
	dj = sl_xcalloc((size_t)n, sizeof(double));
	dt = sl_xcalloc((size_t)n, sizeof(double));
	o.workdir = dir;
	o.command = "sleep 0.3";
	/* the spawner first, while this process is small */
	if (sl_jail_spawner_start(&err)) {
		fprintf(stderr, "spawner: %s\n", err.msg);
		return 1;
	}
	ballast_len = mb << 20;
	ballast = sl_xmalloc(ballast_len);
	memset(ballast, 1, ballast_len);
	for (int i = 0; i < n; i++) {
		if (round_once(&o, (unsigned char)i, &aj[i], &at[i]))
			return 1;
		/* the same process, the spawner set aside for one round */
		sl_jail_spawner_stop();
		if (round_once(&o, (unsigned char)i, &dj[i], &dt[i]))
			return 1;
		free(ballast);
		ballast = NULL;
		if (sl_jail_spawner_start(&err)) {
			fprintf(stderr, "spawner: %s\n", err.msg);
			return 1;
		}
		ballast = sl_xmalloc(ballast_len);
		memset(ballast, 1, ballast_len);
	}
	printf("ballast %zu MiB, %d rounds, the jail runs `sleep 0.3`\n", mb, n);
	printf("%-34s %9s %9s %9s %9s\n", "series", "jail p50", "jail p90", "write p50",
	       "write p90");
	{
		double a50 = bench_pct(aj, n, 50), a90 = bench_pct(aj, n, 90), w50 = bench_pct(at, n, 50),
		       w90 = bench_pct(at, n, 90);
		double d50 = bench_pct(dj, n, 50), d90 = bench_pct(dj, n, 90), x50 = bench_pct(dt, n, 50),
		       x90 = bench_pct(dt, n, 90);

		printf("%-34s %9.1f %9.1f %9.1f %9.1f\n", "anchor: spawner (small process)",
		       a50, a90, w50, w90);
		printf("%-34s %9.1f %9.1f %9.1f %9.1f\n", "direct: cloned from the big one",
		       d50, d90, x50, x90);
		printf("%-34s %9.2f %9.2f %9.2f %9.2f\n", "ratio direct/anchor", d50 / a50,
		       d90 / a90, x50 / w50, x90 / w90);
		printf("jail overhead over the sleep (ms, p50): anchor %.1f, direct %.1f\n",
		       a50 - 300, d50 - 300);
	}
	sl_jail_spawner_stop();
	sl_rm_rf(dir, NULL);
	return 0;
}
