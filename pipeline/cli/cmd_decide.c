/*
 * cmd_decide.c - `sluice accept` and `sluice reject`: record a reviewer's
 * decision on a candidate (the last one counts), with its reason; a
 * rejection needs one.  Writes the store.
 */
#include <stdio.h>
#include <stdlib.h>

#include "pipeline/cli/cmd.h"
#include "pipeline/run.h"
#include "common/util.h"

struct decide_opts {
	const char *store, *reason;
};

/* decision: SL_D_ACCEPT or SL_D_REJECT, by the command's name. */
static int decide(const sl_command *self, const struct decide_opts *o, const sl_opt_args *args,
		  int decision)
{
	sl_store *st = NULL;
	sl_err err = SL_ERR_INIT;
	char *path = NULL;
	long long id;
	int ret = SL_EXIT_OK;

	if (args->n != 1 || !(id = sl_cmd_parse_id(args->v[0])))
		return sl_cmd_usage(self, "expected one candidate id");
	if (decision == SL_D_REJECT && (!o->reason || !*o->reason))
		return sl_cmd_usage(self, "a rejection needs --reason TEXT");
	path = sl_default_store_path(o->store);
	if (sl_store_open(&st, path, 0, &err) || sl_store_decide(st, id, decision, o->reason, &err))
		ret = sl_cmd_fail(&err);
	else
		printf("candidate %lld %s\n", id,
		       sl_target_state_name(sl_decision_target_state(decision)));
	sl_store_free(st);
	free(path);
	return ret;
}

static int accept_main(const sl_command *self, void *opts, const sl_opt_args *args)
{
	return decide(self, opts, args, SL_D_ACCEPT);
}

static int reject_main(const sl_command *self, void *opts, const sl_opt_args *args)
{
	return decide(self, opts, args, SL_D_REJECT);
}

static const sl_option accept_options[] = {
	SL_OPT_STRING_F("reason", 0, "TEXT", "why (kept with the decision)", NULL,
			struct decide_opts, reason, SL_OPTF_EMPTY),
	CMD_OPT_STORE(struct decide_opts),
	SL_OPT_END(),
};

static const sl_option reject_options[] = {
	SL_OPT_STRING_F("reason", 0, "TEXT", "why (required; the model gets it as feedback when "
			"the target is retried)", NULL, struct decide_opts, reason, SL_OPTF_EMPTY),
	CMD_OPT_STORE(struct decide_opts),
	SL_OPT_END(),
};

const sl_command cmd_accept = {
	.name = "accept",
	.summary = "record that a reviewer accepted a candidate",
	.usage = "usage: sluice accept ID [--reason TEXT] [--store PATH]\n",
	.options = accept_options,
	.opts_size = sizeof(struct decide_opts),
	.fn = accept_main,
};

const sl_command cmd_reject = {
	.name = "reject",
	.summary = "record that a reviewer rejected a candidate",
	.usage = "usage: sluice reject ID --reason TEXT [--store PATH]\n",
	.options = reject_options,
	.opts_size = sizeof(struct decide_opts),
	.fn = reject_main,
};
