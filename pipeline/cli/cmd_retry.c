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
 * The names --state takes: target states (sl_target_state_name), and "stale":
 * judged under another definition of the campaign than its last run's.
 */
static const char *const retry_states[] = { "failed", "budget", "rejected", "skipped", "stale",
					    NULL };

/* 1 if names (the --state names) holds name. */
static int has_name(const sl_strvec *names, const char *name)
{
	for (size_t i = 0; i < names->n; i++)
		if (!strcmp(names->v[i], name))
			return 1;
	return 0;
}

/* The first --state name that is not one of retry_states, or NULL. */
static const char *unknown_state(const sl_strvec *names)
{
	for (size_t i = 0; i < names->n; i++) {
		size_t k;

		for (k = 0; retry_states[k] && strcmp(retry_states[k], names->v[i]); k++)
			;
		if (!retry_states[k])
			return names->v[i];
	}
	return NULL;
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

int cmd_retry(int argc, char **argv)
{
	cmd_opts o;
	sl_store *st = NULL;
	sl_campaign_rec camp = { 0 };
	sl_target_rec *all = NULL;
	sl_err err = SL_ERR_INIT;
	const char *name = NULL, *bad = NULL;
	size_t n = 0, sent = 0, first = 0;
	int ret;

	if ((ret = sl_cmd_parse_opts(&o, argc, argv, "sS")))
		return ret;
	if ((bad = unknown_state(&o.states))) {
		ret = sl_cmd_usage("retry", "--state: unknown state '%s' (known: failed, "
				   "budget, rejected, skipped, stale)", bad);
		goto done;
	}
	if (o.nargs && !strchr(o.args[0], ':')) {
		name = o.args[0];
		first = 1;
	}
	for (int i = (int)first; i < o.nargs && !ret; i++)
		if (!strchr(o.args[i], ':'))
			ret = sl_cmd_usage("retry", "'%s' is not PATH:LINE", o.args[i]);
	if (!ret && !o.states.n && (size_t)o.nargs == first)
		ret = sl_cmd_usage("retry", "say which targets: --state LIST or PATH:LINE");
	if (ret)
		goto done;
	if (sl_cmd_open_campaign(&st, &camp, o.store, name, &err) ||
	    sl_store_targets(st, camp.id, SL_T_ANY, &all, &n, &err)) {
		ret = sl_cmd_fail(&err);
		goto done;
	}
	for (size_t i = (size_t)first; i < (size_t)o.nargs; i++) {
		size_t k;

		for (k = 0; k < n && !names_target(o.args[i], &all[k]); k++)
			;
		if (k == n) {
			sl_err_set(&err, SL_EINPUT, "no target of campaign '%s' at '%s'", camp.name,
				   o.args[i]);
			ret = sl_cmd_fail(&err);
			goto done;
		}
	}
	for (size_t k = 0; k < n; k++) {
		int chosen = has_name(&o.states, sl_target_state_name(all[k].state)), moved = 0;

		if (!chosen && has_name(&o.states, "stale") &&
		    sl_lease_is_stale(st, all[k].id, &chosen, &err)) {
			ret = sl_cmd_fail(&err);
			goto done;
		}
		for (size_t i = (size_t)first; i < (size_t)o.nargs && !chosen; i++)
			chosen = names_target(o.args[i], &all[k]);
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
	sl_cmd_opts_release(&o);
	return ret;
}
