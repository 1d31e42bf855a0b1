/*
 * worktree.h - read a scoped blob from the work tree when the file there
 * is known to hold exactly that blob, as git does for a clean file.
 *
 * Scoping reads the commit, never the work tree's edits.  But inflating a
 * packed blob costs more than reading the same bytes from a file in the
 * page cache, and in a checkout most files are the commit's.  A file is
 * taken from the work tree only when all of these hold; otherwise its blob
 * is read as before:
 *   - the index (read afresh, unchanged while it was read) records the
 *     blob's id for the path, as a regular file, at stage 0, neither
 *     skip-worktree nor assume-unchanged;
 *   - the entry is not racy: its mtime is older than the index file's;
 *   - the file's lstat (a regular file) matches the entry's size, mtime,
 *     ctime and inode: what git itself trusts to call a file clean;
 *   - no checkout conversion can have left the size alone: no filter
 *     driver in the configuration, no working-tree-encoding attribute in
 *     the index's .gitattributes or info/attributes, core.autocrlf off;
 *     end-of-line conversion and ident change the size of what they
 *     convert, and the file's size must be the blob's;
 *   - the bytes read are as many as the entry's size.
 *
 * Calling sequence: sl_worktree_open once and sl_worktree_entry for each
 * file, on the caller's thread; sl_worktree_read from any thread;
 * sl_worktree_free.
 */
#ifndef SL_SCOPING_WORKTREE_H
#define SL_SCOPING_WORKTREE_H

#include <stddef.h>
#include <git2.h>

typedef struct sl_worktree sl_worktree;

/*
 * Into *out, what sl_worktree_entry needs of repo's work tree and index,
 * for reading nfiles files; *out is NULL (and 0 returned: nothing to use,
 * never an error) when repo is bare, has no index, the index changed while
 * it was read, or nfiles are too few to be worth reading the index for
 * (about one file in eight of those it lists: a re-scope that reads one
 * blob reads it from the object database).
 */
int sl_worktree_open(sl_worktree **out, git_repository *repo, size_t nfiles);

/*
 * The index entry to check path's file against if the index records oid
 * for it and is not racy (see above), else NULL.  Borrowed: valid until
 * sl_worktree_free, and only read, so any thread may pass it on.
 */
const git_index_entry *sl_worktree_entry(const sl_worktree *wt, const char *path,
					 const git_oid *oid);

/*
 * Read path's file into *buf (malloc'd, NUL-terminated, *len bytes) if it
 * still matches ie and its size is the blob's (looked up on repo, the
 * calling thread's handle of the same repository).  Returns 0 when read,
 * 1 when the blob must be read instead (*buf NULL).
 */
int sl_worktree_read(const sl_worktree *wt, git_repository *repo, const char *path,
		     const git_index_entry *ie, char **buf, size_t *len);

/* If wt is NULL nothing occurs. */
void sl_worktree_free(sl_worktree *wt);

#endif
