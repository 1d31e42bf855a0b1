/*
 * cmd_show.c - `sluice show`: one candidate (its gates and diff) by id, or
 * the target whose lines hold PATH:LINE (its latest candidate, else its
 * state, attempts and reason); --attempts adds every attempt with its
 * request and reply, the middle of a long chat message or reply cut
 * unless --full (which implies --attempts); --steps the model's session
 * (generate: act).  Reads the store.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/cli/cmd.h"
#include "pipeline/run.h"
#include "pipeline/review/report.h"
#include "pipeline/review/review.h"
#include "common/util.h"

struct show_opts {
	const char *store;
	int json, attempts, full, steps;
};

/* The review's flags for the options: JSON, the attempts, whole. */
static int show_flags(const struct show_opts *o)
{
	return o->json | (o->attempts || o->full ? SL_SHOW_ATTEMPTS : 0) |
		(o->full ? SL_SHOW_FULL : 0);
}

/* `show [NAME] PATH:LINE` */
static int show_target(const sl_command *self, const struct show_opts *o,
		       const sl_opt_args *args)
{
	sl_store *st = NULL;
	sl_campaign_rec camp = { 0 };
	sl_buf out = SL_BUF_INIT;
	sl_err err = SL_ERR_INIT;
	const char *spec = args->v[args->n - 1], *colon = strrchr(spec, ':');
	char *path = sl_xstrndup(spec, (size_t)(colon - spec));
	long long line = sl_cmd_parse_id(colon + 1);
	int ret = SL_EXIT_OK;

	if (args->n > 2 || !*path || !line) {
		ret = sl_cmd_usage(self, "expected [NAME] PATH:LINE, got '%s'", spec);
		goto done;
	}
	if (sl_cmd_open_campaign(&st, &camp, o->store, args->n == 2 ? args->v[0] : NULL, &err) ||
	    sl_report_show_target(&out, st, camp.id, path, line, show_flags(o), &err))
		ret = sl_cmd_fail(&err);
	else
		sl_cmd_print(stdout, out.buf, o->json);
done:
	sl_buf_release(&out);
	sl_campaign_rec_release(&camp);
	sl_store_free(st);
	free(path);
	return ret;
}

static int show_main(const sl_command *self, void *opts, const sl_opt_args *args)
{
	struct show_opts *o = opts;
	sl_store *st = NULL;
	sl_buf out = SL_BUF_INIT;
	sl_err err = SL_ERR_INIT;
	char *path = NULL;
	long long id;
	int ret = SL_EXIT_OK;

	if (args->n >= 1 && strchr(args->v[args->n - 1], ':'))
		return show_target(self, o, args);
	if (args->n != 1 || !(id = sl_cmd_parse_id(args->v[0])))
		return sl_cmd_usage(self, "expected one candidate id or PATH:LINE");
	path = sl_default_store_path(o->store);
	if (sl_store_open(&st, path, 0, &err) ||
	    (o->steps ? sl_report_steps(&out, st, id, o->json, &err) :
	     sl_review_show(&out, st, id, show_flags(o), &err)))
		ret = sl_cmd_fail(&err);
	else
		sl_cmd_print(stdout, out.buf, o->json);
	sl_buf_release(&out);
	sl_store_free(st);
	free(path);
	return ret;
}

static const sl_option show_options[] = {
	CMD_OPT_STORE(struct show_opts),
	CMD_OPT_JSON(struct show_opts, "print it as JSON"),
	SL_OPT_BOOL("attempts", 0, "also every attempt at the candidate's target: source, "
		    "outcome, tokens, cost, latency, HTTP status, retries, the request and the "
		    "reply (of a chat message over 8 lines its first and last 4, of a reply over 40 "
		    "its first and last 20, saying how many lines were cut)", struct show_opts,
		    attempts),
	SL_OPT_BOOL("full", 0, "with --attempts (implied): the requests and replies whole",
		    struct show_opts, full),
	SL_OPT_BOOL("steps", 0, "the model's session instead (generate: act): each step's "
		    "message, command, exit status, output, durations and tokens",
		    struct show_opts, steps),
	SL_OPT_END(),
};

const sl_command cmd_show = {
	.name = "show",
	.summary = "show a candidate: gates and diff",
	.usage = "usage: sluice show ID [--store PATH] [--json] [--attempts] [--full | --steps]\n"
		"   or: sluice show [NAME] PATH:LINE [--store PATH] [--json] [--attempts] [--full]\n",
	.about = "PATH:LINE shows the target whose lines hold LINE: its latest candidate,\n"
		"or, when it has none, its state, attempts and reason.\n",
	.options = show_options,
	.opts_size = sizeof(struct show_opts),
	.fn = show_main,
};
