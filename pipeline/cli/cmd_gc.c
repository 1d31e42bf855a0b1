/*
 * cmd_gc.c - `sluice gc`: remove the scratch worktrees crashed runs left.
 *
 *   sluice gc [--scratch DIR] [--repo PATH] [--store PATH]
 *
 * Parses the options and prints what sl_gc() (pipeline/gc.h) removed:
 * "removed N worktrees", "removed N warm bases, M layers" when there were
 * any, and "removed N branches" when the store's campaigns were looked at.
 * Its notices go to stderr as "sluice gc: ...".  A linked worktree under a
 * root that sluice did not make makes gc refuse, exit 2, before anything is
 * removed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "pipeline/cli/cmd.h"
#include "pipeline/gc.h"
#include "pipeline/run.h"
#include "common/util.h"

static void print_notice(void *ctx, const char *line)
{
	(void)ctx;
	fprintf(stderr, "sluice gc: %s\n", line);
}

/* Fill opts from argv; 0, or the exit status of a usage error (printed). */
static int parse_gc_opts(sl_gc_opts *opts, const char **store_opt, int argc, char **argv)
{
	struct stat sb;

	for (int i = 1; i < argc; i++) {
		const char **slot = !strcmp(argv[i], "--scratch") ? &opts->scratch :
			!strcmp(argv[i], "--repo") ? &opts->repo :
			!strcmp(argv[i], "--store") ? store_opt : NULL;

		if (!slot)
			return sl_cmd_usage("gc", "unknown argument '%s'", argv[i]);
		if (i + 1 >= argc || !*argv[i + 1])
			return sl_cmd_usage("gc", "option '%s' needs a value", argv[i]);
		*slot = argv[++i];
	}
	if (opts->scratch && !stat(opts->scratch, &sb) && !S_ISDIR(sb.st_mode))
		return sl_cmd_usage("gc", "--scratch '%s' is not a directory", opts->scratch);
	return 0;
}

static void print_counts(const sl_gc_result *r)
{
	printf("removed %zu worktree%s\n", r->worktrees, r->worktrees == 1 ? "" : "s");
	if (r->warm || r->layers)
		printf("removed %zu warm base%s, %zu layer%s\n", r->warm, r->warm == 1 ? "" : "s",
		       r->layers, r->layers == 1 ? "" : "s");
	if (r->campaigns)
		printf("removed %zu branch%s\n", r->branches, r->branches == 1 ? "" : "es");
}

int cmd_gc(int argc, char **argv)
{
	sl_gc_opts opts = SL_GC_OPTS_INIT;
	sl_gc_result res;
	sl_err err = SL_ERR_INIT;
	const char *store_opt = NULL;
	char *store = NULL;
	int ret;

	if ((ret = parse_gc_opts(&opts, &store_opt, argc, argv)))
		return ret;
	opts.store = store = sl_default_store_path(store_opt);
	opts.notice = print_notice;
	if (!opts.repo && !opts.scratch && access(store, F_OK))
		ret = sl_cmd_usage("gc", "no store at '%s': name the repository with --repo or the "
				   "root with --scratch", store);
	else if (sl_gc(&res, &opts, &err))
		ret = sl_cmd_fail(&err);
	else
		print_counts(&res);
	free(store);
	return ret;
}
