/*
 * forge_gitlab.c - GitLab's merge requests behind forge.h: its paths
 * (projects/ID-OR-PATH/...), fields and headers, as the forge front's kind
 * table (forge_internal.h).
 *
 * A request's state: "opened", "merged", "closed" or "locked"; a squashed
 * merge names its commit in squash_commit_sha.  A draft is a title
 * starting "Draft: ".  Feedback: people's notes (not GitLab's own system
 * notes) counted, the last one kept.
 */
#include <stdlib.h>
#include <string.h>

#include "pipeline/review/forge_internal.h"
#include "common/util.h"

static void branch_path(sl_buf *path, const sl_forge *f, const char *enc)
{
	sl_buf_addf(path, "projects/%s/repository/branches/%s", f->project_enc, enc);
}

static void find_path(sl_buf *path, const sl_forge *f, const char *enc)
{
	sl_buf_addf(path, "projects/%s/merge_requests?state=all&source_branch=%s",
		    f->project_enc, enc);
}

static void pr_path(sl_buf *path, const sl_forge *f, int64_t number)
{
	sl_buf_addf(path, "projects/%s/merge_requests/%lld", f->project_enc, (long long)number);
}

static void open_request(sl_buf *path, json_t *req, const sl_forge *f, const char *branch,
			 const char *base, const char *title, const char *body,
			 const sl_strvec *labels, int draft)
{
	sl_buf labs = SL_BUF_INIT, t = SL_BUF_INIT;

	for (size_t i = 0; i < labels->n; i++)
		sl_buf_addf(&labs, "%s%s", i ? "," : "", labels->v[i]);
	sl_buf_addf(&t, "%s%s", draft ? "Draft: " : "", title);
	sl_buf_addf(path, "projects/%s/merge_requests", f->project_enc);
	json_object_set_new(req, "source_branch", json_string(branch));
	json_object_set_new(req, "target_branch", json_string(base));
	json_object_set_new(req, "title", json_string(t.buf));
	json_object_set_new(req, "description", json_string(body));
	if (labels->n)
		json_object_set_new(req, "labels", json_string(labs.buf));
	sl_buf_release(&labs);
	sl_buf_release(&t);
}

static void comment_path(sl_buf *path, const sl_forge *f, int64_t number)
{
	sl_buf_addf(path, "projects/%s/merge_requests/%lld/notes", f->project_enc,
		    (long long)number);
}

static int pr_state(json_t *j)
{
	const char *state = json_string_value(json_object_get(j, "state"));

	return state && !strcmp(state, "merged") ? SL_PR_MERGED :
		state && !strcmp(state, "opened") ? SL_PR_OPEN : SL_PR_CLOSED;
}

static void fill_pr(json_t *j, sl_forge_pr *out)
{
	const char *sha = json_string_value(json_object_get(j, "merge_commit_sha"));

	if (!sha)
		sha = json_string_value(json_object_get(j, "squash_commit_sha"));
	sl_forge_pr_set(out, json_integer_value(json_object_get(j, "iid")),
			json_string_value(json_object_get(j, "web_url")), pr_state(j), sha);
}

static int pr_feedback(sl_forge *f, sl_forge_pr *pr, sl_err *err)
{
	sl_buf path = SL_BUF_INIT;
	json_t *all = NULL, *e;
	const char *last = NULL;
	size_t i;
	int ret;

	sl_buf_addf(&path, "projects/%s/merge_requests/%lld/notes?sort=asc&order_by=created_at",
		    f->project_enc, (long long)pr->number);
	if ((ret = sl_forge_call_list(f, path.buf, &all, err)))
		goto done;
	json_array_foreach(all, i, e) {
		if (json_is_true(json_object_get(e, "system")))
			continue;
		pr->review_comments++;
		last = json_string_value(json_object_get(e, "body"));
	}
	pr->close_comment = sl_xstrdup_or_null(last);
done:
	json_decref(all);
	sl_buf_release(&path);
	return ret;
}

static const char *const headers[] = { "Accept: application/json", NULL };

const sl_forge_ops sl_forge_gitlab = {
	.api = "https://gitlab.com/api/v4",
	.auth = "PRIVATE-TOKEN: %s",
	.headers = headers,
	.branch_path = branch_path,
	.find_path = find_path,
	.pr_path = pr_path,
	.open_request = open_request,
	.open_duplicate = 409,
	.update_method = "PUT",
	.close_key = "state_event",
	.close_value = "close",
	.comment_path = comment_path,
	.body_key = "description",
	.pr_state = pr_state,
	.fill_pr = fill_pr,
	.pr_feedback = pr_feedback,
};
