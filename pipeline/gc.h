/*
 * gc.h - what `sluice gc` removes: the scratch worktrees, warm bases and
 * layers crashed runs left, and the stale branches of campaigns no run is
 * working on.
 *
 * Calling sequence: fill an sl_gc_opts (SL_GC_OPTS_INIT), call sl_gc(),
 * read the counts in sl_gc_result.  Warnings (a repository skipped, a ref
 * lock left or removed) go to opts.notice, one line each; sl_gc never prints.
 */
#ifndef SL_GC_H
#define SL_GC_H

#include <stddef.h>

#include "common/err.h"
#include "common/util.h"
#include "storage/store.h"

typedef struct sl_gc_opts {
	const char *scratch;        /* the one scratch root; NULL: the defaults and each
				       stored campaign's root */
	const char *repo;           /* the one repository; NULL: each stored campaign's */
	const char *store;          /* the store file; read only when it exists and repo
				       is NULL */
	sl_notice_fn notice;        /* warnings, one line each; NULL drops them */
	void *notice_ctx;
} sl_gc_opts;

#define SL_GC_OPTS_INIT { .scratch = NULL }

typedef struct sl_gc_result {
	size_t worktrees;           /* linked worktrees and orphan checkouts removed */
	size_t warm;                /* warm bases removed */
	size_t layers;              /* candidate layers removed */
	size_t branches;            /* stale branches deleted */
	int campaigns;              /* 1 when stored campaigns were looked at for branches */
} sl_gc_result;

/*
 * Repositories: opts->repo, else every campaign's repository in the store.
 * Scratch roots: opts->scratch, else every default root
 * (sl_default_scratch_roots, scratch.h) and the `scratch:` root of each stored
 * campaign whose campaign file still loads.
 *
 * For each repository, every linked worktree under a root is removed with
 * its admin files (sl_worktree_cleanup: worktrees of a sluice process still
 * running are kept); then checkouts under a root that no repository knows any
 * more and whose process is gone are deleted (sl_worktree_sweep).  Never opens
 * a worktree as a repository.  A linked worktree under a root that sluice did
 * not make (its name does not start with "sl-": the user's own `git worktree
 * add`) is SL_EINPUT before anything is removed.  A repository that does not
 * open is skipped with a notice, or is SL_EINPUT when it is opts->repo.
 *
 * Under each root also the candidate layers of processes that are gone,
 * and the warm bases no running sluice holds (sl_warm_gc): with the store
 * read, only those it used (its line leaves a warm base's list of stores,
 * and the warm base goes once no store that exists is listed; those from
 * before sluice kept the list go too); without it (opts->repo), every one
 * under opts->scratch, and none when no root was named.
 *
 * Then, without opts->repo, for each campaign of the store that no run is
 * working on (no live lease but those of runs of this host whose process is
 * gone, each said in a notice): branches under its prefix and under
 * PREFIX-ID8 (the store's id) whose commit carries the store's trailer
 * (sl_branch_holder, apply.h) and that are not the branch of a proposed or
 * accepted candidate, lock files a killed process left under those
 * prefixes, and the replay file a run wrote under the campaign's scratch
 * root.  Another store's branches and those without the trailer stay; a
 * notice counts them.  The branches go in one rewrite of packed-refs
 * under one lock (sl_branches_delete_packed), each only if it still points
 * where it did when listed.  A packed-refs.lock that a sluice of this host
 * left when it crashed is removed, with a notice; any other lock is left, a
 * notice says so, and that repository's branches wait for the next gc.
 *
 * out is filled on success (and partly on failure).
 */
int sl_gc(sl_gc_result *out, const sl_gc_opts *opts, sl_err *err);

/*
 * The candidate layers (and the tmpfs mounted on each, as root) that
 * processes of this host which are gone left under the scratch root of
 * the campaign recorded in camp (its campaign file's `scratch:`, else the
 * default), as a run removes them at its start and gc does: for `sluice
 * status`.  A campaign file that no longer loads is skipped.  *removed
 * counts the layers removed.
 */
int sl_gc_layers(const sl_campaign_rec *camp, size_t *removed, sl_err *err);

#endif
