/*
 * cmd_common.c - what the commands share: printing errors and usage,
 * parsing an id, and opening the store, a campaign, a repository and the
 * review context.  Reads the store; writes only stdout and stderr.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline/cli/cmd.h"
#include "pipeline/run.h"
#include "common/term.h"
#include "common/util.h"

void sl_cmd_print(FILE *f, const char *text, int json)
{
	sl_buf b = SL_BUF_INIT;

	sl_term_safe(&b, text, strlen(text), json ? SL_TERM_JSON : 0);
	fputs(b.buf, f);
	sl_buf_release(&b);
}

int sl_cmd_fail(const sl_err *err)
{
	fputs("sluice: ", stderr);
	sl_cmd_print(stderr, err->msg[0] ? err->msg : "unknown error", 0);
	fputc('\n', stderr);
	switch (err->code) {
	case SL_EINPUT:
	case SL_ENOTFOUND:
	case SL_EREFUSED:
		return SL_EXIT_USAGE;
	case SL_EBASE:
		return SL_EXIT_NOTHING;
	default:
		return SL_EXIT_INTERNAL;
	}
}

void sl_cmd_help(FILE *f, const sl_command *c)
{
	fputs(c->usage, f);
	if (c->about)
		fprintf(f, "\n%s", c->about);
	for (const sl_option *o = c->options; o->kind; o++)
		if (!(o->flags & SL_OPTF_HIDDEN)) {
			fputs("\noptions:\n", f);
			sl_opts_print_help(f, c->options);
			break;
		}
	if (c->notes)
		fprintf(f, "\n%s", c->notes);
}

int sl_cmd_usage(const sl_command *c, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "sluice %s: ", c->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	sl_cmd_help(stderr, c);
	return SL_EXIT_USAGE;
}

long long sl_cmd_parse_id(const char *s)
{
	char *end;
	long long v;

	/* digits only: strtoll would also take spaces, a sign and overflow */
	if (!s || !*s || strspn(s, "0123456789") != strlen(s))
		return 0;
	errno = 0;
	v = strtoll(s, &end, 10);
	return *end || errno || v <= 0 ? 0 : v;
}

int sl_cmd_open_campaign(sl_store **st, sl_campaign_rec *camp, const char *store_path,
			 const char *name, sl_err *err)
{
	char *path = sl_default_store_path(store_path);
	sl_campaign_rec *all = NULL;
	size_t n = 0;
	int ret;

	memset(camp, 0, sizeof(*camp));
	*st = NULL;
	if (access(path, F_OK)) {
		ret = sl_err_set(err, SL_EINPUT, "no store at '%s' (run a campaign first, or "
				 "pass --store)", path);
		goto done;
	}
	if ((ret = sl_store_open(st, path, 0, err)))
		goto done;
	if (name) {
		ret = sl_store_campaign_get(*st, name, camp, err);
		goto done;
	}
	if ((ret = sl_store_campaign_list(*st, &all, &n, err)))
		goto done;
	if (n != 1) {
		ret = sl_err_set(err, SL_EINPUT, n ? "store '%s' holds %zu campaigns; name one" :
				 "store '%s' holds no campaign%.0zu", path, n);
		goto done;
	}
	*camp = all[0];
	memset(&all[0], 0, sizeof(all[0]));
done:
	if (ret) {
		sl_store_free(*st);
		*st = NULL;
	}
	sl_campaign_list_free(all, n);
	free(path);
	return ret;
}

int sl_cmd_open_repo(git_repository **out, const char *path, sl_err *err)
{
	*out = NULL;
	if (git_repository_open_ext(out, path, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL))
		return sl_err_set(err, SL_EINPUT, "repository '%s': %s", path,
				  sl_git_error_or("cannot open"));
	return SL_OK;
}

int sl_cmd_open_review(cmd_review_ctx *x, const char *store_path, const char *spec_path,
		       const char *name, const char *repo_path, sl_err *err)
{
	sl_spec_opts so = { .repository = repo_path };

	memset(x, 0, sizeof(*x));
	if (spec_path && sl_spec_load_ext(&x->spec, spec_path, &so, err))
		return err->code;
	if (sl_cmd_open_campaign(&x->st, &x->camp, store_path, x->spec ? x->spec->name : name,
				 err))
		return err->code;
	return sl_cmd_open_repo(&x->repo, repo_path ? repo_path : x->camp.repo_path, err);
}

void sl_cmd_review_release(cmd_review_ctx *x)
{
	git_repository_free(x->repo);
	sl_campaign_rec_release(&x->camp);
	sl_store_free(x->st);
	sl_spec_free(x->spec);
	memset(x, 0, sizeof(*x));
}

