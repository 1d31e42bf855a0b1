/*
 * session.c - the model step of `generate: act` (README, "Letting the model
 * work"): the model works in a layer of its own over the warm base, one
 * shell command a step, each run in the jail with the gates' limits and no
 * network; a submit step ends the session, and the layer's change against
 * the base becomes the attempt's edits, judged like any candidate's.
 *
 * Every step is in the store (storage/step_store.h): the reply the moment
 * it arrives, then the command's result.  A session always starts from the
 * target's recorded steps: their replies are taken from the store (never
 * asked for again) and their commands run again to rebuild the layer (a
 * command whose output is not what was recorded is marked `differs`); so a
 * resumed run continues where the killed one stopped, and the next attempt
 * continues the same conversation, the failed gates' feedback as the
 * observation of its submit step.
 *
 * Calling sequence: run_session_step(a) from attempt() in place of the
 * model step; it fills a->s.edits (or ends the attempt with an outcome).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/run/run_internal.h"
#include "pipeline/generate/act.h"
#include "storage/step_store.h"

typedef struct session {
	run_attempt *a;
	char *layer;                /* the layer the commands write */
	sl_jail_session *jail;      /* the jail its commands run in, made at the first */
	sl_chat_msg *msgs;          /* the chat so far; contents in texts */
	size_t nmsgs, amsgs;
	sl_strvec texts;
	int64_t steps;              /* steps of this attempt so far */
	int64_t tokens;             /* tokens of this attempt's steps */
	int64_t tin, tout;          /* and apart, for the attempt's record */
	double cost;
	char *pending;              /* the reply of a submit step a kill left unjudged */
	int64_t pending_step;
	int64_t t0;
	size_t head, tail;
	int submitted;              /* the session ended with a change to judge */
	int over;                   /* a budget ran out (over_why) */
	char over_why[160];
} session;

static void chat_add(session *ss, const char *role, const char *text)
{
	sl_strvec_push(&ss->texts, text ? text : "");
	SL_ALLOC_GROW(ss->msgs, ss->nmsgs + 1, ss->amsgs);
	ss->msgs[ss->nmsgs].role = role;
	ss->msgs[ss->nmsgs].content = NULL;
	ss->nmsgs++;
}

/* The chat's contents point into texts, which may move while it grows. */
static void chat_fix(session *ss)
{
	for (size_t i = 0; i < ss->nmsgs; i++)
		ss->msgs[i].content = ss->texts.v[i];
}

/*
 * The session's jail: one for all its commands (validators.h), on the
 * layer, with the gates' limits; made at the first command, and again
 * after a command whose time ran out took it down.  The jail's own time is
 * the session's, and a step's more (a step may begin at its last moment).
 */
static int jail_ready(session *ss, sl_err *err)
{
	run_ctx *x = ss->a->x;
	const sl_spec *spec = x->c->spec;
	const sl_jail_limits *j = &spec->jail;
	sl_jail_opts jo = SL_JAIL_OPTS_INIT;

	if (sl_jail_session_alive(ss->jail))
		return 0;
	sl_jail_session_free(ss->jail);
	ss->jail = NULL;
	jo.workdir = sl_warm_tree(x->warm);
	jo.layer = ss->layer;
	jo.command = "true";
	jo.timeout_ms = (spec->session.timeout_s + spec->session.step_timeout_s + 15) * 1000u;
	jo.mem_mb = j->mem_mb;
	jo.pids_max = j->pids;
	jo.tmp_mb = j->tmp_mb;
	jo.cpu_milli = j->cpus * 1000;
	jo.as_mb = j->as_mb;
	jo.accept = j->accept;
	jo.unsafe = x->opts->unsafe;
	return sl_jail_session_open(&ss->jail, &jo, err);
}

/*
 * Run one command in the session's jail; the observation into obs, in the
 * form the model has always been shown (sl_act_observe: the byte count,
 * then the output's head and tail).
 */
static int run_command(session *ss, const char *command, sl_buf *obs, int64_t *total,
		       int64_t *ms, int *status, sl_err *err)
{
	run_ctx *x = ss->a->x;
	const sl_spec *spec = x->c->spec;
	sl_jail_result jr;
	sl_buf raw = SL_BUF_INIT;
	int r;

	sl_jail_result_init(&jr);
	/* a step's command is a gate's peer: at most `jobs` commands at once */
	sem_wait(&x->gate_slots);
	for (int tries = 0; tries < 2; tries++) {
		if (!(r = jail_ready(ss, err)))
			r = sl_jail_session_exec(ss->jail, &jr, command,
						 spec->session.step_timeout_s * 1000u, ss->head,
						 ss->tail, err);
		/* a jail gone since the last step (its pid 1 killed) is made again, once */
		if (!r || sl_jail_session_alive(ss->jail) || tries)
			break;
		sl_err_clear(err);
	}
	sem_post(&x->gate_slots);
	if (!r) {
		*status = jr.exited ? jr.exit_status : 128 + jr.term_signal;
		*ms = jr.duration_ms;
		sl_buf_addf(&raw, "%zu\n", jr.output_total);
		sl_buf_add(&raw, jr.output.buf, jr.output.len);
		sl_act_observe(obs, total, raw.buf, raw.len, *status, jr.timed_out,
			       spec->session.step_timeout_s, ss->head, ss->tail);
	}
	sl_jail_result_release(&jr);
	sl_buf_release(&raw);
	return r;
}

/* Write one step (its own transaction, fenced by the target's lease). */
static int put_step(session *ss, const sl_step_rec *rec, sl_err *err)
{
	run_ctx *x = ss->a->x;
	int r;

	if ((r = run_begin_fenced(x, rec->target_id, err)))
		return r;
	if ((r = sl_step_put(x->st, rec, err))) {
		sl_store_rollback(x->st);
		return r;
	}
	return sl_store_commit(x->st, err);
}

/*
 * Take a step whose reply is in rec (new or recorded): parse it, run its
 * command, record the result; the observation goes into the chat.  A
 * recorded step's command runs again; its output is compared with the
 * record's (differs).  *submit is set for a submit step.
 */
static int take_step(session *ss, sl_step_rec *rec, int recorded, int *submit, sl_err *err)
{
	sl_buf obs = SL_BUF_INIT;
	sl_err perr = SL_ERR_INIT;
	char *command = NULL;
	enum sl_act_kind k = sl_act_parse(&command, rec->reply, &perr);
	int status = -1, ret = SL_OK;
	int64_t total = 0, ms = 0;

	*submit = 0;
	chat_add(ss, "assistant", rec->reply);
	if (k == SL_ACT_SUBMIT) {
		*submit = 1;
		if (!recorded) {
			free(rec->kind);
			rec->kind = sl_xstrdup("submit");
			free(rec->command);
			rec->command = command;
			command = NULL;
			ret = put_step(ss, rec, err);
		}
		goto done;
	}
	if (k == SL_ACT_FORMAT) {
		sl_buf_addf(&obs, "Your reply could not be used: %s", perr.msg);
	} else if ((ret = run_command(ss, command, &obs, &total, &ms, &status, err))) {
		goto done;
	} else if (run_interrupted(ss->a->x)) {
		/* killed by the run's stop, not by itself: nothing to record */
		goto done;
	}
	if (recorded && rec->ran) {
		/* replayed to rebuild the layer: the record stays, a new output is marked */
		if (!rec->differs && rec->output && strcmp(rec->output, obs.buf)) {
			rec->differs = 1;
			ret = put_step(ss, rec, err);
		}
	} else {
		free(rec->kind);
		rec->kind = sl_xstrdup(sl_act_kind_name(k));
		free(rec->command);
		rec->command = command;
		command = NULL;
		rec->exit_status = status;
		rec->output_bytes = total;
		rec->command_ms = ms;
		free(rec->output);
		rec->output = sl_xstrdup(obs.buf);
		rec->ran = 1;
		ret = put_step(ss, rec, err);
	}
	/* the conversation goes on from what the model was shown */
	chat_add(ss, "user", recorded && rec->output ? rec->output : obs.buf);
done:
	free(command);
	sl_buf_release(&obs);
	return ret;
}

/* Tokens a chat may count: about a third of a token a byte, as model.c reserves. */
static int64_t chat_tokens(const session *ss)
{
	int64_t t = 0;

	for (size_t i = 0; i < ss->nmsgs; i++)
		t += (int64_t)(strlen(ss->msgs[i].content) / 3) + 8;
	return t;
}

/*
 * A replay found the chat before step `step` not as recorded: the output of
 * the step before it differs.  Marked on that step, which stays as it ran.
 */
static int mark_differs(session *ss, int64_t step, sl_err *err)
{
	sl_step_rec *v = NULL;
	size_t n = 0;
	int r;

	if ((r = sl_step_list(ss->a->x->st, ss->a->rec->id, ss->a->n, &v, &n, err)))
		return r;
	for (size_t i = 0; i < n && !r; i++)
		if (v[i].step == step && !v[i].differs) {
			v[i].differs = 1;
			r = put_step(ss, &v[i], err);
		}
	sl_step_list_free(v, n);
	return r;
}

/* Ask the model for the next step; rec gets the reply, recorded at once. */
static int ask(session *ss, sl_step_rec *rec, sl_err *err)
{
	run_attempt *a = ss->a;
	run_ctx *x = a->x;
	const sl_spec *spec = x->c->spec;
	sl_completion comp;
	sl_err perr = SL_ERR_INIT;
	int64_t est, cap = spec->max_tokens > 0 ? spec->max_tokens : 4096;
	double est_cost;
	sl_buf at = SL_BUF_INIT;
	int r, rc;

	chat_fix(ss);
	est = chat_tokens(ss);
	est_cost = run_cost_of(spec, est, cap);
	sem_wait(&x->model_slots);
	if ((r = run_reserve(x, est + cap, est_cost))) {
		sem_post(&x->model_slots);
		if (r == 2)
			return sl_err_set(err, SL_ERROR, "the run was stopped");
		return r == 1 ? SL_EBUDGET : SL_OK;
	}
	sl_completion_init(&comp);
	/* the session's position: a replay finds its reply there, whatever came before */
	sl_buf_addf(&at, "%s %lld %lld", a->rec->key, (long long)rec->n, (long long)rec->step);
	rc = sl_provider_complete_at(x->provider, at.buf, ss->msgs, ss->nmsgs, &comp, &perr);
	sl_buf_release(&at);
	/* not said (or impossible): counted from the bytes, 4 a token, as model.c does */
	rec->tokens_in = comp.tokens_in >= 0 ? comp.tokens_in :
		(int64_t)(comp.request.len + 3) / 4;
	rec->tokens_out = comp.tokens_out >= 0 ? comp.tokens_out :
		(int64_t)(comp.text.len + 3) / 4;
	if (!rc && (comp.tokens_in < 0 || comp.tokens_out < 0))
		a->s.a.tokens_estimated = 1;
	if (rc) {
		rec->tokens_in = rec->tokens_out = 0;
	}
	rec->cost = run_cost_of(spec, rec->tokens_in, rec->tokens_out);
	run_settle(x, est + cap, est_cost, rec->tokens_in + rec->tokens_out, rec->cost);
	if (!rc) {
		rec->reply = sl_xstrdup(comp.text.buf);
		rec->request_key = comp.key[0] ? sl_xstrdup(comp.key) : NULL;
		rec->model_ms = comp.latency_ms;
		rec->kind = sl_xstrdup("command");
		r = put_step(ss, rec, err);
		if (!r && comp.seen_differs && rec->step > 1)
			r = mark_differs(ss, rec->step - 1, err);
		if (!r && x->opts->record && sl_replay_record(x->opts->record, comp.key, &comp, err))
			r = SL_ERROR;
	}
	sem_post(&x->model_slots);
	if (rc) {
		a->s.a.outcome = SL_A_PROVIDER_ERROR;
		sl_buf_addf(&a->s.feedback, "The previous request failed: %s", perr.msg);
		sl_err_set(&a->s.aerr, perr.code, "%s", perr.msg);
		a->s.a.error = a->s.aerr.msg;
		r = SL_OK;
	}
	sl_completion_release(&comp);
	return r;
}

/* 1 if word names path: the path itself, or ./path, or a path ending in /path. */
static int names_path(const char *cmd, const char *path)
{
	size_t n = strlen(path);

	for (const char *p = cmd; (p = strstr(p, path)); p++) {
		char before = p == cmd ? ' ' : p[-1], after = p[n];

		if ((before == ' ' || before == '/' || before == '\t' || before == '"' ||
		     before == '\'' || before == '=' || before == ';' || before == '(') &&
		    (!after || strchr(" \t\"';)&|<>\n", after)))
			return 1;
	}
	return 0;
}

/* The campaign file's path in the repository, or NULL when it lives elsewhere. */
static char *campaign_in_repo(run_ctx *x)
{
	const char *wd = git_repository_workdir(x->c->repo);
	char *spec = wd ? realpath(x->c->spec->path, NULL) : NULL;
	char *root = wd ? realpath(wd, NULL) : NULL;
	char *rel = NULL;
	size_t n = root ? strlen(root) : 0;

	if (spec && root && !strncmp(spec, root, n) && spec[n] == '/')
		rel = sl_xstrdup(spec + n + 1);
	free(spec);
	free(root);
	return rel;
}

/*
 * What a submit may not change, said in why: paths outside the campaign's
 * globs, the scripts its gates run, the campaign file.
 */
static void check_submit(session *ss, sl_buf *why)
{
	run_ctx *x = ss->a->x;
	const sl_spec *spec = x->c->spec;
	const sl_strvec *globs = spec->job == SL_JOB_TESTGEN ? &spec->test_paths : &spec->paths;
	char *camp = campaign_in_repo(x);

	for (size_t i = 0; i < ss->a->s.edits.n; i++) {
		const char *p = ss->a->s.edits.v[i].path;
		int in = !globs->n;

		for (size_t g = 0; !in && g < globs->n; g++)
			in = sl_glob_match(globs->v[g], p);
		if (!in)
			sl_buf_addf(why, "'%s' is outside the paths the campaign may change\n", p);
		for (size_t g = 0; g < spec->ngates; g++)
			if (spec->gates[g].command && names_path(spec->gates[g].command, p))
				sl_buf_addf(why, "'%s' is run by gate '%s': the gates are not yours "
					    "to change\n", p, spec->gates[g].name);
		if (camp && !strcmp(camp, p))
			sl_buf_addf(why, "'%s' is the campaign file\n", p);
	}
	free(camp);
}

/*
 * The layer's change becomes the attempt's edits.  0: taken (ss->submitted)
 * or nothing to take (the outcome says so); 1: refused, the reason in obs.
 */
static int take_change(session *ss, sl_buf *obs, sl_err *err)
{
	run_attempt *a = ss->a;
	run_ctx *x = a->x;
	attempt_state *s = &a->s;
	sl_buf why = SL_BUF_INIT;
	int r;

	sl_edit_list_release(&s->edits);
	r = sl_warm_layer_changes(&s->edits, &why, x->warm, a->repo, &x->c->base, ss->layer, err);
	if (r == SL_EREFUSED) {
		sl_buf_addf(&why, "%s\n", err->msg);
		sl_err_clear(err);
		r = SL_OK;
	}
	if (r)
		goto done;
	check_submit(ss, &why);
	if (why.len) {
		sl_buf_addf(obs, "Your submit was refused:\n%s", why.buf);
		sl_edit_list_release(&s->edits);
		r = 1;
	} else if (!s->edits.n) {
		s->a.outcome = SL_A_NO_EDIT;
		sl_buf_adds(&s->feedback, "The session ended without a change to the files.");
		sl_err_set(&s->aerr, SL_EINPUT, "the session submitted no change");
		s->a.error = s->aerr.msg;
	} else {
		ss->submitted = 1;
	}
done:
	sl_buf_release(&why);
	return r;
}

/* A submit step (rec, just taken): the change judged, or refused with its reason. */
static int submit(session *ss, sl_step_rec *rec, sl_err *err)
{
	sl_buf obs = SL_BUF_INIT;
	int r = take_change(ss, &obs, err);

	if (r == 1) {
		free(rec->output);
		rec->output = sl_xstrdup(obs.buf);
		rec->ran = 1;
		chat_add(ss, "user", obs.buf);
		r = put_step(ss, rec, err);
	}
	sl_buf_release(&obs);
	return r;
}

static void step_release(sl_step_rec *r)
{
	free(r->reply);
	free(r->request_key);
	free(r->kind);
	free(r->command);
	free(r->output);
	memset(r, 0, sizeof(*r));
}

/* Which budget of the session ran out, in ss->over_why; 0 when none. */
static int over_budget(session *ss)
{
	const sl_spec_session *b = &ss->a->x->c->spec->session;

	if (ss->over)
		return 1;
	if (ss->steps >= (int64_t)b->steps)
		snprintf(ss->over_why, sizeof(ss->over_why), "the session's %u steps ran out",
			 b->steps);
	else if (b->max_tokens && ss->tokens >= b->max_tokens)
		snprintf(ss->over_why, sizeof(ss->over_why), "the session's %lld tokens ran out",
			 (long long)b->max_tokens);
	else if (sl_now_ms() - ss->t0 >= (int64_t)b->timeout_s * 1000)
		snprintf(ss->over_why, sizeof(ss->over_why), "the session's %u s ran out",
			 b->timeout_s);
	else
		return 0;
	ss->over = 1;
	return 1;
}

/*
 * The recorded steps of the target, taken again: replies from the store,
 * commands run again.  Earlier attempts' submit steps show the feedback the
 * attempt got (the last one is recorded now, from the history).  Sets
 * *pending when this attempt's last recorded step is a submit to judge.
 */
static int replay_steps(session *ss, int *pending, sl_err *err)
{
	run_attempt *a = ss->a;
	run_ctx *x = a->x;
	sl_step_rec *v = NULL;
	size_t n = 0;
	int ret, sub;

	*pending = 0;
	if ((ret = sl_step_list(x->st, a->rec->id, 0, &v, &n, err)))
		return ret;
	for (size_t i = 0; !ret && i < n; i++) {
		sl_step_rec *r = &v[i];
		int last_submit = sl_act_kind_parse(r->kind) == SL_ACT_SUBMIT;

		if (r->n > a->n)
			break;
		if (r->n == a->n) {
			ss->steps++;
			ss->tokens += r->tokens_in + r->tokens_out;
			ss->tin += r->tokens_in;
			ss->tout += r->tokens_out;
			ss->cost += r->cost;
		}
		if (sl_act_kind_parse(r->kind) == SL_ACT_BUDGET)
			continue;
		if (!last_submit) {
			ret = take_step(ss, r, 1, &sub, err);
			continue;
		}
		chat_add(ss, "assistant", r->reply);
		if (!r->output && r->n < a->n && a->hist->n) {
			/* the feedback of the attempt it ended */
			r->output = sl_xstrdup(a->hist->v[a->hist->n - 1].feedback);
			r->ran = 1;
			ret = put_step(ss, r, err);
		}
		if (r->output) {
			chat_add(ss, "user", r->output);
		} else if (r->n == a->n) {
			*pending = 1;
			free(ss->pending);
			ss->pending = sl_xstrdup(r->reply);
			ss->pending_step = r->step;
		}
	}
	sl_step_list_free(v, n);
	return ret;
}

/* The session's end when a budget ran out: its change judged or dropped (on_budget). */
static int end_over_budget(session *ss, sl_err *err)
{
	run_attempt *a = ss->a;
	attempt_state *s = &a->s;
	sl_step_rec rec = { 0 };
	sl_buf obs = SL_BUF_INIT;
	int r = SL_OK;

	rec.target_id = a->rec->id;
	rec.n = a->n;
	rec.step = ss->steps + 1;
	rec.kind = sl_xstrdup("budget");
	rec.output = sl_xstrdup(ss->over_why);
	rec.ran = 1;
	rec.exit_status = -1;
	if ((r = put_step(ss, &rec, err)))
		goto done;
	if (a->x->c->spec->session.on_budget == SL_SESSION_GATE &&
	    (r = take_change(ss, &obs, err)) != 1) {
		if (r)
			goto done;
		if (ss->submitted || s->a.outcome)
			goto done;
	}
	r = SL_OK;
	sl_edit_list_release(&s->edits);
	s->a.outcome = SL_A_NO_EDIT;
	sl_buf_reset(&s->feedback);
	sl_buf_addf(&s->feedback, "The session ended before a submit: %s; its change was "
		    "dropped.%s%s", ss->over_why, obs.len ? " " : "", obs.buf);
	sl_err_set(&s->aerr, SL_EBUDGET, "%s", ss->over_why);
	s->a.error = s->aerr.msg;
done:
	step_release(&rec);
	sl_buf_release(&obs);
	return r;
}

/* Steps until a submit is taken, the outcome is decided or a budget runs out. */
static int work(session *ss, sl_err *err)
{
	run_attempt *a = ss->a;
	int r = SL_OK, sub = 0;

	while (!ss->submitted && !a->s.a.outcome && !run_interrupted(a->x)) {
		sl_step_rec rec = { 0 };
		int rec_taken;

		if (over_budget(ss))
			return end_over_budget(ss, err);
		rec.target_id = a->rec->id;
		rec.n = a->n;
		rec.step = ss->steps + 1;
		rec.exit_status = -1;
		r = ask(ss, &rec, err);
		rec_taken = rec.reply != NULL;
		if (!r && rec.reply) {
			ss->steps++;
			ss->tokens += rec.tokens_in + rec.tokens_out;
			ss->tin += rec.tokens_in;
			ss->tout += rec.tokens_out;
			ss->cost += rec.cost;
			r = take_step(ss, &rec, 0, &sub, err);
			if (!r && sub)
				r = submit(ss, &rec, err);
		}
		step_release(&rec);
		if (r || a->s.a.outcome || !rec_taken)
			break;
	}
	return r;
}

int run_session_step(run_attempt *a, sl_err *err)
{
	run_ctx *x = a->x;
	attempt_state *s = &a->s;
	const sl_spec_session *b = &x->c->spec->session;
	session ss;
	int capped = 0, pending = 0, r;

	memset(&ss, 0, sizeof(ss));
	ss.a = a;
	ss.t0 = sl_now_ms();
	ss.head = b->output_bytes / 2;
	ss.tail = b->output_bytes - ss.head;
	/* unlike a one-shot reply, a session works on the warm base: it waits for it */
	if ((r = run_base_wait(x, err)))
		return r;
	if (!x->warm)
		return sl_err_set(err, SL_EINPUT, "generate: act needs the warm base: a jailed "
				  "gate, jail.warm_base not off, and an overlay the jail can mount");
	if ((r = run_prompt_text(a, err)))
		goto done;
	chat_add(&ss, "system", sl_act_system(b->wire == SL_WIRE_TOOLS));
	chat_add(&ss, "user", s->prompt.buf);
	if ((r = sl_warm_layer_add(&ss.layer, &capped, x->warm, a->repo, &x->c->base,
				   run_layer_cap(x), err)) ||
	    (r = replay_steps(&ss, &pending, err)))
		goto done;
	if (pending) {
		/* a submit a kill left unjudged: taken (or refused) now */
		sl_step_rec rec = { 0 };

		rec.target_id = a->rec->id;
		rec.n = a->n;
		rec.step = ss.pending_step;
		rec.reply = ss.pending;
		rec.kind = sl_xstrdup("submit");
		rec.exit_status = -1;
		ss.pending = NULL;
		r = submit(&ss, &rec, err);
		step_release(&rec);
	}
	if (!r && !ss.submitted && !s->a.outcome)
		r = work(&ss, err);
	s->a.tokens_in = ss.tin;
	s->a.tokens_out = ss.tout;
	s->a.cost = ss.cost;
	if (!r && !ss.submitted && !s->a.outcome) {
		/* the run stopped mid-session: the next run continues from the steps */
		s->transient = 1;
		sl_buf_reset(&s->feedback);
		sl_buf_adds(&s->feedback, "the run stopped during the session");
	}
	chat_fix(&ss);
	free(s->chat);
	{
		sl_buf t = SL_BUF_INIT;

		for (size_t i = 0; i < ss.nmsgs; i++)
			sl_buf_addf(&t, "%s### %s\n%s\n", i ? "\n" : "", ss.msgs[i].role,
				    ss.msgs[i].content);
		s->chat = sl_buf_detach(&t, NULL);
	}
	s->a.prompt = s->chat;
done:
	sl_jail_session_free(ss.jail);
	if (ss.layer && sl_warm_layer_remove(ss.layer, r ? NULL : err) && !r)
		r = SL_ERROR;
	free(ss.layer);
	free(ss.pending);
	free(ss.msgs);
	sl_strvec_release(&ss.texts);
	if (r == SL_EBUDGET) {
		pthread_mutex_lock(&x->lock);
		r = run_record_plain(a, SL_T_BUDGET, a->n - 1, x->stop_reason, err);
		pthread_mutex_unlock(&x->lock);
		a->ended = !r;
	} else if (!r && s->transient) {
		r = run_move_target(x, a->rec->id, SL_T_PENDING, a->n - 1, s->feedback.buf, err);
		a->ended = !r;
	}
	return r;
}
