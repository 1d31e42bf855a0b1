/*
 * model.c - the model step of an attempt: the prompt rendered for the
 * target with the conversation so far, the request (or the reply a crashed
 * run journalled for the very same request), its tokens and cost reserved
 * and settled against the budgets, the reply journalled the moment it
 * arrives, and its edits parsed; a reply in the wrong format gets one
 * correction round.  A request that failed for a passing reason leaves the
 * target pending.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/run/run_internal.h"
#include "pipeline/generate/prompt.h"
#include "scoping/context.h"
#include "common/caps.h"

/* One request of an attempt: the first, or the format correction after it. */
typedef struct model_round {
	sl_chat_msg *msgs;          /* the chat sent; owned */
	size_t nmsgs;
	int round;                  /* 0, or 1 for the correction */
	enum sl_code rc;            /* the provider's result; SL_OK for a journalled reply */
	int64_t est_in, cap;        /* the reservation: the prompt's estimate, the reply cap */
	int64_t tin, tout;          /* the tokens billed */
	int estimated;              /* counted from bytes: the provider did not say */
	double cost;
	int over;                   /* the model step ends with what the step returned */
} model_round;

static void build_chat(const sl_buf *prompt, sl_chat_msg **msgs, size_t *n, const char *system,
		       const sl_turn *h, size_t nh)
{
	size_t alloc = 0;

	*msgs = NULL;
	*n = 0;
	SL_ALLOC_GROW(*msgs, 2 + 2 * nh, alloc);
	(*msgs)[(*n)++] = (sl_chat_msg){ "system", system };
	(*msgs)[(*n)++] = (sl_chat_msg){ "user", prompt->buf };
	for (size_t i = 0; i < nh; i++) {
		if (h[i].reply)
			(*msgs)[(*n)++] = (sl_chat_msg){ "assistant", h[i].reply };
		(*msgs)[(*n)++] = (sl_chat_msg){ "user", h[i].feedback };
	}
}

/* Flatten a chat into the text recorded as the attempt's prompt. */
static char *chat_text(const sl_chat_msg *msgs, size_t n)
{
	sl_buf b = SL_BUF_INIT;

	for (size_t i = 0; i < n; i++)
		sl_buf_addf(&b, "%s### %s\n%s\n", i ? "\n" : "", msgs[i].role, msgs[i].content);
	return sl_buf_detach(&b, NULL);
}

static int read_blob_text(sl_buf *out, git_repository *repo, const char *hex, sl_err *err)
{
	git_oid oid;
	git_blob *blob = NULL;

	if (git_oid_fromstr(&oid, hex) || git_blob_lookup(&blob, repo, &oid))
		return sl_err_set(err, SL_ERROR, "cannot read blob %s: %s", hex, sl_git_error());
	sl_buf_add(out, git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob));
	git_blob_free(blob);
	return SL_OK;
}

/* Tokens a chat's prompt may count: a byte is at most about a third of a token. */
int64_t run_estimate_tokens(const sl_chat_msg *msgs, size_t n)
{
	int64_t t = 0;

	for (size_t i = 0; i < n; i++)
		t += (int64_t)(strlen(msgs[i].content) / 3) + 8;
	return t;
}

/* The reply cap a reservation assumes: max_tokens, else a typical endpoint's default. */
int64_t run_reply_cap(const sl_spec *spec)
{
	return spec->max_tokens > 0 ? spec->max_tokens : 4096;
}

/* Tokens counted from bytes, about 4 a token (README, "Every token counted"). */
int64_t run_bytes_tokens(size_t len)
{
	return (int64_t)((len + 3) / 4);
}

/*
 * The tokens to bill for a reply.  Numbers the endpoint reports are taken
 * when plausible; negative (other than -1, "not said"), absurd or
 * overflowing ones are rejected, the reservation is billed instead and the
 * reason noted with the attempt.  A number not said (a command that does
 * not report usage, an HTTP reply without "usage") is counted from the
 * bytes sent and received, and marked estimated.
 */
static void check_usage(run_attempt *a, model_round *m)
{
	run_ctx *x = a->x;
	attempt_state *s = &a->s;
	int64_t in = s->comp.tokens_in, out = s->comp.tokens_out;
	int64_t est_in = m->est_in, cap = m->cap;

	if (in < -1 || out < -1 || in > SL_CAP_USAGE_TOKENS || out > SL_CAP_USAGE_TOKENS) {
		snprintf(s->usage_note, sizeof(s->usage_note), "the endpoint reported %lld prompt "
			 "and %lld completion tokens, which cannot be; billed the reservation "
			 "(%lld + %lld) instead", (long long)in, (long long)out, (long long)est_in,
			 (long long)cap);
		m->tin = est_in;
		m->tout = cap;
		pthread_mutex_lock(&x->lock);
		x->usage_rejected++;
		pthread_mutex_unlock(&x->lock);
		return;
	}
	m->tin = in > 0 ? in : 0;
	m->tout = out > 0 ? out : 0;
	if (in == -1) {
		size_t sent = s->comp.request.len;

		for (size_t i = 0; !sent && i < m->nmsgs; i++)
			sent += strlen(m->msgs[i].content);
		m->tin = run_bytes_tokens(sent);
		m->estimated = 1;
	}
	if (out == -1) {
		m->tout = run_bytes_tokens(s->comp.text.len);
		m->estimated = 1;
	}
}

/* Record the reply that just arrived, before anything is done with it. */
static int journal_reply(run_attempt *a, const model_round *m, sl_err *err)
{
	attempt_state *s = &a->s;
	sl_reply_rec r = { 0 };

	r.tokens_in = m->tin;
	r.tokens_out = m->tout;
	r.cost = m->cost;
	r.usage_note = s->usage_note[0] ? s->usage_note : NULL;
	r.tokens_estimated = m->estimated;
	return run_journal_put(a, m->round, &s->comp, &r, err);
}

int run_journal_put(run_attempt *a, int round, const sl_completion *c, sl_reply_rec *r,
		    sl_err *err)
{
	run_ctx *x = a->x;
	int ret;

	r->target_id = a->s.a.target_id;
	r->n = a->s.a.n;
	r->round = round;
	r->request_key = c->key[0] ? (char *)c->key : NULL;
	r->request = c->request.len ? c->request.buf : NULL;
	r->reply = c->text.buf;
	r->http_status = c->http_status;
	r->latency_ms = c->latency_ms;
	r->retries = c->retries;
	r->truncated = c->truncated;
	if ((ret = run_begin_fenced(x, r->target_id, err)))
		return ret;
	if ((ret = sl_journal_reply_put(x->st, r, err))) {
		sl_store_rollback(x->st);
		return ret;
	}
	return sl_store_commit(x->st, err);
}

/* 1 if the journalled reply answered this very request (same key). */
int run_journal_matches(const sl_spec *spec, const sl_reply_rec *jr, const sl_chat_msg *msgs,
			   size_t n)
{
	static const enum sl_provider_kind kinds[] = { SL_PROVIDER_OPENAI, SL_PROVIDER_ANTHROPIC,
				     SL_PROVIDER_COMMAND };
	char key[65];

	if (!jr->request_key)
		return 0;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		/* replay records the key of the kind it was recorded from */
		if (spec->provider != SL_PROVIDER_REPLAY && spec->provider != kinds[i])
			continue;
		sl_request_key(key, kinds[i], spec->model, msgs, n);
		if (!strcmp(key, jr->request_key))
			return 1;
	}
	return 0;
}

/* Fill the completion from a journalled reply. */
static void from_journal(attempt_state *s, const sl_reply_rec *jr)
{
	sl_buf_adds(&s->comp.text, jr->reply ? jr->reply : "");
	if (jr->request)
		sl_buf_adds(&s->comp.request, jr->request);
	snprintf(s->comp.key, sizeof(s->comp.key), "%s", jr->request_key ? jr->request_key : "");
	s->comp.tokens_in = jr->tokens_in;
	s->comp.tokens_out = jr->tokens_out;
	s->comp.http_status = (int)jr->http_status;
	s->comp.latency_ms = jr->latency_ms;
	s->comp.retries = (int)jr->retries;
	s->comp.truncated = jr->truncated;
	if (jr->usage_note)
		snprintf(s->usage_note, sizeof(s->usage_note), "%s", jr->usage_note);
}

/*
 * The attempt's prompt: the template rendered with the target, the
 * findings (fix) or the test instructions (testgen) and the last feedback
 * (s->prompt); render_prompt() adds the chat with the earlier attempts
 * (m->msgs).
 */
int run_prompt_text(run_attempt *a, sl_err *err)
{
	run_ctx *x = a->x;
	const sl_spec *spec = x->c->spec;
	const sl_target *t = a->t;
	const run_history *h = a->hist;
	attempt_state *s = &a->s;
	sl_prompt_vars vars = { 0 };
	const char *tmpl;

	s->a.source = (char *)sl_provider_kind_name(spec->provider);
	if (read_blob_text(&s->file, a->repo, t->blob, err))
		return SL_ERROR;
	vars.path = t->path;
	vars.language = t->lang;
	vars.unit = t->unit_text;
	vars.file = s->file.buf;
	vars.instructions = spec->instructions ? spec->instructions : "";
	if (spec->job == SL_JOB_FIX) {
		sl_fix_finding_text(&x->findings, t, &s->finding);
		vars.finding = s->finding.buf;
		/* the default template has no {{finding}}: the findings follow the instructions */
		if (!spec->prompt) {
			sl_buf_addf(&s->fix_instr, "%s\n\nThe analyzer's findings in this part "
				    "(fix their cause; do not suppress them, do not delete the "
				    "code):\n%s", vars.instructions, s->finding.buf);
			vars.instructions = s->fix_instr.buf;
		}
	}
	if (spec->job == SL_JOB_TESTGEN) {
		sl_buf_addf(&s->fix_instr, "%s\n\nWrite one test for the part to change above, "
			    "in a new or an existing test file matching ", vars.instructions);
		for (size_t i = 0; i < spec->test_paths.n; i++)
			sl_buf_addf(&s->fix_instr, "%s%s", i ? " or " : "", spec->test_paths.v[i]);
		sl_buf_adds(&s->fix_instr, ", and do not change any other file.");
		if (spec->test_template)
			sl_buf_addf(&s->fix_instr, "  Follow this template:\n%s", spec->test_template);
		vars.instructions = s->fix_instr.buf;
	}
	vars.feedback = h->n ? h->v[h->n - 1].feedback : "";
	tmpl = spec->prompt ? spec->prompt : spec->context_file ? sl_prompt_file_template :
	       sl_prompt_default_template;
	if (spec->context_tokens && strstr(tmpl, "context")) {
		/* a template that shows the unit apart need not see it twice */
		if (sl_context_build(&s->context, a->repo, &x->c->base, t, spec->context_tokens,
				     strstr(tmpl, "{{unit}}") ? SL_CONTEXT_NO_UNIT : 0, err))
			return SL_ERROR;
		vars.context = s->context.buf;
	}
	vars.start_line = t->start_line;
	vars.end_line = t->end_line;
	vars.edit_format = spec->edit_format;
	if (sl_prompt_render(&s->prompt, tmpl, &vars, err))
		return SL_EINPUT;
	return SL_OK;
}

static int render_prompt(run_attempt *a, model_round *m, sl_err *err)
{
	const run_history *h = a->hist;
	attempt_state *s = &a->s;
	int r;

	if ((r = run_prompt_text(a, err)))
		return r;
	build_chat(&s->prompt, &m->msgs, &m->nmsgs, sl_prompt_system(a->x->c->spec->edit_format), h->v,
		   h->n);
	s->chat = chat_text(m->msgs, m->nmsgs);
	s->a.prompt = s->chat;
	return SL_OK;
}

/*
 * The round's reply: the one journalled before a crash (never paid for
 * again), else the provider's, reserved before and settled after, and
 * journalled the moment it arrives.  m->over when the step ends here.
 */
static int fetch_reply(run_attempt *a, model_round *m, sl_err *err)
{
	run_ctx *x = a->x;
	const sl_spec *spec = x->c->spec;
	attempt_state *s = &a->s;
	double est_cost;
	sl_reply_rec jr;
	int rc, r;

	m->est_in = run_estimate_tokens(m->msgs, m->nmsgs);
	m->cap = run_reply_cap(spec);
	est_cost = run_cost_of(spec, m->est_in, m->cap);
	sl_completion_release(&s->comp);
	sl_completion_init(&s->comp);
	/* they pointed into the released completion and the cleared error */
	s->a.reply = NULL;
	s->a.error = NULL;
	sl_err_clear(&s->aerr);
	m->over = 1;

	/* a reply journalled before a crash is taken, never paid for again */
	rc = sl_journal_reply_get(x->st, s->a.target_id, s->a.n, m->round, &jr, err);
	if (rc != SL_OK && rc != SL_ENOTFOUND)
		return SL_ERROR;
	if (rc == SL_OK && !run_journal_matches(spec, &jr, m->msgs, m->nmsgs)) {
		/* recorded for another request (the campaign changed): ask again */
		sl_reply_rec_release(&jr);
		rc = SL_ENOTFOUND;
	}
	sl_err_clear(err);
	if (rc == SL_OK) {
		from_journal(s, &jr);
		m->rc = SL_OK;
		m->tin = jr.tokens_in > 0 ? jr.tokens_in : 0;
		m->tout = jr.tokens_out > 0 ? jr.tokens_out : 0;
		m->estimated = jr.tokens_estimated;
		m->cost = jr.cost;
		sl_reply_rec_release(&jr);
		m->over = 0;
		return SL_OK;
	}
	sem_wait(&x->model_slots);
	r = run_reserve(x, m->est_in + m->cap, est_cost);
	if (r) {
		sem_post(&x->model_slots);
		/* a correction round cut short leaves the format error */
		if (m->round && r == 1)
			return SL_OK;
		if (r == 3) {
			s->transient = 1;
			sl_buf_reset(&s->feedback);
			sl_buf_adds(&s->feedback, "the run was stopped before the request");
			return SL_OK;
		}
		/* another worker broke the run: the target stays pending */
		return r == 2 ? sl_err_set(err, SL_ERROR, "the run was stopped") : SL_EBUDGET;
	}
	run_ev_request(a, m->round);
	m->rc = sl_provider_complete(x->provider, m->msgs, m->nmsgs, &s->comp, &s->aerr);
	m->tin = m->tout = 0;
	m->estimated = 0;
	if (!m->rc)
		check_usage(a, m);
	m->cost = run_cost_of(spec, m->tin, m->tout);
	run_ev_answered(a, m->rc, m->tin, m->tout, m->cost);
	run_settle(x, m->est_in + m->cap, est_cost, m->tin + m->tout, m->cost);
	/*
	 * The slot is held until the reply is journalled: a kill loses at most
	 * `concurrency` paid replies, never one answered and still unrecorded
	 * beyond them.
	 */
	r = m->rc ? SL_OK : journal_reply(a, m, err);
	sem_post(&x->model_slots);
	if (r)
		return r;
	if (!m->rc && x->opts->record &&
	    sl_replay_record(x->opts->record, s->comp.key, &s->comp, err))
		return SL_ERROR;
	m->over = 0;
	return SL_OK;
}

/*
 * What the round's reply gives: its usage added to the attempt, a failed
 * request's outcome, or the edits parsed from it; a reply in the wrong
 * format gets one correction round (the same chat, the reply, what was
 * wrong).  m->over when the step ends here.
 */
static int take_reply(run_attempt *a, model_round *m, sl_err *err)
{
	const sl_spec *spec = a->x->c->spec;
	const sl_target *t = a->t;
	attempt_state *s = &a->s;
	int rc;

	s->a.tokens_in = (s->a.tokens_in > 0 ? s->a.tokens_in : 0) + m->tin;
	s->a.tokens_out = (s->a.tokens_out > 0 ? s->a.tokens_out : 0) + m->tout;
	s->a.latency_ms += s->comp.latency_ms;
	s->a.http_status = s->comp.http_status;
	s->a.retries += s->comp.retries;
	s->a.request = s->comp.request.len ? s->comp.request.buf : NULL;
	s->a.request_key = s->comp.key[0] ? s->comp.key : NULL;
	s->a.cost += m->cost;
	s->a.tokens_estimated |= m->estimated;
	m->over = 1;
	if (m->rc && s->aerr.code == SL_EINPUT && spec->provider == SL_PROVIDER_REPLAY)
		return sl_err_set(err, SL_EINPUT, "replay: %s; the run stops (the target "
				  "stays pending)", s->aerr.msg);
	if (m->rc && (s->comp.transient || run_interrupted(a->x))) {
		/* retries ran out on a failure that may pass: not the target's fault */
		s->transient = 1;
		sl_buf_reset(&s->feedback);
		sl_buf_addf(&s->feedback, "%s", s->aerr.msg);
		return SL_OK;
	}
	if (m->rc && run_provider_error(a->x, s->aerr.msg)) {
		/* the same error again and again: the run stops, the target waits */
		s->transient = 1;
		sl_buf_reset(&s->feedback);
		sl_buf_addf(&s->feedback, "%s", s->aerr.msg);
		return SL_OK;
	}
	if (m->rc) {
		s->a.outcome = SL_A_PROVIDER_ERROR;
		s->a.error = s->aerr.msg;
		sl_buf_reset(&s->feedback);
		sl_buf_addf(&s->feedback, "The previous request failed: %s", s->aerr.msg);
		return SL_OK;
	}
	run_provider_error(a->x, NULL);
	s->a.reply = s->comp.text.buf;
	s->a.outcome = SL_A_NONE;
	sl_edit_list_release(&s->edits);
	if (spec->edit_format == SL_FORMAT_NODE)
		rc = sl_reply_parse_node(&s->edits, s->comp.text.buf, s->comp.text.len,
					 t->path, t->start_byte, t->end_byte, t->unit_text,
					 &s->aerr);
	else
		rc = sl_reply_parse(&s->edits, s->comp.text.buf, s->comp.text.len,
				    spec->edit_format, &s->aerr);
	if (!rc)
		return SL_OK;
	if (s->comp.truncated)
		sl_err_prefix(&s->aerr, "the reply was cut at the token limit: ");
	s->a.format_errors++;
	s->a.outcome = SL_A_PARSE_ERROR;
	s->a.error = s->aerr.msg;
	sl_buf_reset(&s->feedback);
	sl_buf_addf(&s->feedback, "Your reply could not be used: %s\n"
		    "Answer again in the required format%s.", s->aerr.msg,
		    s->comp.truncated ? ", and keep it shorter" : "");
	if (m->round == 0) {
		/* the correction round: the same chat, the reply, what was wrong */
		free(s->correction_reply);
		s->correction_reply = sl_xstrdup(s->comp.text.buf);
		memcpy(s->correction_key, s->comp.key, sizeof(s->correction_key));
		s->a.format_reply = s->correction_reply;
		s->a.format_key = s->correction_key[0] ? s->correction_key : NULL;
		m->msgs = sl_xrealloc(m->msgs, sl_st_mult(m->nmsgs + 2, sizeof(*m->msgs)));
		m->msgs[m->nmsgs++] = (sl_chat_msg){ "assistant", s->correction_reply };
		m->msgs[m->nmsgs++] = (sl_chat_msg){ "user", s->feedback.buf };
		free(s->chat);
		s->chat = chat_text(m->msgs, m->nmsgs);
		s->a.prompt = s->chat;
	}
	m->over = 0;
	return SL_OK;
}

/*
 * Ask the model for edits: the request, and at most one format-correction
 * round after it.  Returns SL_OK (a.outcome set when the request or the
 * reply failed), SL_EBUDGET when a budget ran out before the request
 * started (nothing was spent), or SL_ERROR.
 */
static int ask_model(run_attempt *a, sl_err *err)
{
	model_round m;
	int r;

	memset(&m, 0, sizeof(m));
	if ((r = render_prompt(a, &m, err)))
		return r;
	for (m.round = 0; m.round < 2; m.round++) {
		r = fetch_reply(a, &m, err);
		if (!m.over)
			r = take_reply(a, &m, err);
		if (m.over)
			break;
	}
	free(m.msgs);
	return m.over ? r : SL_OK;
}

/*
 * Ask the model.  a->ended is set when the attempt ends here, recorded: a
 * budget ran out before the request, or the endpoint failed after its
 * retries (or the run is stopping) and the target waits for the next run.
 */
int run_model_step(run_attempt *a, sl_err *err)
{
	run_ctx *x = a->x;
	const attempt_state *s = &a->s;
	const sl_target_rec *rec = a->rec;
	int64_t n = a->n;
	sl_buf msg = SL_BUF_INIT;
	int r = ask_model(a, err);

	if (r == SL_EBUDGET) {
		pthread_mutex_lock(&x->lock);
		r = run_record_plain(a, SL_T_BUDGET, n - 1, x->stop_reason, err);
		pthread_mutex_unlock(&x->lock);
		a->ended = !r;
		return r;
	}
	if (r || !s->transient)
		return r;
	/* the attempt does not count */
	sl_buf_addf(&msg, "the model request failed (%s); the next run tries again",
		    s->feedback.buf);
	r = run_move_target(x, rec->id, SL_T_PENDING, n - 1, msg.buf, err);
	sl_buf_release(&msg);
	if (r)
		return r;
	/* a request cut at the wall-time deadline is the budget's stop, not the endpoint's fault */
	pthread_mutex_lock(&x->lock);
	x->transient += !run_interrupted(x) && !run_budget_reached(x);
	pthread_mutex_unlock(&x->lock);
	a->ended = 1;
	return SL_OK;
}
