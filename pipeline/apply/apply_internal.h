/*
 * apply_internal.h - for pipeline/apply/ only: the state of one
 * sl_apply_edits_ext() call, shared by apply.c (paths, limits, the commit)
 * and place.c (placing each edit in its file).  Nothing outside
 * pipeline/apply/ includes this.
 */
#ifndef SL_APPLY_INTERNAL_H
#define SL_APPLY_INTERNAL_H

#include <stddef.h>

#include <git2.h>

#include "pipeline/apply/apply.h"
#include "common/util.h"

/* How an edit was placed; the names are the report's "tier" strings. */
enum { T_EXACT, T_MOVED, T_WS, T_REFUSED };
extern const char *const sl_tier_names[];

typedef struct file_state {
	char *path;
	int existed, deleted, created, loaded;
	int refused;                /* loading it was refused: reason in why */
	char *why;
	unsigned mode;
	sl_buf content;
} file_state;

typedef struct apply_ctx {
	git_repository *repo;
	git_tree *tree;
	const sl_apply_opts *opts;
	file_state *files;
	size_t nfiles, afiles;
	sl_apply_item *items;
	size_t *file_of;            /* per edit: index into files, SIZE_MAX if refused early */
	sl_strvec tree_paths;       /* every blob path of the base, loaded on demand */
	int have_tree_paths;
} apply_ctx;

/* Mark the item refused with the reason in why (taken; why is left empty). */
void sl_apply_refuse(sl_apply_item *it, sl_buf *why);
/* Append a note (taken) to the item's reason. */
void sl_apply_note(sl_apply_item *it, sl_buf *n);

/*
 * Place the edits of file fi (x->file_of[i] == fi), by kind, in the order
 * apply.h gives: splices, then the hunks as one batch, then the
 * search/replace blocks.  Each sets its items' tier (and reason); the file's
 * content changes only when all its edits of that kind were placed.
 */
void sl_place_splices(apply_ctx *x, size_t fi, const sl_edit_list *edits);
void sl_place_hunks(apply_ctx *x, size_t fi, const sl_edit_list *edits);
void sl_place_replaces(apply_ctx *x, size_t fi, const sl_edit_list *edits);

#endif
