/*
 * apply.h - turn edits into a candidate commit, and check it out for gates.
 *
 * sl_apply_edits() reads the edited files from the base commit's objects
 * (never from a working tree), applies the edits in memory, writes the new
 * blobs and tree and a commit whose parent is the base, and returns the
 * commit id and its diff against the base.  No ref is moved.  An edit that
 * does not apply is refused (SL_EREFUSED) with a message meant for the model:
 * which file, which edit, what was not found.  Placement in this first
 * version: a splice needs its old text at its byte range; a search/replace
 * block needs exactly one occurrence; a hunk's preimage is taken at the line
 * its header names if it is there, else at its one occurrence in the file
 * (line-aligned).  Paths must be relative, without "..", outside .git/.
 *
 * sl_worktree_add() points the branch at the candidate commit and checks it
 * out in a new linked worktree under the scratch root (libgit2 never runs
 * hooks).  sl_worktree_remove() deletes the directory without following
 * symlinks and prunes the worktree's admin files from the repository.
 * sl_worktree_cleanup() removes worktrees a crashed run left under a root.
 */
#ifndef SL_APPLY_H
#define SL_APPLY_H

#include <git2.h>

#include "buf.h"
#include "edit.h"
#include "err.h"

int sl_apply_edits(git_oid *commit_out, sl_buf *diff_out, git_repository *repo,
		   const git_oid *base, const sl_edit_list *edits, const char *message,
		   sl_err *err);

typedef struct sl_worktree sl_worktree;

/* Create or move refs/heads/BRANCH to commit and check it out at root/name. */
int sl_worktree_add(sl_worktree **out, git_repository *repo, const char *root,
		    const char *name, const char *branch, const git_oid *commit, sl_err *err);
const char *sl_worktree_path(const sl_worktree *wt);
/* Remove the checkout and its admin files; frees wt (NULL is a no-op). */
int sl_worktree_remove(sl_worktree *wt, sl_err *err);
/* Remove every linked worktree of repo whose path lies under root. */
int sl_worktree_cleanup(git_repository *repo, const char *root, sl_err *err);

/* Delete refs/heads/BRANCH if it exists. */
int sl_branch_delete(git_repository *repo, const char *branch, sl_err *err);

/* Message of the last libgit2 error, for sl_err messages. */
const char *sl_git_error(void);

#endif
