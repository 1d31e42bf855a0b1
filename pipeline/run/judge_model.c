/*
 * judge_model.c - the model judge gate (`kind: judge` in `gates`): after a
 * candidate passed every other gate, one request to the campaign's
 * provider and model with the campaign's instructions (and the judge's
 * own), the target's unit and the candidate's diff (and, asked for, the
 * model's reply and the earlier attempts' feedback).  The answer must be
 *     {"verdict": "accept" | "reject", "reason": "..."}
 * alone or in a fenced block; a reject fails the candidate with the reason
 * as feedback; an answer that is not that shape, or no answer, is the
 * gate's error, never a pass.
 *
 * The request is reserved and settled against the campaign's budgets like
 * the model step's, its tokens and cost added to the attempt's, its reply
 * journalled (round RUN_JUDGE_ROUND) the moment it arrives, so a resumed
 * run never pays for it twice, and written to the --record file, so the
 * replay provider replays the judge too.  Verdicts are not cached: the
 * gate cache keys on trees and commands, not on a model's answer.
 */
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/run/run_internal.h"
#include "common/caps.h"

static const char judge_system[] =
	"You review a proposed code change before a human does.  Read what was asked, the "
	"code it was asked of and the change, and decide whether the change does what was "
	"asked, correctly, and nothing else.  Answer with one JSON object and nothing else:\n"
	"{\"verdict\": \"accept\" or \"reject\", \"reason\": \"one or two sentences\"}\n";

/* judge_ask: the run is stopping (before the request, or it was cut): no verdict */
#define JUDGE_STOPPING 1

/* One judge request: its chat, what it reserved and what it billed. */
typedef struct judge_call {
	sl_buf user;                /* the user message */
	sl_chat_msg msgs[2];
	sl_completion comp;
	sl_err cerr;                /* why the request failed */
	int rc;                     /* the provider's result; SL_OK for a journalled reply */
	int64_t est_in, cap, tin, tout;
	int estimated;
	double cost;
} judge_call;

/* The user message: what was asked, the unit, the diff, and the trajectory when asked. */
static void judge_prompt(run_attempt *a, sl_buf *out)
{
	const sl_spec *spec = a->x->c->spec;
	const sl_spec_judge *j = spec->judge;
	const sl_target *t = a->t;

	sl_buf_addf(out, "## What was asked\n%s\n", spec->instructions ? spec->instructions :
		    "(no instructions)");
	if (j->instructions)
		sl_buf_addf(out, "\n## What to check\n%s\n", j->instructions);
	sl_buf_addf(out, "\n## The code it was asked of: %s, lines %u-%u\n```%s\n%s\n```\n",
		    t->path, t->start_line, t->end_line, t->lang, t->unit_text);
	sl_buf_addf(out, "\n## The change\n```diff\n%s```\n", a->s.diff.buf);
	if (!j->include_trajectory)
		return;
	for (size_t i = 0; i < a->hist->n; i++)
		sl_buf_addf(out, "\n## Attempt %zu failed\n%s\n", i + 1, a->hist->v[i].feedback);
	if (a->s.comp.text.len)
		sl_buf_addf(out, "\n## The reply the change was made from\n%s\n",
			    a->s.comp.text.buf);
}

/*
 * The reply's verdict: the JSON object, alone or inside the first fenced
 * block.  *accept, and the reason into reason; SL_EINPUT with what is wrong.
 */
static int parse_verdict(const char *text, int *accept, sl_buf *reason, sl_err *err)
{
	const char *p = text, *end, *fence = strstr(text, "```");
	json_t *o = NULL, *v, *r;
	json_error_t je;
	int d, ret = SL_EINPUT;

	if (fence) {
		p = strchr(fence, '\n');
		end = p ? strstr(p, "```") : NULL;
		if (!end) {
			sl_err_set(err, SL_EINPUT, "the fenced block is not closed");
			goto done;
		}
	} else {
		end = p + strlen(p);
	}
	if (!(o = json_loadb(p, (size_t)(end - p), 0, &je)) || !json_is_object(o)) {
		sl_err_set(err, SL_EINPUT, "the answer is not one JSON object");
		goto done;
	}
	v = json_object_get(o, "verdict");
	r = json_object_get(o, "reason");
	/* a reviewer's words: the decision names */
	if (!json_is_string(v) || !(d = sl_decision_parse(json_string_value(v)))) {
		sl_err_set(err, SL_EINPUT, "\"verdict\" must be \"accept\" or \"reject\"");
		goto done;
	}
	*accept = d == SL_D_ACCEPT;
	if (!json_is_string(r) || (!*accept && !json_string_length(r))) {
		sl_err_set(err, SL_EINPUT, "\"reason\" must be a string%s",
			   *accept ? "" : ", not empty for a reject");
		goto done;
	}
	sl_buf_adds(reason, json_string_value(r));
	ret = SL_OK;
done:
	json_decref(o);
	return ret;
}

/* The tokens to bill: what the endpoint said when plausible, else counted from bytes. */
static void judge_usage(judge_call *c)
{
	int64_t in = c->comp.tokens_in, out = c->comp.tokens_out;

	if (in < -1 || out < -1 || in > SL_CAP_USAGE_TOKENS || out > SL_CAP_USAGE_TOKENS) {
		c->tin = c->est_in;
		c->tout = c->cap;
		return;
	}
	c->tin = in >= 0 ? in : run_bytes_tokens(c->comp.request.len ? c->comp.request.len :
						  c->user.len);
	c->tout = out >= 0 ? out : run_bytes_tokens(c->comp.text.len);
	c->estimated = in < 0 || out < 0;
}

/* Journal the judge's reply in a fenced transaction of its own. */
static int judge_journal(run_attempt *a, const judge_call *c, sl_err *err)
{
	sl_reply_rec r = { 0 };

	r.tokens_in = c->tin;
	r.tokens_out = c->tout;
	r.cost = c->cost;
	r.tokens_estimated = c->estimated;
	return run_journal_put(a, RUN_JUDGE_ROUND, &c->comp, &r, err);
}

/* The reply journalled before a crash for this very request: 1 taken, 0 none. */
static int from_journal(run_attempt *a, judge_call *c, sl_err *err)
{
	run_ctx *x = a->x;
	sl_reply_rec jr;
	int rc = sl_journal_reply_get(x->st, a->s.a.target_id, a->s.a.n, RUN_JUDGE_ROUND, &jr,
				      err);

	if (rc != SL_OK && rc != SL_ENOTFOUND)
		return -1;
	sl_err_clear(err);
	if (rc == SL_ENOTFOUND)
		return 0;
	if (!run_journal_matches(x->c->spec, &jr, c->msgs, 2)) {
		sl_reply_rec_release(&jr);
		return 0;
	}
	sl_buf_adds(&c->comp.text, jr.reply ? jr.reply : "");
	if (jr.request)
		sl_buf_adds(&c->comp.request, jr.request);
	snprintf(c->comp.key, sizeof(c->comp.key), "%s", jr.request_key);
	c->comp.latency_ms = jr.latency_ms;
	c->tin = jr.tokens_in > 0 ? jr.tokens_in : 0;
	c->tout = jr.tokens_out > 0 ? jr.tokens_out : 0;
	c->estimated = jr.tokens_estimated;
	c->cost = jr.cost;
	sl_reply_rec_release(&jr);
	return 1;
}

/*
 * The judge's reply: journalled, else asked, reserved before and settled
 * after.  SL_EBUDGET (a budget), JUDGE_STOPPING, SL_ERROR; SL_OK with
 * c->rc the provider's result.
 */
/* The spec whose provider fields the judge uses: its own `provider:`, or the campaign's. */
static const sl_spec *judge_spec(const run_ctx *x)
{
	const sl_spec *spec = x->c->spec;

	return spec->judge->provider ? spec->judge->provider : spec;
}

static int judge_ask(run_attempt *a, judge_call *c, sl_err *err)
{
	run_ctx *x = a->x;
	const sl_spec *spec = judge_spec(x);
	double est_cost;
	int r = from_journal(a, c, err);

	if (r)
		return r < 0 ? SL_ERROR : SL_OK;
	c->est_in = run_estimate_tokens(c->msgs, 2);
	c->cap = run_reply_cap(spec);
	est_cost = run_cost_of(spec, c->est_in, c->cap);
	sem_wait(&x->model_slots);
	if ((r = run_reserve(x, c->est_in + c->cap, est_cost))) {
		sem_post(&x->model_slots);
		return r == 1 ? SL_EBUDGET : r == 3 ? JUDGE_STOPPING :
			sl_err_set(err, SL_ERROR, "the run was stopped");
	}
	c->rc = sl_provider_complete(x->judge_provider ? x->judge_provider : x->provider, c->msgs,
				     2, &c->comp, &c->cerr);
	if (!c->rc)
		judge_usage(c);
	c->cost = run_cost_of(spec, c->tin, c->tout);
	run_settle(x, c->est_in + c->cap, est_cost, c->tin + c->tout, c->cost);
	r = c->rc ? SL_OK : judge_journal(a, c, err);
	sem_post(&x->model_slots);
	if (c->rc && run_interrupted(x))
		return JUDGE_STOPPING;
	if (!r && !c->rc && x->opts->record &&
	    sl_replay_record(x->opts->record, c->comp.key, &c->comp, err))
		r = SL_ERROR;
	return r;
}

/* The gate run and the feedback of the judge's answer (or of its failure). */
static void judge_record(run_attempt *a, judge_call *c, int64_t t0)
{
	run_ctx *x = a->x;
	const sl_spec *spec = x->c->spec;
	attempt_state *s = &a->s;
	sl_gate_run_rec *rec;
	sl_buf reason = SL_BUF_INIT, tail = SL_BUF_INIT, note = SL_BUF_INIT;
	sl_err perr = SL_ERR_INIT;
	int accept = 0;

	if (c->rc)
		sl_buf_addf(&tail, "error: the request failed: %s", c->cerr.msg);
	else if (parse_verdict(c->comp.text.buf, &accept, &reason, &perr))
		sl_buf_addf(&tail, "error: the answer is unusable (%s); it was:\n%.2000s",
			    perr.msg, c->comp.text.buf);
	else
		sl_buf_addf(&tail, "%s: %s", accept ? "accept" : "reject", reason.buf);
	sl_buf_addf(&note, "judged by %s (%s)", judge_spec(x)->model ? judge_spec(x)->model :
		    "the model", sl_provider_kind_name(judge_spec(x)->provider));
	SL_ALLOC_GROW(a->gates.v, a->gates.n + 1, a->gates.alloc);
	rec = &a->gates.v[a->gates.n++];
	memset(rec, 0, sizeof(*rec));
	rec->gate = sl_xstrdup(spec->judge->name);
	rec->verdict = c->rc || perr.code ? SL_VERDICT_ERROR :
		       accept ? SL_VERDICT_PASS : SL_VERDICT_FAIL;
	rec->exit_status = rec->verdict == SL_VERDICT_PASS ? 0 :
			   rec->verdict == SL_VERDICT_FAIL ? 1 : 2;
	rec->duration_ms = sl_now_ms() - t0;
	rec->output_bytes = (int64_t)c->comp.text.len;
	rec->output_tail = sl_buf_detach(&tail, NULL);
	rec->note = sl_buf_detach(&note, NULL);
	a->passed = rec->verdict == SL_VERDICT_PASS;
	if (rec->verdict == SL_VERDICT_FAIL)
		sl_buf_addf(&s->feedback, "The reviewing model rejected the change (gate '%s'): "
			    "%s", spec->judge->name, reason.buf);
	else if (rec->verdict == SL_VERDICT_ERROR)
		sl_buf_addf(&s->feedback, "The reviewing model gave no usable verdict (gate "
			    "'%s'); the change was not accepted.", spec->judge->name);
	sl_buf_release(&reason);
}

int run_model_judge(run_attempt *a, sl_err *err)
{
	attempt_state *s = &a->s;
	judge_call c;
	int64_t t0 = sl_now_ms();
	int r;

	memset(&c, 0, sizeof(c));
	sl_buf_init(&c.user, 0);
	sl_completion_init(&c.comp);
	a->passed = 0;
	judge_prompt(a, &c.user);
	c.msgs[0] = (sl_chat_msg){ "system", judge_system };
	c.msgs[1] = (sl_chat_msg){ "user", c.user.buf };
	r = judge_ask(a, &c, err);
	if (r == JUDGE_STOPPING) {
		/* the run is stopping: no verdict (run_judge_step drops the candidate) */
		r = SL_OK;
		goto done;
	}
	if (r)
		goto done;
	s->a.tokens_in = (s->a.tokens_in > 0 ? s->a.tokens_in : 0) + c.tin;
	s->a.tokens_out = (s->a.tokens_out > 0 ? s->a.tokens_out : 0) + c.tout;
	s->a.cost += c.cost;
	s->a.tokens_estimated |= c.estimated;
	judge_record(a, &c, t0);
done:
	sl_completion_release(&c.comp);
	sl_buf_release(&c.user);
	return r;
}
