/*
 * cmd_run.c - `sluice run` (scope, generate, apply, gate and record a
 * campaign, then print its funnel) and `sluice baseline` (the gates on the
 * base commit: what a campaign will blame).
 *
 * Both hand the campaign file to the library (pipeline/run.h), print its
 * progress and notices on stderr and its result on stdout.  run shows the
 * run going (progress.c: a live block on a terminal, timestamped events
 * and heartbeats off one) and writes the event stream with --events (to
 * stdout for "-": the funnel then goes to stderr).  run catches SIGINT and
 * SIGTERM: the first stops the run cleanly, a second exits.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline/cli/cmd.h"
#include "pipeline/cli/progress.h"
#include "pipeline/run.h"
#include "storage/lease.h"
#include "common/util.h"

struct run_opts {
	const char *repo, *store, *record, *events;
	int json, unsafe;
	unsigned lease_ttl;         /* 1..SL_LEASE_TTL_MAX; 0 = unset */
	unsigned shard_k, shard_n;  /* --shard K/N; shard_n = 0: none */
	const char *base, *bundle;
};

/* run and baseline take the same words for these */
#define OPT_REPO(type) CMD_OPT_REPO(type, "use this repository instead of the campaign's")
#define OPT_UNSAFE(type) \
	SL_OPT_BOOL("unsafe", 0, "run gates even where the jail lacks user, mount, pid or " \
		    "network namespaces (see `sluice doctor`); recorded with every verdict", \
		    type, unsafe)

static int parse_lease_ttl(void *opts, char *value, sl_err *err)
{
	long long v = sl_cmd_parse_id(value);

	if (!v || v > SL_LEASE_TTL_MAX)
		return sl_err_set(err, SL_EINPUT, "--lease-ttl '%s': expected seconds from 1 to %d",
				  value, SL_LEASE_TTL_MAX);
	((struct run_opts *)opts)->lease_ttl = (unsigned)v;
	return SL_OK;
}

/* --shard K/N: 0 <= K < N, N at most a million */
static int parse_shard(void *opts, char *value, sl_err *err)
{
	struct run_opts *o = opts;
	unsigned k, n;
	int used = 0;

	if (sscanf(value, "%u/%u%n", &k, &n, &used) != 2 || value[used] || !n || k >= n ||
	    n > 1000000 || !strchr("0123456789", value[0]))
		return sl_err_set(err, SL_EINPUT, "--shard '%s': expected K/N with 0 <= K < N "
				  "(e.g. 0/4)", value);
	o->shard_k = k;
	o->shard_n = n;
	return SL_OK;
}

/*
 * SIGINT/SIGTERM during `run`: the first asks the run to stop cleanly (the
 * library watches stop_flag), a second one exits at once.
 */
static volatile int stop_flag;
static volatile sig_atomic_t stop_signal;

static void on_stop_signal(int sig)
{
	if (stop_flag)
		_exit(128 + sig);
	stop_signal = sig;
	stop_flag = 1;
}

static void catch_stop_signals(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* What the run wants the user to know beyond the funnel (counts and budget reasons). */
static void run_notes(const sl_run_summary *sum)
{
	if (sum->stale_digest)
		fprintf(stderr, "sluice: %lld finished targets were judged under another definition "
			"of the campaign (gates, rules, prompt or model changed); `sluice retry "
			"--state stale` sends them back\n", (long long)sum->stale_digest);
	if (sum->held_elsewhere)
		fprintf(stderr, "sluice: %zu targets are held by another run (see `sluice status`)\n",
			sum->held_elsewhere);
	if (sum->lease_lost)
		fprintf(stderr, "sluice: %zu targets were taken over by another run while this one "
			"was paused past its lease; left to it\n", sum->lease_lost);
	if (sum->transient)
		fprintf(stderr, "sluice: %zu targets stay pending: the model endpoint kept failing "
			"after its retries; `sluice run` tries them again\n", sum->transient);
	if (sum->usage_rejected)
		fprintf(stderr, "sluice: %zu replies reported impossible token counts; their "
			"reservation was billed instead (see `sluice show --attempts`)\n",
			sum->usage_rejected);
	if (sum->stop_reason)
		fprintf(stderr, "sluice: stopped: %s\n", sum->stop_reason);
}

/* The library's progress lines and notices (run.h), on stderr. */
static void print_notice(void *ctx, const char *line)
{
	(void)ctx;
	fprintf(stderr, "%s\n", line);
}


static int run_main(const sl_command *self, void *opts, const sl_opt_args *args)
{
	struct run_opts *o = opts;
	sl_run_opts ro = SL_RUN_OPTS_INIT;
	sl_run_summary sum;
	sl_progress *prog;
	sl_store *st = NULL;
	sl_campaign_rec camp = { 0 };
	sl_err err = SL_ERR_INIT;
	char *store = NULL;
	int64_t proposed = 0;
	int ret;

	if (args->n != 1)
		return sl_cmd_usage(self, "expected one campaign file");
	ro.record = o->record;
	ro.lease_ttl_s = o->lease_ttl;
	ro.unsafe = o->unsafe;
	ro.shard_k = o->shard_k;
	ro.shard_n = o->shard_n;
	ro.base = o->base;
	store = sl_default_store_path(o->store);
	ro.spec_path = args->v[0];
	ro.repo = o->repo;
	ro.store = store;
	ro.stop = &stop_flag;
	catch_stop_signals();
	prog = sl_progress_start(&ro, o->events);
	ret = sl_run(&sum, &ro, &err);
	if (sl_progress_stop(prog, ret ? NULL : &err) && !ret)
		ret = SL_ERROR;
	if (ret) {
		ret = sl_cmd_fail(&err);
		goto done;
	}
	run_notes(&sum);
	if (sum.interrupted) {
		fprintf(stderr, "sluice: stopped by %s; `sluice run` resumes\n",
			stop_signal == SIGTERM ? "SIGTERM" : "SIGINT");
		ret = 128 + (stop_signal ? (int)stop_signal : SIGINT);
		goto done;
	}
	if (sl_cmd_open_campaign(&st, &camp, store, sum.campaign, &err) ||
	    sl_cmd_print_status(o->events && !strcmp(o->events, "-") ? stderr : stdout, st, &camp,
				o->json, &proposed, &err) ||
	    (o->bundle && sl_cmd_write_bundle(st, &camp, o->repo, o->bundle, &err))) {
		ret = sl_cmd_fail(&err);
		goto done;
	}
	ret = proposed > 0 ? SL_EXIT_OK : SL_EXIT_NOTHING;
done:
	sl_run_summary_release(&sum);
	sl_campaign_rec_release(&camp);
	sl_store_free(st);
	free(store);
	return ret;
}

static const sl_option run_options[] = {
	OPT_REPO(struct run_opts),
	CMD_OPT_STORE(struct run_opts),
	CMD_OPT_JSON(struct run_opts, "print the funnel as JSON"),
	OPT_UNSAFE(struct run_opts),
	SL_OPT_STRING_F("record", 0, "FILE", "append every model reply to FILE (JSON lines) for "
			"a later `provider: {kind: replay, replay: FILE}`", NULL,
			struct run_opts, record, SL_OPTF_FILE | SL_OPTF_PARENT),
	SL_OPT_STRING_F("events", 0, "FILE", "append the run's events to FILE as JSON lines "
			"(docs/EVENTS.md); - writes them to stdout and the funnel to stderr", NULL,
			struct run_opts, events, SL_OPTF_FILE | SL_OPTF_PARENT),
	SL_OPT_CALLBACK("lease-ttl", 0, "SECONDS", "how long this run's claims on targets last "
			"unless renewed (every third of it); after a crash, other runs take the "
			"targets over once it has passed", "the campaign's lease_ttl, else 60",
			parse_lease_ttl),
	SL_OPT_CALLBACK("shard", 0, "K/N", "work on shard K of N (0 <= K < N): the targets "
			"whose key hashes to K, recorded in a store of this shard's own (README "
			"\"Running on many machines\")", NULL, parse_shard),
	SL_OPT_STRING("base", 0, "COMMIT", "refuse to run unless the campaign's base is "
		      "COMMIT (every shard must scope the same base)", NULL, struct run_opts, base),
	SL_OPT_STRING_F("bundle", 0, "FILE", "after the run, write the proposed candidates' "
			"branches to FILE as a git bundle, for `sluice merge --bundle`", NULL,
			struct run_opts, bundle, SL_OPTF_FILE | SL_OPTF_PARENT),
	SL_OPT_END(),
};

const sl_command cmd_run = {
	.name = "run",
	.summary = "run a campaign: generate, apply, gate, record, propose",
	.usage = "usage: sluice run CAMPAIGN.yaml [--repo PATH] [--store PATH] [--json] "
		"[--record FILE]\n"
		"                  [--events FILE] [--unsafe] [--lease-ttl SECONDS] [--shard K/N]\n"
		"                  [--base COMMIT] [--bundle FILE]\n",
	.about = "Scope, then take every pending target through rules or the model, apply,\n"
		"and run the gates in the jail; record everything in the store.  A second\n"
		"run resumes where the first stopped.  Prints the funnel at the end.\n",
	.options = run_options,
	.notes = "Every gate runs on the base first; one that cannot judge there (a default\n"
		"gate failing, a fix gate passing, a test report with no test, exit 126 or\n"
		"127) stops the campaign before anything is generated.\n"
		"Exit status: 0 if some target passed every gate, 1 if none did or a gate\n"
		"cannot judge on the base.\n",
	.opts_size = sizeof(struct run_opts),
	.fn = run_main,
};

static int baseline_main(const sl_command *self, void *opts, const sl_opt_args *args)
{
	struct run_opts *o = opts;
	sl_run_opts ro = SL_RUN_OPTS_INIT;
	sl_buf out = SL_BUF_INIT;
	sl_err err = SL_ERR_INIT;
	char *store = NULL;
	int ret, r;

	if (args->n != 1)
		return sl_cmd_usage(self, "expected one campaign file");
	store = sl_default_store_path(o->store);
	ro.spec_path = args->v[0];
	ro.repo = o->repo;
	ro.store = store;
	ro.unsafe = o->unsafe;
	ro.progress = print_notice;
	r = sl_run_baseline(&out, &ro, o->json, &err);
	fputs(out.buf, stdout);
	ret = r ? sl_cmd_fail(&err) : SL_EXIT_OK;
	sl_buf_release(&out);
	free(store);
	return ret;
}

static const sl_option baseline_options[] = {
	OPT_REPO(struct run_opts),
	CMD_OPT_STORE(struct run_opts),
	CMD_OPT_JSON(struct run_opts, "print the gates as JSON"),
	OPT_UNSAFE(struct run_opts),
	SL_OPT_END(),
};

const sl_command cmd_baseline = {
	.name = "baseline",
	.summary = "run the gates on the base: what a campaign will blame",
	.usage = "usage: sluice baseline CAMPAIGN.yaml [--repo PATH] [--store PATH] [--json] "
		"[--unsafe]\n",
	.about = "Run every gate on the base commit (or read the baseline a run stored) and\n"
		"print, per gate, its expectation, its verdict and exit status on the base,\n"
		"why it cannot judge if so, and each test of a test gate with its result\n"
		"and what the campaign makes of it: must pass, must fix, not blamed,\n"
		"flaky: excluded, skipped.  Nothing is generated.\n",
	.options = baseline_options,
	.notes = "Exit status: 0 if every gate can judge, 1 if one cannot (the reason is\n"
		"printed as `sluice run` would print it).\n",
	.opts_size = sizeof(struct run_opts),
	.fn = baseline_main,
};
