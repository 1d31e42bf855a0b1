/*
 * scratch.h - where sluice puts what it makes outside the repository:
 * the scratch roots of worktrees, warm bases, layers, batch journals and
 * replay files.  The run (pipeline/run/) and `sluice gc` (gc.h) both read
 * this policy; neither knows the other.
 */
#ifndef SL_SCRATCH_H
#define SL_SCRATCH_H

#include "common/util.h"
#include "pipeline/spec.h"

/*
 * The default scratch root, DIR/sluice-UID (campaigns go in NAME below it):
 * DIR is $TMPDIR when it is set; else /dev/shm when it is a writable tmpfs
 * with at least 1 GiB free (checkouts on a tmpfs are several times faster
 * and do not slow down as an ext4 directory does after many deletions);
 * else /tmp.  Caller frees.
 */
char *sl_default_scratch_root(void);

/* Every directory sl_default_scratch_root() may return (for gc). */
void sl_default_scratch_roots(sl_strvec *out);

/* The campaign's own root: SCRATCH/NAME, SCRATCH the spec's `scratch:` or the default.  Caller frees. */
char *sl_scratch_root(const sl_spec *spec);

#endif
