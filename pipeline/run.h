/*
 * run.h - the orchestrator: the only code that knows the order of stages.
 *
 * sl_campaign_load() reads and validates a campaign file (spec.c), checks
 * what later stages would reject (language, query, prompt, rule templates)
 * so that every input error surfaces before any work with its file:line:col,
 * opens the repository and resolves the base revision.
 *
 * sl_run() then: opens the store and records the campaign (or finds it and
 * reuses the base commit recorded the first time, so a rerun resumes on the
 * same tree), cleans worktrees a crashed run left behind, scopes the base and
 * records new targets, and takes every pending target through
 *     rules or provider -> reply parsing -> apply -> worktree -> gates
 * for up to `attempts` attempts, feeding the failure of one attempt into the
 * prompt of the next.  Each attempt's records (attempt, candidate, gate runs,
 * the target's new state) are written in one transaction; a candidate that
 * passes every gate keeps its branch <branch_prefix>/<target>, any other
 * candidate's branch is deleted.
 */
#ifndef SL_RUN_H
#define SL_RUN_H

#include <stdint.h>
#include <git2.h>

#include "err.h"
#include "scope.h"
#include "spec.h"
#include "store.h"

typedef struct sl_campaign {
	sl_spec *spec;
	git_repository *repo;
	char *repo_path;            /* absolute */
	git_oid base;               /* the resolved base commit */
	char base_hex[GIT_OID_HEXSZ + 1];
} sl_campaign;

/* repo_override replaces the spec's repository when not NULL. */
int sl_campaign_load(sl_campaign **out, const char *spec_path, const char *repo_override,
		     sl_err *err);
void sl_campaign_free(sl_campaign *c);
/*
 * Fill the target settings of so from the campaign; returns the override
 * array so points into (caller frees it after the scope; NULL if none).
 */
sl_lang_override *sl_campaign_scope_opts(sl_scope_opts *so, const sl_campaign *c);
/* Scope the campaign's base commit with its target settings (cache: may be NULL). */
int sl_campaign_scope(sl_target_list *out, const sl_campaign *c, sl_store *cache, sl_err *err);

#define SL_RUN_OPTS_VERSION 1
typedef struct sl_run_opts {
	unsigned version;
	const char *spec_path;
	const char *repo;           /* overrides the spec's repository */
	const char *store;          /* the store file */
	int progress;               /* one line per finished target on stderr */
	const char *record;         /* append every model reply to this JSON lines file */
	int unsafe;                 /* run gates without the minimum jail; recorded */
} sl_run_opts;
#define SL_RUN_OPTS_INIT { SL_RUN_OPTS_VERSION, NULL, NULL, NULL, 0, NULL, 0 }

typedef struct sl_run_summary {
	int64_t campaign_id;
	char *campaign;             /* owned */
	size_t targets, processed;
	size_t proposed_now;        /* targets proposed by this run */
} sl_run_summary;

void sl_run_summary_release(sl_run_summary *s);
int sl_run(sl_run_summary *out, const sl_run_opts *opts, sl_err *err);

/* The store path to use: explicit, else $SLUICE_STORE, else the default. Caller frees. */
char *sl_default_store_path(const char *explicit_path);

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

#endif
