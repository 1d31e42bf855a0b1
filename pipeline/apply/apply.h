/*
 * apply.h - turn edits into a candidate commit, and check it out for gates.
 *
 * sl_apply_edits_ext() reads the edited files from the base commit's objects
 * (never from a working tree), applies the edits in memory, writes the new
 * blobs and tree and a commit whose parent is the base, and returns the
 * commit id and its diff against the base.  No ref is moved.  All or
 * nothing: when one edit is refused, no commit is written and the call
 * returns SL_EREFUSED with every refusal in err (one line each, meant for
 * the model); the optional report then says, per edit, how it went.
 *
 * Placement (per file: splices first, then the hunks as one batch, then the
 * search/replace blocks in order):
 *   SPLICE   only if the old text is still exactly at its byte range.
 *   HUNK     every hunk is located in the file as it was before the hunks
 *            (diff semantics), so hunks may come in any order; two hunks
 *            whose regions overlap are refused.
 *   REPLACE  located in the file as the earlier blocks left it.
 * Locating a hunk's preimage (or a block's search text) goes by tiers, on
 * whole lines, and stops at the first tier that finds it:
 *   "exact"       at the line the hunk header names (a block, or a hunk
 *                 without a line number: its only occurrence);
 *   "moved"       the same lines at one other place in the file;
 *   "whitespace"  equal up to trailing whitespace, CRLF/LF and one
 *                 consistent indentation shift; the new lines are
 *                 re-indented by the same shift, written with the file's
 *                 line ends, and lines the edit keeps stay byte for byte.
 * A tier that finds several places refuses (ambiguous) unless one of them
 * is at the header's line.  Nothing found: refused, with the nearest
 * regions by line similarity and their first differing line.  A final
 * newline is kept or dropped as the file had it unless the edit's old and
 * new sides disagree about it ("\ No newline at end of file").
 * Elided context: when the preimage holds "..." lines (also "// ...",
 * "# ... existing code") and nothing matched as written, its pieces between
 * those lines are located separately (each unique, in order) and the new
 * side must elide the same gaps; else refused.
 * A path that does not exist, for an edit that is not a file creation, is
 * redirected to the one file of the base tree with the same base name
 * (reported as such); with none or several, refused with the candidates.
 *
 * Path safety, each a refusal with a one-line reason: empty or absolute
 * paths, "." or ".." components, control characters, any component that is
 * ".git" in any case (also ".git." and "git~1"), a path whose parent
 * components are not directories in the base tree (symbolic links,
 * files, submodules), a path that is itself a link or submodule, binary
 * files (base blob or new text with a NUL byte), paths outside the allowed
 * globs, and edits past the size caps of sl_apply_opts.
 *
 * sl_worktree_add() points the branch at the candidate commit and checks it
 * out in a new linked worktree under the scratch root (libgit2 never runs
 * hooks); it refuses a root inside the repository's working tree or git
 * directory.  sl_worktree_remove() deletes the directory without following
 * symlinks and prunes the worktree's admin files from the repository.
 * Neither ever opens the worktree as a repository or reads its .git file,
 * so whatever a gate planted there (hooks, core.fsmonitor, core.hooksPath,
 * a replaced .git) is never read by the host.
 * sl_worktree_cleanup() removes worktrees a crashed run left under a root.
 */
#ifndef SL_APPLY_H
#define SL_APPLY_H

#include <git2.h>

#include "common/buf.h"
#include "pipeline/generate/edit.h"
#include "common/err.h"

/* One edit's outcome. */
typedef struct sl_apply_item {
	char *path;                 /* the path it applied to (after a redirect) */
	const char *kind;           /* static: "splice", "replace", "hunk" */
	const char *tier;           /* static: "exact", "moved", "whitespace", "refused" */
	uint32_t line;              /* 1-based line of the base file where it applied
				       (for a refusal: the line the edit named, or 0) */
	char *reason;               /* refusal, or a note (redirect, elision,
				       header line off by N); NULL when plain */
} sl_apply_item;

typedef struct sl_apply_report {
	sl_apply_item *v;           /* v[i] is edits->v[i] */
	size_t n, alloc;
} sl_apply_report;
#define SL_APPLY_REPORT_INIT { .v = NULL }

void sl_apply_report_release(sl_apply_report *r);
/*
 * Append the report as a JSON array to out:
 * [{"edit":1,"path":"a.c","kind":"hunk","tier":"moved","line":12,"reason":"..."}]
 * ("reason" only when there is one).
 */
void sl_apply_report_json(sl_buf *out, const sl_apply_report *r);

typedef struct sl_apply_opts {
	const char *const *allowed_globs;   /* sl_glob_match patterns; NULL = anywhere */
	size_t nglobs;
	size_t max_edit_bytes;      /* new text of one edit; 0 = 256 KiB */
	size_t max_total_bytes;     /* new text of all edits; 0 = 1 MiB */
	size_t max_file_bytes;      /* a resulting file; 0 = 8 MiB */
} sl_apply_opts;
#define SL_APPLY_OPTS_INIT { .allowed_globs = NULL }

/*
 * Apply edits on top of base.  report (may be NULL) is reset and filled with
 * one item per edit, also when the call fails with SL_EREFUSED.  Errors:
 * SL_EREFUSED (an edit was refused; nothing written but loose objects),
 * SL_ERROR (libgit2).
 */
int sl_apply_edits_ext(git_oid *commit_out, sl_buf *diff_out, git_repository *repo,
		       const git_oid *base, const sl_edit_list *edits, const char *message,
		       const sl_apply_opts *opts, sl_apply_report *report, sl_err *err);

typedef struct sl_worktree sl_worktree;

/*
 * Create or move refs/heads/BRANCH to commit and check it out at root/name.
 * SL_EINPUT when root lies inside the repository's working tree or git dir.
 */
int sl_worktree_add(sl_worktree **out, git_repository *repo, const char *root,
		    const char *name, const char *branch, const git_oid *commit, sl_err *err);
const char *sl_worktree_path(const sl_worktree *wt);
/* Remove the checkout and its admin files; frees wt (NULL is a no-op). */
int sl_worktree_remove(sl_worktree *wt, sl_err *err);
/*
 * Remove every linked worktree of repo named "sl-..." (only sluice makes those)
 * whose path lies under root, except
 * those of another live sluice process (named "sl-PID-N" or "sl-base-PID",
 * PID running and not ours).  *removed_out (may be NULL) gets the number removed.
 */
int sl_worktree_cleanup(git_repository *repo, const char *root, sl_err *err);
int sl_worktree_cleanup_count(git_repository *repo, const char *root, size_t *removed_out,
			      sl_err *err);
/*
 * Remove checkouts left under root (root/NAME and root/X/NAME named
 * "sl-PID-N" or "sl-base-PID", holding a .git entry) whose PID is not running: what is left
 * when the repository that owned them is gone.  Run sl_worktree_cleanup on
 * the repositories first.  Never follows symlinks.
 */
int sl_worktree_sweep(const char *root, size_t *removed_out, sl_err *err);

/*
 * Commit base + the diff diff_text (as sl_apply_edits_ext wrote it) with message:
 * rebuilds a candidate whose objects a crashed run never wrote to disk.
 */
int sl_commit_from_diff(git_oid *commit_out, git_repository *repo, const git_oid *base,
			const char *diff_text, const char *message, sl_err *err);

/* SL_EINPUT if the scratch root resolves to a place inside the repository. */
int sl_worktree_root_check(git_repository *repo, const char *root, sl_err *err);

/* Delete refs/heads/BRANCH if it exists. */
int sl_branch_delete(git_repository *repo, const char *branch, sl_err *err);

/*
 * Delete refs/heads/BRANCH only if it still points at expected (compare and
 * swap under the ref's lock): a branch another run moved is left alone,
 * and that is not an error.
 */
int sl_branch_delete_matching(git_repository *repo, const char *branch, const git_oid *expected,
			      sl_err *err);

/*
 * Point refs/heads/BRANCH[i] at commit[i] (i < n), all in one update of
 * the packed-refs file (as git pack-refs would leave them); a loose ref of
 * the same name is removed.  Compare and swap: a branch is written only
 * where it is absent or already at commit[i]; the others are left alone and
 * the call returns SL_ELEASE naming the first (the rest are written).  The
 * commits must already be in the object database.  For the thousands of
 * branches of a campaign without gates; waits (bounded) while another
 * process holds packed-refs.lock, and removes the lock a crashed sluice of
 * this host left.
 */
int sl_branches_write_packed(git_repository *repo, char *const *branch, const git_oid *commit,
			     size_t n, sl_err *err);

/*
 * Delete refs/heads/BRANCH[i] (i < n) where it points at expected[i]
 * (expected NULL: whatever it points at), in one rewrite of packed-refs
 * under one lock; loose ones go after it, each compared under its own lock.
 * *deleted counts the branches deleted.
 */
int sl_branches_delete_packed(git_repository *repo, char *const *branch, const git_oid *expected,
			      size_t n, size_t *deleted, sl_err *err);

/*
 * Who made refs/heads/BRANCH: a candidate's commit ends with the trailer
 * SL_STORE_TRAILER TAG, TAG naming the store and campaign that made it.
 * SL_HOLDER_NONE when the branch does not exist, SL_HOLDER_MINE when its
 * commit carries the trailer with tag, SL_HOLDER_OTHER otherwise (another
 * store, a user's commit, or sluice from before stores had an id: never
 * proven ours, so never moved or deleted).  *at gets the commit (if not
 * NULL and the branch exists).
 */
/*
 * The n objects ids of repo as one pack in *pack (libgit2's packbuilder,
 * one thread), without reading repo's refs (pack.c); 0 or a libgit2 error.
 */
int sl_pack_objects(git_buf *pack, git_repository *repo, const git_oid *ids, size_t n);

/*
 * The commit refs/heads/BRANCH points at (resolved): 0 with *oid,
 * GIT_ENOTFOUND, or another libgit2 error.  A sorted packed-refs is
 * searched by its lines, never mapped whole (libgit2 maps it, and a
 * campaign's grows with every branch).
 */
int sl_branch_target(git_oid *oid, git_repository *repo, const char *branch);

#define SL_STORE_TRAILER "Sluice-Store: "
enum sl_holder { SL_HOLDER_NONE, SL_HOLDER_MINE, SL_HOLDER_OTHER };
enum sl_holder sl_branch_holder(git_repository *repo, const char *branch, const char *tag,
				git_oid *at);

/*
 * Whether the commit's message carries the trailer SL_STORE_TRAILER tag;
 * tag may hold several, one a line (sl_store_tags, storage/merge.h: a
 * merged store's own and those of the shard stores merged into it), and
 * any of them counts.
 */
int sl_commit_made_by(git_repository *repo, const git_oid *commit, const char *tag);

/*
 * packed-refs.lock, when it exists: removed when a sluice of this host that
 * is gone left it (*stale_pid its pid), else SL_EREFUSED with what to do
 * (git may hold it: it is never removed then).  SL_OK, *stale_pid 0: no lock.
 */
int sl_packed_lock_check(git_repository *repo, long *stale_pid, sl_err *err);

/*
 * Branch names made from paths are bounded, so that git (and the file
 * system, which holds a loose ref as a file and its lock as NAME.lock) can
 * take them: no component over SL_REF_COMPONENT_MAX bytes, and the name as
 * a whole at most SL_REF_NAME_MAX.
 */
#define SL_REF_COMPONENT_MAX 200
#define SL_REF_NAME_MAX 512

/*
 * Bound the branch name in b from byte from on (the part made from a path;
 * the prefix before it is kept as it is): a component longer than
 * SL_REF_COMPONENT_MAX, and then the part as a whole when b is longer than
 * max bytes, keeps its head and ends in '-' and 12 hex digits of SHA-256
 * of key (what the name was made from), so that two long names that differ
 * only at their ends stay apart.  A name within the bounds is unchanged.
 */
void sl_ref_name_bound(sl_buf *b, size_t from, size_t max, const char *key);

/*
 * Refs written through this repo handle get no reflog: the handle reads the
 * repository's config with the file cfg_path on top, which
 * sl_no_reflog_config() makes: an anonymous in-memory file saying
 * core.logAllRefUpdates=false, *path_out its /proc/self/fd path (caller
 * frees), *fd_out to close once no handle uses it.  The repository's own
 * config and what git sees are unchanged.  Candidate branches are created
 * and deleted by the thousand; a reflog each would be more files per
 * candidate.
 */
int sl_repo_no_reflog(git_repository *repo, const char *cfg_path, sl_err *err);
int sl_no_reflog_config(int *fd_out, char **path_out, sl_err *err);

#endif
