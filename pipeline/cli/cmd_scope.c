/*
 * cmd_scope.c - `sluice scope`: the targets a query finds, with a campaign
 * file or ad hoc, what scoping saw (--stats), and what a prompt would carry
 * about one target (--context).
 *
 *   sluice scope CAMPAIGN.yaml [--repo PATH] [options]
 *   sluice scope --repo PATH --lang LANG (--query Q | --query-file F)
 *                [--rev REV] [--unit U] [--capture C] [--path GLOB]...
 *                [--lang-override GLOB=LANG]... [options]
 *
 * (the options and their help: the table at the end).
 * Reads the repository (and the campaign file); writes only the cache
 * store named by --cache (created if missing).  SLUICE_NO_PREFILTER=1 in the
 * environment has the effect of --no-prefilter; SLUICE_SCOPE_NO_WORKTREE=1
 * reads every file from its blob, never a clean file from the work tree
 * (for benchmarks: the results are the same).  A bad query exits 2 with
 * "QUERYFILE:LINE:COL" (or "--query:LINE:COL") in the message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <jansson.h>

#include "pipeline/cli/cmd.h"
#include "scoping/context.h"
#include "scoping/predicate.h"
#include "pipeline/campaign.h"
#include "common/util.h"
#include "common/caps.h"

struct scope_args {
	const char *campaign;       /* the positional argument */
	const char *repo, *lang, *query, *query_file, *rev, *unit, *capture;
	const char *context, *cache;
	sl_strvec globs, overrides;
	sl_lang_override *ovr;      /* overrides, parsed (pointing into them) */
	size_t novr;
	unsigned threads, budget;
	int json, stats, no_prefilter;
};

/* ,"key": */
static void json_key(sl_buf *b, const char *key)
{
	sl_buf_adds(b, ",\"");
	sl_buf_adds(b, key);
	sl_buf_adds(b, "\":");
}

/*
 * One target as a JSON line, written directly (jansson built and freed an
 * object per target: a tenth of the time of scoping git and curl): the
 * keys in this order; a capture named twice keeps its first place and
 * last text, as a JSON object's key would.
 */
/* key (its quotes, colon and any comma before it written out) and the number v */
static void add_uint(sl_buf *b, const char *key, uintmax_t v)
{
	sl_buf_adds(b, key);
	sl_buf_add_uint(b, v);
}

static void print_target_json(sl_buf *b, const sl_target *t)
{
	sl_buf_reset(b);
	sl_buf_adds(b, "{\"path\":");
	sl_buf_add_json_str(b, t->path, strlen(t->path));
	add_uint(b, ",\"start_line\":", t->start_line);
	add_uint(b, ",\"start_col\":", t->start_col);
	add_uint(b, ",\"end_line\":", t->end_line);
	add_uint(b, ",\"end_col\":", t->end_col);
	add_uint(b, ",\"start_byte\":", t->start_byte);
	add_uint(b, ",\"end_byte\":", t->end_byte);
	json_key(b, "unit");
	sl_buf_add_json_str(b, t->unit, strlen(t->unit));
	json_key(b, "language");
	sl_buf_add_json_str(b, t->lang, strlen(t->lang));
	add_uint(b, ",\"sites\":", t->nsites);
	json_key(b, "blob");
	sl_buf_add_json_str(b, t->blob, strlen(t->blob));
	sl_buf_adds(b, ",\"site_list\":[");
	for (size_t i = 0; i < t->nsites; i++) {
		const sl_site *site = &t->sites[i];
		int first = 1;

		add_uint(b, i ? ",{\"start_line\":" : "{\"start_line\":", site->start_line);
		add_uint(b, ",\"start_col\":", site->start_col);
		add_uint(b, ",\"end_line\":", site->end_line);
		add_uint(b, ",\"end_col\":", site->end_col);
		sl_buf_adds(b, ",\"captures\":{");
		for (size_t k = 0; k < site->ncaps; k++) {
			const char *name = site->caps[k].name, *text;
			size_t j, last = k;

			for (j = 0; j < k && strcmp(site->caps[j].name, name); j++)
				;
			if (j < k)
				continue;       /* written at its first place */
			for (j = k + 1; j < site->ncaps; j++)
				if (!strcmp(site->caps[j].name, name))
					last = j;
			text = site->caps[last].text ? site->caps[last].text : "";
			if (!first)
				sl_buf_addch(b, ',');
			first = 0;
			sl_buf_add_json_str(b, name, strlen(name));
			sl_buf_addch(b, ':');
			sl_buf_add_json_str(b, text, strlen(text));
		}
		sl_buf_adds(b, "}}");
	}
	sl_buf_adds(b, "]}\n");
	fwrite(b->buf, 1, b->len, stdout);
}

static void print_stats(const sl_scope_stats *s, const sl_scope_opts *so, int json)
{
	if (json) {
		json_t *o = json_object(), *st = json_object(), *paths = json_array();
		char *txt;

		for (size_t i = 0; i < s->literal_no_match_paths.n; i++)
			json_array_append_new(paths, json_string(s->literal_no_match_paths.v[i]));
		json_object_set_new(st, "files_seen", json_integer((json_int_t)s->files_seen));
		json_object_set_new(st, "skipped_lang", json_integer((json_int_t)s->skipped_lang));
		json_object_set_new(st, "skipped_other", json_integer((json_int_t)s->skipped_other));
		json_object_set_new(st, "cache_hits", json_integer((json_int_t)s->cache_hits));
		json_object_set_new(st, "skipped_prefilter", json_integer((json_int_t)s->skipped_prefilter));
		json_object_set_new(st, "parsed", json_integer((json_int_t)s->parsed));
		json_object_set_new(st, "parsed_in_part", json_integer((json_int_t)s->parsed_in_part));
		json_object_set_new(st, "parsed_again", json_integer((json_int_t)s->parsed_again));
		json_object_set_new(st, "parse_errors", json_integer((json_int_t)s->parse_errors));
		json_object_set_new(st, "bytes_read", json_integer((json_int_t)s->bytes_read));
		json_object_set_new(st, "bytes_parsed", json_integer((json_int_t)s->bytes_parsed));
		json_object_set_new(st, "read_worktree", json_integer((json_int_t)s->read_worktree));
		json_object_set_new(st, "literal_no_match", json_integer((json_int_t)s->literal_no_match));
		json_object_set_new(st, "literal_no_match_paths", paths);
		json_object_set_new(st, "literals", json_integer((json_int_t)s->literals));
		json_object_set_new(st, "prefilter", json_boolean(!so->no_prefilter));
		json_object_set_new(st, "threads", json_integer(s->threads));
		json_object_set_new(st, "ms", json_integer(s->ms));
		json_object_set_new(o, "stats", st);
		txt = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
		puts(txt);
		free(txt);
		json_decref(o);
		return;
	}
	printf("files seen: %zu\n", s->files_seen);
	printf("skipped by glob or language: %zu\n", s->skipped_lang);
	printf("skipped as large or binary: %zu\n", s->skipped_other);
	printf("cache hits: %zu\n", s->cache_hits);
	printf("skipped by prefilter: %zu%s\n", s->skipped_prefilter,
	       so->no_prefilter ? " (prefilter off)" : !s->literals ? " (no literal in the query)" : "");
	printf("parsed: %zu\n", s->parsed);
	printf("parsed in part: %zu\n", s->parsed_in_part);
	printf("parsed again: %zu\n", s->parsed_again);
	printf("parse errors: %zu\n", s->parse_errors);
	printf("bytes parsed: %zu of %zu read (%.1f%%)\n", s->bytes_parsed, s->bytes_read,
	       s->bytes_read ? 100.0 * (double)s->bytes_parsed / (double)s->bytes_read : 0.0);
	printf("read from the work tree: %zu\n", s->read_worktree);
	printf("literal without match: %zu\n", s->literal_no_match);
	for (size_t i = 0; i < s->literal_no_match_paths.n; i++)
		printf("  %s\n", s->literal_no_match_paths.v[i]);
	printf("threads: %u, time: %lld ms\n", s->threads, (long long)s->ms);
}

static int parse_uint(const char *s, unsigned *out)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (!*s || *end || v < 0 || v > 1000000000)
		return -1;
	*out = (unsigned)v;
	return 0;
}

/* The --lang-override values, GLOB=LANG each, cut at '=' in place. */
static int take_overrides(const sl_command *self, struct scope_args *a)
{
	for (size_t i = 0; i < a->overrides.n; i++) {
		char *v = a->overrides.v[i], *eq = strrchr(v, '=');

		if (!eq || eq == v || !eq[1])
			return sl_cmd_usage(self, "--lang-override wants GLOB=LANG, got '%s'", v);
		*eq = '\0';
		a->ovr = sl_xrealloc(a->ovr, sl_st_mult(a->novr + 1, sizeof(*a->ovr)));
		a->ovr[a->novr].glob = v;
		a->ovr[a->novr++].language = eq + 1;
	}
	return 0;
}

/* Which target --context names: an index (1-based, scope order) or PATH:LINE. */
static const sl_target *pick_target(const sl_target_list *list, const char *spec, sl_err *err)
{
	const char *colon = strrchr(spec, ':');
	unsigned n;

	if (!colon && !parse_uint(spec, &n)) {
		if (n >= 1 && n <= list->n)
			return &list->v[n - 1];
		sl_err_set(err, SL_ENOTFOUND, "no target %u (the query found %zu)", n, list->n);
		return NULL;
	}
	if (colon && !parse_uint(colon + 1, &n)) {
		size_t plen = (size_t)(colon - spec);

		for (size_t i = 0; i < list->n; i++) {
			const sl_target *t = &list->v[i];

			if (strlen(t->path) == plen && !memcmp(t->path, spec, plen) &&
			    t->start_line <= n && n <= t->end_line)
				return t;
		}
		sl_err_set(err, SL_ENOTFOUND, "no target at '%s'", spec);
		return NULL;
	}
	sl_err_set(err, SL_EINPUT, "--context wants N or PATH:LINE, got '%s'", spec);
	return NULL;
}

/* Options that do not go together, and directories where a file is wanted. */
static int check_args(const sl_command *self, const struct scope_args *a)
{
	if (a->campaign && (a->lang || a->query || a->query_file || a->rev || a->unit ||
			    a->capture || a->globs.n || a->novr))
		return sl_cmd_usage(self, "--lang, --query, --query-file, --rev, --unit, "
				    "--capture, --path and --lang-override are for scoping without "
				    "a campaign");
	if (!a->campaign && (!a->repo || !a->lang || !a->query == !a->query_file))
		return sl_cmd_usage(self, "expected a campaign file, or --repo, --lang and one "
				    "of --query, --query-file");
	if (a->budget && !a->context)
		return sl_cmd_usage(self, "--budget goes with --context");
	return 0;
}

/* One `sluice scope`: what it opened and what scoping returned; all owned. */
struct scope_run {
	sl_campaign *c;             /* with a campaign file; owns repo then */
	git_repository *repo;
	git_object *obj;
	git_commit *commit;
	git_oid base;
	sl_buf query;               /* ad hoc: the query's text */
	sl_store *cache;
	sl_scope_opts so;
	sl_lang_override *campaign_ov;
	sl_scope_stats stats;
	sl_target_list list;
};

static void scope_run_release(struct scope_run *r)
{
	free(r->campaign_ov);
	sl_target_list_release(&r->list);
	sl_scope_stats_release(&r->stats);
	sl_buf_release(&r->query);
	git_commit_free(r->commit);
	git_object_free(r->obj);
	if (!r->c)
		git_repository_free(r->repo);
	sl_campaign_free(r->c);
	sl_store_free(r->cache);
}

/* The scope options every form shares: threads, prefilter, stats, the cache store. */
static int set_common_opts(struct scope_run *r, const struct scope_args *a, sl_err *err)
{
	r->so.threads = a->threads;
	r->so.no_prefilter = a->no_prefilter ||
		!strcmp(sl_getenv_or("SLUICE_NO_PREFILTER", ""), "1");
	r->so.no_worktree = !strcmp(sl_getenv_or("SLUICE_SCOPE_NO_WORKTREE", ""), "1");
	r->so.stats = &r->stats;
	if (a->cache && sl_store_open(&r->cache, a->cache, 1, err))
		return SL_ERROR;
	r->so.cache = r->cache;
	return SL_OK;
}

/* The campaign file gives the repository, the base and the query. */
static int setup_from_campaign(struct scope_run *r, const struct scope_args *a, sl_err *err)
{
	if (sl_campaign_load(&r->c, a->campaign, a->repo, err))
		return SL_ERROR;
	r->campaign_ov = sl_campaign_scope_opts(&r->so, r->c);
	r->repo = r->c->repo;
	r->base = r->c->base;
	return SL_OK;
}

/* The ad hoc query, read and checked; a bad one is named by QUERYFILE:LINE:COL. */
static int load_query(struct scope_run *r, const struct scope_args *a, sl_err *err)
{
	const char *qname = a->query_file ? a->query_file : "--query";
	uint32_t off = UINT32_MAX;

	if (a->query_file) {
		if (sl_read_file(&r->query, a->query_file, SL_CAP_QUERY_FILE_BYTES, err))
			return SL_ERROR;
	} else {
		sl_buf_adds(&r->query, a->query);
	}
	if (sl_scope_check_query_in(r->cache, a->lang, r->query.buf, a->capture, &off, err)) {
		if (off != UINT32_MAX) {
			char where[32];

			sl_query_pos(r->query.buf, r->query.len, off, where);
			sl_err_prefix(err, "%s:%s: ", qname, where);
		}
		return SL_ERROR;
	}
	return SL_OK;
}

/* Ad hoc: the query, the repository and the revision from the options. */
static int setup_ad_hoc(struct scope_run *r, const struct scope_args *a, sl_err *err)
{
	if (load_query(r, a, err) || sl_cmd_open_repo(&r->repo, a->repo, err))
		return SL_ERROR;
	if (git_revparse_single(&r->obj, r->repo, a->rev ? a->rev : "HEAD") ||
	    git_object_peel((git_object **)&r->commit, r->obj, GIT_OBJECT_COMMIT))
		return sl_err_set(err, SL_EINPUT, "revision '%s' not found in '%s'",
				  a->rev ? a->rev : "HEAD", a->repo);
	git_oid_cpy(&r->base, git_commit_id(r->commit));
	r->so.language = a->lang;
	r->so.query = r->query.buf;
	r->so.globs = (const char *const *)a->globs.v;
	r->so.nglobs = a->globs.n;
	r->so.capture = a->capture;
	r->so.unit = a->unit;
	r->so.overrides = a->ovr;
	r->so.noverrides = a->novr;
	return SL_OK;
}

/* --context: what a prompt would carry about the chosen target. */
static int print_context(struct scope_run *r, const struct scope_args *a, sl_err *err)
{
	const sl_target *t = pick_target(&r->list, a->context, err);
	sl_buf ctx = SL_BUF_INIT;
	int ret = SL_ERROR;

	if (t && !(ret = sl_context_build(&ctx, r->repo, &r->base, t, a->budget, 0, err)))
		fwrite(ctx.buf, 1, ctx.len, stdout);
	sl_buf_release(&ctx);
	return ret;
}

struct printer {
	int json;
	sl_buf line;
};

/* One line (or JSON object) per target, as scoping passes them on (opts->emit). */
static int print_target(const sl_target *t, void *arg)
{
	struct printer *p = arg;

	if (p->json)
		print_target_json(&p->line, t);
	else
		printf("%s:%u:%u: %s (%zu site%s)\n", t->path, t->start_line, t->start_col,
		       t->unit, t->nsites, t->nsites == 1 ? "" : "s");
	return 0;
}

static int scope_main(const sl_command *self, void *opts, const sl_opt_args *args)
{
	struct scope_args *a = opts;
	struct scope_run r = { .query = SL_BUF_INIT, .so = SL_SCOPE_OPTS_INIT,
			       .stats = SL_SCOPE_STATS_INIT, .list = SL_TARGET_LIST_INIT };
	sl_err err = SL_ERR_INIT;
	struct printer printer = { 0, SL_BUF_INIT };
	int ret;

	if (args->n > 1) {
		ret = sl_cmd_usage(self, "expected at most one campaign file");
		goto done;
	}
	a->campaign = args->n ? args->v[0] : NULL;
	if ((ret = take_overrides(self, a)) || (ret = check_args(self, a)))
		goto done;
	if (set_common_opts(&r, a, &err) ||
	    (a->campaign ? setup_from_campaign(&r, a, &err) : setup_ad_hoc(&r, a, &err))) {
		ret = sl_cmd_fail(&err);
		goto done;
	}
	if (!a->context) {
		/* printed as they come: the tree's targets are never all held */
		printer.json = a->json;
		r.so.emit = print_target;
		r.so.emit_arg = &printer;
	}
	if (sl_scope(&r.list, r.repo, &r.base, &r.so, &err) ||
	    (a->context && print_context(&r, a, &err))) {
		ret = sl_cmd_fail(&err);
		goto done;
	}
	if (a->stats && !a->context)
		print_stats(&r.stats, &r.so, a->json);
	ret = SL_EXIT_OK;
done:
	sl_buf_release(&printer.line);
	scope_run_release(&r);
	free(a->ovr);
	return ret;
}

#define A struct scope_args
static const sl_option scope_options[] = {
	SL_OPT_STRING("repo", 0, "PATH", "the repository (with a campaign file: instead of the "
		      "campaign's)", NULL, A, repo),
	SL_OPT_STRING("lang", 0, "LANG", "ad hoc: the language of the query", NULL, A, lang),
	SL_OPT_STRING("query", 0, "Q", "ad hoc: the tree-sitter query", NULL, A, query),
	SL_OPT_STRING_F("query-file", 0, "F", "ad hoc: the file holding the query", NULL, A,
			query_file, SL_OPTF_FILE),
	SL_OPT_STRING("rev", 0, "REV", "ad hoc: the revision to scope", "HEAD", A, rev),
	SL_OPT_STRING("unit", 0, "U", "ad hoc: what a target is: capture, statement, "
		      "function, class, file", NULL, A, unit),
	SL_OPT_STRING("capture", 0, "C", "ad hoc: the capture a target is made of", NULL, A,
		      capture),
	SL_OPT_LIST("path", 0, "GLOB", "ad hoc: scope only the paths GLOB matches "
		    "(repeatable)", A, globs),
	SL_OPT_LIST("lang-override", 0, "GLOB=LANG", "ad hoc: parse the paths GLOB matches as "
		    "LANG (repeatable)", A, overrides),
	SL_OPT_BOOL("json", 0, "one JSON object per line: path, start_line, start_col, "
		    "end_line, end_col, start_byte, end_byte, unit, language, sites, blob",
		    A, json),
	SL_OPT_BOOL("stats", 0, "files seen, skipped by the prefilter, parsed (in part: C and "
		    "C++ top-level items, or statements of functions, that may hold a match; "
		    "again: a syntax error outside a statement made the function or the file "
		    "parse whole), parse errors, cache hits, and files where a literal of the "
		    "query appears without an AST match (e.g. inside C macro bodies)", A, stats),
	SL_OPT_STRING("context", 0, "N|PATH:LINE", "print what a prompt would carry about that "
		      "target", NULL, A, context),
	SL_OPT_UINT("budget", 0, "TOKENS", "with --context: the token budget of the context",
		    NULL, A, budget),
	SL_OPT_UINT("threads", 0, "N", "parse with N threads", "one per core", A, threads),
	SL_OPT_BOOL("no-prefilter", 0, "parse every file whole (the result changes only where a "
		    "syntax error's recovery crosses items or statements)", A, no_prefilter),
	SL_OPT_STRING_F("cache", 0, "STORE", "keep parse results by blob in STORE (a sluice "
			"store)", NULL, A, cache, SL_OPTF_FILE),
	SL_OPT_END(),
};
#undef A

const sl_command cmd_scope = {
	.name = "scope",
	.summary = "list the targets a query finds (a campaign's, or ad hoc)",
	.usage = "usage: sluice scope CAMPAIGN.yaml [--repo PATH] [options]\n"
		"   or: sluice scope --repo PATH --lang LANG (--query Q | --query-file F)\n"
		"                    [--rev REV] [--unit U] [--capture C] [--path GLOB]...\n"
		"                    [--lang-override GLOB=LANG]... [options]\n",
	.about = "Scope the base revision and print one line per target:\n"
		"  PATH:LINE:COL: UNIT (N sites)\n",
	.options = scope_options,
	.notes = "units: capture, statement, function, class, file\n",
	.opts_size = sizeof(struct scope_args),
	.fn = scope_main,
};
