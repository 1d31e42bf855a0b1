/*
 * run.c - the orchestrator's entry points (run.h): sl_run() and
 * sl_run_baseline(), what they set up (the campaign, the provider, the
 * store, the lease keeper), the workers started and joined, and what the
 * files of this folder share (progress notices, the git lock).  The order
 * of a run: run_open, run_targets, run_workers, run_end.
 *
 * Reads: the campaign file, the repository's objects, the store.  Writes: the
 * store, candidate commits and branches under the campaign's prefix (no
 * reflog; without gates, one pack per batch of candidates, see batch.c),
 * scratch worktrees and batch journals under the scratch root (removed
 * after their gates, or their batch).  Never touches the user's working
 * tree or index.
 */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "pipeline/run/run_internal.h"
#include "pipeline/scratch.h"
#include "storage/lease.h"
#include "storage/merge.h"
#include "common/sha256.h"

/* Bytes of parsed objects libgit2 keeps in its cache, for the whole process. */
#define RUN_GIT_CACHE_MAX ((size_t)4 << 20)
/*
 * malloc arenas the run's threads share.  glibc gives each thread that
 * meets a locked arena one of its own, up to eight a core; each keeps the
 * peak of what its thread once held (freed chunks between live ones are
 * not returned): a run of 100,000 targets held two of 36 and 21 MB with
 * 40 MB live.  The threads spend their time in libgit2, SQLite and the
 * store, not in malloc: two arenas cost nothing measurable.
 */
#define RUN_MALLOC_ARENAS 2

char *sl_default_store_path(const char *explicit_path)
{
	const char *env = getenv("SLUICE_STORE"), *data = getenv("XDG_DATA_HOME");
	const char *home = getenv("HOME");
	sl_buf b = SL_BUF_INIT;

	if (explicit_path && *explicit_path)
		return sl_xstrdup(explicit_path);
	if (env && *env)
		return sl_xstrdup(env);
	if (data && *data)
		sl_buf_addf(&b, "%s/sluice/sluice.db", data);
	else
		sl_buf_addf(&b, "%s/.local/share/sluice/sluice.db", home && *home ? home : ".");
	return sl_buf_detach(&b, NULL);
}

void sl_run_summary_release(sl_run_summary *s)
{
	free(s->campaign);
	free(s->stop_reason);
	memset(s, 0, sizeof(*s));
}

/* Progress and notices go to the caller's callback (run.h), never to a terminal. */
void run_notice(const run_ctx *x, const char *fmt, ...)
{
	sl_buf line = SL_BUF_INIT;
	va_list ap;

	if (!x->opts->progress)
		return;
	va_start(ap, fmt);
	sl_buf_vaddf(&line, fmt, ap);
	va_end(ap);
	x->opts->progress(x->opts->progress_ctx, line.buf);
	sl_buf_release(&line);
}

/*
 * Ref and worktree changes, one at a time across the threads of this run and
 * the other sluice processes on the repository: libgit2 reports a branch as
 * "already checked out" when another process's worktree vanishes while it
 * looks.
 */
void run_git_lock_take(run_ctx *x)
{
	pthread_mutex_lock(&x->git_lock);
	while (x->git_lock_fd >= 0 && flock(x->git_lock_fd, LOCK_EX) && errno == EINTR)
		;
}

void run_git_lock_give(run_ctx *x)
{
	if (x->git_lock_fd >= 0)
		flock(x->git_lock_fd, LOCK_UN);
	pthread_mutex_unlock(&x->git_lock);
}

/* The last attempt number the target may use (retries add to earlier attempts). */
int64_t run_attempt_limit(const run_ctx *x, const sl_target_rec *rec)
{
	return rec->attempt_base + (int64_t)x->c->spec->attempts;
}

static int is_sqlite_file(const char *path)
{
	char head[16] = { 0 };
	FILE *fp = fopen(path, "rb");
	int yes;

	if (!fp)
		return 0;
	yes = fread(head, 1, sizeof(head), fp) == sizeof(head) &&
		!memcmp(head, "SQLite format 3", 16);
	fclose(fp);
	return yes;
}

/*
 * The JSON lines file the replay provider reads: the spec's file, or, when
 * the spec names an earlier run's store, every recorded reply of that store
 * written out to a file under the scratch root.  Caller frees.
 */
static char *replay_source(run_ctx *x, sl_err *err)
{
	const sl_spec *spec = x->c->spec;
	char *path = spec->replay[0] == '/' ? sl_xstrdup(spec->replay) :
		sl_path_join(spec->dir, spec->replay);
	sl_store *old = NULL;
	char *out = NULL;

	if (!is_sqlite_file(path))
		return path;
	if (sl_store_open(&old, path, 0, err))
		goto done;
	out = sl_path_join(x->scratch, "replay.jsonl");
	if (sl_mkdir_p(x->scratch, 0700, err) ||
	    sl_store_export_replies(old, out, err)) {
		free(out);
		out = NULL;
	}
done:
	sl_store_free(old);
	free(path);
	return out;
}

/* The provider options of a spec's provider fields (the campaign's or its judge's). */
static void provider_opts(run_ctx *x, const sl_spec *spec, sl_provider_opts *out)
{
	sl_provider_opts po = SL_PROVIDER_OPTS_INIT;

	po.kind = spec->provider;
	po.base_url = spec->base_url;
	po.model = spec->model;
	po.api_key_env = spec->api_key_env;
	po.temperature = spec->temperature;
	po.max_tokens = spec->max_tokens;
	po.timeout_s = spec->provider_timeout_s;
	po.command = spec->command;
	po.headers = spec->headers.n ? (const char *const *)spec->headers.v : NULL;
	po.anthropic_version = spec->anthropic_version;
	po.max_retries = spec->max_retries;
	po.response_format = spec->response_format;
	po.tools = spec->session.mode == SL_GENERATE_ACT && spec->session.wire == SL_WIRE_TOOLS;
	/* a hanging endpoint cannot hold the run past its wall-time budget */
	if (x->c->spec->budget_wall_s)
		po.deadline_ms = x->start_ms + (int64_t)x->c->spec->budget_wall_s * 1000;
	po.stop = x->opts->stop;
	*out = po;
}

/*
 * The judge's own provider (its `provider:`), without the campaign's
 * format for edits; a replay file relative to the campaign's directory.
 */
static int open_judge_provider(run_ctx *x, const sl_spec *js, sl_err *err)
{
	sl_provider_opts po;
	char *replay = NULL;
	int r;

	provider_opts(x, js, &po);
	po.response_format = NULL;
	if (js->provider == SL_PROVIDER_REPLAY)
		po.replay_path = replay = js->replay[0] == '/' ? sl_xstrdup(js->replay) :
			sl_path_join(js->dir, js->replay);
	r = sl_provider_new(&x->judge_provider, &po, err);
	free(replay);
	return r;
}

static int open_provider(run_ctx *x, sl_err *err)
{
	const sl_spec *spec = x->c->spec;
	sl_provider_opts po;
	int r;

	if (spec->judge && spec->judge->provider &&
	    (r = open_judge_provider(x, spec->judge->provider, err)))
		return r;
	if (spec->provider == SL_PROVIDER_RULES)
		return SL_OK;
	provider_opts(x, spec, &po);
	if (spec->provider == SL_PROVIDER_REPLAY) {
		if (!(x->replay_file = replay_source(x, err)))
			return SL_EINPUT;
		po.replay_path = x->replay_file;
	}
	if ((r = sl_provider_new(&x->provider, &po, err)))
		return r;
	/* the format asked of edits is not the judge's: it gets a provider without it */
	po.response_format = NULL;
	if (spec->judge && !spec->judge->provider && spec->response_format)
		return sl_provider_new(&x->judge_provider, &po, err);
	return SL_OK;
}

/* Hash one field of the campaign definition, length-prefixed. */
static void digest_add(sl_sha256 *h, const char *v)
{
	char len[24];

	snprintf(len, sizeof(len), "%zu:", v ? strlen(v) : (size_t)0);
	sl_sha256_update(h, len, strlen(len));
	if (v)
		sl_sha256_update(h, v, strlen(v));
}

static void digest_num(sl_sha256 *h, double v)
{
	char num[48];

	snprintf(num, sizeof(num), "%.17g", v);
	digest_add(h, num);
}

/*
 * The digest of what judges a target: the gates, the rules, the prompt and
 * instructions, the edit format, the attempts, the provider and its model.
 * Budgets, concurrency and paths are not part of it.
 */
static void campaign_digest(char out[65], const sl_spec *spec)
{
	sl_sha256 h;
	unsigned char d[32];

	sl_sha256_init(&h);
	digest_add(&h, "sluice-campaign-1");
	for (size_t i = 0; i < spec->nrules; i++) {
		digest_add(&h, spec->rules[i].capture);
		digest_add(&h, spec->rules[i].template_text);
		/* only when present: older campaigns keep their digest */
		if (spec->rules[i].cocci)
			digest_add(&h, spec->rules[i].cocci);
		for (size_t k = 0; k < spec->rules[i].nwhere; k++) {
			digest_add(&h, spec->rules[i].where[k].capture);
			digest_num(&h, (int64_t)spec->rules[i].where[k].kind * 2 +
				   spec->rules[i].where[k].negate);
			digest_add(&h, spec->rules[i].where[k].text);
		}
	}
	if (spec->expect_gone || spec->expect_present || spec->expect_none) {
		digest_add(&h, spec->expect_gone ? spec->expect_gone : "");
		digest_add(&h, spec->expect_present ? spec->expect_present : "");
		digest_num(&h, spec->expect_none);
	}
	digest_add(&h, spec->prompt);
	digest_add(&h, spec->instructions);
	digest_num(&h, spec->edit_format);
	digest_num(&h, spec->attempts);
	digest_num(&h, spec->provider);
	digest_add(&h, spec->model);
	digest_add(&h, spec->command);
	digest_num(&h, spec->temperature);
	digest_num(&h, spec->max_tokens);
	if (spec->judge) {
		digest_add(&h, spec->judge->name);
		digest_add(&h, spec->judge->instructions);
		digest_num(&h, spec->judge->include_trajectory);
		if (spec->judge->provider) {
			digest_num(&h, spec->judge->provider->provider);
			digest_add(&h, spec->judge->provider->base_url);
			digest_add(&h, spec->judge->provider->model);
			digest_add(&h, spec->judge->provider->command);
		}
	}
	for (size_t i = 0; i < spec->ngates; i++) {
		const sl_gate_conf *g = &spec->gates[i];

		digest_add(&h, g->name);
		digest_num(&h, g->kind);
		digest_add(&h, g->command);
		digest_num(&h, g->timeout_s);
		digest_add(&h, sl_report_format_name(g->format));
		digest_add(&h, g->report);
		digest_num(&h, g->radius);
		digest_add(&h, sl_fail_on_name(g->fail_on));
		digest_num(&h, g->reruns);
		digest_num(&h, g->loopback);
		for (size_t k = 0; k < g->must_fix.n; k++)
			digest_add(&h, g->must_fix.v[k]);
		for (size_t k = 0; k < g->allow_paths.n; k++)
			digest_add(&h, g->allow_paths.v[k]);
		for (size_t k = 0; k < g->forbid.n; k++)
			digest_add(&h, g->forbid.v[k]);
		for (size_t k = 0; k < g->build_files.n; k++)
			digest_add(&h, g->build_files.v[k]);
		digest_num(&h, g->max_files);
		digest_num(&h, g->max_lines);
		digest_num(&h, g->allow_build_files);
	}
	sl_sha256_final(&h, d);
	sl_sha256_tohex(out, d);
}

static unsigned online_cores(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (unsigned)n : 1;
}

/* Open the store, record (or find) the campaign, clear a crashed run's worktrees. */
static int open_store(run_ctx *x, sl_err *err)
{
	int ret;

	if ((ret = sl_store_open(&x->st, x->opts->store, 1, err)) ||
	    (ret = run_record_campaign(x, err)))
		return ret;
	if (sl_path_is_under(x->scratch, x->c->repo_path))
		return sl_err_set(err, SL_EINPUT, "scratch root '%s' is inside the repository",
				  x->scratch);
	run_git_lock_take(x);
	ret = sl_worktree_cleanup(x->c->repo, x->scratch, err);
	run_git_lock_give(x);
	return ret ? ret : sl_warm_sweep_layers(x->scratch, err);
}

/* The campaign file's warnings (pipeline/spec.h), as notices. */
static void spec_warnings(const run_ctx *x)
{
	for (size_t i = 0; i < x->c->spec->warnings.n; i++)
		run_notice(x, "%s", x->c->spec->warnings.v[i]);
}

/* Zero the run's state and make what the workers share. */
static void run_ctx_init(run_ctx *x, const sl_run_opts *opts)
{
	memset(x, 0, sizeof(*x));
	x->gitconfig_fd = -1;
	pthread_mutex_init(&x->lock, NULL);
	pthread_mutex_init(&x->git_lock, NULL);
	x->git_lock_fd = -1;
	pthread_cond_init(&x->settled, NULL);
	pthread_cond_init(&x->end_cond, NULL);
	pthread_cond_init(&x->base_cond, NULL);
	x->opts = opts;
	x->start_ms = sl_now_ms();
	run_make_owner(x);
	run_watch_open(x);
}

/*
 * `sluice baseline`: the gates measured (or loaded) under the campaign's
 * baseline lease, as a run measures them, with the lease kept renewed.
 */
int sl_run_baseline(sl_buf *out, const sl_run_opts *opts, int json, sl_err *err)
{
	run_ctx x;
	int ret;

	run_ctx_init(&x, opts);
	if (!(ret = sl_campaign_load(&x.c, opts->spec_path, opts->repo, err))) {
		spec_warnings(&x);
		run_lease_ttl_set(&x);
		x.scratch = sl_scratch_root(x.c->spec);
		if (!(ret = open_store(&x, err)) && !(ret = run_open_gating(&x, err)) &&
		    !(ret = run_keeper_start(&x, err)))
			ret = run_baseline_describe(&x, json, out, err);
	}
	run_keeper_stop(&x);
	sl_warm_free(x.warm);
	sl_gating_free(x.gating);
	sl_store_free(x.st);
	sl_campaign_free(x.c);
	free(x.scratch);
	run_watch_close(&x);
	pthread_mutex_destroy(&x.lock);
	pthread_mutex_destroy(&x.git_lock);
	pthread_cond_destroy(&x.settled);
	pthread_cond_destroy(&x.end_cond);
	pthread_cond_destroy(&x.base_cond);
	return ret;
}

/*
 * Load the campaign, open the provider and the store, register the run
 * among the campaign's leases and start the lease keeper.
 */
static int run_open(run_ctx *x, sl_run_summary *out, sl_err *err)
{
	const sl_run_opts *opts = x->opts;
	sl_run_rec rr;
	char host[160];
	int ret;

	mallopt(M_ARENA_MAX, RUN_MALLOC_ARENAS);
	if ((ret = sl_campaign_load(&x->c, opts->spec_path, opts->repo, err)))
		return ret;
	spec_warnings(x);
	/*
	 * libgit2 keeps every small tree and commit it parses, up to 256 MiB:
	 * each candidate's trees stayed, 9 KB a target (issue 29).  The base's
	 * trees, read by every candidate, stay within a few MiB.
	 */
	git_libgit2_opts(GIT_OPT_SET_CACHE_MAX_SIZE, (ssize_t)RUN_GIT_CACHE_MAX);
	/* before the targets fill this process: its jails are copies of a small one */
	if (x->c->spec->ngates && !getenv("SLUICE_NO_JAIL_SPAWNER") &&
	    (ret = sl_jail_spawner_start(err)))
		return ret;
	run_lease_ttl_set(x);
	campaign_digest(x->digest, x->c->spec);
	/* the lock is the repository's git directory itself: nothing is written there */
	x->git_lock_fd = open(git_repository_commondir(x->c->repo), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (x->git_lock_fd < 0)
		return sl_err_set(err, SL_ERROR, "cannot open '%s': %s",
				  git_repository_commondir(x->c->repo), strerror(errno));
	x->scratch = sl_scratch_root(x->c->spec);
	if ((ret = run_shard_check(x, 0, err)) || (ret = open_provider(x, err)) ||
	    (ret = open_store(x, err)) || (ret = run_shard_check(x, 1, err)))
		return ret;
	{
		sl_buf tags = SL_BUF_INIT;

		ret = sl_store_tags(&tags, x->st, x->campaign_id, err);
		x->store_tags = sl_buf_detach(&tags, NULL);
		if (ret)
			return ret;
		/* the first is this store's own */
		snprintf(x->store_tag, sizeof(x->store_tag), "%.*s",
			 (int)strcspn(x->store_tags, "\n"), x->store_tags);
	}
	rr = (sl_run_rec){ x->campaign_id, x->owner, x->digest, x->c->spec->budget_tokens,
			   x->c->spec->budget_cost };
	/* a crashed run of this machine holds nothing any more */
	snprintf(host, sizeof(host), "%s", x->owner);
	*strchr(host, ':') = '\0';
	if ((ret = sl_lease_reap_local(x->st, host, NULL, err)) ||
	    (ret = sl_lease_run_begin(x->st, &rr, sl_wall_ms(), err)))
		return ret;
	x->registered = 1;
	if ((ret = run_keeper_start(x, err)))
		return ret;
	out->campaign_id = x->campaign_id;
	out->campaign = sl_xstrdup(x->c->spec->name);
	sl_findings_init(&x->findings);
	sl_unplaced_init(&x->unplaced);
	/* from here on a stop kills the gates in flight, the baseline's too */
	sl_jail_set_stop(opts->stop);
	return SL_OK;
}

/*
 * Scope the base and record its targets as scoping passes them on: the
 * run never holds them all.  Fix and testgen campaigns choose theirs after
 * scoping (the baseline's findings, its coverage): that list is recorded,
 * then freed.  *scoped gets the number of targets scoped.
 */
static int scope_and_record(run_ctx *x, size_t *scoped, sl_err *err)
{
	sl_target_list list = SL_TARGET_LIST_INIT;
	sl_scope_opts so = SL_SCOPE_OPTS_INIT;
	sl_scope_stats stats = SL_SCOPE_STATS_INIT;
	sl_lang_override *ov = sl_campaign_scope_opts(&so, x->c);
	run_recorder rec;
	int ret;

	run_recorder_init(&rec, x);
	so.cache = x->st;
	so.stats = &stats;
	if (x->c->spec->job == SL_JOB_FIX || x->c->spec->coverage_below) {
		if (!(ret = sl_scope(&list, x->c->repo, &x->c->base, &so, err)) &&
		    !(x->c->spec->job == SL_JOB_FIX && (ret = run_fix_targets(x, &list, err))) &&
		    !(x->c->spec->coverage_below && (ret = run_testgen_targets(x, &list, err))) &&
		    (ret = run_record_list(&rec, &list)))
			*err = rec.err;
		sl_target_list_release(&list);
	} else {
		so.emit = run_record_emit;
		so.emit_arg = &rec;
		if ((ret = sl_scope(&list, x->c->repo, &x->c->base, &so, err)) && rec.err.code)
			*err = rec.err;
	}
	if (!ret)
		ret = run_record_finish(&rec, err);
	*scoped = rec.scoped;
	x->scope_held_max = rec.held_max;
	x->scope_results_max = stats.results_held;
	sl_scope_stats_release(&stats);
	run_recorder_release(&rec);
	free(ov);
	return ret;
}

/*
 * Restore what crashed runs left, scope the base, choose and record the
 * targets, count the pending ones and the usage so far, and probe the
 * provider (sl_provider_probe).  The base is made while the workers run
 * (run_base).
 */
static int run_targets(run_ctx *x, sl_run_summary *out, sl_err *err)
{
	int64_t journal_tokens = 0;
	double journal_cost = 0;
	size_t scoped = 0;
	int ret;

	run_step(x, SL_STEP_SCOPE);
	x->index.shard_k = x->opts->shard_k;
	x->index.shard_n = x->opts->shard_n;
	if ((ret = sl_no_reflog_config(&x->gitconfig_fd, &x->gitconfig, err)) ||
	    (ret = sl_repo_no_reflog(x->c->repo, x->gitconfig, err)) ||
	    (ret = sl_worktree_root_check(x->c->repo, x->scratch, err)) ||
	    (ret = sl_mkdir_p(x->scratch, 0700, err)) ||
	    (ret = run_restore_journals(x, err)) ||
	    (ret = scope_and_record(x, &scoped, err)) ||
	    (ret = run_load_pending(x, err)) ||
	    (ret = sl_store_usage(x->st, x->campaign_id, &x->tokens_used, &x->cost_used, err)) ||
	    (ret = sl_journal_usage(x->st, x->campaign_id, &journal_tokens, &journal_cost, err)) ||
	    (ret = sl_lease_stale_digest(x->st, x->campaign_id, x->digest, &out->stale_digest, err)))
		return ret;
	x->tokens_used += journal_tokens;
	x->cost_used += journal_cost;
	out->targets = scoped;
	/* a provider that cannot work stops the run before the warm base and the baseline */
	if (x->provider && x->npending && (ret = sl_provider_probe(x->provider, err))) {
		sl_err_prefix(err, "provider: ");
		return ret;
	}
	return SL_OK;
}

/*
 * The base made and measured (the warm base, the baseline; fix and testgen
 * measured theirs to choose the targets) while the workers generate: the
 * model waits for neither, the gates wait for both (run_base_wait).  A
 * base that fails fails the run: no candidate is judged.
 */
static int run_base(run_ctx *x, sl_err *err)
{
	int ret = SL_OK;

	if (!x->gating)
		ret = run_open_gating(x, err);
	if (!ret && x->npending && x->c->spec->job != SL_JOB_FIX && !x->c->spec->coverage_below)
		ret = run_baseline(x, err);
	pthread_mutex_lock(&x->lock);
	x->base_state = ret ? -1 : 1;
	if (ret && !x->failed) {
		x->failed = 1;
		x->err = *err;
	}
	pthread_cond_broadcast(&x->base_cond);
	pthread_mutex_unlock(&x->lock);
	return ret;
}

int run_base_wait(run_ctx *x, sl_err *err)
{
	int state;

	pthread_mutex_lock(&x->lock);
	while (!x->base_state)
		pthread_cond_wait(&x->base_cond, &x->lock);
	state = x->base_state;
	pthread_mutex_unlock(&x->lock);
	return state > 0 ? SL_OK : sl_err_set(err, SL_ERROR, "the base failed");
}

/* The worker threads, started and joined; the summary of what they did. */
static int run_workers(run_ctx *x, sl_run_summary *out, sl_err *err)
{
	pthread_t *threads;
	size_t nthreads = 0, want;
	unsigned jobs;
	int base;

	jobs = x->c->spec->jobs ? x->c->spec->jobs : online_cores();
	sem_init(&x->model_slots, 0, x->c->spec->concurrency);
	sem_init(&x->gate_slots, 0, jobs);
	x->sems = 1;
	want = (x->provider ? x->c->spec->concurrency : 0) + jobs;
	if (want > x->npending)
		want = x->npending;
	threads = sl_xcalloc(want ? want : 1, sizeof(*threads));
	x->nworkers = want;
	run_watch_workers(x, want, jobs);
	for (size_t i = 0; i < want; i++) {
		if (pthread_create(&threads[nthreads], NULL, run_worker, x)) {
			if (!nthreads) {
				free(threads);
				return sl_err_set(err, SL_ERROR, "cannot start a worker thread");
			}
			pthread_mutex_lock(&x->lock);
			x->nworkers = nthreads;
			pthread_mutex_unlock(&x->lock);
			break;
		}
		nthreads++;
	}
	base = run_base(x, err);
	for (size_t i = 0; i < nthreads; i++)
		pthread_join(threads[i], NULL);
	free(threads);
	if (base)
		return base;
	out->processed = x->next;
	out->targets_held_max = x->held_max;
	if (getenv("SLUICE_RUN_STATS"))
		run_notice(x, "run stats: at most %zu target records in memory at once "
			   "(chunks of %zu, %zu workers); scoping: at most %zu of %zu targets "
			   "held at once, the results of %zu files", x->held_max, x->chunk_size,
			   nthreads, x->scope_held_max, out->targets, x->scope_results_max);
	out->proposed_now = x->passed_now;
	out->held_elsewhere = x->held_elsewhere;
	out->lease_lost = x->lost;
	out->transient = x->transient;
	out->usage_rejected = x->usage_rejected;
	out->interrupted = run_interrupted(x);
	out->tokens_used = x->tokens_used;
	out->budget_tokens = x->c->spec->budget_tokens;
	if (x->stop && x->stop_reason[0])
		out->stop_reason = sl_xstrdup(x->stop_reason);
	if (x->failed)
		return sl_err_set(err, x->err.code, "%s", x->err.msg);
	if (x->stop)
		run_notice(x, "stopped: %s; `sluice run` continues after the budget is raised",
			   x->stop_reason);
	return SL_OK;
}

/* End the run (ret: how it went, returned but for a stop during the baseline) and free it. */
static int run_end(run_ctx *x, sl_run_summary *out, int ret, sl_err *err)
{
	const char *outcome;

	sl_jail_spawner_stop();
	sl_jail_set_stop(NULL);
	if (ret && x->base_stopped) {
		/* a stop, not a failure: the next run measures the baseline again */
		sl_err_clear(err);
		out->interrupted = 1;
		ret = SL_OK;
	}
	run_keeper_stop(x);
	outcome = ret ? "failed" : run_interrupted(x) ? "stopped" : x->stop ? "budget" : "done";
	if (x->registered && run_interrupted(x))
		run_ev_stop(x, "the run was told to stop (a signal); `sluice run` resumes");
	if (x->registered)
		run_ev_end(x, outcome);
	if (x->registered)
		sl_lease_run_end(x->st, x->owner, outcome, NULL);
	if (x->sems) {
		sem_destroy(&x->model_slots);
		sem_destroy(&x->gate_slots);
	}
	sl_target_list_free(x->chunk, x->nchunk);
	run_target_index_release(&x->index);
	sl_provider_free(x->provider);
	sl_provider_free(x->judge_provider);
	sl_warm_free(x->warm);
	sl_gating_free(x->gating);
	sl_findings_release(&x->findings);
	sl_unplaced_release(&x->unplaced);
	sl_store_free(x->st);
	sl_campaign_free(x->c);
	free(x->scratch);
	free(x->store_tags);
	free(x->gitconfig);
	if (x->gitconfig_fd >= 0)
		close(x->gitconfig_fd);
	free(x->replay_file);
	pthread_mutex_destroy(&x->lock);
	pthread_mutex_destroy(&x->git_lock);
	if (x->git_lock_fd >= 0)
		close(x->git_lock_fd);
	pthread_cond_destroy(&x->settled);
	pthread_cond_destroy(&x->end_cond);
	run_watch_close(x);
	pthread_cond_destroy(&x->base_cond);
	return ret;
}

int sl_run(sl_run_summary *out, const sl_run_opts *opts, sl_err *err)
{
	run_ctx x;
	int ret;

	memset(out, 0, sizeof(*out));
	run_ctx_init(&x, opts);
	if (!(ret = run_open(&x, out, err)))
		run_ev_start(&x);
	if (!ret && !(ret = run_targets(&x, out, err)))
		ret = run_workers(&x, out, err);
	return run_end(&x, out, ret, err);
}
