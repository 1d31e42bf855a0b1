/*
 * cmd_campaign.c - `sluice run`, `sluice baseline`, `sluice status`, and the
 * helpers every command shares (errors, usage, opening the store).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <jansson.h>

#include "pipeline/cli/cmd.h"
#include "pipeline/review/report.h"
#include "storage/journal.h"
#include "storage/lease.h"
#include "pipeline/review/review.h"
#include "pipeline/review/review_change.h"
#include "pipeline/run.h"
#include "common/term.h"
#include "common/util.h"

void sl_cmd_print(FILE *f, const char *text, int json)
{
	sl_buf b = SL_BUF_INIT;

	sl_term_safe(&b, text, strlen(text), json ? SL_TERM_JSON : 0);
	fputs(b.buf, f);
	sl_buf_release(&b);
}

int sl_cmd_fail(const sl_err *err)
{
	fputs("sluice: ", stderr);
	sl_cmd_print(stderr, err->msg[0] ? err->msg : "unknown error", 0);
	fputc('\n', stderr);
	switch (err->code) {
	case SL_EINPUT:
	case SL_ENOTFOUND:
	case SL_EREFUSED:
		return SL_EXIT_USAGE;
	case SL_EBASE:
		return SL_EXIT_NOTHING;
	default:
		return SL_EXIT_INTERNAL;
	}
}

int sl_cmd_help(const char *cmd)
{
	const sl_command *c = sl_command_find(cmd);

	fputs(c ? c->usage : "", stdout);
	return SL_EXIT_OK;
}

int sl_cmd_usage(const char *cmd, const char *fmt, ...)
{
	const sl_command *c = sl_command_find(cmd);
	va_list ap;

	fprintf(stderr, "sluice %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (c)
		fputs(c->usage, stderr);
	return SL_EXIT_USAGE;
}

long long sl_cmd_parse_id(const char *s)
{
	char *end;
	long long v;

	/* digits only: strtoll would also take spaces, a sign and overflow */
	if (!s || !*s || strspn(s, "0123456789") != strlen(s))
		return 0;
	errno = 0;
	v = strtoll(s, &end, 10);
	return *end || errno || v <= 0 ? 0 : v;
}

int sl_cmd_open_campaign(sl_store **st, sl_campaign_rec *camp, const char *store_path,
			 const char *name, sl_err *err)
{
	char *path = sl_default_store_path(store_path);
	sl_campaign_rec *all = NULL;
	size_t n = 0;
	int ret;

	memset(camp, 0, sizeof(*camp));
	*st = NULL;
	if (access(path, F_OK)) {
		ret = sl_err_set(err, SL_EINPUT, "no store at '%s' (run a campaign first, or "
				 "pass --store)", path);
		goto done;
	}
	if ((ret = sl_store_open(st, path, 0, err)))
		goto done;
	if (name) {
		ret = sl_store_campaign_get(*st, name, camp, err);
		goto done;
	}
	if ((ret = sl_store_campaign_list(*st, &all, &n, err)))
		goto done;
	if (n != 1) {
		ret = sl_err_set(err, SL_EINPUT, n ? "store '%s' holds %zu campaigns; name one" :
				 "store '%s' holds no campaign%.0zu", path, n);
		goto done;
	}
	*camp = all[0];
	memset(&all[0], 0, sizeof(all[0]));
done:
	if (ret) {
		sl_store_free(*st);
		*st = NULL;
	}
	sl_campaign_list_free(all, n);
	free(path);
	return ret;
}

int sl_cmd_open_repo(git_repository **out, const char *path, sl_err *err)
{
	*out = NULL;
	if (git_repository_open_ext(out, path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL))
		return sl_err_set(err, SL_EINPUT, "repository '%s': %s", path,
				  sl_git_error_or("cannot open"));
	return SL_OK;
}

int sl_cmd_open_review(cmd_review_ctx *x, const char *store_path, const char *spec_path,
		       const char *name, const char *repo_path, sl_err *err)
{
	sl_spec_opts so = { .repository = repo_path };

	memset(x, 0, sizeof(*x));
	if (spec_path && sl_spec_load_ext(&x->spec, spec_path, &so, err))
		return err->code;
	if (sl_cmd_open_campaign(&x->st, &x->camp, store_path, x->spec ? x->spec->name : name,
				 err))
		return err->code;
	return sl_cmd_open_repo(&x->repo, repo_path ? repo_path : x->camp.repo_path, err);
}

void sl_cmd_review_release(cmd_review_ctx *x)
{
	git_repository_free(x->repo);
	sl_campaign_rec_release(&x->camp);
	sl_store_free(x->st);
	sl_spec_free(x->spec);
	memset(x, 0, sizeof(*x));
}

enum { OPT_REPO = 1000, OPT_STORE, OPT_JSON, OPT_REASON, OPT_OUT, OPT_ATTEMPTS, OPT_RECORD,
	OPT_UNSAFE, OPT_STATE, OPT_LEASE_TTL };

static const struct option long_opts[] = {
	{ "repo", required_argument, NULL, OPT_REPO },
	{ "store", required_argument, NULL, OPT_STORE },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "reason", required_argument, NULL, OPT_REASON },
	{ "out", required_argument, NULL, OPT_OUT },
	{ "attempts", no_argument, NULL, OPT_ATTEMPTS },
	{ "record", required_argument, NULL, OPT_RECORD },
	{ "unsafe", no_argument, NULL, OPT_UNSAFE },
	{ "state", required_argument, NULL, OPT_STATE },
	{ "lease-ttl", required_argument, NULL, OPT_LEASE_TTL },
	{ NULL, 0, NULL, 0 },
};

/*
 * A path option naming something of the wrong kind is a usage error, caught
 * before any work: want_dir, else a file, whose directory must exist when
 * need_parent (stores get theirs created).
 */
static int check_path_opt(const char *cmd, const char *opt, const char *path, int want_dir,
			  int need_parent)
{
	struct stat st;
	char *dir, *slash;
	int ret = 0;

	if (!path)
		return 0;
	if (!stat(path, &st)) {
		if (want_dir && !S_ISDIR(st.st_mode))
			return sl_cmd_usage(cmd, "%s '%s' is not a directory", opt, path);
		if (!want_dir && S_ISDIR(st.st_mode))
			return sl_cmd_usage(cmd, "%s '%s' is a directory", opt, path);
		return 0;
	}
	if (!need_parent)
		return 0;
	dir = sl_xstrdup(path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (stat(dir, &st) || !S_ISDIR(st.st_mode))
			ret = sl_cmd_usage(cmd, "%s '%s': '%s' is not a directory", opt, path, dir);
	}
	free(dir);
	return ret;
}

/* Each name of a comma-separated list, empty ones too (the command rejects them). */
static void add_states(sl_strvec *states, const char *list)
{
	for (const char *p = list;; p++) {
		size_t len = strcspn(p, ",");

		sl_strvec_push_nodup(states, sl_xstrndup(p, len));
		p += len;
		if (!*p)
			break;
	}
}

void sl_cmd_opts_release(cmd_opts *o)
{
	sl_strvec_release(&o->states);
}

static int parse_opts(cmd_opts *o, int argc, char **argv, const char *allowed)
{
	int c;

	memset(o, 0, sizeof(*o));
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", long_opts, NULL)) != -1) {
		const char *letter = c == OPT_REPO ? "r" : c == OPT_STORE ? "s" : c == OPT_JSON ?
			"j" : c == OPT_REASON ? "R" : c == OPT_OUT ? "o" : c == OPT_ATTEMPTS ? "a" :
			c == OPT_RECORD ? "w" : c == OPT_UNSAFE ? "U" : c == OPT_STATE ? "S" :
			c == OPT_LEASE_TTL ? "L" : NULL;
		const char *name = NULL;

		for (const struct option *lo = long_opts; lo->name; lo++)
			if (lo->val == c)
				name = lo->name;
		if (c == ':')
			return sl_cmd_usage(argv[0], "option '%s' needs a value", argv[optind - 1]);
		if (name && optarg && !*optarg && c != OPT_REASON)
			return sl_cmd_usage(argv[0], "option '--%s' needs a value", name);
		/* a bad short option may sit inside a group ("-xy"): name it by optopt */
		if (c == '?' && optopt > 0 && optopt < OPT_REPO)
			return sl_cmd_usage(argv[0], "unknown option '-%c'", optopt);
		if (c == '?')
			return sl_cmd_usage(argv[0], "unknown option '%s'", argv[optind - 1]);
		if (!letter || !strchr(allowed, *letter))
			return sl_cmd_usage(argv[0], "unknown option '--%s'", name ? name : "?");
		switch (c) {
		case OPT_REPO: o->repo = optarg; break;
		case OPT_STORE: o->store = optarg; break;
		case OPT_JSON: o->json = 1; break;
		case OPT_REASON: o->reason = optarg; break;
		case OPT_OUT: o->out = optarg; break;
		case OPT_ATTEMPTS: o->attempts = 1; break;
		case OPT_RECORD: o->record = optarg; break;
		case OPT_UNSAFE: o->unsafe = 1; break;
		case OPT_STATE: add_states(&o->states, optarg); break;
		case OPT_LEASE_TTL:
			o->lease_ttl = (unsigned)sl_cmd_parse_id(optarg);
			if (!o->lease_ttl || sl_cmd_parse_id(optarg) > SL_LEASE_TTL_MAX)
				return sl_cmd_usage(argv[0], "--lease-ttl '%s': expected seconds "
						    "from 1 to %d", optarg, SL_LEASE_TTL_MAX);
			break;
		}
	}
	o->args = argv + optind;
	o->nargs = argc - optind;
	return check_path_opt(argv[0], "--store", o->store, 0, 0) ||
		check_path_opt(argv[0], "--record", o->record, 0, 1) ||
		check_path_opt(argv[0], "--out", o->out, 1, 0) ? SL_EXIT_USAGE : 0;
}

int sl_cmd_parse_opts(cmd_opts *o, int argc, char **argv, const char *allowed)
{
	int ret = parse_opts(o, argc, argv, allowed);

	if (ret)
		sl_cmd_opts_release(o);
	return ret;
}

static int status_metrics(sl_buf *out, sl_store *st, const sl_campaign_rec *camp, sl_err *err)
{
	sl_metrics m;
	int ret;

	if (!(ret = sl_store_metrics(st, camp->id, &m, err)))
		sl_report_metrics_text(out, &m);
	sl_metrics_release(&m);
	return ret;
}

/* A lease's time as UTC ISO 8601. */
static void iso_of_ms(char out[32], int64_t ms)
{
	time_t t = (time_t)(ms / 1000);
	struct tm tm;

	if (!gmtime_r(&t, &tm) || !strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(out, 32, "%lld", (long long)ms);
}

/* The holders of live leases, then those whose leases expired, as JSON. */
static json_t *leases_json(const sl_lease_holder *h, size_t nh, const sl_lease_holder *x,
			   size_t nx, int64_t now)
{
	json_t *leases = json_array();
	char at[32];

	for (size_t i = 0; i < nh; i++)
		json_array_append_new(leases, json_pack("{s:s, s:I, s:I, s:b}", "owner",
			h[i].owner, "targets", (json_int_t)h[i].targets, "expires_in_ms",
			(json_int_t)(h[i].expires_ms - now), "expired", 0));
	for (size_t i = 0; i < nx; i++) {
		iso_of_ms(at, x[i].expires_ms);
		json_array_append_new(leases, json_pack("{s:s, s:I, s:I, s:b, s:s}", "owner",
			x[i].owner, "targets", (json_int_t)x[i].targets, "expires_in_ms",
			(json_int_t)(x[i].expires_ms - now), "expired", 1, "expired_at", at));
	}
	return leases;
}

/* The owner is text from the store: no control characters reach the terminal. */
static void add_owner(sl_buf *out, const char *owner)
{
	for (const char *c = owner; *c; c++)
		sl_buf_addch(out, (unsigned char)*c < 0x20 || *c == 0x7f ? '?' : *c);
}

static void leases_text(sl_buf *out, const sl_lease_holder *h, size_t nh,
			const sl_lease_holder *x, size_t nx, int64_t now)
{
	char at[32];

	for (size_t i = 0; i < nh; i++) {
		sl_buf_adds(out, "lease: ");
		add_owner(out, h[i].owner);
		sl_buf_addf(out, " holds %lld target%s (expires in %llds)\n",
			    (long long)h[i].targets, h[i].targets == 1 ? "" : "s",
			    (long long)((h[i].expires_ms - now) / 1000));
	}
	for (size_t i = 0; i < nx; i++) {
		iso_of_ms(at, x[i].expires_ms);
		sl_buf_adds(out, "lease: ");
		add_owner(out, x[i].owner);
		sl_buf_addf(out, " held %lld target%s, expired since %s (%llds ago); the next "
			    "run takes %s over\n", (long long)x[i].targets,
			    x[i].targets == 1 ? "" : "s", at,
			    (long long)((now - x[i].expires_ms) / 1000),
			    x[i].targets == 1 ? "it" : "them");
	}
}

/*
 * The budget against what was billed (with replies journalled but not yet
 * judged), and who holds leases on unfinished targets (and whose leases
 * expired without a takeover): appended to the text, or added to the JSON
 * object in out as "budget" and "leases".
 */
static int print_usage_and_leases(sl_buf *out, int json, sl_store *st,
				  const sl_campaign_rec *camp, sl_err *err)
{
	int64_t tokens = 0, jt = 0, budget_tokens = 0, now = sl_wall_ms();
	double cost = 0, jc = 0, budget_cost = 0;
	sl_lease_holder *h = NULL, *x = NULL;
	size_t nh = 0, nx = 0;
	json_t *root = NULL;
	int ret;

	if ((ret = sl_store_usage(st, camp->id, &tokens, &cost, err)) ||
	    (ret = sl_journal_usage(st, camp->id, &jt, &jc, err)) ||
	    (ret = sl_lease_last_budget(st, camp->id, &budget_tokens, &budget_cost, err)) ||
	    (ret = sl_lease_holders(st, camp->id, now, &h, &nh, err)) ||
	    (ret = sl_lease_expired(st, camp->id, now, &x, &nx, err)))
		goto done;
	tokens += jt;
	cost += jc;
	if (json && (root = json_loadb(out->buf, out->len, 0, NULL))) {
		char *text;

		json_object_set_new(root, "budget", json_pack("{s:I, s:I, s:I, s:f, s:f, s:f}",
			"tokens_used", (json_int_t)tokens, "max_tokens", (json_int_t)budget_tokens,
			"overshoot_tokens", (json_int_t)(budget_tokens > 0 && tokens > budget_tokens ?
							 tokens - budget_tokens : 0),
			"cost_used", cost, "max_cost", budget_cost, "overshoot_cost",
			budget_cost > 0 && cost > budget_cost ? cost - budget_cost : 0.0));
		json_object_set_new(root, "leases", leases_json(h, nh, x, nx, now));
		if ((text = json_dumps(root, JSON_COMPACT))) {
			sl_buf_reset(out);
			sl_buf_adds(out, text);
			free(text);
		}
		json_decref(root);
	} else if (!json) {
		if (budget_tokens > 0)
			sl_buf_addf(out, "budget: %lld of %lld tokens used (overshoot %lld)\n",
				    (long long)tokens, (long long)budget_tokens,
				    (long long)(tokens > budget_tokens ? tokens - budget_tokens : 0));
		if (budget_cost > 0)
			sl_buf_addf(out, "budget: cost %.4f of %.4f (overshoot %.4f)\n", cost,
				    budget_cost, cost > budget_cost ? cost - budget_cost : 0.0);
		leases_text(out, h, nh, x, nx, now);
	}
done:
	sl_lease_holders_free(h, nh);
	sl_lease_holders_free(x, nx);
	return ret;
}

/* Print the funnel (and, with text, the proposed candidates); returns proposed count. */
static int print_status(sl_store *st, const sl_campaign_rec *camp, int json, int64_t *proposed,
			sl_err *err)
{
	sl_funnel f;
	sl_buf out = SL_BUF_INIT;
	sl_candidate_rec *cands = NULL;
	size_t nc = 0;
	int ret;

	if ((ret = sl_store_funnel(st, camp->id, &f, err)))
		return ret;
	if ((ret = sl_store_candidates(st, camp->id, SL_C_PASSED, &cands, &nc, err)))
		goto done;
	if (json) {
		if ((ret = sl_report_status_json(&out, st, camp, &f, err)) ||
		    (ret = print_usage_and_leases(&out, 1, st, camp, err)))
			goto done;
		sl_buf_addch(&out, '\n');
	} else {
		sl_review_funnel_text(&out, camp, &f);
		if ((ret = status_metrics(&out, st, camp, err)) ||
		    (ret = print_usage_and_leases(&out, 0, st, camp, err)))
			goto done;
		if (nc)
			sl_buf_adds(&out, "\nproposed candidates:\n");
		for (size_t i = 0; i < nc; i++)
			sl_buf_addf(&out, "  %4lld  %s:%lld  %s%s%s\n", (long long)cands[i].id,
				    cands[i].path, (long long)cands[i].start_line, cands[i].branch,
				    cands[i].decision ? "  " : "",
				    cands[i].decision ? sl_decision_name(cands[i].decision) : "");
	}
	sl_cmd_print(stdout, out.buf, json);
	*proposed = f.proposed;
done:
	sl_candidate_list_free(cands, nc);
	sl_funnel_release(&f);
	sl_buf_release(&out);
	return ret;
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


int cmd_run(int argc, char **argv)
{
	cmd_opts o;
	sl_run_opts ro = SL_RUN_OPTS_INIT;
	sl_run_summary sum;
	sl_store *st = NULL;
	sl_campaign_rec camp = { 0 };
	sl_err err = SL_ERR_INIT;
	char *store = NULL;
	int64_t proposed = 0;
	int ret;

	if ((ret = sl_cmd_parse_opts(&o, argc, argv, "rsjwUL")))
		return ret;
	if (o.nargs != 1)
		return sl_cmd_usage("run", "expected one campaign file");
	ro.record = o.record;
	ro.lease_ttl_s = o.lease_ttl;
	ro.unsafe = o.unsafe;
	store = sl_default_store_path(o.store);
	ro.spec_path = o.args[0];
	ro.repo = o.repo;
	ro.store = store;
	ro.progress = print_notice;
	ro.stop = &stop_flag;
	catch_stop_signals();
	if (sl_run(&sum, &ro, &err)) {
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
	    print_status(st, &camp, o.json, &proposed, &err)) {
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

int cmd_baseline(int argc, char **argv)
{
	cmd_opts o;
	sl_run_opts ro = SL_RUN_OPTS_INIT;
	sl_buf out = SL_BUF_INIT;
	sl_err err = SL_ERR_INIT;
	char *store = NULL;
	int ret, r;

	if ((ret = sl_cmd_parse_opts(&o, argc, argv, "rsjU")))
		return ret;
	if (o.nargs != 1)
		return sl_cmd_usage("baseline", "expected one campaign file");
	store = sl_default_store_path(o.store);
	ro.spec_path = o.args[0];
	ro.repo = o.repo;
	ro.store = store;
	ro.unsafe = o.unsafe;
	ro.progress = print_notice;
	r = sl_run_baseline(&out, &ro, o.json, &err);
	fputs(out.buf, stdout);
	ret = r ? sl_cmd_fail(&err) : SL_EXIT_OK;
	sl_buf_release(&out);
	free(store);
	return ret;
}

int cmd_status(int argc, char **argv)
{
	cmd_opts o;
	sl_store *st = NULL;
	sl_campaign_rec camp = { 0 };
	sl_err err = SL_ERR_INIT;
	int64_t proposed;
	int ret;

	if ((ret = sl_cmd_parse_opts(&o, argc, argv, "sj")))
		return ret;
	if (o.nargs > 1)
		return sl_cmd_usage("status", "expected at most one campaign name");
	if (sl_cmd_open_campaign(&st, &camp, o.store, o.nargs ? o.args[0] : NULL, &err) ||
	    print_status(st, &camp, o.json, &proposed, &err))
		ret = sl_cmd_fail(&err);
	sl_campaign_rec_release(&camp);
	sl_store_free(st);
	return ret;
}

/* `show [NAME] PATH:LINE` */
static int show_target(const cmd_opts *o)
{
	sl_store *st = NULL;
	sl_campaign_rec camp = { 0 };
	sl_buf out = SL_BUF_INIT;
	sl_err err = SL_ERR_INIT;
	const char *spec = o->args[o->nargs - 1], *colon = strrchr(spec, ':');
	char *path = sl_xstrndup(spec, (size_t)(colon - spec));
	long long line = sl_cmd_parse_id(colon + 1);
	int ret = SL_EXIT_OK;

	if (o->nargs > 2 || !*path || !line) {
		ret = sl_cmd_usage("show", "expected [NAME] PATH:LINE, got '%s'", spec);
		goto done;
	}
	if (sl_cmd_open_campaign(&st, &camp, o->store, o->nargs == 2 ? o->args[0] : NULL, &err) ||
	    sl_report_show_target(&out, st, camp.id, path, line,
				  o->json | (o->attempts ? SL_SHOW_ATTEMPTS : 0), &err))
		ret = sl_cmd_fail(&err);
	else
		fputs(out.buf, stdout);
done:
	sl_buf_release(&out);
	sl_campaign_rec_release(&camp);
	sl_store_free(st);
	free(path);
	return ret;
}

int cmd_show(int argc, char **argv)
{
	cmd_opts o;
	sl_store *st = NULL;
	sl_buf out = SL_BUF_INIT;
	sl_err err = SL_ERR_INIT;
	char *path = NULL;
	long long id;
	int ret;

	if ((ret = sl_cmd_parse_opts(&o, argc, argv, "sja")))
		return ret;
	if (o.nargs >= 1 && strchr(o.args[o.nargs - 1], ':'))
		return show_target(&o);
	if (o.nargs != 1 || !(id = sl_cmd_parse_id(o.args[0])))
		return sl_cmd_usage("show", "expected one candidate id or PATH:LINE");
	path = sl_default_store_path(o.store);
	if (sl_store_open(&st, path, 0, &err) ||
	    sl_review_show(&out, st, id, o.json | (o.attempts ? SL_SHOW_ATTEMPTS : 0), &err))
		ret = sl_cmd_fail(&err);
	else
		sl_cmd_print(stdout, out.buf, o.json);
	sl_buf_release(&out);
	sl_store_free(st);
	free(path);
	return ret;
}

/* decision: SL_D_ACCEPT or SL_D_REJECT, the command's word parsed by its name. */
static int decide(int argc, char **argv, int decision)
{
	cmd_opts o;
	sl_store *st = NULL;
	sl_err err = SL_ERR_INIT;
	char *path = NULL;
	long long id;
	int ret;

	if ((ret = sl_cmd_parse_opts(&o, argc, argv, "sR")))
		return ret;
	if (o.nargs != 1 || !(id = sl_cmd_parse_id(o.args[0])))
		return sl_cmd_usage(argv[0], "expected one candidate id");
	if (decision == SL_D_REJECT && (!o.reason || !*o.reason))
		return sl_cmd_usage(argv[0], "a rejection needs --reason TEXT");
	path = sl_default_store_path(o.store);
	if (sl_store_open(&st, path, 0, &err) || sl_store_decide(st, id, decision, o.reason, &err))
		ret = sl_cmd_fail(&err);
	else
		printf("candidate %lld %s\n", id,
		       sl_target_state_name(sl_decision_target_state(decision)));
	sl_store_free(st);
	free(path);
	return ret;
}

int cmd_accept(int argc, char **argv)
{
	return decide(argc, argv, SL_D_ACCEPT);
}

int cmd_reject(int argc, char **argv)
{
	return decide(argc, argv, SL_D_REJECT);
}

static int is_campaign_file(const char *s)
{
	size_t n = strlen(s);

	return (n > 5 && !strcmp(s + n - 5, ".yaml")) || (n > 4 && !strcmp(s + n - 4, ".yml"));
}

int cmd_export(int argc, char **argv)
{
	cmd_opts o;
	cmd_review_ctx x;
	sl_err err = SL_ERR_INIT;
	size_t count = 0, nchanges = 0;
	const char *file;
	int ret;

	if ((ret = sl_cmd_parse_opts(&o, argc, argv, "so")))
		return ret;
	if (o.nargs > 1 || !o.out)
		return sl_cmd_usage("export", o.out ? "expected at most one campaign name" :
				    "--out DIR is required");
	/* a campaign file (not a name) also gives the changes as its review section groups them */
	file = o.nargs && is_campaign_file(o.args[0]) ? o.args[0] : NULL;
	if (sl_cmd_open_review(&x, o.store, file, o.nargs ? o.args[0] : NULL, NULL, &err) ||
	    sl_review_export(x.st, &x.camp, x.repo, o.out, &count, &err) ||
	    sl_report_html(x.st, &x.camp, o.out, &err) ||
	    sl_report_junit(x.st, &x.camp, o.out, &err) ||
	    (x.spec && sl_changes_export(x.st, &x.camp, x.spec, x.repo, o.out, &nchanges, &err))) {
		ret = sl_cmd_fail(&err);
		goto done;
	}
	if (x.spec)
		printf("%zu change%s in %s/changes/\n", nchanges, nchanges == 1 ? "" : "s", o.out);
	printf("%zu patch%s in %s/series.mbox, report in %s/report.md and %s/report.html, "
	       "gate results in %s/junit.xml\n", count, count == 1 ? "" : "es", o.out, o.out,
	       o.out, o.out);
	ret = SL_EXIT_OK;
done:
	sl_cmd_review_release(&x);
	return ret;
}
