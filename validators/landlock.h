/*
 * landlock.h - the jail's Landlock layer: the file system read-only but for
 * a few writable trees, TCP and cross-domain scopes denied, where the
 * kernel has Landlock.
 *
 * sl_landlock_abi() asks the kernel once (the answer is cached).
 * sl_landlock_apply() is meant for the jail's payload between clone and
 * exec: system calls only, no allocation, every input prepared beforehand.
 * What it grants, by ABI:
 *   everything below "/"      execute, read files, read directories
 *   dev paths (/dev/null...)  that, plus write and truncate files, device
 *                             ioctls (ABI 5)
 *   rw paths (/src, /tmp)     every file-system right the ABI knows,
 *                             including rename across directories (ABI 2)
 *   TCP bind and connect      denied (ABI 4) unless allow_inet
 *   abstract Unix sockets and signals to processes outside the payload's
 *   own domain                denied (ABI 6)
 * Constants that Debian 12's <linux/landlock.h> lacks are defined in
 * landlock.c.
 */
#ifndef SL_LANDLOCK_H
#define SL_LANDLOCK_H

/* The kernel's Landlock ABI version: 0 when absent or disabled. */
int sl_landlock_abi(void);

/*
 * Restrict the calling thread (and its future children) for good.  The
 * path lists are NULL-terminated, borrowed; paths that do not exist are
 * skipped.  Needs no-new-privileges.  Returns 0, or -1 with errno set.
 * Async-signal-safe.
 */
int sl_landlock_apply(int abi, const char *const *rw_paths, const char *const *dev_paths,
		      int allow_inet);

#endif
