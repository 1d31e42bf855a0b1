/*
 * cmd_gc.c - `sluice gc`: remove the scratch worktrees crashed runs left.
 *
 *   sluice gc [--scratch DIR] [--repo PATH] [--store PATH]
 *
 * Hands its options to sl_gc() (pipeline/gc.h) and prints what it removed:
 * "removed N worktrees", "removed N warm bases, M layers" when there were
 * any, and "removed N branches" when the store's campaigns were looked at.
 * Its notices go to stderr as "sluice gc: ...": among them the branches
 * another store made (left alone) and the runs of this host that are gone
 * (their leases hold nothing).  A linked worktree under a
 * root that sluice did not make makes gc refuse, exit 2, before anything is
 * removed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "pipeline/cli/cmd.h"
#include "pipeline/gc.h"
#include "pipeline/run.h"
#include "common/util.h"

static void print_notice(void *ctx, const char *line)
{
	(void)ctx;
	fprintf(stderr, "sluice gc: %s\n", line);
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

struct gc_args {
	const char *scratch, *repo, *store;
};

static int gc_main(const sl_command *self, void *opts, const sl_opt_args *args)
{
	const struct gc_args *a = opts;
	sl_gc_opts go = SL_GC_OPTS_INIT;
	sl_gc_result res;
	sl_err err = SL_ERR_INIT;
	char *store = NULL;
	int ret = SL_EXIT_OK;

	if (args->n)
		return sl_cmd_usage(self, "unknown argument '%s'", args->v[0]);
	go.scratch = a->scratch;
	go.repo = a->repo;
	go.store = store = sl_default_store_path(a->store);
	go.notice = print_notice;
	if (!go.repo && !go.scratch && access(store, F_OK))
		ret = sl_cmd_usage(self, "no store at '%s': name the repository with --repo or the "
				   "root with --scratch", store);
	else if (sl_gc(&res, &go, &err))
		ret = sl_cmd_fail(&err);
	else
		print_counts(&res);
	free(store);
	return ret;
}

static const sl_option gc_options[] = {
	SL_OPT_STRING_F("scratch", 0, "DIR", "the scratch root to clean", "each of "
			"$TMPDIR/sluice-UID, /dev/shm/sluice-UID and /tmp/sluice-UID, and each "
			"stored campaign's scratch root",
			struct gc_args, scratch, SL_OPTF_DIR),
	SL_OPT_STRING("repo", 0, "PATH", "the repository whose worktrees to remove", "every "
		      "campaign's repository in the store", struct gc_args, repo),
	CMD_OPT_STORE(struct gc_args),
	SL_OPT_END(),
};

const sl_command cmd_gc = {
	.name = "gc",
	.summary = "remove scratch worktrees left by crashed runs",
	.usage = "usage: sluice gc [--scratch DIR] [--repo PATH] [--store PATH]\n",
	.about = "Remove the linked worktrees under the scratch root of --repo, or of every\n"
		"campaign's repository in the store, and leftover checkouts of runs that\n"
		"are gone.  Worktrees of a run still in progress are kept.\n",
	.options = gc_options,
	.opts_size = sizeof(struct gc_args),
	.fn = gc_main,
};
