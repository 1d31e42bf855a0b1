/*
 * unplaced_store.h - the findings of a fix campaign that no target holds
 * (table unplaced, migration 10): the file as the analyzer reported it, the
 * line, rule and message, and why it could not be placed.
 *
 * Written with the campaign's targets, in the caller's transaction; a rerun
 * that finds the same finding again adds no second row.  Records returned
 * are owned by the caller and freed with sl_unplaced_list_free.
 */
#ifndef SL_UNPLACED_STORE_H
#define SL_UNPLACED_STORE_H

#include "storage/store.h"

typedef struct sl_unplaced_rec {
	char *file;                 /* as reported */
	int64_t line;               /* 0 when unknown */
	char *rule;                 /* "" if none */
	char *message;
	char *reason;               /* "not a tracked file of the repository", ... */
} sl_unplaced_rec;

/* If v is NULL nothing occurs. */
void sl_unplaced_list_free(sl_unplaced_rec *v, size_t n);

/* Record one (strings borrowed); a row already there is kept. */
int sl_store_unplaced_add(sl_store *st, int64_t campaign_id, const sl_unplaced_rec *in,
			  sl_err *err);

/* The campaign's unplaced findings in the order they were first recorded. */
int sl_store_unplaced(sl_store *st, int64_t campaign_id, sl_unplaced_rec **out, size_t *n,
		      sl_err *err);

#endif
