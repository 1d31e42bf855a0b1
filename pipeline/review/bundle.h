/*
 * bundle.h - a shard's proposed candidates carried to another machine as
 * a git bundle, and their branches made again there.
 *
 * A shard (README "Running on many machines") leaves its store and a bundle:
 * sl_bundle_write() writes the branch of every proposed candidate of a
 * campaign, with the objects its commit adds to the base, as a git bundle
 * (format v2; `git bundle verify` and `git fetch FILE` read it; the base
 * commit is its one prerequisite).  On the machine that merges,
 * sl_bundle_read() puts a bundle's objects in the repository's object
 * database (no ref is written), and sl_bundle_branches() then points each
 * proposed candidate's branch of the merged store at its commit.  Written
 * with libgit2 (packbuilder, odb writepack); no git process is started.
 */
#ifndef SL_BUNDLE_H
#define SL_BUNDLE_H

#include <stddef.h>
#include <git2.h>

#include "common/err.h"
#include "storage/store.h"

/*
 * Write camp's proposed candidates' branches (their commits as the store
 * records them) to the bundle file path; *count is how many.  A candidate
 * whose commit repo lacks is SL_ENOTFOUND.  A campaign with none writes a
 * bundle with no branch, which sl_bundle_read takes.
 */
int sl_bundle_write(sl_store *st, const sl_campaign_rec *camp, git_repository *repo,
		    const char *path, size_t *count, sl_err *err);

/*
 * Add the objects of the bundle at path to repo; *refs is how many branches
 * it lists.  SL_EINPUT for a file that is no bundle, or whose prerequisite
 * commits repo lacks (the shard scoped another base).
 */
int sl_bundle_read(git_repository *repo, const char *path, size_t *refs, sl_err *err);

typedef struct sl_bundle_branches_counts {
	size_t made;                /* branches created */
	size_t present;             /* already at the candidate's commit */
	size_t other;               /* at another commit: left as they are */
	size_t missing;             /* the commit is in no bundle read: no branch */
} sl_bundle_branches_counts;

/*
 * Point each proposed candidate's branch of camp at its commit in repo,
 * where the commit is there and the branch is not another's; counts say
 * what became of each.  No reflog is written.
 */
int sl_bundle_branches(sl_store *st, const sl_campaign_rec *camp, git_repository *repo,
		       sl_bundle_branches_counts *counts, sl_err *err);

#endif
