/*
 * cmd_review.c - `sluice targets` (every target with its state, attempts,
 * latest candidate and reason, filtered by state), `sluice publish` (push
 * the reviewable changes and open pull/merge requests) and `sluice sync`
 * (read their outcomes back).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <git2.h>

#include "pipeline/cli/cmd.h"
#include "pipeline/review/publish.h"
#include "pipeline/review/report.h"
#include "common/util.h"

/*
 * Take every --state S (or --state=S, or S,T) out of argv into *states;
 * what is left goes to the shared option parser.  Returns 0 or a usage
 * exit status.
 */
static int take_states(int *argc, char **argv, sl_strvec *states)
{
	int n = 1, i;

	for (i = 1; i < *argc && strcmp(argv[i], "--"); i++) {
		const char *v;
		char *list, *p;
		int bad = 0;

		if (!strcmp(argv[i], "--state")) {
			if (i + 1 >= *argc)
				return sl_cmd_usage("targets", "option '--state' needs a value");
			v = argv[++i];
		} else if (!strncmp(argv[i], "--state=", 8)) {
			v = argv[i] + 8;
		} else {
			argv[n++] = argv[i];
			continue;
		}
		list = sl_xstrdup(v);
		for (p = list; p && !bad; ) {
			char *comma = strchr(p, ',');

			if (comma)
				*comma = '\0';
			if (!(bad = !sl_report_target_state_valid(p)))
				sl_strvec_push(states, p);
			else
				sl_cmd_usage("targets", "unknown state '%s'", p);
			p = comma ? comma + 1 : NULL;
		}
		free(list);
		if (bad)
			return SL_EXIT_USAGE;
	}
	while (i < *argc)
		argv[n++] = argv[i++];
	argv[n] = NULL;
	*argc = n;
	return 0;
}

int cmd_targets(int argc, char **argv)
{
	cmd_opts o;
	sl_strvec states = SL_STRVEC_INIT;
	sl_store *st = NULL;
	sl_campaign_rec camp = { 0 };
	sl_buf out = SL_BUF_INIT;
	sl_err err = SL_ERR_INIT;
	size_t count = 0;
	int ret;

	if ((ret = take_states(&argc, argv, &states)) ||
	    (ret = sl_cmd_parse_opts(&o, argc, argv, "sj")))
		goto done;
	if (o.nargs > 1) {
		ret = sl_cmd_usage("targets", "expected at most one campaign name");
		goto done;
	}
	if (sl_cmd_open_campaign(&st, &camp, o.store, o.nargs ? o.args[0] : NULL, &err) ||
	    sl_report_targets(&out, st, camp.id, (const char *const *)states.v, states.n, o.json,
			      &count, &err)) {
		ret = sl_cmd_fail(&err);
		goto done;
	}
	fputs(out.buf, stdout);
	ret = SL_EXIT_OK;
done:
	sl_buf_release(&out);
	sl_campaign_rec_release(&camp);
	sl_store_free(st);
	sl_strvec_release(&states);
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
	sl_spec *spec = NULL;
	sl_store *st = NULL;
	sl_campaign_rec camp = { 0 };
	git_repository *repo = NULL;
	sl_publish_opts po = SL_PUBLISH_OPTS_INIT;
	sl_publish_summary sum;
	sl_err err = SL_ERR_INIT;
	const char *cmd = sync ? "sync" : "publish";
	int ret;

	if ((ret = sl_cmd_parse_opts(&o, argc, argv, "rs")))
		return ret;
	if (o.nargs != 1)
		return sl_cmd_usage(cmd, "expected one campaign file");
	if (sl_spec_load(&spec, o.args[0], &err) ||
	    sl_cmd_open_campaign(&st, &camp, o.store, spec->name, &err))
		goto fail;
	if (!spec->review.forge) {
		sl_err_set(&err, SL_EINPUT, "%s: 'review' has no 'forge' (github or gitlab)",
			   o.args[0]);
		goto fail;
	}
	if (!(po.token = getenv(spec->review.token_env)) || !*po.token) {
		sl_err_set(&err, SL_EINPUT, "%s: review.token_env: the variable '%s' is not set",
			   o.args[0], spec->review.token_env);
		goto fail;
	}
	if (git_repository_open_ext(&repo, o.repo ? o.repo : camp.repo_path,
				    GIT_REPOSITORY_OPEN_NO_SEARCH, NULL)) {
		sl_err_set(&err, SL_EINPUT, "repository '%s': %s", o.repo ? o.repo : camp.repo_path,
			   sl_git_error_or("cannot open"));
		goto fail;
	}
	po.progress = print_progress;
	if (sync ? sl_sync(&sum, st, &camp, spec, repo, &po, &err) :
	    sl_publish(&sum, st, &camp, spec, repo, &po, &err))
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
	git_repository_free(repo);
	sl_campaign_rec_release(&camp);
	sl_store_free(st);
	sl_spec_free(spec);
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
