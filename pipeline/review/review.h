/*
 * review.h - what humans see: the funnel, a candidate, the exported series.
 *
 * Reads the store (and, for export, the candidate commits in the
 * repository); writes only into the output directory it is given.
 */
#ifndef SL_REVIEW_H
#define SL_REVIEW_H

#include <git2.h>
#include <jansson.h>

#include "common/buf.h"
#include "common/err.h"
#include "storage/store.h"

/* The funnel as aligned text lines, or as one JSON object (no newline). */
void sl_review_funnel_text(sl_buf *out, const sl_campaign_rec *c, const sl_funnel *f);
void sl_review_funnel_json(sl_buf *out, const sl_campaign_rec *c, const sl_funnel *f);

/*
 * A candidate with its gate runs and diff, as text or JSON (flags: 1 = JSON,
 * SL_SHOW_ATTEMPTS = also every attempt at its target: source, outcome,
 * tokens, cost, latency, HTTP status, retries, the request and the reply;
 * as text, each chat message of the request longer than SL_SHOW_MSG_LINES
 * lines and a reply longer than SL_SHOW_REPLY_LINES shown as their first
 * and last halves of that around a line saying how many lines were cut,
 * unless SL_SHOW_FULL is set too; JSON is always whole).
 */
#define SL_SHOW_ATTEMPTS 2
#define SL_SHOW_FULL 4
#define SL_SHOW_MSG_LINES 8
#define SL_SHOW_REPLY_LINES 40

/*
 * What a candidate's branch holds now (`status`, `show`): the candidate's
 * commit (ours), another commit (moved: the user's, or a later one of this
 * store), a commit another store made (other-store: its Sluice-Store
 * trailer names another store), or nothing (gone).  SL_BRANCH_UNKNOWN when
 * there is nothing to tell: no branch, or no repository to look in.
 */
enum sl_branch_state {
	SL_BRANCH_UNKNOWN,
	SL_BRANCH_OURS,
	SL_BRANCH_MOVED,
	SL_BRANCH_OTHER_STORE,
	SL_BRANCH_GONE,
};
/* "ours", "moved", "other-store", "gone"; NULL for SL_BRANCH_UNKNOWN. */
const char *sl_branch_state_name(enum sl_branch_state s);

/*
 * Where a campaign's branches are looked at: its repository (NULL when it
 * cannot be opened) and the trailer tag of the store (STORE_ID/CAMPAIGN_ID).
 * _open fills a caller-owned struct; _release frees the repository.
 */
typedef struct sl_branch_view {
	git_repository *repo;
	char *tag;                  /* this store's tags (sl_store_tags), one a line */
} sl_branch_view;
int sl_branch_view_open(sl_branch_view *v, sl_store *st, int64_t campaign_id, sl_err *err);
void sl_branch_view_release(sl_branch_view *v);
enum sl_branch_state sl_branch_state_of(const sl_branch_view *v, const char *branch,
					const char *commit_oid);

/*
 * The state as a note for the line that names the branch: "" for ours and
 * unknown, else " (the branch now holds another commit)", " (the branch now
 * holds another store's commit)" or " (the branch is gone)".  A static string.
 */
const char *sl_review_branch_note(enum sl_branch_state s);
/* The campaign's repository, or NULL when it cannot be opened (free: git_repository_free). */
git_repository *sl_review_repo_of(sl_store *st, int64_t campaign_id);

int sl_review_show(sl_buf *out, sl_store *st, int64_t candidate_id, int flags, sl_err *err);
/*
 * A candidate record as a new JSON object, the one shape everywhere it is
 * written (`show --json`, before its gates; `status --json`'s
 * candidate_list): id, target, path, start_line, end_line, attempt, state,
 * commit, branch, decision, reason, created_at.
 */
json_t *sl_review_candidate_json(const sl_candidate_rec *c);
/* The attempts part of sl_review_show(): a new JSON array, or text appended to out. */
json_t *sl_review_attempts_json(const sl_attempt_rec *a, size_t n);
void sl_review_attempts_text(sl_buf *out, const sl_attempt_rec *a, size_t n, int full);

/*
 * Write OUTDIR/series.mbox (every proposed, not rejected candidate of the
 * campaign as a numbered patch against the base, `git am`-able) and
 * OUTDIR/report.md (the funnel, the proposed candidates with their gates and
 * diffs, the targets that failed and why).  *count_out = patches written.
 */
int sl_review_export(sl_store *st, const sl_campaign_rec *c, git_repository *repo,
		     const char *outdir, size_t *count_out, sl_err *err);

#endif
