/*
 * cmd_retry.c - `sluice retry`: send targets back through the pipeline.
 *
 *   sluice retry [NAME] [--store PATH] [--state LIST]... [PATH:LINE]...
 *
 * LIST: failed, budget, rejected, skipped, and stale (proposed, failed or
 * rejected targets judged under another definition of the campaign than
 * its last run's).
 * Reads the store's targets; moves the chosen ones back to pending with a
 * fresh set of attempts (sl_lease_send_back).  The next `sluice run`
 * rebuilds each one's conversation from its recorded attempts, so the
 * model sees what failed before and, for a rejected candidate, the
 * reviewer's reason.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/cli/cmd.h"
#include "storage/lease.h"
#include "common/util.h"

/*
 * The --state names, parsed once: a bit per target state it takes (failed,
 * budget, rejected, skipped), and STALE for "stale": judged under another
 * definition of the campaign than its last run's.
 */
#define STALE (1u << SL_T_NSTATES)
#define RETRY_STATES ((1u << SL_T_FAILED) | (1u << SL_T_BUDGET) | (1u << SL_T_REJECTED) | \
		      (1u << SL_T_SKIPPED))

/* The mask of names; *bad_out is the first name retry does not take, or NULL. */
static unsigned parse_states(const sl_strvec *names, const char **bad_out)
{
	unsigned mask = 0;

	*bad_out = NULL;
	for (size_t i = 0; i < names->n && !*bad_out; i++) {
		int st = sl_target_state_parse(names->v[i]);

		if (st != SL_T_ANY && (RETRY_STATES & (1u << st)))
			mask |= 1u << st;
		else if (!strcmp(names->v[i], "stale"))
			mask |= STALE;
		else
			*bad_out = names->v[i];
	}
	return mask;
}

/* PATH:LINE names the target when LINE is within its lines. */
static int names_target(const char *spec, const sl_target_rec *t)
{
	const char *colon = strrchr(spec, ':');
	char *end;
	long line;

	if (!colon || (size_t)(colon - spec) != strlen(t->path) ||
	    strncmp(spec, t->path, (size_t)(colon - spec)))
		return 0;
	line = strtol(colon + 1, &end, 10);
	return !*end && line >= t->start_line && line <= t->end_line;
}

struct retry_opts {
	const char *store;
	sl_strvec states;
};

static int retry_main(const sl_command *self, void *opts, const sl_opt_args *args)
{
	const struct retry_opts *o = opts;
	sl_store *st = NULL;
	sl_campaign_rec camp = { 0 };
	sl_target_rec *all = NULL;
	sl_err err = SL_ERR_INIT;
	const char *name = NULL, *bad = NULL;
	size_t n = 0, sent = 0, first = 0;
	unsigned states;
	int ret = SL_EXIT_OK;

	states = parse_states(&o->states, &bad);
	if (bad) {
		ret = sl_cmd_usage(self, "--state: unknown state '%s' (known: failed, "
				   "budget, rejected, skipped, stale)", bad);
		goto done;
	}
	if (args->n && !strchr(args->v[0], ':')) {
		name = args->v[0];
		first = 1;
	}
	for (int i = (int)first; i < args->n && !ret; i++)
		if (!strchr(args->v[i], ':'))
			ret = sl_cmd_usage(self, "'%s' is not PATH:LINE", args->v[i]);
	if (!ret && !o->states.n && (size_t)args->n == first)
		ret = sl_cmd_usage(self, "say which targets: --state LIST or PATH:LINE");
	if (ret)
		goto done;
	if (sl_cmd_open_campaign(&st, &camp, o->store, name, &err) ||
	    sl_store_targets(st, camp.id, SL_T_ANY, &all, &n, &err)) {
		ret = sl_cmd_fail(&err);
		goto done;
	}
	for (size_t i = (size_t)first; i < (size_t)args->n; i++) {
		size_t k;

		for (k = 0; k < n && !names_target(args->v[i], &all[k]); k++)
			;
		if (k == n) {
			sl_err_set(&err, SL_EINPUT, "no target of campaign '%s' at '%s'", camp.name,
				   args->v[i]);
			ret = sl_cmd_fail(&err);
			goto done;
		}
	}
	for (size_t k = 0; k < n; k++) {
		int chosen = all[k].state >= 0 && (states & (1u << all[k].state)), moved = 0;

		if (!chosen && (states & STALE) &&
		    sl_lease_is_stale(st, all[k].id, &chosen, &err)) {
			ret = sl_cmd_fail(&err);
			goto done;
		}
		for (size_t i = (size_t)first; i < (size_t)args->n && !chosen; i++)
			chosen = names_target(args->v[i], &all[k]);
		if (!chosen)
			continue;
		if (sl_lease_send_back(st, all[k].id, "sent back by `sluice retry`", &moved,
				       &err)) {
			ret = sl_cmd_fail(&err);
			goto done;
		}
		sent += moved;
	}
	printf("sent back %zu target%s\n", sent, sent == 1 ? "" : "s");
	ret = SL_EXIT_OK;
done:
	sl_target_list_free(all, n);
	sl_campaign_rec_release(&camp);
	sl_store_free(st);
	return ret;
}

static const sl_option retry_options[] = {
	CMD_OPT_STORE(struct retry_opts),
	SL_OPT_LIST_F("state", 0, "LIST", "send back the targets in these states "
		      "(comma-separated, repeatable)",
		      struct retry_opts, states, SL_OPTF_COMMA),
	SL_OPT_END(),
};

const sl_command cmd_retry = {
	.name = "retry",
	.summary = "send failed, budget-stopped, rejected or chosen targets back",
	.usage = "usage: sluice retry [NAME] [--store PATH] [--state LIST]... [PATH:LINE]...\n",
	.about = "Send targets back to `pending` with a fresh set of attempts: those in the\n"
		"states of LIST (comma-separated: failed, budget, rejected, skipped, and\n"
		"stale: judged under another definition of the campaign than the last\n"
		"run's) and those whose lines hold PATH:LINE (any state but accepted; a\n"
		"proposed one is marked rejected first).  The rules (as the campaign\n"
		"now says) run again on the first attempt.  Earlier attempts stay\n"
		"recorded and go to the model as the conversation so far; a reviewer's\n"
		"rejection reason goes as feedback.  The next `sluice run` works on them.\n"
		"Prints \"sent back N targets\".\n",
	.options = retry_options,
	.opts_size = sizeof(struct retry_opts),
	.fn = retry_main,
};
