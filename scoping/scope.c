/*
 * scope.c - find a campaign's targets in one commit.
 *
 * Reads: the commit's tree and blobs through libgit2 (never a work tree).
 * Writes: nothing but the caller's sl_target_list.
 *
 * The query is compiled once (tree-sitter plus our predicate evaluator),
 * then the tree is walked to list the blobs of the language that match the
 * globs, and each blob is parsed with one reused parser and queried with one
 * reused cursor.  Matches that pass the predicates become sites; a file's
 * sites are sorted, duplicates (two patterns matching the same range) are
 * dropped, and sites sharing a unit region are grouped into one target.
 * Each syntax tree is freed before the next file is parsed, so memory grows
 * only with the result.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tree_sitter/api.h>

#include "lang.h"
#include "predicate.h"
#include "scope.h"
#include "util.h"

#define MAX_BLOB_SIZE (8u << 20)
#define BINARY_SNIFF 8000

struct compiled {
	const sl_lang *lang;
	TSQuery *q;
	sl_preds *preds;
	uint32_t site_cap;
};

/* A file to scope, found by the tree walk. */
struct entry {
	char *path;
	git_oid oid;
};

struct walk {
	const sl_lang *lang;
	const sl_scope_opts *opts;
	struct entry *v;
	size_t n, alloc;
};

/* A site before grouping, with the region of its unit. */
struct raw {
	const char *unit;      /* "function", or "capture" also when no function encloses the site */
	uint32_t ustart, uend;
	TSPoint upt_start, upt_end;
	sl_site site;
	size_t seq;
};

static int git_fail(sl_err *err, const char *what)
{
	const git_error *e = git_error_last();

	return sl_err_set(err, SL_ERROR, "%s: %s", what, e && e->message ? e->message : "unknown error");
}

/* The token of the query text at offset, for error messages. */
static void query_token(const char *src, size_t len, uint32_t off, char *out, size_t outsz)
{
	size_t n = 0;

	if (off < len && src[off] == '"') {
		for (n = 1; off + n < len && src[off + n] != '"' && src[off + n] != '\n'; n++)
			;
		if (off + n < len && src[off + n] == '"')
			n++;
	} else {
		while (off + n < len && !strchr(" \t\r\n()[]\"@:#!?", src[off + n]))
			n++;
	}
	if (n >= outsz)
		n = outsz - 1;
	memcpy(out, src + (off < len ? off : len), n);
	out[n] = '\0';
}

static int query_error(const char *src, size_t len, uint32_t off, TSQueryError type,
		       const char *language, sl_err *err)
{
	char where[32], tok[80];

	sl_query_pos(src, len, off, where);
	query_token(src, len, off, tok, sizeof(tok));
	switch (type) {
	case TSQueryErrorNodeType:
		return sl_err_set(err, SL_EINPUT, "invalid query at %s: unknown node type '%s' in language '%s'",
				  where, tok, language);
	case TSQueryErrorField:
		return sl_err_set(err, SL_EINPUT, "invalid query at %s: unknown field '%s' in language '%s'",
				  where, tok, language);
	case TSQueryErrorCapture:
		return sl_err_set(err, SL_EINPUT, "invalid query at %s: undefined capture '@%s'",
				  where, tok);
	case TSQueryErrorStructure:
		return sl_err_set(err, SL_EINPUT, "invalid query at %s: impossible pattern structure",
				  where);
	case TSQueryErrorLanguage:
		return sl_err_set(err, SL_EINPUT, "invalid query: grammar of '%s' not supported by this tree-sitter",
				  language);
	default:
		if (off >= len)
			return sl_err_set(err, SL_EINPUT,
					  "invalid query at %s: syntax error at end of query (unbalanced parentheses?)",
					  where);
		{
			/* show the rest of the line, not a token: syntax errors are often punctuation */
			size_t n = 0;

			while (off + n < len && n < 30 && src[off + n] != '\n')
				n++;
			return sl_err_set(err, SL_EINPUT, "invalid query at %s: syntax error near '%.*s'",
					  where, (int)n, src + off);
		}
	}
}

static void compiled_release(struct compiled *c)
{
	sl_preds_free(c->preds);
	c->preds = NULL;
	if (c->q)
		ts_query_delete(c->q);
	c->q = NULL;
}

static int compile_query(struct compiled *c, const char *language, const char *query,
			 const char *capture, uint32_t *offset_out, sl_err *err)
{
	uint32_t off = 0, ncaps;
	TSQueryError type = TSQueryErrorNone;
	size_t len;

	memset(c, 0, sizeof(*c));
	if (offset_out)
		*offset_out = UINT32_MAX;
	if (!language || !(c->lang = sl_lang_find(language)))
		return sl_err_set(err, SL_EINPUT, "unknown language '%s' (known: %s)",
				  language ? language : "", sl_lang_names());
	if (!query || !*query)
		return sl_err_set(err, SL_EINPUT, "empty query");
	len = strlen(query);
	if (len > UINT32_MAX / 2)
		return sl_err_set(err, SL_EINPUT, "query too long");

	c->q = ts_query_new(c->lang->grammar(), query, (uint32_t)len, &off, &type);
	if (!c->q) {
		if (offset_out)
			*offset_out = off;
		return query_error(query, len, off, type, language, err);
	}
	if (sl_preds_compile(&c->preds, c->q, query, len, offset_out, err))
		goto fail;

	ncaps = ts_query_capture_count(c->q);
	if (!ncaps) {
		sl_err_set(err, SL_EINPUT, "invalid query: it defines no capture (mark the site with @name)");
		goto fail;
	}
	c->site_cap = 0;
	if (capture) {
		size_t want = strlen(capture += capture[0] == '@');
		uint32_t i;

		for (i = 0; i < ncaps; i++) {
			uint32_t nl;
			const char *name = ts_query_capture_name_for_id(c->q, i, &nl);

			if (nl == want && !memcmp(name, capture, nl))
				break;
		}
		if (i == ncaps) {
			sl_buf names = SL_BUF_INIT;

			for (uint32_t j = 0; j < ncaps; j++) {
				uint32_t nl;
				const char *name = ts_query_capture_name_for_id(c->q, j, &nl);

				sl_buf_addf(&names, "%s@%.*s", j ? ", " : "", (int)nl, name);
			}
			sl_err_set(err, SL_EINPUT, "capture '@%s' is not defined by the query (it defines %s)",
				   capture, names.buf);
			sl_buf_release(&names);
			goto fail;
		}
		c->site_cap = i;
	}
	return 0;
fail:
	compiled_release(c);
	return SL_EINPUT;
}

int sl_scope_check_query(const char *language, const char *query, const char *capture,
			 uint32_t *offset_out, sl_err *err)
{
	struct compiled c;
	int ret = compile_query(&c, language, query, capture, offset_out, err);

	compiled_release(&c);
	return ret;
}

static int path_selected(const sl_scope_opts *opts, const sl_lang *lang, const char *path)
{
	const char *l = sl_lang_for_path(path);

	if (!l || strcmp(l, lang->name))
		return 0;
	if (!opts->nglobs)
		return 1;
	for (size_t i = 0; i < opts->nglobs; i++)
		if (opts->globs[i] && sl_glob_match(opts->globs[i], path))
			return 1;
	return 0;
}

static int walk_cb(const char *root, const git_tree_entry *te, void *payload)
{
	struct walk *w = payload;
	git_filemode_t mode = git_tree_entry_filemode(te);
	sl_buf path = SL_BUF_INIT;

	/* symlinks and submodules are not source files of the commit */
	if (git_tree_entry_type(te) != GIT_OBJECT_BLOB ||
	    (mode != GIT_FILEMODE_BLOB && mode != GIT_FILEMODE_BLOB_EXECUTABLE))
		return 0;
	sl_buf_adds(&path, root);
	sl_buf_adds(&path, git_tree_entry_name(te));
	if (path_selected(w->opts, w->lang, path.buf)) {
		SL_ALLOC_GROW(w->v, w->n + 1, w->alloc);
		w->v[w->n].path = sl_buf_detach(&path, NULL);
		git_oid_cpy(&w->v[w->n].oid, git_tree_entry_id(te));
		w->n++;
	}
	sl_buf_release(&path);
	return 0;
}

static char *dup_range(const char *text, uint32_t start, uint32_t end)
{
	return sl_xstrndup(text + start, end - start);
}

static void site_release(sl_site *s)
{
	for (size_t i = 0; i < s->ncaps; i++) {
		free(s->caps[i].name);
		free(s->caps[i].text);
	}
	free(s->caps);
	s->caps = NULL;
	s->ncaps = 0;
}

static void target_release(sl_target *t)
{
	free(t->path);
	free(t->unit_text);
	for (size_t i = 0; i < t->nsites; i++)
		site_release(&t->sites[i]);
	free(t->sites);
	memset(t, 0, sizeof(*t));
}

void sl_target_list_release(sl_target_list *list)
{
	if (!list)
		return;
	for (size_t i = 0; i < list->n; i++)
		target_release(&list->v[i]);
	free(list->v);
	list->v = NULL;
	list->n = list->alloc = 0;
}

/* The function enclosing (or being) the site in *out: 1 if there is one. */
static int unit_node(const sl_lang *lang, TSNode site, TSNode *out)
{
	for (TSNode n = site; !ts_node_is_null(n); n = ts_node_parent(n)) {
		if (!sl_lang_is_func_type(lang, ts_node_type(n)))
			continue;
		if (lang->func_wrapper) {
			TSNode p = ts_node_parent(n);

			if (!ts_node_is_null(p) && !strcmp(ts_node_type(p), lang->func_wrapper)) {
				*out = p;
				return 1;
			}
		}
		*out = n;
		return 1;
	}
	return 0;
}

static int raw_cmp(const void *a_, const void *b_)
{
	const struct raw *a = a_, *b = b_;

	if (a->ustart != b->ustart)
		return a->ustart < b->ustart ? -1 : 1;
	if (a->uend != b->uend)
		return a->uend > b->uend ? -1 : 1;     /* the outer region first */
	if (a->site.start_byte != b->site.start_byte)
		return a->site.start_byte < b->site.start_byte ? -1 : 1;
	if (a->site.end_byte != b->site.end_byte)
		return a->site.end_byte > b->site.end_byte ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int target_cmp(const void *a_, const void *b_)
{
	const sl_target *a = a_, *b = b_;
	int c = strcmp(a->path, b->path);

	if (c)
		return c;
	if (a->start_byte != b->start_byte)
		return a->start_byte < b->start_byte ? -1 : 1;
	if (a->end_byte != b->end_byte)
		return a->end_byte > b->end_byte ? -1 : 1;
	return 0;
}

static void set_pos(uint32_t *line, uint32_t *col, TSPoint p)
{
	*line = p.row + 1;
	*col = p.column + 1;
}

/* Record the match's site (if it has one) in *raws. */
static void add_raw(struct raw **raws, size_t *nraws, size_t *alloc, const struct compiled *c,
		    int want_func, const TSQueryMatch *m, const char *text)
{
	struct raw r;
	TSNode site, un;
	int found = 0;

	for (uint16_t i = 0; i < m->capture_count; i++)
		if (m->captures[i].index == c->site_cap) {
			site = m->captures[i].node;
			found = 1;
			break;
		}
	if (!found)
		return;

	memset(&r, 0, sizeof(r));
	r.site.start_byte = ts_node_start_byte(site);
	r.site.end_byte = ts_node_end_byte(site);
	set_pos(&r.site.start_line, &r.site.start_col, ts_node_start_point(site));
	set_pos(&r.site.end_line, &r.site.end_col, ts_node_end_point(site));
	r.site.ncaps = m->capture_count;
	r.site.caps = sl_xcalloc(m->capture_count ? m->capture_count : 1, sizeof(sl_capture));
	for (uint16_t i = 0; i < m->capture_count; i++) {
		TSNode n = m->captures[i].node;
		sl_capture *cap = &r.site.caps[i];
		uint32_t nl;
		const char *name = ts_query_capture_name_for_id(c->q, m->captures[i].index, &nl);

		cap->name = sl_xstrndup(name, nl);
		cap->start_byte = ts_node_start_byte(n);
		cap->end_byte = ts_node_end_byte(n);
		cap->text = dup_range(text, cap->start_byte, cap->end_byte);
	}

	un = site;
	r.unit = "capture";
	if (want_func && unit_node(c->lang, site, &un))
		r.unit = "function";
	r.ustart = ts_node_start_byte(un);
	r.uend = ts_node_end_byte(un);
	r.upt_start = ts_node_start_point(un);
	r.upt_end = ts_node_end_point(un);
	r.seq = *nraws;

	SL_ALLOC_GROW(*raws, *nraws + 1, *alloc);
	(*raws)[(*nraws)++] = r;
}

/* Turn one file's raw sites into targets appended to out; consumes the sites. */
static void group_targets(sl_target_list *out, struct raw *raws, size_t nraws,
			  const struct entry *e, const struct compiled *c, const char *text)
{
	sl_target *t = NULL;

	if (nraws > 1)
		qsort(raws, nraws, sizeof(*raws), raw_cmp);
	for (size_t i = 0; i < nraws; i++) {
		struct raw *r = &raws[i];

		if (!t || t->start_byte != r->ustart || t->end_byte != r->uend) {
			SL_ALLOC_GROW(out->v, out->n + 1, out->alloc);
			t = &out->v[out->n++];
			memset(t, 0, sizeof(*t));
			t->path = sl_xstrdup(e->path);
			t->lang = c->lang->name;
			git_oid_tostr(t->blob, sizeof(t->blob), &e->oid);
			t->unit = r->unit;
			t->start_byte = r->ustart;
			t->end_byte = r->uend;
			set_pos(&t->start_line, &t->start_col, r->upt_start);
			set_pos(&t->end_line, &t->end_col, r->upt_end);
			t->unit_text = dup_range(text, r->ustart, r->uend);
		} else {
			sl_site *prev = &t->sites[t->nsites - 1];

			if (prev->start_byte == r->site.start_byte &&
			    prev->end_byte == r->site.end_byte) {
				site_release(&r->site);
				continue;
			}
		}
		t->sites = sl_xrealloc(t->sites, sl_st_mult(t->nsites + 1, sizeof(*t->sites)));
		t->sites[t->nsites++] = r->site;
		memset(&r->site, 0, sizeof(r->site));
	}
}

int sl_scope(sl_target_list *out, git_repository *repo, const git_oid *commit,
	     const sl_scope_opts *opts, sl_err *err)
{
	int ret = SL_ERROR, rc;
	size_t base = out->n, nraws = 0, raws_alloc = 0;
	struct compiled c;
	struct walk w;
	struct raw *raws = NULL;
	int want_func;
	git_commit *gc = NULL;
	git_tree *tree = NULL;
	git_odb *odb = NULL;
	git_blob *blob = NULL;
	TSParser *parser = NULL;
	TSQueryCursor *cursor = NULL;
	TSTree *ts_tree = NULL;
	char hex[GIT_OID_HEXSZ + 1];

	memset(&c, 0, sizeof(c));
	memset(&w, 0, sizeof(w));
	if (!opts || opts->version != SL_SCOPE_OPTS_VERSION) {
		ret = sl_err_set(err, SL_EINPUT, "scope options of an unsupported version");
		goto done;
	}
	if (opts->unit && strcmp(opts->unit, "capture") && strcmp(opts->unit, "function")) {
		ret = sl_err_set(err, SL_EINPUT, "unknown unit '%s' (known: capture, function)",
				 opts->unit);
		goto done;
	}
	want_func = opts->unit && !strcmp(opts->unit, "function");
	if ((ret = compile_query(&c, opts->language, opts->query, opts->capture, NULL, err)))
		goto done;
	ret = SL_ERROR;

	git_oid_tostr(hex, sizeof(hex), commit);
	if ((rc = git_commit_lookup(&gc, repo, commit))) {
		if (rc == GIT_ENOTFOUND)
			ret = sl_err_set(err, SL_ENOTFOUND, "commit '%s' not found", hex);
		else
			git_fail(err, "cannot read commit");
		goto done;
	}
	if (git_commit_tree(&tree, gc)) {
		git_fail(err, "cannot read the tree of the commit");
		goto done;
	}
	if (git_repository_odb(&odb, repo)) {
		git_fail(err, "cannot open the object database");
		goto done;
	}
	w.lang = c.lang;
	w.opts = opts;
	if (git_tree_walk(tree, GIT_TREEWALK_PRE, walk_cb, &w)) {
		git_fail(err, "cannot walk the tree of the commit");
		goto done;
	}

	parser = ts_parser_new();
	cursor = ts_query_cursor_new();
	if (!ts_parser_set_language(parser, c.lang->grammar())) {
		sl_err_set(err, SL_ERROR, "grammar of '%s' not supported by this tree-sitter", c.lang->name);
		goto done;
	}

	for (size_t i = 0; i < w.n; i++) {
		const struct entry *e = &w.v[i];
		size_t size;
		git_object_t type;
		const char *text;
		TSQueryMatch m;

		if (git_odb_read_header(&size, &type, odb, &e->oid)) {
			git_fail(err, "cannot read blob header");
			sl_err_prefix(err, "%s: ", e->path);
			goto done;
		}
		if (size > MAX_BLOB_SIZE)
			continue;
		if (git_blob_lookup(&blob, repo, &e->oid)) {
			git_fail(err, "cannot read blob");
			sl_err_prefix(err, "%s: ", e->path);
			goto done;
		}
		text = git_blob_rawcontent(blob);
		size = (size_t)git_blob_rawsize(blob);
		if (size > MAX_BLOB_SIZE || memchr(text, 0, size < BINARY_SNIFF ? size : BINARY_SNIFF)) {
			git_blob_free(blob);
			blob = NULL;
			continue;
		}
		ts_tree = ts_parser_parse_string(parser, NULL, text, (uint32_t)size);
		if (!ts_tree) {
			sl_err_set(err, SL_ERROR, "%s: tree-sitter could not parse the file", e->path);
			goto done;
		}
		ts_query_cursor_exec(cursor, c.q, ts_tree_root_node(ts_tree));
		nraws = 0;
		while (ts_query_cursor_next_match(cursor, &m))
			if (sl_preds_eval(c.preds, &m, text, size))
				add_raw(&raws, &nraws, &raws_alloc, &c, want_func, &m, text);
		group_targets(out, raws, nraws, e, &c, text);
		nraws = 0;
		ts_tree_delete(ts_tree);
		ts_tree = NULL;
		git_blob_free(blob);
		blob = NULL;
	}
	if (out->n > base)
		qsort(out->v + base, out->n - base, sizeof(*out->v), target_cmp);
	ret = 0;
done:
	if (ret) {
		for (size_t i = base; i < out->n; i++)
			target_release(&out->v[i]);
		out->n = base;
	}
	for (size_t i = 0; i < nraws; i++)
		site_release(&raws[i].site);
	free(raws);
	for (size_t i = 0; i < w.n; i++)
		free(w.v[i].path);
	free(w.v);
	if (ts_tree)
		ts_tree_delete(ts_tree);
	if (cursor)
		ts_query_cursor_delete(cursor);
	if (parser)
		ts_parser_delete(parser);
	git_blob_free(blob);
	git_odb_free(odb);
	git_tree_free(tree);
	git_commit_free(gc);
	compiled_release(&c);
	return ret;
}
