/*
 * cmd_export.c - `sluice export`: write a campaign's proposed candidates
 * as DIR/series.mbox, DIR/report.md, DIR/report.html and DIR/junit.xml,
 * and, given the campaign file, each reviewable change as
 * DIR/changes/NNNN-KEY.patch.  Reads the store and the repository.
 */
#include <stdio.h>
#include <string.h>

#include "pipeline/cli/cmd.h"
#include "pipeline/review/report.h"
#include "pipeline/review/review.h"
#include "pipeline/review/review_change.h"
#include "common/util.h"

struct export_opts {
	const char *store, *out, *bundle;
};

static int is_campaign_file(const char *s)
{
	size_t n = strlen(s);

	return (n > 5 && !strcmp(s + n - 5, ".yaml")) || (n > 4 && !strcmp(s + n - 4, ".yml"));
}

static int export_main(const sl_command *self, void *opts, const sl_opt_args *args)
{
	struct export_opts *o = opts;
	cmd_review_ctx x;
	sl_err err = SL_ERR_INIT;
	size_t count = 0, nchanges = 0;
	const char *file, *name = args->n ? args->v[0] : NULL;
	int ret;

	if (args->n > 1 || (!o->out && !o->bundle))
		return sl_cmd_usage(self, "%s", args->n > 1 ? "expected at most one campaign name" :
				    "--out DIR or --bundle FILE is required");
	/* a campaign file (not a name) also gives the changes as its review section groups them */
	file = name && is_campaign_file(name) ? name : NULL;
	if (sl_cmd_open_review(&x, o->store, file, name, NULL, &err) ||
	    (o->bundle && sl_cmd_write_bundle(x.st, &x.camp, NULL, o->bundle, &err))) {
		ret = sl_cmd_fail(&err);
		goto done;
	}
	if (!o->out) {
		ret = SL_EXIT_OK;
		goto done;
	}
	if (sl_review_export(x.st, &x.camp, x.repo, o->out, &count, &err) ||
	    sl_report_html(x.st, &x.camp, o->out, &err) ||
	    sl_report_junit(x.st, &x.camp, o->out, &err) ||
	    (x.spec && sl_changes_export(x.st, &x.camp, x.spec, x.repo, o->out, &nchanges, &err))) {
		ret = sl_cmd_fail(&err);
		goto done;
	}
	if (x.spec)
		printf("%zu change%s in %s/changes/\n", nchanges, nchanges == 1 ? "" : "s", o->out);
	printf("%zu patch%s in %s/series.mbox, report in %s/report.md and %s/report.html, "
	       "gate results in %s/junit.xml\n", count, count == 1 ? "" : "es", o->out, o->out,
	       o->out, o->out);
	ret = SL_EXIT_OK;
done:
	sl_cmd_review_release(&x);
	return ret;
}

static const sl_option export_options[] = {
	CMD_OPT_STORE(struct export_opts),
	SL_OPT_STRING_F("out", 0, "DIR", "the directory to write", NULL,
			struct export_opts, out, SL_OPTF_DIR),
	SL_OPT_STRING_F("bundle", 0, "FILE", "write the proposed candidates' branches to FILE as "
			"a git bundle (for `sluice merge --bundle`)", NULL, struct export_opts,
			bundle, SL_OPTF_FILE | SL_OPTF_PARENT),
	SL_OPT_END(),
};

const sl_command cmd_export = {
	.name = "export",
	.summary = "write the proposed candidates as a patch series and a report",
	.usage = "usage: sluice export [NAME | CAMPAIGN.yaml] --out DIR [--store PATH] "
		"[--bundle FILE]\n"
		"   or: sluice export [NAME | CAMPAIGN.yaml] --bundle FILE [--store PATH]\n",
	.about = "Writes DIR/series.mbox (apply with `git am DIR/series.mbox` on the base),\n"
		"DIR/report.md, DIR/report.html (self-contained: funnel chart, changes with\n"
		"gates, logs, attempts, cost and coloured diffs, rejections with reasons)\n"
		"and DIR/junit.xml (gate verdicts).  Rejected candidates are left out of\n"
		"the series.  Given the campaign file, also DIR/changes/NNNN-KEY.patch:\n"
		"each change as the review section groups them, one git am-able patch.\n"
		"--bundle FILE writes the proposed candidates' branches as a git bundle\n"
		"(for `sluice merge --bundle`); --out may then be left out.\n",
	.options = export_options,
	.opts_size = sizeof(struct export_opts),
	.fn = export_main,
};
