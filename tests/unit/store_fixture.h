/*
 * store_fixture.h - the records the store's unit tests start from: a
 * campaign and a target whose fields are fixed and valid, so that a test
 * states only what it is about.  Include after unit.h (the helpers CHECK
 * that the store took the record).
 */
#ifndef SL_STORE_FIXTURE_H
#define SL_STORE_FIXTURE_H

#include <stdint.h>

#include "storage/store.h"

/* A campaign named name with the campaign file text spec_text; its id. */
static inline int64_t fixture_campaign(sl_store *st, const char *name, const char *spec_text)
{
	sl_campaign_rec c = { 0 };
	int64_t id = 0;

	c.name = (char *)name;
	c.spec_path = "c.yaml";
	c.spec_text = (char *)spec_text;
	c.repo_path = "/repo";
	c.base_rev = "HEAD";
	c.base_oid = "0123456789012345678901234567890123456789";
	c.branch_prefix = "sluice/x";
	CHECK_INT(sl_store_campaign_add(st, &c, &id, NULL), 0);
	return id;
}

/*
 * A target of camp under key: src/a.c lines 3-4, one site.  Returns what
 * sl_store_target_add returned (the caller checks it: threads may not CHECK).
 */
static inline int fixture_target(sl_store *st, int64_t camp, const char *key, int64_t *id_out,
				 int *inserted_out, sl_err *err)
{
	sl_target_rec t = { 0 };

	t.campaign_id = camp;
	t.key = (char *)key;
	t.path = "src/a.c";
	t.lang = "c";
	t.blob = "abc";
	t.unit = "capture";
	t.start_line = 3;
	t.end_line = 4;
	t.nsites = 1;
	return sl_store_target_add(st, &t, id_out, inserted_out, err);
}

#endif
