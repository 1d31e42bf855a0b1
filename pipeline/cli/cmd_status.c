/*
 * cmd_status.c - `sluice status`: a campaign's funnel (with a fix
 * campaign's findings not placed), its outcomes, the budget used, the runs
 * holding leases and the proposed candidates (run prints the same at its
 * end: sl_cmd_print_status).  Reads the store.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <jansson.h>

#include "pipeline/cli/cmd.h"
#include "pipeline/gc.h"
#include "pipeline/review/report.h"
#include "pipeline/review/review.h"
#include "storage/journal.h"
#include "storage/lease.h"
#include "common/util.h"

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

/* The list of proposed candidates, a line each as the store yields them. */
struct cand_lines {
	FILE *to;
	sl_store *st;
	int64_t campaign_id;
	sl_branch_view v;
	int opened;
	sl_buf line;
	sl_err *err;
};

static int cand_line(const sl_candidate_rec *c, void *arg)
{
	struct cand_lines *l = arg;
	const char *note;

	if (!l->opened) {
		fputs("\nproposed candidates:\n", l->to);
		/* whether each branch still holds its candidate */
		if (sl_branch_view_open(&l->v, l->st, l->campaign_id, l->err))
			return SL_ERROR;
		l->opened = 1;
	}
	note = sl_review_branch_note(sl_branch_state_of(&l->v, c->branch, c->commit_oid));
	sl_buf_reset(&l->line);
	sl_buf_addf(&l->line, "  %4lld  %s:%lld  %s%s%s%s%s\n", (long long)c->id, c->path,
		    (long long)c->start_line, c->branch, *note ? " " : "", note,
		    c->decision ? "  " : "", c->decision ? sl_decision_name(c->decision) : "");
	sl_cmd_print(l->to, l->line.buf, 0);
	return SL_OK;
}

int sl_cmd_print_status(FILE *to, sl_store *st, const sl_campaign_rec *camp, int json,
			int64_t *proposed, sl_err *err)
{
	sl_funnel f;
	sl_buf out = SL_BUF_INIT;
	struct cand_lines l = { to, st, camp->id, { 0 }, 0, SL_BUF_INIT, err };
	int ret;

	if ((ret = sl_store_funnel(st, camp->id, &f, err)))
		return ret;
	if (json) {
		if ((ret = sl_report_status_json(&out, st, camp, &f, err)) ||
		    (ret = print_usage_and_leases(&out, 1, st, camp, err)) ||
		    (ret = sl_cmd_shard_status(&out, 1, st, camp, err)))
			goto done;
		sl_buf_addch(&out, '\n');
	} else {
		sl_review_funnel_text(&out, camp, &f);
		if ((ret = sl_report_unplaced(&out, st, camp->id, SL_UNPLACED_TEXT, err)) ||
		    (ret = status_metrics(&out, st, camp, err)) ||
		    (ret = print_usage_and_leases(&out, 0, st, camp, err)) ||
		    (ret = sl_cmd_shard_status(&out, 0, st, camp, err)))
			goto done;
	}
	sl_cmd_print(to, out.buf, json);
	/* one at a time: a campaign of 1,000,000 proposals is not held */
	if (!json && (ret = sl_store_candidates_each(st, camp->id, SL_C_PASSED, cand_line, &l,
						     err)))
		goto done;
	*proposed = f.proposed;
done:
	sl_branch_view_release(&l.v);
	sl_buf_release(&l.line);
	sl_funnel_release(&f);
	sl_buf_release(&out);
	return ret;
}

/*
 * What a crashed run of this host left mounted: the layers of its
 * candidates go as the next run or gc would remove them, with a notice.
 */
static int status_leftovers(const sl_campaign_rec *camp, sl_err *err)
{
	size_t n = 0;
	int ret = sl_gc_layers(camp, &n, err);

	if (!ret && n)
		fprintf(stderr, "sluice status: removed %zu layer%s of candidates a run that is gone "
			"left\n", n, n == 1 ? "" : "s");
	return ret;
}

struct status_opts {
	const char *store;
	int json;
};

static int status_main(const sl_command *self, void *opts, const sl_opt_args *args)
{
	struct status_opts *o = opts;
	sl_store *st = NULL;
	sl_campaign_rec camp = { 0 };
	sl_err err = SL_ERR_INIT;
	int64_t proposed;
	int ret = SL_EXIT_OK;

	if (args->n > 1)
		return sl_cmd_usage(self, "expected at most one campaign name");
	if (sl_cmd_open_campaign(&st, &camp, o->store, args->n ? args->v[0] : NULL, &err) ||
	    status_leftovers(&camp, &err) ||
	    sl_cmd_print_status(stdout, st, &camp, o->json, &proposed, &err))
		ret = sl_cmd_fail(&err);
	sl_campaign_rec_release(&camp);
	sl_store_free(st);
	return ret;
}

static const sl_option status_options[] = {
	CMD_OPT_STORE(struct status_opts),
	CMD_OPT_JSON(struct status_opts, "print it as JSON, with every target (target_list), "
		     "candidate (candidate_list) and finding not placed (unplaced)"),
	SL_OPT_END(),
};

const sl_command cmd_status = {
	.name = "status",
	.summary = "print a campaign's funnel and its proposed candidates",
	.usage = "usage: sluice status [NAME] [--store PATH] [--json]\n",
	.about = "The funnel, the outcomes (acceptance rate, landed unchanged, median time\n"
		"to decision, tokens and cost per accepted change, by rule vs model,\n"
		"provider, model and edit format), the budget used and its overshoot, the\n"
		"runs holding leases (and the leases that expired with no run taking them\n"
		"over) and the proposed candidates.  --json adds every target\n"
		"(target_list) and candidate (candidate_list), and a fix campaign's\n"
		"findings not placed with their reasons (unplaced).\n"
		"NAME may be left out when the store holds one campaign.\n",
	.options = status_options,
	.opts_size = sizeof(struct status_opts),
	.fn = status_main,
};
