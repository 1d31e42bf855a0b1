/*
 * cmd_review.c - `sluice targets` (every target with its state, attempts,
 * latest candidate and reason, filtered by state), `sluice publish` (push
 * the reviewable changes and open pull/merge requests) and `sluice sync`
 * (read their outcomes back).
 */
#include <stdio.h>
#include <stdlib.h>

#include "pipeline/cli/cmd.h"
#include "pipeline/review/publish.h"
#include "pipeline/review/report.h"
#include "common/util.h"

int cmd_targets(int argc, char **argv)
{
	cmd_opts o;
	sl_store *st = NULL;
	sl_campaign_rec camp = { 0 };
	sl_buf out = SL_BUF_INIT;
	sl_err err = SL_ERR_INIT;
	size_t count = 0;
	unsigned states = 0;
	int ret;

	if ((ret = sl_cmd_parse_opts(&o, argc, argv, "sjS")))
		return ret;
	for (size_t i = 0; i < o.states.n && !ret; i++) {
		int s = sl_target_state_parse(o.states.v[i]);

		if (s == SL_T_ANY)
			ret = sl_cmd_usage("targets", "unknown state '%s'", o.states.v[i]);
		else
			states |= 1u << s;
	}
	if (!ret && o.nargs > 1)
		ret = sl_cmd_usage("targets", "expected at most one campaign name");
	if (ret)
		goto done;
	if (sl_cmd_open_campaign(&st, &camp, o.store, o.nargs ? o.args[0] : NULL, &err) ||
	    sl_report_targets(&out, st, camp.id, states, o.json, &count, &err)) {
		ret = sl_cmd_fail(&err);
		goto done;
	}
	fputs(out.buf, stdout);
	ret = SL_EXIT_OK;
done:
	sl_buf_release(&out);
	sl_campaign_rec_release(&camp);
	sl_store_free(st);
	sl_cmd_opts_release(&o);
	return ret;
}

static void print_progress(void *ctx, const char *line)
{
	sl_buf b = SL_BUF_INIT;

	(void)ctx;
	sl_report_add_safe(&b, line);
	printf("%s\n", b.buf);
	fflush(stdout);
	sl_buf_release(&b);
}

/* publish and sync: load the campaign file, its store record, repository and token. */
static int forge_command(int argc, char **argv, int sync)
{
	cmd_opts o;
	cmd_review_ctx x;
	sl_publish_opts po = SL_PUBLISH_OPTS_INIT;
	sl_publish_summary sum;
	sl_err err = SL_ERR_INIT;
	const char *cmd = sync ? "sync" : "publish";
	int ret;

	if ((ret = sl_cmd_parse_opts(&o, argc, argv, "rs")))
		return ret;
	if (o.nargs != 1)
		return sl_cmd_usage(cmd, "expected one campaign file");
	if (sl_cmd_open_review(&x, o.store, o.args[0], NULL, o.repo, &err))
		goto fail;
	if (!x.spec->review.forge) {
		sl_err_set(&err, SL_EINPUT, "%s: 'review' has no 'forge' (github or gitlab)",
			   o.args[0]);
		goto fail;
	}
	if (!(po.token = getenv(x.spec->review.token_env)) || !*po.token) {
		sl_err_set(&err, SL_EINPUT, "%s: review.token_env: the variable '%s' is not set",
			   o.args[0], x.spec->review.token_env);
		goto fail;
	}
	po.progress = print_progress;
	if (sync ? sl_sync(&sum, x.st, &x.camp, x.spec, x.repo, &po, &err) :
	    sl_publish(&sum, x.st, &x.camp, x.spec, x.repo, &po, &err))
		goto fail;
	if (sync)
		printf("%zu request%s: %zu open, %zu merged (%zu landed unchanged), %zu closed\n",
		       sum.changes, sum.changes == 1 ? "" : "s", sum.open, sum.merged,
		       sum.landed_unchanged, sum.rejected);
	else
		printf("%zu change%s: %zu opened, %zu updated, %zu up to date, %zu paced, "
		       "%zu already decided\n", sum.changes, sum.changes == 1 ? "" : "s",
		       sum.opened, sum.updated, sum.unchanged, sum.paced, sum.closed);
	ret = SL_EXIT_OK;
	goto done;
fail:
	ret = sl_cmd_fail(&err);
done:
	sl_cmd_review_release(&x);
	return ret;
}

int cmd_publish(int argc, char **argv)
{
	return forge_command(argc, argv, 0);
}

int cmd_sync(int argc, char **argv)
{
	return forge_command(argc, argv, 1);
}
