/*
 * forge_github.c - GitHub's pull requests behind forge.h: its paths
 * (repos/OWNER/NAME/...), fields and headers, as the forge front's kind
 * table (forge_internal.h).
 *
 * A request's state: "open" or "closed", merged when "merged" or
 * "merged_at" says so.  Labels are set on the request's issue once it is
 * open.  Feedback: the review comments counted, the last issue comment kept.
 */
#include <stdlib.h>
#include <string.h>

#include "pipeline/review/forge_internal.h"
#include "common/util.h"

static int check(const sl_forge_opts *o, sl_err *err)
{
	const char *slash = strchr(o->project, '/');

	if (!slash || slash == o->project || !slash[1])
		return sl_err_set(err, SL_EINPUT, "GitHub project '%s' is not OWNER/NAME",
				  o->project);
	return SL_OK;
}

static void branch_path(sl_buf *path, const sl_forge *f, const char *enc)
{
	sl_buf_addf(path, "repos/%s/branches/%s", f->o.project, enc);
}

static void find_path(sl_buf *path, const sl_forge *f, const char *enc)
{
	sl_buf_addf(path, "repos/%s/pulls?state=all&head=%s:%s", f->o.project, f->owner, enc);
}

static void pr_path(sl_buf *path, const sl_forge *f, int64_t number)
{
	sl_buf_addf(path, "repos/%s/pulls/%lld", f->o.project, (long long)number);
}

static void open_request(sl_buf *path, json_t *req, const sl_forge *f, const char *branch,
			 const char *base, const char *title, const char *body,
			 const sl_strvec *labels, int draft)
{
	sl_buf_addf(path, "repos/%s/pulls", f->o.project);
	json_object_set_new(req, "title", json_string(title));
	json_object_set_new(req, "head", json_string(branch));
	json_object_set_new(req, "base", json_string(base));
	json_object_set_new(req, "body", json_string(body));
	json_object_set_new(req, "draft", json_boolean(draft));
}

/* A pull request's labels are its issue's. */
static int after_open(sl_forge *f, const sl_strvec *labels, const sl_forge_pr *pr, sl_err *err)
{
	sl_forge_reply r;
	sl_buf path = SL_BUF_INIT;
	json_t *lab, *lreq, *lj = NULL;
	int ret;

	if (!labels->n)
		return SL_OK;
	sl_forge_reply_init(&r);
	lab = json_array();
	for (size_t i = 0; i < labels->n; i++)
		json_array_append_new(lab, json_string(labels->v[i]));
	lreq = json_pack("{s:O}", "labels", lab);
	sl_buf_addf(&path, "repos/%s/issues/%lld/labels", f->o.project, (long long)pr->number);
	ret = sl_forge_call_json(f, "POST", path.buf, lreq, &lj, &r, err);
	json_decref(lj);
	json_decref(lreq);
	json_decref(lab);
	sl_forge_reply_release(&r);
	sl_buf_release(&path);
	return ret;
}

static void comment_path(sl_buf *path, const sl_forge *f, int64_t number)
{
	sl_buf_addf(path, "repos/%s/issues/%lld/comments", f->o.project, (long long)number);
}

static int pr_state(json_t *j)
{
	const char *state = json_string_value(json_object_get(j, "state"));

	if (json_is_true(json_object_get(j, "merged")) ||
	    json_string_value(json_object_get(j, "merged_at")))
		return SL_PR_MERGED;
	return state && !strcmp(state, "open") ? SL_PR_OPEN : SL_PR_CLOSED;
}

static void fill_pr(json_t *j, sl_forge_pr *out)
{
	sl_forge_pr_set(out, json_integer_value(json_object_get(j, "number")),
			json_string_value(json_object_get(j, "html_url")), pr_state(j),
			json_string_value(json_object_get(j, "merge_commit_sha")));
}

static int pr_feedback(sl_forge *f, sl_forge_pr *pr, sl_err *err)
{
	sl_buf path = SL_BUF_INIT;
	json_t *all = NULL;
	const char *last = NULL;
	int ret;

	sl_buf_addf(&path, "repos/%s/pulls/%lld/comments", f->o.project, (long long)pr->number);
	if ((ret = sl_forge_call_list(f, path.buf, &all, err)))
		goto done;
	pr->review_comments = (int64_t)json_array_size(all);
	json_decref(all);
	all = NULL;
	sl_buf_reset(&path);
	sl_buf_addf(&path, "repos/%s/issues/%lld/comments", f->o.project, (long long)pr->number);
	if ((ret = sl_forge_call_list(f, path.buf, &all, err)))
		goto done;
	if (json_array_size(all))
		last = json_string_value(json_object_get(json_array_get(all,
					json_array_size(all) - 1), "body"));
	pr->close_comment = sl_xstrdup_or_null(last);
done:
	json_decref(all);
	sl_buf_release(&path);
	return ret;
}

static const char *const headers[] = {
	"Accept: application/vnd.github+json", "X-GitHub-Api-Version: 2022-11-28", NULL
};

const sl_forge_ops sl_forge_github = {
	.api = "https://api.github.com",
	.auth = "Authorization: Bearer %s",
	.headers = headers,
	.check = check,
	.branch_path = branch_path,
	.find_path = find_path,
	.pr_path = pr_path,
	.open_request = open_request,
	.open_duplicate = 422,
	.after_open = after_open,
	.update_method = "PATCH",
	.close_key = "state",
	.close_value = "closed",
	.comment_path = comment_path,
	.body_key = "body",
	.pr_state = pr_state,
	.fill_pr = fill_pr,
	.pr_feedback = pr_feedback,
};
