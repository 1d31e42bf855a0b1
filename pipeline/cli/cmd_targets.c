/*
 * cmd_targets.c - `sluice targets`: every target of a campaign with its
 * state, PATH:LINE, attempts, latest candidate and the reason it failed or
 * was skipped, filtered by state; with --json and no filter, a fix
 * campaign's findings not placed follow.  Reads the store.
 */
#include <stdio.h>

#include "pipeline/cli/cmd.h"
#include "pipeline/review/report.h"
#include "common/util.h"

struct targets_opts {
	const char *store;
	int json;
	sl_strvec states;
};

static int targets_main(const sl_command *self, void *opts, const sl_opt_args *args)
{
	struct targets_opts *o = opts;
	sl_store *st = NULL;
	sl_campaign_rec camp = { 0 };
	sl_buf out = SL_BUF_INIT;
	sl_err err = SL_ERR_INIT;
	size_t count = 0;
	unsigned states = 0;
	int ret = SL_EXIT_OK;

	for (size_t i = 0; i < o->states.n && !ret; i++) {
		int s = sl_target_state_parse(o->states.v[i]);

		if (s == SL_T_ANY)
			ret = sl_cmd_usage(self, "unknown state '%s'", o->states.v[i]);
		else
			states |= 1u << s;
	}
	if (!ret && args->n > 1)
		ret = sl_cmd_usage(self, "expected at most one campaign name");
	if (ret)
		goto done;
	if (sl_cmd_open_campaign(&st, &camp, o->store, args->n ? args->v[0] : NULL, &err) ||
	    sl_report_targets(&out, st, camp.id, states, o->json, &count, &err) ||
	    (o->json && !states &&
	     sl_report_unplaced(&out, st, camp.id, SL_UNPLACED_JSON_LINES, &err))) {
		ret = sl_cmd_fail(&err);
		goto done;
	}
	fputs(out.buf, stdout);
	ret = SL_EXIT_OK;
done:
	sl_buf_release(&out);
	sl_campaign_rec_release(&camp);
	sl_store_free(st);
	return ret;
}

static const sl_option targets_options[] = {
	SL_OPT_LIST_F("state", 0, "S", "keep the targets in these states (repeatable, or S,T): "
		      "pending, proposed, failed, skipped, accepted, rejected, budget",
		      struct targets_opts, states, SL_OPTF_COMMA),
	CMD_OPT_STORE(struct targets_opts),
	CMD_OPT_JSON(struct targets_opts, "one object per line"),
	SL_OPT_END(),
};

const sl_command cmd_targets = {
	.name = "targets",
	.summary = "list a campaign's targets with their states and reasons",
	.usage = "usage: sluice targets [NAME] [--state S]... [--store PATH] [--json]\n",
	.about = "One line per target: id, state, PATH:LINE, attempts, its latest candidate\n"
		"and the reason it failed or was skipped.  --json: one object per target,\n"
		"then, without --state, one {\"unplaced\": {...}} per finding of a fix\n"
		"campaign that no target holds (file, line, rule, message, reason).\n",
	.options = targets_options,
	.opts_size = sizeof(struct targets_opts),
	.fn = targets_main,
};
