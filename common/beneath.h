/*
 * beneath.h - read files that hostile code may have planted.
 *
 * A candidate's worktree (and anything a gate wrote into it) is controlled by
 * the candidate: a report file may be a symlink to ~/.ssh/id_rsa, a path may
 * climb out through "..", a directory may be swapped for a link between a
 * check and a use.  These functions open with openat2(2) and
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
 * RESOLVE_NO_XDEV, so the kernel refuses every path that would leave root
 * or pass through a link, and they read at most a cap of bytes from regular
 * files only.
 */
#ifndef SL_BENEATH_H
#define SL_BENEATH_H

#include <stddef.h>

#include "common/buf.h"
#include "common/err.h"

/*
 * Open rel (relative, inside root) for reading; returns an fd or a negative
 * SL_E* code: SL_ENOTFOUND when it does not exist, SL_EREFUSED when the
 * kernel refused the path (symlink, "..", another mount) or it is not a
 * regular file.
 */
int sl_open_beneath(const char *root, const char *rel, sl_err *err);

/*
 * Open the directory rel (relative, inside root; "" = root itself) under
 * the same rules, for *at() calls on its entries (O_NOFOLLOW there); an fd
 * or a negative SL_E* code.
 */
int sl_opendir_beneath(const char *root, const char *rel, sl_err *err);

/* Read rel inside root into out (appending), at most cap bytes (0 = 16 MiB). */
int sl_read_beneath(sl_buf *out, const char *root, const char *rel, size_t cap, sl_err *err);

#endif
