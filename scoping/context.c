/*
 * context.c - the ranked, budgeted context of one target (see context.h).
 *
 * Reads the target's file and, for names not defined there, other blobs of
 * the same language from the commit's tree; parses with tree-sitter.
 * Writes only the caller's buffer.  Sections are collected first (each an
 * owned string with its rank order), then emitted while they fit.
 */
#include <stdlib.h>
#include <string.h>
#include <tree_sitter/api.h>

#include "scoping/context.h"
#include "scoping/lang.h"
#include "common/util.h"
#include "common/caps.h"

struct file {
	char *path;
	git_blob *blob;
	const char *text;
	size_t len;
	TSTree *tree;
};

struct def {
	char *name;
	char *path;
	uint32_t line;
	uint32_t start, end;
	char *text;
};

struct ctx {
	const sl_lang *lang;
	TSParser *parser;
	sl_strvec names;           /* referenced, in order of first reference */
	struct def *defs;
	size_t ndefs, alloc;
};

unsigned sl_context_tokens(size_t len)
{
	return (unsigned)((len + 3) / 4);
}

static int git_fail(sl_err *err, const char *what)
{
	return sl_err_set(err, SL_ERROR, "%s: %s", what, sl_git_error_or("unknown error"));
}

static void file_release(struct file *f)
{
	if (f->tree)
		ts_tree_delete(f->tree);
	git_blob_free(f->blob);
	free(f->path);
	memset(f, 0, sizeof(*f));
}

/* Read and parse one blob; 1 on success, 0 if skipped (binary, too large). */
static int file_load(struct file *f, struct ctx *x, git_repository *repo, const git_oid *oid,
		     const char *path, sl_err *err)
{
	memset(f, 0, sizeof(*f));
	if (git_blob_lookup(&f->blob, repo, oid)) {
		git_fail(err, "cannot read blob");
		return -1;
	}
	f->text = git_blob_rawcontent(f->blob);
	f->len = (size_t)git_blob_rawsize(f->blob);
	f->path = sl_xstrdup(path);
	if (f->len > SL_CAP_SOURCE_BYTES || memchr(f->text, 0, f->len < 8000 ? f->len : 8000))
		return 0;
	f->tree = ts_parser_parse_string(x->parser, NULL, f->text, (uint32_t)f->len);
	return f->tree != NULL;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

static int has_name(const sl_strvec *v, const char *s, size_t len)
{
	for (size_t i = 0; i < v->n; i++)
		if (strlen(v->v[i]) == len && !memcmp(v->v[i], s, len))
			return 1;
	return 0;
}

/*
 * One step of a depth-first walk: into the current node's children when
 * descend is set and it has some, else to the next node after it.  0 when
 * the walk is over (back at the cursor's first node).
 */
static int walk_next(TSTreeCursor *cur, unsigned *depth, int descend)
{
	if (descend && ts_tree_cursor_goto_first_child(cur)) {
		(*depth)++;
		return 1;
	}
	while (!ts_tree_cursor_goto_next_sibling(cur)) {
		if (!*depth || !ts_tree_cursor_goto_parent(cur))
			return 0;
		(*depth)--;
	}
	return 1;
}

/* The identifiers under n, in document order, deduplicated. */
static void collect_names(struct ctx *x, TSNode n, const char *text)
{
	TSTreeCursor cur = ts_tree_cursor_new(n);
	unsigned depth = 0;

	for (;;) {
		TSNode c = ts_tree_cursor_current_node(&cur);

		if (ts_node_is_named(c) && ends_with(ts_node_type(c), "identifier") &&
		    !ts_node_named_child_count(c) && x->names.n < SL_CAP_CONTEXT_NAMES) {
			uint32_t a = ts_node_start_byte(c), b = ts_node_end_byte(c);

			if (b > a && b - a < 200 && !has_name(&x->names, text + a, b - a))
				sl_strvec_push_nodup(&x->names, sl_xstrndup(text + a, b - a));
		}
		/* depth 0 after a step: it left n for a sibling */
		if (!walk_next(&cur, &depth, 1) || !depth)
			break;
	}
	ts_tree_cursor_delete(&cur);
}

/* The name node of a definition node, or a null node. */
static TSNode def_name(TSNode n)
{
	static const char *const fields[] = { "name", "declarator", "left", NULL };

	for (int hop = 0; hop < 8 && !ts_node_is_null(n); hop++) {
		TSNode next = { { 0 }, NULL, NULL };

		if (ends_with(ts_node_type(n), "identifier") && hop)
			return n;
		for (int i = 0; fields[i]; i++) {
			next = ts_node_child_by_field_name(n, fields[i], (uint32_t)strlen(fields[i]));
			if (!ts_node_is_null(next))
				break;
		}
		if (ts_node_is_null(next)) {
			/* a C declarator in parentheses or a pointer: its first named child */
			if (ts_node_named_child_count(n) && hop)
				next = ts_node_named_child(n, 0);
			else
				break;
		}
		n = next;
	}
	if (!ts_node_is_null(n) && ends_with(ts_node_type(n), "identifier"))
		return n;
	return (TSNode){ { 0 }, NULL, NULL };
}

/* The definition node to show for n: python decorators, a C typedef around a struct. */
static TSNode def_outer(const sl_lang *lang, TSNode n)
{
	TSNode p = ts_node_parent(n);

	if (!ts_node_is_null(p) && lang->func_wrapper && !strcmp(ts_node_type(p), lang->func_wrapper))
		return p;
	if (!ts_node_is_null(p) && (!strcmp(ts_node_type(p), "type_definition") ||
				    !strcmp(ts_node_type(p), "type_declaration")))
		return p;
	return n;
}

/* "struct s" in a declaration: a struct, union or enum specifier without a body. */
static int is_reference(TSNode n)
{
	return ends_with(ts_node_type(n), "_specifier") &&
	       ts_node_is_null(ts_node_child_by_field_name(n, "body", 4));
}

/*
 * A function's definition as its signature: the text up to its body, with
 * ";" (a body in braces) or " ..." after it; the whole text when it has no
 * body field.  Owned.
 */
static char *def_text(const sl_lang *lang, const struct file *f, TSNode c, uint32_t a, uint32_t b)
{
	TSNode body;
	uint32_t e;
	sl_buf t = SL_BUF_INIT;

	if (!sl_lang_is_func_type(lang, ts_node_type(c)))
		return sl_xstrndup(f->text + a, b - a);
	body = ts_node_child_by_field_name(c, "body", 4);
	if (ts_node_is_null(body) || (e = ts_node_start_byte(body)) <= a || e > b)
		return sl_xstrndup(f->text + a, b - a);
	sl_buf_add(&t, f->text + a, e - a);
	sl_buf_rtrim(&t);
	sl_buf_adds(&t, f->text[e] == '{' ? ";" : " ...");
	return sl_buf_detach(&t, NULL);
}

/*
 * Index the definitions of f whose name is wanted and not yet found; skip
 * the region [skip_a, skip_b) (the unit itself).  Functions are indexed by
 * their signature (def_text).
 */
static void index_defs(struct ctx *x, const struct file *f, const sl_strvec *want,
		       uint32_t skip_a, uint32_t skip_b)
{
	TSTreeCursor cur = ts_tree_cursor_new(ts_tree_root_node(f->tree));
	unsigned depth = 0;

	for (;;) {
		TSNode c = ts_tree_cursor_current_node(&cur);
		int descend = 1;

		if (ts_node_is_named(c) && sl_lang_is_def_type(x->lang, ts_node_type(c)) &&
		    !is_reference(c)) {
			TSNode nm = def_name(c), outer = def_outer(x->lang, c);
			uint32_t a = ts_node_start_byte(outer), b = ts_node_end_byte(outer);

			if (!ts_node_is_null(nm) && !(a < skip_b && skip_a < b)) {
				uint32_t na = ts_node_start_byte(nm), nb = ts_node_end_byte(nm);

				if (has_name(want, f->text + na, nb - na)) {
					struct def *d;
					int dup = 0;

					for (size_t i = 0; i < x->ndefs && !dup; i++)
						dup = x->defs[i].start == a && !strcmp(x->defs[i].path, f->path);
					if (!dup) {
						SL_ALLOC_GROW(x->defs, x->ndefs + 1, x->alloc);
						d = &x->defs[x->ndefs++];
						d->name = sl_xstrndup(f->text + na, nb - na);
						d->path = sl_xstrdup(f->path);
						d->line = ts_node_start_point(outer).row + 1;
						d->start = a;
						d->end = b;
						d->text = def_text(x->lang, f, c, a, b);
					}
				}
			}
			/* a function's locals are not the file's symbols */
			descend = !sl_lang_is_func_type(x->lang, ts_node_type(c));
		}
		if (!walk_next(&cur, &depth, descend))
			break;
	}
	ts_tree_cursor_delete(&cur);
}

/* The import / include lines of a file, outside functions and classes. */
static void collect_imports(const sl_lang *lang, const struct file *f, sl_buf *out)
{
	TSTreeCursor cur = ts_tree_cursor_new(ts_tree_root_node(f->tree));
	unsigned depth = 0;

	for (;;) {
		TSNode c = ts_tree_cursor_current_node(&cur);
		const char *type = ts_node_type(c);
		int descend = 1;

		if (sl_lang_is_import_type(lang, type)) {
			uint32_t a = ts_node_start_byte(c), b = ts_node_end_byte(c);

			sl_buf_add(out, f->text + a, b - a);
			if (b == a || f->text[b - 1] != '\n')
				sl_buf_adds(out, "\n");
			descend = 0;
		} else if (sl_lang_is_func_type(lang, type) || sl_lang_is_class_type(lang, type)) {
			descend = 0;
		}
		if (!walk_next(&cur, &depth, descend))
			break;
	}
	ts_tree_cursor_delete(&cur);
}

struct blobref {
	char *path;
	git_oid oid;
};

struct walk {
	const sl_lang *lang;
	const char *skip;
	struct blobref *v;
	size_t n, alloc;
};

static int walk_cb(const char *root, const git_tree_entry *te, void *payload)
{
	struct walk *w = payload;
	git_filemode_t mode = git_tree_entry_filemode(te);
	sl_buf p = SL_BUF_INIT;
	const char *l;

	if (git_tree_entry_type(te) != GIT_OBJECT_BLOB ||
	    (mode != GIT_FILEMODE_BLOB && mode != GIT_FILEMODE_BLOB_EXECUTABLE))
		return 0;
	sl_buf_adds(&p, root);
	sl_buf_adds(&p, git_tree_entry_name(te));
	l = sl_lang_for_path(p.buf);
	if (l && !strcmp(l, w->lang->name) && strcmp(p.buf, w->skip)) {
		SL_ALLOC_GROW(w->v, w->n + 1, w->alloc);
		w->v[w->n].path = sl_buf_detach(&p, NULL);
		git_oid_cpy(&w->v[w->n].oid, git_tree_entry_id(te));
		w->n++;
	}
	sl_buf_release(&p);
	return 0;
}

static size_t dir_len(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? (size_t)(s - path) : 0;
}

/* Same directory as the unit (arg: its path) first, then by path. */
static int blobref_cmp(const void *a_, const void *b_, void *arg)
{
	const struct blobref *a = a_, *b = b_;
	const char *rank_dir = arg;
	size_t dl = dir_len(rank_dir);
	int sa = dir_len(a->path) == dl && !strncmp(a->path, rank_dir, dl);
	int sb = dir_len(b->path) == dl && !strncmp(b->path, rank_dir, dl);

	if (sa != sb)
		return sb - sa;
	return strcmp(a->path, b->path);
}

/* One sl_context_build call: what it has read and what it has emitted. */
struct build {
	struct ctx x;
	struct file f;              /* the target's file */
	git_commit *gc;
	git_tree *tree;             /* the commit's */
	git_tree_entry *te;         /* the target's file in it */
	struct walk w;              /* other files of the language */
	sl_strvec missing;          /* referenced names the target's file does not define */
	size_t nlocal;              /* x.defs[0..nlocal) come from the target's file */
	sl_buf *out, sec;
	unsigned budget, used;
};

static void build_release(struct build *b)
{
	for (size_t i = 0; i < b->x.ndefs; i++) {
		free(b->x.defs[i].name);
		free(b->x.defs[i].path);
		free(b->x.defs[i].text);
	}
	free(b->x.defs);
	sl_strvec_release(&b->x.names);
	sl_strvec_release(&b->missing);
	for (size_t i = 0; i < b->w.n; i++)
		free(b->w.v[i].path);
	free(b->w.v);
	file_release(&b->f);
	if (b->x.parser)
		ts_parser_delete(b->x.parser);
	sl_buf_release(&b->sec);
	git_tree_entry_free(b->te);
	git_tree_free(b->tree);
	git_commit_free(b->gc);
}

/* Emit section text if it fits in what is left of the budget. */
static void emit(struct build *b, const char *text, size_t len)
{
	unsigned tok = sl_context_tokens(len);

	if (b->budget && b->used + tok > b->budget)
		return;
	sl_buf_add(b->out, text, len);
	b->used += tok;
}

/* The language's parser, the commit's tree, and the target's file parsed. */
static int load_target(struct build *b, git_repository *repo, const git_oid *commit,
		       const sl_target *t, sl_err *err)
{
	if (!(b->x.lang = sl_lang_find(t->lang)))
		return sl_err_set(err, SL_EINPUT, "unknown language '%s'", t->lang ? t->lang : "");
	b->x.parser = ts_parser_new();
	if (!ts_parser_set_language(b->x.parser, b->x.lang->grammar()))
		return sl_err_set(err, SL_ERROR, "grammar of '%s' not supported by this tree-sitter",
				  t->lang);
	if (git_commit_lookup(&b->gc, repo, commit) || git_commit_tree(&b->tree, b->gc))
		return git_fail(err, "cannot read the commit");
	if (git_tree_entry_bypath(&b->te, b->tree, t->path))
		return sl_err_set(err, SL_ENOTFOUND, "'%s' is not in the commit", t->path);
	if (file_load(&b->f, &b->x, repo, git_tree_entry_id(b->te), t->path, err) != 1) {
		if (!err || !err->code)
			sl_err_set(err, SL_ERROR, "cannot parse '%s'", t->path);
		return SL_ERROR;
	}
	if (t->end_byte > b->f.len || t->start_byte > t->end_byte)
		return sl_err_set(err, SL_EINPUT, "target %s:%u is outside the file", t->path,
				  t->start_line);
	return SL_OK;
}

/* Section 1: the unit, cut at a line boundary if it alone overruns the budget. */
static void emit_unit(struct build *b, const sl_target *t)
{
	sl_buf *sec = &b->sec;
	size_t hdr;

	sl_buf_reset(sec);
	sl_buf_addf(sec, "### unit %s:%u-%u (%s)\n", t->path, t->start_line, t->end_line, t->unit);
	hdr = sec->len;
	sl_buf_add(sec, b->f.text + t->start_byte, t->end_byte - t->start_byte);
	if (sec->len && sec->buf[sec->len - 1] != '\n')
		sl_buf_adds(sec, "\n");
	if (b->budget && sl_context_tokens(sec->len) > b->budget) {
		static const char mark[] = "... [truncated to the token budget]\n";
		size_t keep = (size_t)b->budget * 4;

		/* the header line stays even when it alone is over the budget */
		keep = keep > hdr + sizeof(mark) - 1 ? keep - (sizeof(mark) - 1) : hdr;
		while (keep > hdr && sec->buf[keep - 1] != '\n')
			keep--;
		sl_buf_setlen(sec, keep);
		sl_buf_adds(sec, mark);
	}
	sl_buf_add(b->out, sec->buf, sec->len);
	b->used += sl_context_tokens(sec->len);
}

/* Section 3: the file's imports. */
static void emit_imports(struct build *b, const sl_target *t)
{
	sl_buf imports = SL_BUF_INIT;

	collect_imports(b->x.lang, &b->f, &imports);
	if (imports.len) {
		sl_buf_reset(&b->sec);
		sl_buf_addf(&b->sec, "### imports of %s\n", t->path);
		sl_buf_add(&b->sec, imports.buf, imports.len);
		emit(b, b->sec.buf, b->sec.len);
	}
	sl_buf_release(&imports);
}

/* The smallest node covering the unit. */
static TSNode unit_node(const struct build *b, const sl_target *t)
{
	TSNode root = ts_tree_root_node(b->f.tree);
	TSNode un = ts_node_descendant_for_byte_range(root, t->start_byte,
						      t->end_byte > t->start_byte ? t->end_byte - 1 : t->end_byte);

	while (!ts_node_is_null(ts_node_parent(un)) &&
	       (ts_node_start_byte(un) > t->start_byte || ts_node_end_byte(un) < t->end_byte))
		un = ts_node_parent(un);
	return un;
}

/*
 * Section 2: the function around a unit inside one (a call, a statement):
 * whole, or when it does not fit, its head and the declarations at the top
 * of its body (the locals a statement is most likely to use).
 */
static void emit_enclosing(struct build *b, const sl_target *t)
{
	TSNode fn = unit_node(b, t), body;
	uint32_t a, e;
	sl_buf *sec = &b->sec;

	while (!ts_node_is_null(fn) && !sl_lang_is_func_type(b->x.lang, ts_node_type(fn)))
		fn = ts_node_parent(fn);
	if (ts_node_is_null(fn) || (ts_node_start_byte(fn) == t->start_byte &&
				    ts_node_end_byte(fn) == t->end_byte))
		return;
	a = ts_node_start_byte(fn);
	sl_buf_reset(sec);
	sl_buf_addf(sec, "### enclosing function %s:%u-%u\n", t->path,
		    ts_node_start_point(fn).row + 1, ts_node_end_point(fn).row + 1);
	sl_buf_add(sec, b->f.text + a, ts_node_end_byte(fn) - a);
	sl_buf_adds(sec, "\n");
	if (!b->budget || b->used + sl_context_tokens(sec->len) <= b->budget) {
		emit(b, sec->buf, sec->len);
		return;
	}
	body = ts_node_child_by_field_name(fn, "body", 4);
	if (ts_node_is_null(body) || (e = ts_node_start_byte(body)) <= a)
		return;
	sl_buf_setlen(sec, sec->len - (ts_node_end_byte(fn) - a) - 1);
	sl_buf_add(sec, b->f.text + a, e - a);
	sl_buf_adds(sec, "{\n");
	for (uint32_t i = 0; i < ts_node_named_child_count(body); i++) {
		TSNode st = ts_node_named_child(body, i);
		uint32_t sa = ts_node_start_byte(st);

		if (strcmp(ts_node_type(st), "declaration"))
			break;
		/* from the start of its line: the file's indentation */
		while (sa > e && (b->f.text[sa - 1] == ' ' || b->f.text[sa - 1] == '\t'))
			sa--;
		sl_buf_add(sec, b->f.text + sa, ts_node_end_byte(st) - sa);
		sl_buf_adds(sec, "\n");
	}
	sl_buf_adds(sec, "\t...\n}\n");
	emit(b, sec->buf, sec->len);
}

/* The names the unit references, from the smallest node covering it. */
static void collect_unit_names(struct build *b, const sl_target *t)
{
	TSNode un = unit_node(b, t);

	if (ts_node_start_byte(un) == t->start_byte && ts_node_end_byte(un) == t->end_byte) {
		collect_names(&b->x, un, b->f.text);
		return;
	}
	/* the unit spans several nodes (the whole file): take all children inside */
	for (uint32_t i = 0; i < ts_node_child_count(un); i++) {
		TSNode ch = ts_node_child(un, i);

		if (ts_node_start_byte(ch) >= t->start_byte && ts_node_end_byte(ch) <= t->end_byte)
			collect_names(&b->x, ch, b->f.text);
	}
}

/*
 * The names the function holding the unit (or the unit, a function) declares:
 * its parameters and locals.  The type of each the unit names is referenced
 * too: its names join the unit's (x.names).
 */
static void collect_inner_names(struct build *b, const sl_target *t, sl_strvec *out)
{
	TSNode fn = unit_node(b, t);
	TSTreeCursor cur;
	unsigned depth = 0;

	while (!ts_node_is_null(fn) && !sl_lang_is_func_type(b->x.lang, ts_node_type(fn)))
		fn = ts_node_parent(fn);
	if (ts_node_is_null(fn))
		return;
	cur = ts_tree_cursor_new(fn);
	while (walk_next(&cur, &depth, 1) && depth) {
		TSNode c = ts_tree_cursor_current_node(&cur), nm;
		const char *type = ts_node_type(c);

		if (!ts_node_is_named(c) || !(sl_lang_is_def_type(b->x.lang, type) ||
					      ends_with(type, "parameter_declaration") ||
					      ends_with(type, "parameter")))
			continue;
		nm = def_name(c);
		if (!ts_node_is_null(nm)) {
			uint32_t a = ts_node_start_byte(nm), e = ts_node_end_byte(nm);
			TSNode ty = ts_node_child_by_field_name(c, "type", 4);

			if (!has_name(out, b->f.text + a, e - a))
				sl_strvec_push_nodup(out, sl_xstrndup(b->f.text + a, e - a));
			if (!ts_node_is_null(ty) && has_name(&b->x.names, b->f.text + a, e - a))
				collect_names(&b->x, ty, b->f.text);
		}
	}
	ts_tree_cursor_delete(&cur);
}

/* Index the definitions of the referenced names in the target's file; list the rest. */
static void find_local_defs(struct build *b, const sl_target *t)
{
	sl_strvec inner = SL_STRVEC_INIT;

	collect_inner_names(b, t, &inner);
	index_defs(&b->x, &b->f, &b->x.names, t->start_byte, t->end_byte);
	b->nlocal = b->x.ndefs;
	for (size_t i = 0; i < b->x.names.n; i++) {
		/* a parameter or a local: not to be looked for in other files */
		int found = has_name(&inner, b->x.names.v[i], strlen(b->x.names.v[i]));

		for (size_t j = 0; j < b->x.ndefs && !found; j++)
			found = !strcmp(b->x.defs[j].name, b->x.names.v[i]);
		if (!found)
			sl_strvec_push(&b->missing, b->x.names.v[i]);
	}
	sl_strvec_release(&inner);
}

/* 1 if the blob's bytes contain one of the missing names (before parsing it). */
static int mentions_missing(struct build *b, git_repository *repo, const git_oid *oid,
			    sl_err *err)
{
	git_blob *blob = NULL;
	int any = 0;

	if (git_blob_lookup(&blob, repo, oid))
		return git_fail(err, "cannot read blob");
	for (size_t k = 0; k < b->missing.n && !any; k++)
		any = memmem(git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob),
			     b->missing.v[k], strlen(b->missing.v[k])) != NULL;
	git_blob_free(blob);
	return any;
}

/*
 * Index the missing names' definitions in the commit's other files of the
 * language: the unit's directory first, then by path; at most
 * SL_CONTEXT_MAX_FILES parsed, only those that mention a missing name.
 */
static int find_other_defs(struct build *b, git_repository *repo, const sl_target *t,
			   sl_err *err)
{
	size_t parsed = 0;

	if (!b->missing.n)
		return SL_OK;
	b->w.lang = b->x.lang;
	b->w.skip = t->path;
	if (git_tree_walk(b->tree, GIT_TREEWALK_PRE, walk_cb, &b->w))
		return git_fail(err, "cannot walk the tree of the commit");
	if (b->w.n > 1)
		qsort_r(b->w.v, b->w.n, sizeof(*b->w.v), blobref_cmp, (void *)t->path);
	for (size_t i = 0; i < b->w.n && parsed < SL_CONTEXT_MAX_FILES; i++) {
		struct file of;
		int rc = mentions_missing(b, repo, &b->w.v[i].oid, err);

		if (rc < 0)
			return SL_ERROR;
		if (!rc)
			continue;
		if ((rc = file_load(&of, &b->x, repo, &b->w.v[i].oid, b->w.v[i].path, err)) < 0)
			return SL_ERROR;
		parsed++;
		if (rc == 1)
			index_defs(&b->x, &of, &b->missing, 0, 0);
		file_release(&of);
	}
	return SL_OK;
}

/* 1 if a definition before defs[j] has the same name and text (a prototype and its body). */
static int shown_before(const struct build *b, size_t j)
{
	for (size_t k = 0; k < j; k++)
		if (!strcmp(b->x.defs[k].name, b->x.defs[j].name) &&
		    !strcmp(b->x.defs[k].text, b->x.defs[j].text))
			return 1;
	return 0;
}

/* Section 4: definitions in order of first reference, this file's before the others'. */
static void emit_defs(struct build *b)
{
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < b->x.names.n; i++)
			for (size_t j = pass ? b->nlocal : 0; j < (pass ? b->x.ndefs : b->nlocal); j++) {
				const struct def *d = &b->x.defs[j];

				if (strcmp(d->name, b->x.names.v[i]) || shown_before(b, j))
					continue;
				sl_buf_reset(&b->sec);
				sl_buf_addf(&b->sec, "### definition of %s (%s:%u)\n", d->name,
					    d->path, d->line);
				sl_buf_adds(&b->sec, d->text);
				if (b->sec.buf[b->sec.len - 1] != '\n')
					sl_buf_adds(&b->sec, "\n");
				emit(b, b->sec.buf, b->sec.len);
			}
}

int sl_context_build(sl_buf *out, git_repository *repo, const git_oid *commit,
		     const sl_target *t, unsigned budget_tokens, unsigned flags, sl_err *err)
{
	struct build b;
	int ret;

	memset(&b, 0, sizeof(b));
	b.sec = (sl_buf)SL_BUF_INIT;
	b.out = out;
	b.budget = budget_tokens;
	if ((ret = load_target(&b, repo, commit, t, err)))
		goto done;
	if (!(flags & SL_CONTEXT_NO_UNIT))
		emit_unit(&b, t);
	emit_enclosing(&b, t);
	emit_imports(&b, t);
	collect_unit_names(&b, t);
	find_local_defs(&b, t);
	if ((ret = find_other_defs(&b, repo, t, err)))
		goto done;
	emit_defs(&b);
done:
	build_release(&b);
	return ret;
}
