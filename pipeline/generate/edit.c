/*
 * edit.c - the edit list and the edit-format names.
 *
 * Edits own copies of their strings; sl_edit_list_release() frees them and
 * leaves the list empty and reusable.  Parsing model replies into edits
 * lives in reply.c.
 */
#include <stdlib.h>
#include <string.h>

#include "pipeline/generate/edit.h"
#include "common/util.h"

sl_edit *sl_edit_list_add(sl_edit_list *list, int kind, const char *path,
			  const char *old_text, const char *new_text)
{
	sl_edit *e;

	SL_ALLOC_GROW(list->v, list->n + 1, list->alloc);
	e = &list->v[list->n++];
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->path = sl_xstrdup_or_null(path);
	e->old_text = sl_xstrdup(old_text ? old_text : "");
	e->new_text = sl_xstrdup(new_text ? new_text : "");
	return e;
}

void sl_edit_list_release(sl_edit_list *list)
{
	for (size_t i = 0; i < list->n; i++) {
		free(list->v[i].path);
		free(list->v[i].old_text);
		free(list->v[i].new_text);
	}
	free(list->v);
	list->v = NULL;
	list->n = list->alloc = 0;
}
