/*
 * publish.c - pushing reviewable changes, opening their requests with
 * pacing, and syncing outcomes back (publish.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/apply/apply.h"
#include "pipeline/review/forge.h"
#include "pipeline/review/publish.h"
#include "pipeline/review/review_change.h"
#include "storage/review_store.h"
#include "common/sha256.h"
#include "common/util.h"
#include "common/caps.h"

static void progress(const sl_publish_opts *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void progress(const sl_publish_opts *o, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	if (!o->progress)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	o->progress(o->ctx, line);
}

static void on_wait(void *ctx, const char *why, unsigned seconds)
{
	progress(ctx, "forge: %s, waiting %u s", why, seconds);
}

static const char *forge_name(int kind)
{
	return kind == SL_FORGE_GITLAB ? "gitlab" : "github";
}

/* The push URL: review.remote (relative to the campaign file) or origin's. */
static char *remote_url(git_repository *repo, const sl_spec *spec, sl_err *err)
{
	git_remote *origin = NULL;
	char *url = NULL;
	const char *r = spec->review.remote;

	if (r) {
		if (strstr(r, "://") || r[0] == '/' || !spec->dir)
			return sl_xstrdup(r);
		return sl_path_join(spec->dir, r);
	}
	if (git_remote_lookup(&origin, repo, "origin") || !git_remote_url(origin)) {
		sl_err_set(err, SL_EINPUT, "no push remote: set 'remote' in 'review' (the "
			   "repository has no 'origin')");
	} else {
		url = sl_xstrdup(git_remote_url(origin));
	}
	git_remote_free(origin);
	return url;
}

/* The branch requests go into: review.target_branch, else the base's name. */
static char *target_branch(git_repository *repo, const sl_spec *spec,
			   const sl_campaign_rec *camp)
{
	git_reference *head = NULL;
	char *name;

	if (spec->review.target_branch)
		return sl_xstrdup(spec->review.target_branch);
	if (strcmp(camp->base_rev, "HEAD"))
		return sl_xstrdup(!strncmp(camp->base_rev, "refs/heads/", 11) ?
				  camp->base_rev + 11 : camp->base_rev);
	if (!git_repository_head(&head, repo) && git_reference_is_branch(head))
		name = sl_xstrdup(git_reference_shorthand(head));
	else
		name = sl_xstrdup("main");
	git_reference_free(head);
	return name;
}

typedef struct push_ctx {
	const char *token;
	int tried_creds;
	char *rejected;             /* the remote's status for the ref, when refused */
} push_ctx;

static int on_credentials(git_credential **out, const char *url, const char *user,
			  unsigned int allowed, void *payload)
{
	push_ctx *p = payload;

	(void)url;
	(void)user;
	if (p->tried_creds++ || !(allowed & GIT_CREDENTIAL_USERPASS_PLAINTEXT) || !p->token)
		return GIT_PASSTHROUGH;
	return git_credential_userpass_plaintext_new(out, "x-access-token", p->token);
}

static int on_push_ref(const char *ref, const char *status, void *payload)
{
	push_ctx *p = payload;

	(void)ref;
	if (status && !p->rejected)
		p->rejected = sl_xstrdup(status);
	return 0;
}

/* Force-push refs/heads/BRANCH to url. */
static int push_branch(git_repository *repo, const char *url, const char *branch,
		       const char *token, sl_err *err)
{
	git_remote *remote = NULL;
	git_push_options po;
	push_ctx pc = { .token = token };
	sl_buf spec = SL_BUF_INIT;
	char *specs[1];
	git_strarray refs = { specs, 1 };
	int ret = SL_ERROR;

	git_push_options_init(&po, GIT_PUSH_OPTIONS_VERSION);
	po.callbacks.credentials = on_credentials;
	po.callbacks.push_update_reference = on_push_ref;
	po.callbacks.payload = &pc;
	sl_buf_addf(&spec, "+refs/heads/%s:refs/heads/%s", branch, branch);
	specs[0] = spec.buf;
	if (git_remote_create_anonymous(&remote, repo, url) ||
	    git_remote_push(remote, &refs, &po)) {
		sl_err_set(err, SL_ERROR, "cannot push '%s': %s", branch, sl_git_error());
		goto done;
	}
	if (pc.rejected) {
		sl_err_set(err, SL_ERROR, "the remote refused '%s': %s", branch, pc.rejected);
		goto done;
	}
	ret = SL_OK;
done:
	free(pc.rejected);
	git_remote_free(remote);
	sl_buf_release(&spec);
	return ret;
}

/* The spacing of mutating requests: $SLUICE_FORGE_WRITE_INTERVAL_MS, else the default. */
static int write_interval(unsigned *ms, sl_err *err)
{
	const char *v = getenv(SL_FORGE_WRITE_INTERVAL_ENV);
	char *end;
	unsigned long n;

	if (!v)
		return SL_OK;
	n = strtoul(v, &end, 10);
	if (!*v || *end || *v == '-' || *v == '+' || n > 60000)
		return sl_err_set(err, SL_EINPUT, "%s: expected milliseconds from 0 to 60000, got '%.40s'",
				  SL_FORGE_WRITE_INTERVAL_ENV, v);
	*ms = (unsigned)n;
	return SL_OK;
}

static int forge_open_client(sl_forge **f, const sl_spec *spec, const sl_publish_opts *o,
			     sl_err *err)
{
	sl_forge_opts fo = SL_FORGE_OPTS_INIT;
	int ret;

	if ((ret = write_interval(&fo.write_interval_ms, err)))
		return ret;
	fo.kind = spec->review.forge;
	fo.api_url = spec->review.api_url;
	fo.project = spec->review.project;
	fo.token = o->token;
	fo.max_wait_s = o->max_wait_s;
	fo.on_wait = on_wait;
	fo.ctx = (void *)o;
	return sl_forge_new(f, &fo, err);
}

/* What publish and sync share: the forge client, the push URL and the target branch. */
typedef struct session {
	sl_forge *f;
	char *url;
	char *base;
	git_repository *repo;           /* borrowed */
	const sl_campaign_rec *camp;    /* borrowed */
} session;

static int session_open(session *s, const sl_campaign_rec *camp, const sl_spec *spec,
			git_repository *repo, const sl_publish_opts *o, sl_err *err)
{
	memset(s, 0, sizeof(*s));
	s->repo = repo;
	s->camp = camp;
	if (!spec->review.forge)
		return sl_err_set(err, SL_EINPUT, "%s: 'review' has no 'forge' (github or gitlab)",
				  spec->path);
	if (!(s->url = remote_url(repo, spec, err)))
		return err->code;
	s->base = target_branch(repo, spec, camp);
	return forge_open_client(&s->f, spec, o, err);
}

static void session_close(session *s)
{
	sl_forge_free(s->f);
	free(s->url);
	free(s->base);
	memset(s, 0, sizeof(*s));
}

/* Record every candidate of a change with the request's number, state and head. */
static int record_change(sl_store *st, const sl_campaign_rec *camp, const sl_spec *spec,
			 const sl_change *ch, const sl_forge_pr *pr, const char *head,
			 const char *text_sha, sl_err *err)
{
	int ret;

	if ((ret = sl_store_begin(st, err)))
		return ret;
	for (size_t k = 0; k < ch->ncands; k++) {
		sl_published_rec p = { 0 };

		p.candidate_id = ch->cands[k];
		p.campaign_id = camp->id;
		p.forge = (char *)forge_name(spec->review.forge);
		p.project = spec->review.project;
		p.branch = ch->branch;
		p.head_oid = (char *)head;
		p.text_sha = (char *)text_sha;
		p.number = pr->number;
		p.url = pr->url;
		p.state = pr->state ? pr->state : SL_PR_OPEN;
		p.landed_unchanged = -1;
		if ((ret = sl_store_published_put(st, &p, err))) {
			sl_store_rollback(st);
			return ret;
		}
	}
	return sl_store_commit(st, err);
}

/* What the request shows: a digest of the title and body. */
static void text_digest(char out[65], const sl_change *ch)
{
	sl_sha256 c;
	unsigned char d[32];

	sl_sha256_init(&c);
	sl_sha256_update(&c, ch->title, strlen(ch->title) + 1);
	sl_sha256_update(&c, ch->body, strlen(ch->body));
	sl_sha256_final(&c, d);
	sl_sha256_tohex(out, d);
}

/* The request recorded for one of the change's candidates on its branch: *have. */
static int find_recorded(sl_store *st, const sl_change *ch, sl_published_rec *prev, int *have,
			 sl_err *err)
{
	int ret;

	*have = 0;
	for (size_t k = 0; k < ch->ncands && !*have; k++) {
		sl_published_rec_release(prev);
		ret = sl_store_published_get(st, ch->cands[k], prev, err);
		if (ret && ret != SL_ENOTFOUND)
			return ret;
		if (ret)
			sl_err_clear(err);
		*have = !ret && prev->number && !strcmp(prev->branch, ch->branch);
	}
	return SL_OK;
}

/*
 * Push the change's branch when it moved (*moved) and make sure the forge
 * has it; a branch recorded as pushed that the forge lacks is pushed again.
 */
static int push_checked(git_repository *repo, sl_forge *f, const char *url, const sl_spec *spec,
			const sl_change *ch, const sl_publish_opts *o, int *moved, sl_err *err)
{
	int ret, exists = 0;

	for (;;) {          /* twice at most: *moved is set before the second round */
		if (*moved && (ret = push_branch(repo, url, ch->branch, o->token, err)))
			return ret;
		if ((ret = sl_forge_branch_exists(f, ch->branch, &exists, err)))
			return ret;
		if (exists)
			return SL_OK;
		if (*moved)
			return sl_err_set(err, SL_ERROR, "branch '%s' was pushed to '%s' but the "
					  "forge does not have it (404): does review.remote point "
					  "at project '%s'?", ch->branch, url, spec->review.project);
		*moved = 1;
	}
}

/*
 * Update the request recorded in prev (NULL: none), or the open one found
 * on the forge (pr->number set: a run that died before recording it left
 * it), or open one; *pr is the request.
 */
static int open_or_update(sl_publish_summary *sum, sl_forge *f, const sl_spec *spec,
			  const char *base, const sl_change *ch, const sl_published_rec *prev,
			  int moved, const char *head, sl_forge_pr *pr, const sl_publish_opts *o,
			  sl_err *err)
{
	int ret;

	if (prev) {
		pr->number = prev->number;
		pr->url = sl_xstrdup_or_null(prev->url);
		pr->state = SL_PR_OPEN;
	} else if (!pr->number) {
		if ((ret = sl_forge_open(f, ch->branch, base, ch->title, ch->body,
					 &spec->review.labels, spec->review.draft, pr, err)))
			return ret;
		progress(o, "%s: opened #%lld %s", ch->branch, (long long)pr->number,
			 pr->url ? pr->url : "");
		sum->opened++;
		return SL_OK;
	}
	if ((ret = sl_forge_update(f, pr->number, ch->title, ch->body, err)))
		return ret;
	if (!prev)
		progress(o, "%s: #%lld found open, updated", ch->branch, (long long)pr->number);
	else if (moved)
		progress(o, "%s: #%lld updated (force-pushed %.12s)", ch->branch,
			 (long long)pr->number, head);
	else
		progress(o, "%s: #%lld title and body updated", ch->branch, (long long)pr->number);
	sum->updated++;
	return SL_OK;
}

/*
 * A request the forge already decided for the change's head (another store
 * published it, or this one lost its ledger): recorded with its state and
 * the decision it means, never opened again.
 */
static int record_decided(sl_publish_summary *sum, sl_store *st, const sl_campaign_rec *camp,
			  const sl_spec *spec, const sl_change *ch, const sl_forge_pr *pr,
			  const char *head, const char *text_sha, const sl_publish_opts *o,
			  sl_err *err)
{
	sl_buf reason = SL_BUF_INIT;
	int merged = pr->state == SL_PR_MERGED, ret;

	if (merged)
		sl_buf_addf(&reason, "merged as #%lld", (long long)pr->number);
	else
		sl_buf_addf(&reason, "closed without merge (#%lld)", (long long)pr->number);
	progress(o, "%s: %s #%lld already %s, not opened again", ch->branch,
		 forge_name(spec->review.forge), (long long)pr->number,
		 sl_pr_state_name(pr->state));
	if ((ret = record_change(st, camp, spec, ch, pr, head, text_sha, err)))
		goto done;
	for (size_t k = 0; k < ch->ncands; k++)
		if ((ret = sl_store_decide(st, ch->cands[k], merged ? SL_D_ACCEPT : SL_D_REJECT,
					   reason.buf, err)))
			goto done;
	sum->closed++;
done:
	sl_buf_release(&reason);
	return ret;
}

static int publish_one(sl_publish_summary *sum, sl_store *st, const sl_campaign_rec *camp,
		       const sl_spec *spec, git_repository *repo, const session *fs,
		       const sl_change *ch, const sl_publish_opts *o, sl_err *err)
{
	sl_published_rec prev = { 0 };
	sl_forge_pr pr = { 0 };
	git_reference *ref = NULL;
	sl_buf refname = SL_BUF_INIT;
	char head[GIT_OID_HEXSZ + 1], text_sha[65];
	int ret, have, moved;
	int64_t open_now = 0, last_hour = 0;

	git_oid_tostr(head, sizeof(head), &ch->commit);
	text_digest(text_sha, ch);
	if ((ret = find_recorded(st, ch, &prev, &have, err)))
		goto done;
	if (have && prev.state != SL_PR_OPEN) {
		progress(o, "%s: %s #%lld already %s", ch->branch, forge_name(spec->review.forge),
			 (long long)prev.number, sl_pr_state_name(prev.state));
		sum->closed++;
		goto done;
	}
	moved = !have || strcmp(prev.head_oid, head);
	if (have && !moved && prev.text_sha && !strcmp(prev.text_sha, text_sha)) {
		progress(o, "%s: #%lld up to date", ch->branch, (long long)prev.number);
		sum->unchanged++;
		goto done;
	}
	if (!have) {
		if ((ret = sl_forge_find(fs->f, ch->branch, &pr, err)))
			goto done;
		if (pr.number && pr.state != SL_PR_OPEN) {
			ret = record_decided(sum, st, camp, spec, ch, &pr, head, text_sha, o, err);
			goto done;
		}
	}
	if (!have && !pr.number) {
		if ((ret = sl_store_published_pace(st, camp->id, &open_now, &last_hour, err)))
			goto done;
		if (open_now >= spec->review.max_open || last_hour >= spec->review.max_per_hour) {
			progress(o, "%s: paced (%lld open of %u, %lld opened in the last hour of "
				 "%u); a later publish opens it", ch->branch, (long long)open_now,
				 spec->review.max_open, (long long)last_hour,
				 spec->review.max_per_hour);
			sum->paced++;
			goto done;
		}
	}
	sl_buf_addf(&refname, "refs/heads/%s", ch->branch);
	if (git_reference_create(&ref, repo, refname.buf, &ch->commit, 1, "sluice publish")) {
		ret = sl_err_set(err, SL_ERROR, "cannot create branch '%s': %s", ch->branch,
				 sl_git_error());
		goto done;
	}
	if (!(ret = push_checked(repo, fs->f, fs->url, spec, ch, o, &moved, err)) &&
	    !(ret = open_or_update(sum, fs->f, spec, fs->base, ch, have ? &prev : NULL, moved,
				   head, &pr, o, err)))
		ret = record_change(st, camp, spec, ch, &pr, head, text_sha, err);
done:
	git_reference_free(ref);
	sl_buf_release(&refname);
	sl_forge_pr_release(&pr);
	sl_published_rec_release(&prev);
	return ret;
}

/*
 * Close request number (rows[first] and the rows after it with that number)
 * when every candidate in it was rejected in the store (and its target not
 * sent back by retry: the new candidate's publish updates the request) and
 * the forge still has it open, with the reason as its comment; the rows are
 * recorded closed.
 */
static int withdraw_one(sl_publish_summary *sum, sl_store *st, const session *fs,
			sl_published_rec *rows, size_t nrows, size_t first,
			const sl_publish_opts *o, sl_err *err)
{
	sl_candidate_rec c = { 0 };
	sl_forge_pr pr = { 0 };
	sl_buf comment = SL_BUF_INIT;
	char *reason = NULL;
	int64_t number = rows[first].number;
	int ret = SL_OK, rejected = 1;

	for (size_t i = first; i < nrows && rejected; i++) {
		if (rows[i].number != number)
			continue;
		sl_candidate_rec_release(&c);
		memset(&c, 0, sizeof(c));
		if ((ret = sl_store_candidate_get(st, rows[i].candidate_id, &c, err)))
			goto done;
		rejected = c.decision == SL_D_REJECT;
		if (rejected) {     /* a target sent back by retry awaits its new candidate */
			sl_target_rec t = { 0 };

			if ((ret = sl_store_target_get(st, c.target_id, &t, err)))
				goto done;
			rejected = t.state == SL_T_REJECTED;
			sl_target_rec_release(&t);
		}
		if (rejected && !reason && c.decision_reason && *c.decision_reason)
			reason = sl_xstrdup(c.decision_reason);
	}
	if (!rejected || (ret = sl_forge_get(fs->f, number, &pr, err)) ||
	    pr.state != SL_PR_OPEN)
		goto done;     /* decided on the forge already: sync reads it */
	sl_buf_addf(&comment, "Rejected in sluice%s%s", reason ? ": " : "", reason ? reason : "");
	if ((ret = sl_forge_close(fs->f, number, comment.buf, err)))
		goto done;
	progress(o, "#%lld: closed, its change was rejected%s%s", (long long)number,
		 reason ? ": " : "", reason ? reason : "");
	sum->withdrawn++;
	for (size_t i = first; i < nrows; i++) {
		if (rows[i].number != number)
			continue;
		rows[i].state = SL_PR_CLOSED;
		free(rows[i].close_reason);
		rows[i].close_reason = sl_xstrdup(comment.buf);
		if ((ret = sl_store_published_put(st, &rows[i], err)))
			goto done;
	}
done:
	sl_forge_pr_release(&pr);
	sl_candidate_rec_release(&c);
	sl_buf_release(&comment);
	free(reason);
	return ret;
}

/* The requests recorded open, one call of fn per request (its first row). */
typedef int (*request_fn)(sl_publish_summary *sum, sl_store *st, const session *fs,
			  sl_published_rec *rows, size_t nrows, size_t first,
			  const sl_publish_opts *o, sl_err *err);

static int each_open_request(sl_publish_summary *sum, sl_store *st, const session *fs,
			     int count, request_fn fn, const sl_publish_opts *o, sl_err *err)
{
	sl_published_rec *rows = NULL;
	size_t n = 0;
	int ret;

	if ((ret = sl_store_published_list(st, fs->camp->id, SL_PR_OPEN, &rows, &n, err)))
		goto done;
	for (size_t i = 0; i < n; i++) {
		int seen = 0;

		for (size_t k = 0; k < i && !seen; k++)
			seen = rows[k].number == rows[i].number;
		if (seen || !rows[i].number)
			continue;
		sum->changes += count;
		if ((ret = fn(sum, st, fs, rows, n, i, o, err)))
			goto done;
	}
done:
	sl_published_list_free(rows, n);
	return ret;
}

int sl_publish(sl_publish_summary *out, sl_store *st, const sl_campaign_rec *camp,
	       const sl_spec *spec, git_repository *repo, const sl_publish_opts *o, sl_err *err)
{
	session fs;
	sl_change *ch = NULL;
	size_t nch = 0;
	int ret;

	memset(out, 0, sizeof(*out));
	if ((ret = session_open(&fs, camp, spec, repo, o, err)) ||
	    (ret = each_open_request(out, st, &fs, 0, withdraw_one, o, err)) ||
	    (ret = sl_changes_build(&ch, &nch, st, camp, spec, repo, err)))
		goto done;
	out->changes = nch;
	for (size_t i = 0; i < nch; i++)
		if ((ret = publish_one(out, st, camp, spec, repo, &fs, &ch[i], o, err)))
			goto done;
done:
	sl_change_list_free(ch, nch);
	session_close(&fs);
	return ret;
}

/* Fetch the target branch's objects from the remote (no ref or FETCH_HEAD written). */
static int fetch_target(git_repository *repo, const char *url, const char *branch,
			const char *token, sl_err *err)
{
	git_remote *remote = NULL;
	git_fetch_options fo;
	push_ctx pc = { .token = token };
	sl_buf spec = SL_BUF_INIT;
	char *specs[1];
	git_strarray refs = { specs, 1 };
	int ret = SL_OK;

	git_fetch_options_init(&fo, GIT_FETCH_OPTIONS_VERSION);
	fo.callbacks.credentials = on_credentials;
	fo.callbacks.payload = &pc;
	fo.update_fetchhead = 0;
	fo.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
	sl_buf_addf(&spec, "refs/heads/%s", branch);
	specs[0] = spec.buf;
	if (git_remote_create_anonymous(&remote, repo, url) ||
	    git_remote_fetch(remote, &refs, &fo, NULL))
		ret = sl_err_set(err, SL_ERROR, "cannot fetch '%s' from '%s': %s", branch, url,
				 sl_git_error());
	git_remote_free(remote);
	sl_buf_release(&spec);
	return ret;
}

/* The hunks of one diff without context: line ranges in the old and new side. */
typedef struct hunks {
	git_diff_hunk *v;
	size_t n, alloc;
} hunks;

static int on_hunk(const git_diff_delta *d, const git_diff_hunk *h, void *payload)
{
	hunks *hs = payload;

	(void)d;
	SL_ALLOC_GROW(hs->v, hs->n + 1, hs->alloc);
	hs->v[hs->n++] = *h;
	return 0;
}

/* The hunks from blob a to blob b (a NULL blob is empty); -1 on error. */
static int blob_hunks(git_repository *repo, const git_oid *a, const git_oid *b, hunks *out)
{
	git_diff_options o;
	git_blob *ab = NULL, *bb = NULL;
	int ret = -1;

	git_diff_options_init(&o, GIT_DIFF_OPTIONS_VERSION);
	o.context_lines = 0;
	o.interhunk_lines = 0;
	if ((!a || !git_blob_lookup(&ab, repo, a)) && (!b || !git_blob_lookup(&bb, repo, b)) &&
	    !git_diff_blobs(ab, NULL, bb, NULL, &o, NULL, NULL, on_hunk, NULL, out))
		ret = 0;
	git_blob_free(ab);
	git_blob_free(bb);
	return ret;
}

/*
 * Whether the merge's edit (hunks head->merge) touches the change's lines
 * (hunks base->head, as head numbers them): it removes or rewrites a line
 * the change wrote, inserts inside a run of them, or puts lines back where
 * the change deleted some.
 */
static int touches(const hunks *change, const hunks *merge)
{
	for (size_t i = 0; i < merge->n; i++) {
		const git_diff_hunk *m = &merge->v[i];

		for (size_t k = 0; k < change->n; k++) {
			const git_diff_hunk *c = &change->v[k];
			int c_end = c->new_start + c->new_lines;     /* one past the last */

			if (m->old_lines && c->new_lines && m->old_start < c_end &&
			    c->new_start < m->old_start + m->old_lines)
				return 1;
			if (!m->old_lines && c->new_lines && m->old_start >= c->new_start &&
			    m->old_start + 1 < c_end)
				return 1;
			if (!m->old_lines && !c->new_lines && m->old_start == c->new_start)
				return 1;
		}
	}
	return 0;
}

/*
 * 1 when merge holds the change (base to head) untouched: at every path the
 * change edited, the lines it wrote are in the merge as it wrote them,
 * whatever else landed in the same file (another change, say); 0 if not,
 * -1 unknown.
 */
static int landed_unchanged(git_repository *repo, const char *base_hex, const char *head_hex,
			    const char *merge_hex)
{
	git_oid b, h, m;
	git_commit *bc = NULL, *hc = NULL, *mc = NULL;
	git_tree *bt = NULL, *ht = NULL, *mt = NULL;
	git_diff *diff = NULL;
	int res = -1;

	if (!merge_hex || git_oid_fromstr(&b, base_hex) || git_oid_fromstr(&h, head_hex) ||
	    git_oid_fromstr(&m, merge_hex) || git_commit_lookup(&bc, repo, &b) ||
	    git_commit_lookup(&hc, repo, &h) || git_commit_lookup(&mc, repo, &m) ||
	    git_commit_tree(&bt, bc) || git_commit_tree(&ht, hc) || git_commit_tree(&mt, mc) ||
	    git_diff_tree_to_tree(&diff, repo, bt, ht, NULL))
		goto done;
	res = 1;
	for (size_t i = 0; i < git_diff_num_deltas(diff) && res == 1; i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);
		git_tree_entry *he = NULL, *me = NULL;
		int hok = !git_tree_entry_bypath(&he, ht, d->new_file.path);
		int mok = !git_tree_entry_bypath(&me, mt, d->new_file.path);
		hunks ch = { 0 }, mh = { 0 };

		if (hok != mok)
			res = 0;
		else if (hok && git_oid_cmp(git_tree_entry_id(he), git_tree_entry_id(me)))
			res = blob_hunks(repo, d->old_file.mode ? &d->old_file.id : NULL,
					 git_tree_entry_id(he), &ch) ||
				blob_hunks(repo, git_tree_entry_id(he), git_tree_entry_id(me), &mh) ?
				-1 : !touches(&ch, &mh);
		free(ch.v);
		free(mh.v);
		git_tree_entry_free(he);
		git_tree_entry_free(me);
	}
done:
	git_diff_free(diff);
	git_tree_free(bt);
	git_tree_free(ht);
	git_tree_free(mt);
	git_commit_free(bc);
	git_commit_free(hc);
	git_commit_free(mc);
	return res;
}

/* A reason from a forge comment: printable, bounded. */
static char *reason_of(const char *comment, int64_t number)
{
	sl_buf b = SL_BUF_INIT;

	if (!comment || !*comment) {
		sl_buf_addf(&b, "closed without merge (#%lld)", (long long)number);
		return sl_buf_detach(&b, NULL);
	}
	for (const char *p = comment; *p && b.len < SL_CAP_REJECT_REASON; p++) {
		unsigned char c = (unsigned char)*p;

		sl_buf_addch(&b, (c < 0x20 && c != '\n') || c == 0x7f ? ' ' : c);
	}
	return sl_buf_detach(&b, NULL);
}

/*
 * The head a request holds now: that of its newest candidate's row (a
 * retried target's new candidate updates the request its rejected one
 * opened; the rows of the candidates it replaced keep their old head).
 */
static const char *request_head(const sl_published_rec *rows, size_t nrows, size_t first)
{
	const sl_published_rec *newest = &rows[first];

	for (size_t i = first; i < nrows; i++)
		if (rows[i].number == newest->number && rows[i].candidate_id > newest->candidate_id)
			newest = &rows[i];
	return newest->head_oid ? newest->head_oid : "";
}

static int sync_one(sl_publish_summary *sum, sl_store *st, const session *fs,
		    sl_published_rec *rows, size_t nrows, size_t first, const sl_publish_opts *o,
		    sl_err *err)
{
	git_repository *repo = fs->repo;
	const sl_campaign_rec *camp = fs->camp;
	sl_forge_pr pr = { 0 };
	int64_t number = rows[first].number;
	const char *head = request_head(rows, nrows, first);
	char *reason = NULL;
	int decision = SL_D_NONE, landed = -1, ret;

	if ((ret = sl_forge_get(fs->f, number, &pr, err)) ||
	    (ret = sl_forge_pr_feedback(fs->f, &pr, err)))
		goto done;
	if (pr.state == SL_PR_OPEN) {
		sum->open++;
	} else if (pr.state == SL_PR_MERGED) {
		sl_buf b = SL_BUF_INIT;

		if (pr.merge_sha && fetch_target(repo, fs->url, fs->base, o->token, err))
			progress(o, "#%lld: %s; landing not checked", (long long)number, err->msg);
		landed = landed_unchanged(repo, camp->base_oid, head, pr.merge_sha);
		sl_buf_addf(&b, "merged as #%lld%s", (long long)number, landed == 1 ?
			    ", landed unchanged" : landed == 0 ? ", changed before landing" : "");
		reason = sl_buf_detach(&b, NULL);
		decision = SL_D_ACCEPT;
		sum->merged++;
		sum->landed_unchanged += landed == 1;
	} else {
		reason = reason_of(pr.close_comment, number);
		decision = SL_D_REJECT;
		sum->rejected++;
	}
	progress(o, "#%lld: %s, %lld review comment%s%s%s", (long long)number,
		 sl_pr_state_name(pr.state),
		 (long long)pr.review_comments, pr.review_comments == 1 ? "" : "s",
		 decision ? "; " : "", !decision ? "" : decision == SL_D_REJECT ?
		 "rejected" : landed == 1 ? "landed unchanged" : landed == 0 ?
		 "changed before landing" : "landing not checked");
	for (size_t i = first; i < nrows; i++) {
		/* a replaced candidate's row follows the request, its decision stays */
		int replaced = rows[i].head_oid && strcmp(rows[i].head_oid, head);

		if (rows[i].number != number)
			continue;
		if (decision && !replaced &&
		    (ret = sl_store_decide(st, rows[i].candidate_id, decision, reason, err)))
			goto done;
		rows[i].state = pr.state;
		rows[i].landed_unchanged = replaced ? -1 : landed;
		rows[i].review_comments = pr.review_comments;
		free(rows[i].close_reason);
		rows[i].close_reason = decision == SL_D_REJECT && !replaced ?
			sl_xstrdup(reason) : NULL;
		if ((ret = sl_store_published_put(st, &rows[i], err)))
			goto done;
	}
done:
	free(reason);
	sl_forge_pr_release(&pr);
	return ret;
}

int sl_sync(sl_publish_summary *out, sl_store *st, const sl_campaign_rec *camp,
	    const sl_spec *spec, git_repository *repo, const sl_publish_opts *o, sl_err *err)
{
	session fs;
	int ret;

	memset(out, 0, sizeof(*out));
	if (!(ret = session_open(&fs, camp, spec, repo, o, err)) &&
	    !(ret = each_open_request(out, st, &fs, 0, withdraw_one, o, err)))
		ret = each_open_request(out, st, &fs, 1, sync_one, o, err);
	session_close(&fs);
	return ret;
}
