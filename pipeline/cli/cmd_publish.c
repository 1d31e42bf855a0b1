/*
 * cmd_publish.c - `sluice publish` (push the reviewable changes of a
 * campaign and open their pull or merge requests, paced) and `sluice sync`
 * (read the outcomes of the published requests back into the store).
 *
 * Both load the campaign file (its review section names the forge and the
 * variable holding the token), the store and the repository, then call
 * pipeline/review/publish.h; its progress lines go to stdout.
 */
#include <stdio.h>
#include <stdlib.h>

#include "pipeline/cli/cmd.h"
#include "pipeline/review/publish.h"
#include "pipeline/review/report.h"
#include "common/util.h"

struct forge_opts {
	const char *store, *repo;
};

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
static int forge_command(const sl_command *self, const struct forge_opts *o,
			 const sl_opt_args *args, int sync)
{
	cmd_review_ctx x;
	sl_publish_opts po = SL_PUBLISH_OPTS_INIT;
	sl_publish_summary sum;
	sl_err err = SL_ERR_INIT;
	int ret;

	if (args->n != 1)
		return sl_cmd_usage(self, "expected one campaign file");
	if (sl_cmd_open_review(&x, o->store, args->v[0], NULL, o->repo, &err))
		goto fail;
	if (!x.spec->review.forge) {
		sl_err_set(&err, SL_EINPUT, "%s: 'review' has no 'forge' (github or gitlab)",
			   args->v[0]);
		goto fail;
	}
	if (!(po.token = getenv(x.spec->review.token_env)) || !*po.token) {
		sl_err_set(&err, SL_EINPUT, "%s: review.token_env: the variable '%s' is not set",
			   args->v[0], x.spec->review.token_env);
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
	if (sum.withdrawn)
		printf("%zu request%s closed: %s change%s rejected\n", sum.withdrawn,
		       sum.withdrawn == 1 ? "" : "s", sum.withdrawn == 1 ? "its" : "their",
		       sum.withdrawn == 1 ? " was" : "s were");
	ret = SL_EXIT_OK;
	goto done;
fail:
	ret = sl_cmd_fail(&err);
done:
	sl_cmd_review_release(&x);
	return ret;
}

static int publish_main(const sl_command *self, void *opts, const sl_opt_args *args)
{
	return forge_command(self, opts, args, 0);
}

static int sync_main(const sl_command *self, void *opts, const sl_opt_args *args)
{
	return forge_command(self, opts, args, 1);
}

static const sl_option forge_options[] = {
	CMD_OPT_STORE(struct forge_opts),
	CMD_OPT_REPO(struct forge_opts, "use this repository instead of the one the campaign "
		     "recorded"),
	SL_OPT_END(),
};

const sl_command cmd_publish = {
	.name = "publish",
	.summary = "push reviewable changes and open pull/merge requests, paced",
	.usage = "usage: sluice publish CAMPAIGN.yaml [--store PATH] [--repo PATH]\n",
	.about = "Group the proposed, not rejected candidates as the campaign's review\n"
		"section says (group: target, file, directory or batch), commit each\n"
		"change on the base with the templated message, push it (forced) as\n"
		"PREFIX/review/KEY to review.remote (default: origin), and open its pull\n"
		"request (GitHub) or merge request (GitLab) with the templated title and\n"
		"body, labels and draft flag.  A change already open is updated (branch\n"
		"and body) only when it moved; nothing is opened twice, and a request\n"
		"the forge already merged or closed is recorded, not reopened.  A\n"
		"request whose change was rejected (sluice reject) is closed with the\n"
		"reason as a comment.  At most\n"
		"review.max_open are open and review.max_per_hour opened per hour; the\n"
		"rest wait for a later publish.  The token is read from the variable\n"
		"review.token_env names and never stored or printed.\n",
	.options = forge_options,
	.opts_size = sizeof(struct forge_opts),
	.fn = publish_main,
};

const sl_command cmd_sync = {
	.name = "sync",
	.summary = "read the outcomes of published requests into the store",
	.usage = "usage: sluice sync CAMPAIGN.yaml [--store PATH] [--repo PATH]\n",
	.about = "For each request recorded as open: merged records an accept (and whether\n"
		"the lines it wrote landed unchanged), closed without merge a\n"
		"reject with the last comment as the reason; review comments are counted.\n"
		"A request whose change was rejected in sluice is first closed, with the\n"
		"reason as a comment, and no longer tracked.\n",
	.options = forge_options,
	.opts_size = sizeof(struct forge_opts),
	.fn = sync_main,
};
