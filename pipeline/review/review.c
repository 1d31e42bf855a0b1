/*
 * review.c - rendering the store for humans and for `git am`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "pipeline/apply/apply.h"
#include "pipeline/review/report.h"
#include "pipeline/review/review.h"
#include "storage/merge.h"
#include "common/util.h"

static double pct(int64_t part, int64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static const char *noun(int64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* n with a comma between groups of three digits: 1,234,567. */
static void add_grouped(sl_buf *out, int64_t n)
{
	char d[32];
	int len = snprintf(d, sizeof(d), "%lld", (long long)n), lead;

	lead = (len - (d[0] == '-')) % 3;
	for (int i = 0; i < len; i++) {
		int k = i - (d[0] == '-');

		if (k > 0 && (k - lead) % 3 == 0)
			sl_buf_addch(out, ',');
		sl_buf_addch(out, d[i]);
	}
}

void sl_review_funnel_text(sl_buf *out, const sl_campaign_rec *c, const sl_funnel *f)
{
	sl_buf_addf(out, "campaign %s (base %.12s, %s)\n", c->name, c->base_oid, c->repo_path);
	sl_buf_addf(out, "  targets      %6lld\n", (long long)f->targets);
	sl_buf_addf(out, "  attempts     %6lld  (apply errors %lld, reply errors %lld after "
		    "%lld format errors, provider errors %lld)\n", (long long)f->attempts,
		    (long long)f->apply_errors, (long long)f->parse_errors,
		    (long long)f->format_errors, (long long)f->provider_errors);
	if (f->tier_exact + f->tier_moved + f->tier_whitespace + f->tier_refused)
		sl_buf_addf(out, "  edits        %6lld  (placed exactly %lld, moved %lld, by whitespace "
			    "%lld; refused %lld)\n", (long long)(f->tier_exact + f->tier_moved +
			    f->tier_whitespace + f->tier_refused), (long long)f->tier_exact,
			    (long long)f->tier_moved, (long long)f->tier_whitespace,
			    (long long)f->tier_refused);
	sl_buf_addf(out, "  candidates   %6lld\n", (long long)f->candidates);
	for (size_t i = 0; i < f->ngates; i++) {
		const sl_funnel_gate *g = &f->gates[i];

		sl_buf_addf(out, "    %-10s %6lld passed, %lld failed, %lld skipped, %lld cached",
			    g->gate, (long long)g->passed, (long long)g->failed,
			    (long long)g->skipped, (long long)g->cached);
		if (g->errors)
			sl_buf_addf(out, ", %lld errors", (long long)g->errors);
		sl_buf_addf(out, " (%lld run%s)\n", (long long)g->runs, g->runs == 1 ? "" : "s");
		if (g->judge)
			sl_buf_addf(out, "      model judge: vetoed %lld; of those it accepted, "
				    "reviewers accepted %lld and rejected %lld\n",
				    (long long)g->failed, (long long)g->reviewed_accept,
				    (long long)g->reviewed_reject);
	}
	/* each line says what it counts: targets by state, candidates by decision */
	sl_buf_addf(out, "  proposed     %6lld  %s (%.0f%% of targets)\n", (long long)f->proposed,
		    noun(f->proposed, "target", "targets"), pct(f->proposed, f->targets));
	if (f->proposed_rules && f->proposed_model)
		sl_buf_addf(out, "    by rules   %6lld  %s\n    by model   %6lld  %s\n",
			    (long long)f->proposed_rules, noun(f->proposed_rules, "target", "targets"),
			    (long long)f->proposed_model, noun(f->proposed_model, "target", "targets"));
	sl_buf_addf(out, "  accepted     %6lld  %s (latest decision)\n", (long long)f->accepted,
		    noun(f->accepted, "candidate", "candidates"));
	sl_buf_addf(out, "  rejected     %6lld  %s (latest decision)\n", (long long)f->rejected,
		    noun(f->rejected, "candidate", "candidates"));
	sl_buf_addf(out, "  failed       %6lld  %s\n", (long long)f->failed,
		    noun(f->failed, "target", "targets"));
	sl_buf_addf(out, "  skipped      %6lld  %s\n", (long long)f->skipped,
		    noun(f->skipped, "target", "targets"));
	sl_buf_addf(out, "  pending      %6lld  %s\n", (long long)f->pending,
		    noun(f->pending, "target", "targets"));
	if (f->budget)
		sl_buf_addf(out, "  budget       %6lld  %s (stopped by a budget; rerun to "
			    "continue)\n", (long long)f->budget, noun(f->budget, "target", "targets"));
	if (f->tokens_in || f->tokens_out)
		sl_buf_addf(out, "  tokens       %lld in, %lld out, cost %.4f\n",
			    (long long)f->tokens_in, (long long)f->tokens_out, f->cost);
	if (f->tokens_estimated) {
		sl_buf_adds(out, "    of them    ~");
		add_grouped(out, f->tokens_estimated);
		sl_buf_adds(out, " tokens (estimated: the provider did not report them)\n");
	}
}

void sl_review_funnel_json(sl_buf *out, const sl_campaign_rec *c, const sl_funnel *f)
{
	json_t *o = json_object(), *gates = json_array();
	char *s;

	json_object_set_new(o, "campaign", json_string(c->name));
	json_object_set_new(o, "repository", json_string(c->repo_path));
	json_object_set_new(o, "base", json_string(c->base_oid));
	json_object_set_new(o, "targets", json_integer(f->targets));
	json_object_set_new(o, "attempts", json_integer(f->attempts));
	json_object_set_new(o, "apply_errors", json_integer(f->apply_errors));
	json_object_set_new(o, "reply_errors", json_integer(f->parse_errors));
	json_object_set_new(o, "provider_errors", json_integer(f->provider_errors));
	json_object_set_new(o, "format_errors", json_integer(f->format_errors));
	json_object_set_new(o, "edits", json_pack("{s:I,s:I,s:I,s:I}", "exact",
			    (json_int_t)f->tier_exact, "moved", (json_int_t)f->tier_moved,
			    "whitespace", (json_int_t)f->tier_whitespace, "refused",
			    (json_int_t)f->tier_refused));
	json_object_set_new(o, "candidates", json_integer(f->candidates));
	for (size_t i = 0; i < f->ngates; i++) {
		json_t *g = json_object();

		json_object_set_new(g, "gate", json_string(f->gates[i].gate));
		json_object_set_new(g, "runs", json_integer(f->gates[i].runs));
		json_object_set_new(g, "passed", json_integer(f->gates[i].passed));
		json_object_set_new(g, "failed", json_integer(f->gates[i].failed));
		json_object_set_new(g, "skipped", json_integer(f->gates[i].skipped));
		json_object_set_new(g, "cached", json_integer(f->gates[i].cached));
		json_object_set_new(g, "errors", json_integer(f->gates[i].errors));
		if (f->gates[i].judge)
			json_object_set_new(g, "judge", json_pack("{s:I,s:I,s:I}", "vetoed",
					    (json_int_t)f->gates[i].failed, "reviewers_accepted",
					    (json_int_t)f->gates[i].reviewed_accept,
					    "reviewers_rejected",
					    (json_int_t)f->gates[i].reviewed_reject));
		json_array_append_new(gates, g);
	}
	json_object_set_new(o, "gates", gates);
	json_object_set_new(o, "proposed_by", json_pack("{s:I,s:I}", "rules",
		(json_int_t)f->proposed_rules, "model", (json_int_t)f->proposed_model));
	json_object_set_new(o, "proposed", json_integer(f->proposed));
	json_object_set_new(o, "accepted", json_integer(f->accepted));
	json_object_set_new(o, "rejected", json_integer(f->rejected));
	json_object_set_new(o, "failed", json_integer(f->failed));
	json_object_set_new(o, "skipped", json_integer(f->skipped));
	json_object_set_new(o, "pending", json_integer(f->pending));
	json_object_set_new(o, "budget", json_integer(f->budget));
	json_object_set_new(o, "cost", json_real(f->cost));
	json_object_set_new(o, "tokens_in", json_integer(f->tokens_in));
	json_object_set_new(o, "tokens_out", json_integer(f->tokens_out));
	json_object_set_new(o, "tokens_estimated", json_integer(f->tokens_estimated));
	s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	sl_buf_adds(out, s);
	free(s);
	json_decref(o);
}

static json_t *json_str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

json_t *sl_review_attempts_json(const sl_attempt_rec *a, size_t n)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < n; i++) {
		json_t *o = json_object();

		json_object_set_new(o, "n", json_integer(a[i].n));
		json_object_set_new(o, "source", json_string(a[i].source));
		json_object_set_new(o, "outcome", json_string(sl_attempt_outcome_name(a[i].outcome)));
		json_object_set_new(o, "error", json_str_or_null(a[i].error));
		json_object_set_new(o, "tokens_in", json_integer(a[i].tokens_in));
		json_object_set_new(o, "tokens_out", json_integer(a[i].tokens_out));
		json_object_set_new(o, "tokens_estimated", json_boolean(a[i].tokens_estimated));
		json_object_set_new(o, "cost", json_real(a[i].cost));
		json_object_set_new(o, "latency_ms", json_integer(a[i].latency_ms));
		json_object_set_new(o, "http_status", json_integer(a[i].http_status));
		json_object_set_new(o, "retries", json_integer(a[i].retries));
		json_object_set_new(o, "format_errors", json_integer(a[i].format_errors));
		json_object_set_new(o, "request", json_str_or_null(a[i].request));
		json_object_set_new(o, "prompt", json_str_or_null(a[i].prompt));
		json_object_set_new(o, "reply", json_str_or_null(a[i].reply));
		json_object_set_new(o, "apply_report", json_str_or_null(a[i].apply_report));
		json_array_append_new(arr, o);
	}
	return arr;
}

/* The number of lines of text[0..len) (a last line without its newline counts). */
static size_t count_lines(const char *text, size_t len)
{
	size_t n = 0;

	for (const char *p = text, *end = text + len, *nl; p < end; p = nl ? nl + 1 : end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		n++;
	}
	return n;
}

/* Where line k (from 0) of text[0..len) starts. */
static const char *line_at(const char *text, size_t len, size_t k)
{
	const char *p = text, *end = text + len, *nl;

	while (k-- && p < end)
		p = (nl = memchr(p, '\n', (size_t)(end - p))) ? nl + 1 : end;
	return p;
}

/*
 * Append text[0..len), or, when it has more than keep lines (keep 0:
 * never), its first and last keep/2 lines around a line saying how many
 * were cut.
 */
static void add_cut(sl_buf *out, const char *text, size_t len, size_t keep)
{
	size_t n = count_lines(text, len), cut;
	const char *mid, *tail;

	if (!keep || n <= keep) {
		sl_buf_add(out, text, len);
		return;
	}
	cut = n - keep;
	mid = line_at(text, len, keep / 2);
	tail = line_at(text, len, keep / 2 + cut);
	sl_buf_add(out, text, (size_t)(mid - text));
	sl_buf_addf(out, "[... %zu line%s cut; --full shows %s]\n", cut, cut == 1 ? "" : "s",
		    cut == 1 ? "it" : "them");
	sl_buf_add(out, tail, (size_t)(text + len - tail));
}

/* Is the line at p a chat message's head ("### system", "### user", "### assistant")? */
static size_t role_head(const char *p)
{
	static const char *const heads[] = { "### system\n", "### user\n", "### assistant\n" };

	for (size_t i = 0; i < sizeof(heads) / sizeof(heads[0]); i++)
		if (!strncmp(p, heads[i], strlen(heads[i])))
			return strlen(heads[i]);
	return 0;
}

/* The request as it was sent, each message's body cut after max lines (0: whole). */
static void add_chat(sl_buf *out, const char *chat, size_t max)
{
	const char *p = chat, *end = chat + strlen(chat);

	while (p < end) {
		size_t head = role_head(p);
		const char *body = p + head, *q = body;

		/* the body runs to the next message's head at the start of a line */
		while (q < end) {
			const char *nl = memchr(q, '\n', (size_t)(end - q));

			q = nl ? nl + 1 : end;
			if (q < end && role_head(q))
				break;
		}
		sl_buf_add(out, p, head);
		add_cut(out, body, (size_t)(q - body), max);
		p = q;
	}
}

void sl_review_attempts_text(sl_buf *out, const sl_attempt_rec *a, size_t n, int full)
{
	for (size_t i = 0; i < n; i++) {
		sl_buf_addf(out, "\nattempt %lld: %s, %s", (long long)a[i].n, a[i].source,
			    sl_attempt_outcome_name(a[i].outcome));
		if (a[i].tokens_estimated) {
			/* the provider did not say: counted from bytes */
			sl_buf_adds(out, ", ~");
			add_grouped(out, (a[i].tokens_in > 0 ? a[i].tokens_in : 0) +
				    (a[i].tokens_out > 0 ? a[i].tokens_out : 0));
			sl_buf_adds(out, " tokens (estimated)");
		} else if (a[i].tokens_in >= 0) {
			sl_buf_addf(out, ", %lld+%lld tokens", (long long)a[i].tokens_in,
				    (long long)a[i].tokens_out);
		}
		if (a[i].tokens_in >= 0)
			sl_buf_addf(out, ", cost %.6f, %lld ms, HTTP %lld, "
				    "%lld retr%s", a[i].cost, (long long)a[i].latency_ms,
				    (long long)a[i].http_status, (long long)a[i].retries,
				    a[i].retries == 1 ? "y" : "ies");
		if (a[i].format_errors)
			sl_buf_addf(out, ", %lld format error%s", (long long)a[i].format_errors,
				    a[i].format_errors == 1 ? "" : "s");
		sl_buf_addch(out, '\n');
		if (a[i].error)
			sl_buf_addf(out, "error: %s\n", a[i].error);
		if (a[i].apply_report)
			sl_buf_addf(out, "apply: %s\n", a[i].apply_report);
		if (a[i].prompt) {
			sl_buf_adds(out, "--- request\n");
			add_chat(out, a[i].prompt, full ? 0 : SL_SHOW_MSG_LINES);
		}
		if (a[i].reply) {
			sl_buf_adds(out, "--- reply\n");
			add_cut(out, a[i].reply, strlen(a[i].reply), full ? 0 : SL_SHOW_REPLY_LINES);
			sl_buf_addch(out, '\n');
		}
	}
}

/* " (jail setup N ms)" for a gate that ran in a jail now (not cached), else "". */
static const char *jail_ms_text(char *buf, size_t n, const sl_gate_run_rec *g)
{
	if (!g->jail || g->cached)
		return "";
	snprintf(buf, n, " (jail setup %lld ms)", (long long)g->jail_ms);
	return buf;
}

/* The candidate's gate runs counted by verdict (cached ones apart). */
static sl_funnel_gate gate_counts(const sl_gate_run_rec *g, size_t ng)
{
	sl_funnel_gate n = { 0 };

	for (size_t i = 0; i < ng; i++) {
		sl_verdict v = g[i].verdict;

		n.cached += g[i].cached != 0;
		n.passed += !g[i].cached && v == SL_VERDICT_PASS;
		n.failed += !g[i].cached && (v == SL_VERDICT_FAIL || v == SL_VERDICT_TIMEOUT);
		n.skipped += !g[i].cached && v == SL_VERDICT_SKIP;
		n.errors += !g[i].cached && v == SL_VERDICT_ERROR;
	}
	return n;
}

/* One gate run as a new JSON object. */
static json_t *gate_run_json(const sl_gate_run_rec *g)
{
	json_t *r = json_object();

	json_object_set_new(r, "gate", json_string(g->gate));
	json_object_set_new(r, "verdict", json_string(sl_verdict_name(g->verdict)));
	json_object_set_new(r, "exit_status", json_integer(g->exit_status));
	json_object_set_new(r, "duration_ms", json_integer(g->duration_ms));
	json_object_set_new(r, "jail_ms", json_integer(g->jail_ms));
	json_object_set_new(r, "output_bytes", json_integer(g->output_bytes));
	json_object_set_new(r, "output_tail", json_string(g->output_tail));
	json_object_set_new(r, "cached", json_boolean(g->cached));
	json_object_set_new(r, "note", json_str_or_null(g->note));
	json_object_set_new(r, "jail", json_str_or_null(g->jail));
	return r;
}

json_t *sl_review_candidate_json(const sl_candidate_rec *c)
{
	json_t *o = json_object();

	json_object_set_new(o, "id", json_integer(c->id));
	json_object_set_new(o, "target", json_integer(c->target_id));
	json_object_set_new(o, "path", json_string(c->path));
	json_object_set_new(o, "start_line", json_integer(c->start_line));
	json_object_set_new(o, "end_line", json_integer(c->end_line));
	json_object_set_new(o, "attempt", json_integer(c->attempt_n));
	json_object_set_new(o, "state", json_string(sl_candidate_state_name(c->state)));
	json_object_set_new(o, "commit", json_string(c->commit_oid));
	json_object_set_new(o, "branch", json_str_or_null(c->branch));
	json_object_set_new(o, "decision", json_str_or_null(sl_decision_name(c->decision)));
	json_object_set_new(o, "reason", json_str_or_null(c->decision_reason));
	json_object_set_new(o, "created_at", json_string(c->created_at));
	return o;
}

/* `sluice show --json`: one line; the attempts too when attempts is set. */
static void show_json(sl_buf *out, const sl_candidate_rec *c, enum sl_branch_state bs,
		      const sl_gate_run_rec *g, size_t ng, const sl_funnel_gate *n, int attempts,
		      const sl_attempt_rec *att, size_t na)
{
	json_t *o = sl_review_candidate_json(c), *ga = json_array();
	const char *state = sl_branch_state_name(bs);
	char *s;

	json_object_set_new(o, "branch_state", state ? json_string(state) : json_null());

	for (size_t i = 0; i < ng; i++)
		json_array_append_new(ga, gate_run_json(&g[i]));
	json_object_set_new(o, "gates", ga);
	json_object_set_new(o, "tree", json_str_or_null(c->tree));
	json_object_set_new(o, "tree_ms", json_integer(c->tree_ms));
	json_object_set_new(o, "gate_counts", json_pack("{s:I,s:I,s:I,s:I,s:I}",
			    "passed", (json_int_t)n->passed, "failed", (json_int_t)n->failed,
			    "skipped", (json_int_t)n->skipped, "cached", (json_int_t)n->cached,
			    "errors", (json_int_t)n->errors));
	json_object_set_new(o, "diff", json_string(c->diff));
	if (attempts)
		json_object_set_new(o, "attempts", sl_review_attempts_json(att, na));
	s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	sl_buf_adds(out, s ? s : "null");
	sl_buf_addch(out, '\n');
	free(s);
	json_decref(o);
}

static const char *const branch_state_names[] = {
	[SL_BRANCH_UNKNOWN] = NULL,
	[SL_BRANCH_OURS] = "ours",
	[SL_BRANCH_MOVED] = "moved",
	[SL_BRANCH_OTHER_STORE] = "other-store",
	[SL_BRANCH_GONE] = "gone",
};

const char *sl_branch_state_name(enum sl_branch_state s)
{
	return s <= SL_BRANCH_GONE ? branch_state_names[s] : NULL;
}

int sl_branch_view_open(sl_branch_view *v, sl_store *st, int64_t campaign_id, sl_err *err)
{
	sl_buf tags = SL_BUF_INIT;
	int ret;

	memset(v, 0, sizeof(*v));
	if ((ret = sl_store_tags(&tags, st, campaign_id, err))) {
		sl_buf_release(&tags);
		return ret;
	}
	v->tag = sl_buf_detach(&tags, NULL);
	v->repo = sl_review_repo_of(st, campaign_id);
	return SL_OK;
}

void sl_branch_view_release(sl_branch_view *v)
{
	git_repository_free(v->repo);
	v->repo = NULL;
	free(v->tag);
	v->tag = NULL;
}

/* Whether the commit's message carries a Sluice-Store trailer, whatever its tag. */
static int made_by_a_store(git_repository *repo, const git_oid *oid)
{
	git_commit *c = NULL;
	const char *msg, *p;
	int found = 0;

	if (git_commit_lookup(&c, repo, oid) || !(msg = git_commit_message(c)))
		goto done;
	for (p = msg; p && *p && !found; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		found = !strncmp(p, SL_STORE_TRAILER, strlen(SL_STORE_TRAILER));
done:
	git_commit_free(c);
	return found;
}

enum sl_branch_state sl_branch_state_of(const sl_branch_view *v, const char *branch,
					const char *commit_oid)
{
	git_oid want, now;
	int rc;

	if (!v->repo || !branch || !commit_oid || git_oid_fromstr(&want, commit_oid))
		return SL_BRANCH_UNKNOWN;
	rc = sl_branch_target(&now, v->repo, branch);
	if (rc == GIT_ENOTFOUND)
		return SL_BRANCH_GONE;
	if (rc)
		return SL_BRANCH_UNKNOWN;
	if (git_oid_equal(&now, &want))
		return SL_BRANCH_OURS;
	if (!sl_commit_made_by(v->repo, &now, v->tag) && made_by_a_store(v->repo, &now))
		return SL_BRANCH_OTHER_STORE;
	return SL_BRANCH_MOVED;
}

const char *sl_review_branch_note(enum sl_branch_state s)
{
	switch (s) {
	case SL_BRANCH_UNKNOWN:
	case SL_BRANCH_OURS:
		return "";
	case SL_BRANCH_MOVED:
		return " (the branch now holds another commit)";
	case SL_BRANCH_OTHER_STORE:
		return " (the branch now holds another store's commit)";
	case SL_BRANCH_GONE:
		return " (the branch is gone)";
	}
	return "";
}

git_repository *sl_review_repo_of(sl_store *st, int64_t campaign_id)
{
	sl_campaign_rec *v = NULL;
	git_repository *repo = NULL;
	size_t n = 0;

	if (sl_store_campaign_list(st, &v, &n, NULL))
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (v[i].id == campaign_id && git_repository_open(&repo, v[i].repo_path))
			repo = NULL;
	sl_campaign_list_free(v, n);
	return repo;
}

/* The text header: place, state, commit, tree, decision and the gates' counts. */
static void show_text_header(sl_buf *out, const sl_candidate_rec *c, enum sl_branch_state bs,
			     const sl_funnel_gate *n)
{

	sl_buf_addf(out, "candidate %lld: %s:%lld-%lld (attempt %lld)\n", (long long)c->id,
		    c->path, (long long)c->start_line, (long long)c->end_line,
		    (long long)c->attempt_n);
	/* a rejected candidate's branch may since hold the target's next candidate */
	if (c->decision == SL_D_REJECT)
		sl_buf_addf(out, "state:    %s, rejected%s%s%s\n", sl_candidate_state_name(c->state),
			    c->branch ? " (was proposed on " : "", c->branch ? c->branch : "",
			    c->branch ? ")" : "");
	else
		sl_buf_addf(out, "state:    %s%s%s%s%s\n", sl_candidate_state_name(c->state),
			    c->decision == SL_D_ACCEPT ? ", accepted" : "",
			    c->branch ? ", proposed on " : "", c->branch ? c->branch : "",
			    sl_review_branch_note(bs));
	sl_buf_addf(out, "commit:   %s\n", c->commit_oid);
	if (c->tree)
		sl_buf_addf(out, "tree:     %s, made in %lld ms\n", c->tree, (long long)c->tree_ms);
	if (c->decision) {
		sl_buf_addf(out, "decision: %s%s", sl_decision_name(c->decision),
			    c->decision_reason ? ": " : "");
		sl_report_add_indented(out, c->decision_reason, "          ");
		sl_buf_addch(out, '\n');
	}
	sl_buf_addf(out, "gates:    %lld passed, %lld failed, %lld skipped, %lld cached",
		    (long long)n->passed, (long long)n->failed, (long long)n->skipped,
		    (long long)n->cached);
	if (n->errors)
		sl_buf_addf(out, ", %lld errors", (long long)n->errors);
	sl_buf_addch(out, '\n');
}

/* One gate's line, and its output's tail when it did not pass. */
static void show_text_gate(sl_buf *out, const sl_gate_run_rec *g)
{
	char jbuf[48];

	sl_buf_addf(out, "gate %-10s %-7s exit %lld, %lld ms%s%s%s%s%s\n", g->gate,
		    sl_verdict_name(g->verdict), (long long)g->exit_status,
		    (long long)g->duration_ms, jail_ms_text(jbuf, sizeof(jbuf), g),
		    g->note ? " (" : "", g->note ? g->note : "", g->note ? ")" : "",
		    g->jail && !strncmp(g->jail, "unsafe", 6) ? " [UNSAFE JAIL]" : "");
	if (g->verdict != SL_VERDICT_PASS && g->output_tail[0]) {
		sl_buf_adds(out, g->output_tail);
		if (out->buf[out->len - 1] != '\n')
			sl_buf_addch(out, '\n');
	}
}

int sl_review_show(sl_buf *out, sl_store *st, int64_t candidate_id, int flags, sl_err *err)
{
	sl_candidate_rec c;
	sl_gate_run_rec *g = NULL;
	sl_attempt_rec *att = NULL;
	sl_funnel_gate n;
	sl_branch_view v = { 0 };
	enum sl_branch_state bs = SL_BRANCH_UNKNOWN;
	size_t ng = 0, na = 0;
	int ret, attempts = !!(flags & SL_SHOW_ATTEMPTS);

	if ((ret = sl_store_candidate_get(st, candidate_id, &c, err)))
		return ret;
	if ((ret = sl_store_gate_runs(st, candidate_id, &g, &ng, err)) ||
	    (attempts && (ret = sl_store_attempts(st, c.target_id, &att, &na, err))) ||
	    (c.branch && (ret = sl_branch_view_open(&v, st, c.campaign_id, err))))
		goto done;
	bs = sl_branch_state_of(&v, c.branch, c.commit_oid);
	n = gate_counts(g, ng);
	if (flags & 1) {
		show_json(out, &c, bs, g, ng, &n, attempts, att, na);
		goto done;
	}
	show_text_header(out, &c, bs, &n);
	for (size_t i = 0; i < ng; i++)
		show_text_gate(out, &g[i]);
	sl_buf_addch(out, '\n');
	sl_buf_adds(out, c.diff);
	if (attempts)
		sl_review_attempts_text(out, att, na, !!(flags & SL_SHOW_FULL));
done:
	sl_branch_view_release(&v);
	sl_attempt_list_free(att, na);
	sl_gate_run_list_free(g, ng);
	sl_candidate_rec_release(&c);
	return ret;
}

static int is_exported(const sl_candidate_rec *c)
{
	return c->branch && c->decision != SL_D_REJECT;
}

static int email_for(sl_buf *out, git_repository *repo, const sl_candidate_rec *c, size_t idx,
		     size_t count, sl_err *err)
{
	git_oid oid;
	git_commit *commit = NULL, *parent = NULL;
	git_tree *tree = NULL, *ptree = NULL;
	git_diff *diff = NULL;
	git_buf mail = { 0 };
	git_email_create_options eo;
	int ret = SL_ERROR;

	memset(&eo, 0, sizeof(eo));
	eo.version = GIT_EMAIL_CREATE_OPTIONS_VERSION;
	git_diff_options_init(&eo.diff_opts, GIT_DIFF_OPTIONS_VERSION);
	git_diff_find_options_init(&eo.diff_find_opts, GIT_DIFF_FIND_OPTIONS_VERSION);
	eo.flags = GIT_EMAIL_CREATE_ALWAYS_NUMBER;
	eo.start_number = 1;
	if (git_oid_fromstr(&oid, c->commit_oid) || git_commit_lookup(&commit, repo, &oid) ||
	    git_commit_parent(&parent, commit, 0) || git_commit_tree(&tree, commit) ||
	    git_commit_tree(&ptree, parent) ||
	    git_diff_tree_to_tree(&diff, repo, ptree, tree, &eo.diff_opts) ||
	    git_email_create_from_diff(&mail, diff, idx, count, &oid, git_commit_summary(commit),
				       git_commit_body(commit), git_commit_author(commit), &eo)) {
		sl_err_set(err, SL_ERROR, "candidate %lld: cannot format patch: %s",
			   (long long)c->id, sl_git_error());
		goto done;
	}
	sl_buf_add(out, mail.ptr, mail.size);
	ret = SL_OK;
done:
	git_buf_dispose(&mail);
	git_diff_free(diff);
	git_tree_free(tree);
	git_tree_free(ptree);
	git_commit_free(parent);
	git_commit_free(commit);
	return ret;
}

/* What a passing gate found (coverage added, mutants killed, findings gone), one line each. */
static void md_gate_notes(sl_buf *md, const sl_gate_run_rec *g, size_t ng)
{
	for (size_t j = 0, first = 1; j < ng; j++) {
		if (!g[j].note || g[j].verdict != SL_VERDICT_PASS)
			continue;
		sl_buf_addf(md, "%s- %s: ", first ? "\n" : "", g[j].gate);
		for (const char *p = g[j].note; *p; p++)
			sl_buf_addch(md, *p >= 0x20 && *p < 0x7f ? *p : ' ');
		sl_buf_addch(md, '\n');
		first = 0;
	}
}

/* Proposed change idx in report.md: place, branch, tree, gates table, notes, diff. */
static void md_candidate(sl_buf *md, const sl_candidate_rec *c, size_t idx,
			 const sl_gate_run_rec *g, size_t ng)
{
	sl_buf_addf(md, "### %zu. `%s` lines %lld-%lld (candidate %lld)\n\n"
		    "Branch `%s`, attempt %lld%s%s.\n\n",
		    idx, c->path, (long long)c->start_line, (long long)c->end_line,
		    (long long)c->id, c->branch, (long long)c->attempt_n,
		    c->decision ? ", " : "", c->decision ? "accepted" : "");
	if (c->tree)
		sl_buf_addf(md, "Tree: %s, made in %lld ms.\n\n", c->tree, (long long)c->tree_ms);
	sl_buf_adds(md, "| gate | verdict | time | of it, jail setup |\n|---|---|---|---|\n");
	for (size_t j = 0; j < ng; j++)
		sl_buf_addf(md, "| %s | %s | %lld ms | %lld ms |\n", g[j].gate,
			    sl_verdict_name(g[j].verdict), (long long)g[j].duration_ms,
			    (long long)g[j].jail_ms);
	md_gate_notes(md, g, ng);
	sl_buf_addf(md, "\n```diff\n%s```\n\n", c->diff);
}

/* Each exported candidate: its patch into mbox, its section into md. */
static int export_candidates(sl_buf *mbox, sl_buf *md, sl_store *st, git_repository *repo,
			     const sl_candidate_rec *cands, size_t nc, size_t count, sl_err *err)
{
	size_t idx = 0;
	int ret;

	for (size_t i = 0; i < nc; i++) {
		sl_gate_run_rec *g = NULL;
		size_t ng = 0;

		if (!is_exported(&cands[i]))
			continue;
		if ((ret = email_for(mbox, repo, &cands[i], ++idx, count, err)) ||
		    (ret = sl_store_gate_runs(st, cands[i].id, &g, &ng, err)))
			return ret;
		md_candidate(md, &cands[i], idx, g, ng);
		sl_gate_run_list_free(g, ng);
	}
	return SL_OK;
}

/* The candidates reviewers rejected, with their reasons, when there are any. */
static void md_rejected(sl_buf *md, const sl_candidate_rec *cands, size_t nc, size_t count)
{
	if (nc <= count)
		return;
	sl_buf_addf(md, "## Rejected by reviewers (%zu)\n\n", nc - count);
	for (size_t i = 0; i < nc; i++)
		if (!is_exported(&cands[i])) {
			sl_buf_addf(md, "- `%s:%lld` (candidate %lld): ", cands[i].path,
				    (long long)cands[i].start_line, (long long)cands[i].id);
			sl_report_add_indented(md, cands[i].decision_reason, "  ");
			sl_buf_addch(md, '\n');
		}
	sl_buf_addch(md, '\n');
}

/* The targets that failed, each with its whole reason (an item of the list), if any. */
static void md_failed(sl_buf *md, const sl_target_rec *failed, size_t nf)
{
	if (!nf)
		return;
	sl_buf_addf(md, "## Targets that failed (%zu)\n\n", nf);
	for (size_t i = 0; i < nf; i++) {
		sl_buf_addf(md, "- `%s:%lld` after %lld attempt(s): ", failed[i].path,
			    (long long)failed[i].start_line, (long long)failed[i].attempts);
		sl_report_add_indented(md, failed[i].reason, "  ");
		sl_buf_addch(md, '\n');
	}
}

/* buf into the file NAME of outdir. */
static int write_in(const char *outdir, const char *name, const sl_buf *buf, sl_err *err)
{
	char *path = sl_path_join(outdir, name);
	int ret = sl_write_file(path, buf->buf, buf->len, err);

	free(path);
	return ret;
}

int sl_review_export(sl_store *st, const sl_campaign_rec *camp, git_repository *repo,
		     const char *outdir, size_t *count_out, sl_err *err)
{
	sl_candidate_rec *cands = NULL;
	sl_target_rec *failed = NULL;
	size_t nc = 0, nf = 0, count = 0;
	sl_funnel f = { 0 };
	sl_buf mbox = SL_BUF_INIT, md = SL_BUF_INIT;
	int ret;

	*count_out = 0;
	if ((ret = sl_store_candidates(st, camp->id, SL_C_PASSED, &cands, &nc, err)) ||
	    (ret = sl_store_targets(st, camp->id, SL_T_FAILED, &failed, &nf, err)) ||
	    (ret = sl_store_funnel(st, camp->id, &f, err)) ||
	    (ret = sl_mkdir_p(outdir, 0755, err)))
		goto done;
	for (size_t i = 0; i < nc; i++)
		count += is_exported(&cands[i]);
	sl_buf_addf(&md, "# sluice campaign `%s`\n\nBase `%s` of `%s`.\n\n## Funnel\n\n```\n",
		    camp->name, camp->base_oid, camp->repo_path);
	sl_review_funnel_text(&md, camp, &f);
	sl_buf_addf(&md, "```\n\n## Proposed changes (%zu)\n\n", count);
	if ((ret = export_candidates(&mbox, &md, st, repo, cands, nc, count, err)))
		goto done;
	md_rejected(&md, cands, nc, count);
	md_failed(&md, failed, nf);
	if ((ret = sl_report_unplaced(&md, st, camp->id, SL_UNPLACED_MD, err)) ||
	    (ret = write_in(outdir, "series.mbox", &mbox, err)) ||
	    (ret = write_in(outdir, "report.md", &md, err)))
		goto done;
	*count_out = count;
done:
	sl_buf_release(&mbox);
	sl_buf_release(&md);
	sl_funnel_release(&f);
	sl_candidate_list_free(cands, nc);
	sl_target_list_free(failed, nf);
	return ret;
}
