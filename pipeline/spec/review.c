/*
 * review.c - the campaign file's 'review' section: the branch prefix, how
 * candidates are grouped into changes, the templates and identities of
 * their commits and requests, and the forge they are published to.
 */
#include <string.h>

#include "common/caps.h"
#include "pipeline/spec/spec_internal.h"

/* The {{variables}} a review template may use (review_change.c fills them). */
static const char *const review_vars[] = { "campaign", "paths", "path", "line", "targets",
	"count", "source", "model", "gates", "produced", "branch", "instructions", NULL };

static int check_template(struct loader *ld, const struct node *v, const char *key)
{
	const char *p;

	for (p = v ? strstr(v->text, "{{") : NULL; p; p = strstr(p + 2, "{{")) {
		const char *end = strstr(p + 2, "}}");
		size_t i, n = end ? (size_t)(end - p - 2) : 0;
		char sbuf[80];

		for (i = 0; end && review_vars[i]; i++)
			if (strlen(review_vars[i]) == n && !strncmp(review_vars[i], p + 2, n))
				break;
		if (!end || !review_vars[i])
			return spec_fail(ld, v->start, "unknown variable '%s' in '%s' (known: campaign, "
					 "paths, path, line, targets, count, source, model, gates, "
					 "produced, branch, instructions)",
					 spec_show(sbuf, sizeof(sbuf), p, end ? n + 4 : strlen(p)), key);
	}
	return 0;
}

/* "Name <email>" */
static int check_ident(struct loader *ld, const struct node *v, const char *key)
{
	const char *lt = v ? strchr(v->text, '<') : NULL;

	if (!v)
		return 0;
	if (!lt || lt == v->text || v->text[v->len - 1] != '>' || strchr(lt + 1, '<') ||
	    lt + 2 >= v->text + v->len)
		return spec_fail(ld, v->start, "'%s' must be \"Name <email>\"", key);
	return 0;
}

int spec_load_review(struct loader *ld, const struct node *map, sl_spec *spec)
{
	static const char *const review_keys[] = { "branch_prefix", "group", "batch_files",
		"batch_lines", "commit_message", "title", "body", "author", "committer", "labels",
		"draft", "forge", "api_url", "project", "token_env", "remote", "target_branch",
		"max_open", "max_per_hour", NULL };
	static const char *const groups[] = { "target", "file", "directory", "batch", NULL };
	static const int group_vals[] = { SL_GROUP_TARGET, SL_GROUP_FILE, SL_GROUP_DIRECTORY,
		SL_GROUP_BATCH };
	static const char *const forges[] = { "github", "gitlab", NULL };
	static const int forge_vals[] = { SL_FORGE_GITHUB, SL_FORGE_GITLAB };
	sl_spec_review *r = &spec->review;
	const struct node *v[SL_CAP_SPEC_KEYS];
	long long bf = 10, bl = 500, mo = 10, mh = 10;
	int group = r->group, forge = r->forge;
	const char *why;
	char sbuf[80];

	r->pos.line = (uint32_t)map->start.line + 1;
	r->pos.col = (uint32_t)map->start.column + 1;
	if (spec_want_type(ld, map, N_MAP, "review", NULL) ||
	    spec_map_fields(ld, map, "review", review_keys, v) ||
	    spec_get_str(ld, v[0], "branch_prefix", "review", 1, &spec->branch_prefix) ||
	    spec_get_enum(ld, v[1], "group", "review", groups, group_vals, &group) ||
	    spec_get_int(ld, v[2], "batch_files", "review", 1, 100000, &bf) ||
	    spec_get_int(ld, v[3], "batch_lines", "review", 1, 100000000, &bl) ||
	    spec_get_str(ld, v[4], "commit_message", "review", 1, &r->commit_message) ||
	    spec_get_str(ld, v[5], "title", "review", 1, &r->title) ||
	    spec_get_str(ld, v[6], "body", "review", 1, &r->body) ||
	    spec_get_str(ld, v[7], "author", "review", 1, &r->author) ||
	    spec_get_str(ld, v[8], "committer", "review", 1, &r->committer) ||
	    spec_get_strings(ld, v[9], "labels", "review", &r->labels) ||
	    spec_get_bool(ld, v[10], "draft", "review", &r->draft) ||
	    spec_get_enum(ld, v[11], "forge", "review", forges, forge_vals, &forge) ||
	    spec_get_str(ld, v[12], "api_url", "review", 1, &r->api_url) ||
	    spec_get_str(ld, v[13], "project", "review", 1, &r->project) ||
	    spec_get_str(ld, v[14], "token_env", "review", 1, &r->token_env) ||
	    spec_get_str(ld, v[15], "remote", "review", 1, &r->remote) ||
	    spec_get_str(ld, v[16], "target_branch", "review", 1, &r->target_branch) ||
	    spec_get_int(ld, v[17], "max_open", "review", 1, 100000, &mo) ||
	    spec_get_int(ld, v[18], "max_per_hour", "review", 1, 100000, &mh) ||
	    check_template(ld, v[4], "commit_message") || check_template(ld, v[5], "title") ||
	    check_template(ld, v[6], "body") || check_ident(ld, v[7], "author") ||
	    check_ident(ld, v[8], "committer"))
		return SL_EINPUT;
	r->group = (enum sl_group_kind)group;
	r->forge = (enum sl_forge_kind)forge;
	r->batch_files = (unsigned)bf;
	r->batch_lines = (unsigned)bl;
	r->max_open = (unsigned)mo;
	r->max_per_hour = (unsigned)mh;
	if (r->forge && (spec_need(ld, map, v[13], "project", "review") ||
			 spec_need(ld, map, v[14], "token_env", "review")))
		return SL_EINPUT;
	if (r->api_url && spec_check_http_url(ld, v[12], "api_url", r->api_url))
		return SL_EINPUT;
	if (!r->forge && (v[12] || v[13] || v[14]))
		return spec_fail(ld, (v[12] ? v[12] : v[13] ? v[13] : v[14])->start,
				 "'review' needs 'forge' (github or gitlab) for this key");
	if (spec->branch_prefix && strlen(spec->branch_prefix) > 2 * SL_CAP_SPEC_NAME)
		return spec_fail(ld, v[0]->start, "'branch_prefix' is longer than %d characters",
				 2 * SL_CAP_SPEC_NAME);
	if (spec->branch_prefix && (why = spec_bad_branch_prefix(spec->branch_prefix)))
		return spec_fail(ld, v[0]->start, "invalid branch prefix '%s': %s",
				 spec_show(sbuf, sizeof(sbuf), spec->branch_prefix,
				 strlen(spec->branch_prefix)), why);
	return 0;
}
