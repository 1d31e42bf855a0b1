/*
 * cmd_scope.c - `sluice scope`: the targets a query finds, with a campaign
 * file or ad hoc, what scoping saw (--stats), and what a prompt would carry
 * about one target (--context).
 *
 *   sluice scope CAMPAIGN.yaml [--repo PATH] [common options]
 *   sluice scope --repo PATH --lang LANG (--query Q | --query-file F)
 *                [--rev REV] [--unit U] [--capture C] [--path GLOB]...
 *                [--lang-override GLOB=LANG]... [common options]
 *   common options: --json --stats --context N|PATH:LINE [--budget TOKENS]
 *                   --threads N --no-prefilter --cache STORE
 *
 * Reads the repository (and the campaign file); writes only the cache
 * store named by --cache (created if missing).  SLUICE_NO_PREFILTER=1 in the
 * environment has the effect of --no-prefilter.  A bad query exits 2 with
 * "QUERYFILE:LINE:COL" (or "--query:LINE:COL") in the message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <jansson.h>

#include "pipeline/cli/cmd.h"
#include "scoping/context.h"
#include "pipeline/run.h"
#include "common/util.h"
#include "common/caps.h"

struct scope_args {
	const char *campaign, *repo, *lang, *query, *query_file, *rev, *unit, *capture;
	const char *context, *cache;
	sl_strvec globs;
	sl_lang_override *ovr;
	size_t novr;
	unsigned threads, budget;
	int json, stats, no_prefilter;
};

static void print_target_json(const sl_target *t)
{
	json_t *o = json_object();
	char *s;

	json_object_set_new(o, "path", json_string(t->path));
	json_object_set_new(o, "start_line", json_integer(t->start_line));
	json_object_set_new(o, "start_col", json_integer(t->start_col));
	json_object_set_new(o, "end_line", json_integer(t->end_line));
	json_object_set_new(o, "end_col", json_integer(t->end_col));
	json_object_set_new(o, "start_byte", json_integer(t->start_byte));
	json_object_set_new(o, "end_byte", json_integer(t->end_byte));
	json_object_set_new(o, "unit", json_string(t->unit));
	json_object_set_new(o, "language", json_string(t->lang));
	json_object_set_new(o, "sites", json_integer((json_int_t)t->nsites));
	json_object_set_new(o, "blob", json_string(t->blob));
	{
		json_t *list = json_array();

		for (size_t i = 0; i < t->nsites; i++) {
			const sl_site *site = &t->sites[i];
			json_t *caps = json_object();

			for (size_t k = 0; k < site->ncaps; k++)
				json_object_set_new(caps, site->caps[k].name,
						    json_string(site->caps[k].text ?
								site->caps[k].text : ""));
			json_array_append_new(list, json_pack("{s:i,s:i,s:i,s:i,s:o}",
				"start_line", (int)site->start_line, "start_col", (int)site->start_col,
				"end_line", (int)site->end_line, "end_col", (int)site->end_col,
				"captures", caps));
		}
		json_object_set_new(o, "site_list", list);
	}
	s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	puts(s);
	free(s);
	json_decref(o);
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
		json_object_set_new(st, "parse_errors", json_integer((json_int_t)s->parse_errors));
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
	printf("parse errors: %zu\n", s->parse_errors);
	printf("literal without match: %zu\n", s->literal_no_match);
	for (size_t i = 0; i < s->literal_no_match_paths.n; i++)
		printf("  %s\n", s->literal_no_match_paths.v[i]);
	printf("threads: %u, time: %lld ms\n", s->threads, (long long)s->ms);
}

static int want_arg(int argc, char **argv, int i)
{
	if (i + 1 >= argc || !argv[i + 1] || !*argv[i + 1])
		return sl_cmd_usage("scope", "option '%s' needs a value", argv[i]);
	return 0;
}

static int is_dir(const char *path)
{
	struct stat sb;

	return path && !stat(path, &sb) && S_ISDIR(sb.st_mode);
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

static int parse_args(struct scope_args *a, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *o = argv[i];
		const char **slot = NULL;

		if (!strcmp(o, "--json")) {
			a->json = 1;
			continue;
		}
		if (!strcmp(o, "--stats")) {
			a->stats = 1;
			continue;
		}
		if (!strcmp(o, "--no-prefilter")) {
			a->no_prefilter = 1;
			continue;
		}
		if (!strcmp(o, "-h") || !strcmp(o, "--help"))
			return sl_cmd_help("scope") ? SL_EXIT_USAGE : -1;
		if (o[0] != '-') {
			if (a->campaign)
				return sl_cmd_usage("scope", "expected at most one campaign file");
			a->campaign = o;
			continue;
		}
		if (!strcmp(o, "--repo"))
			slot = &a->repo;
		else if (!strcmp(o, "--lang"))
			slot = &a->lang;
		else if (!strcmp(o, "--query"))
			slot = &a->query;
		else if (!strcmp(o, "--query-file"))
			slot = &a->query_file;
		else if (!strcmp(o, "--rev"))
			slot = &a->rev;
		else if (!strcmp(o, "--unit"))
			slot = &a->unit;
		else if (!strcmp(o, "--capture"))
			slot = &a->capture;
		else if (!strcmp(o, "--context"))
			slot = &a->context;
		else if (!strcmp(o, "--cache"))
			slot = &a->cache;
		if (slot) {
			if (want_arg(argc, argv, i))
				return SL_EXIT_USAGE;
			*slot = argv[++i];
			continue;
		}
		if (!strcmp(o, "--path") || !strcmp(o, "--threads") || !strcmp(o, "--budget") ||
		    !strcmp(o, "--lang-override")) {
			const char *v;

			if (want_arg(argc, argv, i))
				return SL_EXIT_USAGE;
			v = argv[++i];
			if (!strcmp(o, "--path")) {
				sl_strvec_push(&a->globs, v);
			} else if (!strcmp(o, "--lang-override")) {
				const char *eq = strrchr(v, '=');

				if (!eq || eq == v || !eq[1])
					return sl_cmd_usage("scope", "--lang-override wants GLOB=LANG, got '%s'", v);
				a->ovr = sl_xrealloc(a->ovr, sl_st_mult(a->novr + 1, sizeof(*a->ovr)));
				/* the strings live in argv; the glob is cut at '=' in place */
				argv[i][eq - v] = '\0';
				a->ovr[a->novr].glob = v;
				a->ovr[a->novr++].language = eq + 1;
			} else if (parse_uint(v, !strcmp(o, "--threads") ? &a->threads : &a->budget)) {
				return sl_cmd_usage("scope", "option '%s' wants a number, got '%s'", o, v);
			}
			continue;
		}
		return sl_cmd_usage("scope", "unknown option '%s'", o);
	}
	return 0;
}

/* "LINE:COL" (1-based) of a byte offset of the query. */
static void query_pos(const char *src, size_t len, uint32_t off, char out[32])
{
	unsigned line = 1, col = 1;

	for (size_t i = 0; i < off && i < len; i++) {
		if (src[i] == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	snprintf(out, 32, "%u:%u", line, col);
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

int cmd_scope(int argc, char **argv)
{
	struct scope_args a;
	sl_campaign *c = NULL;
	sl_target_list list = SL_TARGET_LIST_INIT;
	sl_scope_opts so = SL_SCOPE_OPTS_INIT;
	sl_lang_override *campaign_ov = NULL;
	sl_scope_stats stats = SL_SCOPE_STATS_INIT;
	sl_err err = SL_ERR_INIT;
	sl_buf qbuf = SL_BUF_INIT, ctx = SL_BUF_INIT;
	sl_store *cache = NULL;
	git_repository *repo = NULL;
	git_object *obj = NULL;
	git_commit *commit = NULL;
	git_oid base;
	const char *qname = "--query";
	int ret;

	memset(&a, 0, sizeof(a));
	if ((ret = parse_args(&a, argc, argv))) {
		ret = ret < 0 ? SL_EXIT_OK : ret;
		goto done;
	}
	if (a.campaign && (a.lang || a.query || a.query_file || a.rev || a.unit || a.capture ||
			   a.globs.n || a.novr)) {
		ret = sl_cmd_usage("scope", "--lang, --query, --query-file, --rev, --unit, --capture, "
				   "--path and --lang-override are for scoping without a campaign");
		goto done;
	}
	if (!a.campaign && (!a.repo || !a.lang || !a.query == !a.query_file)) {
		ret = sl_cmd_usage("scope", "expected a campaign file, or --repo, --lang and one of "
				   "--query, --query-file");
		goto done;
	}
	if (a.budget && !a.context) {
		ret = sl_cmd_usage("scope", "--budget goes with --context");
		goto done;
	}
	if (is_dir(a.cache) || is_dir(a.query_file)) {
		ret = sl_cmd_usage("scope", "%s '%s' is a directory",
				   is_dir(a.cache) ? "--cache" : "--query-file",
				   is_dir(a.cache) ? a.cache : a.query_file);
		goto done;
	}
	so.threads = a.threads;
	so.no_prefilter = a.no_prefilter || !strcmp(sl_getenv_or("SLUICE_NO_PREFILTER", ""), "1");
	so.stats = &stats;
	if (a.cache && sl_store_open(&cache, a.cache, 1, &err)) {
		ret = sl_cmd_fail(&err);
		goto done;
	}
	so.cache = cache;

	if (a.campaign) {
		if (sl_campaign_load(&c, a.campaign, a.repo, &err)) {
			ret = sl_cmd_fail(&err);
			goto done;
		}
		campaign_ov = sl_campaign_scope_opts(&so, c);
		repo = c->repo;
		base = c->base;
	} else {
		uint32_t off = UINT32_MAX;

		if (a.query_file) {
			qname = a.query_file;
			if (sl_read_file(&qbuf, a.query_file, SL_CAP_QUERY_FILE_BYTES, &err)) {
				ret = sl_cmd_fail(&err);
				goto done;
			}
		} else {
			sl_buf_adds(&qbuf, a.query);
		}
		if (sl_scope_check_query(a.lang, qbuf.buf, a.capture, &off, &err)) {
			if (off != UINT32_MAX) {
				char where[32];

				query_pos(qbuf.buf, qbuf.len, off, where);
				sl_err_prefix(&err, "%s:%s: ", qname, where);
			}
			ret = sl_cmd_fail(&err);
			goto done;
		}
		if (git_repository_open_ext(&repo, a.repo, GIT_REPOSITORY_OPEN_NO_SEARCH, NULL)) {
			sl_err_set(&err, SL_EINPUT, "repository '%s': %s", a.repo,
				   sl_git_error_or("cannot open"));
			ret = sl_cmd_fail(&err);
			goto done;
		}
		if (git_revparse_single(&obj, repo, a.rev ? a.rev : "HEAD") ||
		    git_object_peel((git_object **)&commit, obj, GIT_OBJECT_COMMIT)) {
			sl_err_set(&err, SL_EINPUT, "revision '%s' not found in '%s'",
				   a.rev ? a.rev : "HEAD", a.repo);
			ret = sl_cmd_fail(&err);
			goto done;
		}
		git_oid_cpy(&base, git_commit_id(commit));
		so.language = a.lang;
		so.query = qbuf.buf;
		so.globs = (const char *const *)a.globs.v;
		so.nglobs = a.globs.n;
		so.capture = a.capture;
		so.unit = a.unit;
		so.overrides = a.ovr;
		so.noverrides = a.novr;
	}
	if (sl_scope(&list, repo, &base, &so, &err)) {
		ret = sl_cmd_fail(&err);
		goto done;
	}

	if (a.context) {
		const sl_target *t = pick_target(&list, a.context, &err);

		if (!t || sl_context_build(&ctx, repo, &base, t, a.budget, &err)) {
			ret = sl_cmd_fail(&err);
			goto done;
		}
		fwrite(ctx.buf, 1, ctx.len, stdout);
		ret = SL_EXIT_OK;
		goto done;
	}
	for (size_t i = 0; i < list.n; i++) {
		const sl_target *t = &list.v[i];

		if (a.json)
			print_target_json(t);
		else
			printf("%s:%u:%u: %s (%zu site%s)\n", t->path, t->start_line, t->start_col,
			       t->unit, t->nsites, t->nsites == 1 ? "" : "s");
	}
	if (a.stats)
		print_stats(&stats, &so, a.json);
	ret = SL_EXIT_OK;
done:
	free(campaign_ov);
	sl_target_list_release(&list);
	sl_scope_stats_release(&stats);
	sl_buf_release(&qbuf);
	sl_buf_release(&ctx);
	git_commit_free(commit);
	git_object_free(obj);
	if (!c)
		git_repository_free(repo);
	sl_campaign_free(c);
	sl_store_free(cache);
	sl_strvec_release(&a.globs);
	free(a.ovr);
	return ret;
}
