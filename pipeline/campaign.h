/*
 * campaign.h - a campaign ready to run: the campaign file (pipeline/spec/) loaded
 * and checked, its repository opened, its base revision resolved.
 *
 * sl_campaign_load() reads and validates a campaign file, checks what later
 * stages would reject (language, query, prompt, rule templates) so that
 * every input error surfaces before any work with its file:line:col, opens
 * the repository and resolves the base revision.  sl_campaign_scope() then
 * finds its targets on the base.
 */
#ifndef SL_CAMPAIGN_H
#define SL_CAMPAIGN_H

#include <git2.h>

#include "common/err.h"
#include "pipeline/spec.h"
#include "scoping/scope.h"
#include "storage/store.h"

typedef struct sl_campaign {
	sl_spec *spec;
	git_repository *repo;
	char *repo_path;            /* absolute */
	git_oid base;               /* the resolved base commit */
	char base_hex[GIT_OID_HEXSZ + 1];
} sl_campaign;

/*
 * repo_override (--repo) replaces the spec's repository when not NULL; the
 * campaign file may then leave out `repository:`.
 */
int sl_campaign_load(sl_campaign **out, const char *spec_path, const char *repo_override,
		     sl_err *err);
void sl_campaign_free(sl_campaign *c);
/*
 * What sl_campaign_load checks of a loaded spec before it opens the
 * repository: languages, the query (compiled in a bounded child), the
 * prompt and the rules' captures.  SL_EINPUT with "FILE:LINE:COL: " first.
 */
int sl_campaign_check(const sl_spec *spec, sl_err *err);
/*
 * Fill the target settings of so from the campaign; returns the override
 * array so points into (caller frees it after the scope; NULL if none).
 */
sl_lang_override *sl_campaign_scope_opts(sl_scope_opts *so, const sl_campaign *c);
/* Scope the campaign's base commit with its target settings (cache: may be NULL). */
int sl_campaign_scope(sl_target_list *out, const sl_campaign *c, sl_store *cache, sl_err *err);

#endif
