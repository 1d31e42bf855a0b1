/*
 * review_change.h - reviewable changes: the campaign's proposed candidates
 * grouped as its review section says (one per target, file, directory, or
 * batches of whole files bounded in files and lines), each as one commit on the base with
 * a templated message and title/body, by the configured author.
 *
 * Reads candidates, gate runs and attempts from the store and objects from
 * the repository; writes commit objects (no ref is touched here).  The
 * commit of a change is a function of its contents: its time is the newest
 * candidate's, so building the same change twice gives the same commit and
 * a changed candidate gives a new one.
 */
#ifndef SL_REVIEW_CHANGE_H
#define SL_REVIEW_CHANGE_H

#include <git2.h>

#include "common/err.h"
#include "pipeline/spec.h"
#include "storage/store.h"

typedef struct sl_change {
	char *key;                  /* the group: the target's branch name after the prefix,
				       "file/PATH", "dir/DIR.dir" or "batch-N" */
	char *branch;               /* PREFIX/review/KEY, a valid ref name */
	int64_t *cands;             /* candidate ids, ascending */
	size_t ncands;
	git_oid commit;
	char *title, *body;         /* from the templates */
	char *paths;                /* changed paths, one per line */
} sl_change;

/*
 * The changes of every proposed, not rejected candidate.  A candidate whose
 * diff does not apply on top of others in its group gets a change of its
 * own.  The caller frees with sl_change_list_free().
 */
int sl_changes_build(sl_change **out, size_t *n, sl_store *st, const sl_campaign_rec *camp,
		     const sl_spec *spec, git_repository *repo, sl_err *err);
void sl_change_list_free(sl_change *v, size_t n);

/*
 * Write each change as OUTDIR/changes/NNNN-KEY.patch, one `git am`-able
 * patch (its commit, message and author); *count_out = changes written.
 */
int sl_changes_export(sl_store *st, const sl_campaign_rec *camp, const sl_spec *spec,
		      git_repository *repo, const char *outdir, size_t *count_out, sl_err *err);

#endif
