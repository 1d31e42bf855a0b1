/*
 * syntax.c - count tree-sitter ERROR and MISSING nodes before and after a
 * change (see syntax.h).
 *
 * The walk only descends into nodes that ts_node_has_error() flags, so a
 * clean file costs one parse and a look at the root.  Each parse has a time
 * limit: candidate text is hostile, and a text that cannot be parsed in time
 * fails the check rather than stall the run.
 */
#include <string.h>
#include <tree_sitter/api.h>

#include "scoping/lang.h"
#include "scoping/scope.h"
#include "validators/syntax.h"
#include "common/util.h"
#include "common/caps.h"

#define PARSE_TIMEOUT_US (10 * 1000 * 1000)

typedef struct problems {
	size_t n;
	sl_buf list;                /* report lines, at most SL_CAP_SYNTAX_LISTED */
	size_t listed;
} problems;

static int more(problems *p)
{
	p->n++;
	if (p->listed >= SL_CAP_SYNTAX_LISTED)
		return 0;
	p->listed++;
	return 1;
}

static void add_problem(problems *p, const char *prefix, TSNode node, const char *text,
			size_t len)
{
	TSPoint pt = ts_node_start_point(node);

	if (!more(p))
		return;
	sl_buf_addf(&p->list, "%s%u:%u: ", prefix, pt.row + 1, pt.column + 1);
	if (ts_node_is_missing(node)) {
		sl_buf_addf(&p->list, "missing '%s'\n", ts_node_type(node));
	} else {
		uint32_t s = ts_node_start_byte(node), e = ts_node_end_byte(node), k;

		if (s > len)
			s = (uint32_t)len;
		if (e > len)
			e = (uint32_t)len;
		for (k = s; k < e && k - s < 40 && text[k] != '\n'; k++)
			;
		sl_buf_addf(&p->list, "syntax error near '%.*s%s'\n", (int)(k - s), text + s,
			    k < e ? "..." : "");
	}
}

static void walk(problems *p, const char *prefix, TSNode node, const char *text, size_t len,
		 int depth)
{
	uint32_t n;

	if (ts_node_is_missing(node)) {
		add_problem(p, prefix, node, text, len);
		return;
	}
	if (!strcmp(ts_node_type(node), "ERROR")) {
		add_problem(p, prefix, node, text, len);
		return;
	}
	if (!ts_node_has_error(node) || depth > 10000)
		return;
	n = ts_node_child_count(node);
	for (uint32_t i = 0; i < n; i++)
		walk(p, prefix, ts_node_child(node, i), text, len, depth + 1);
}

/* The node is the first thing on its line. */
static int starts_line(TSNode node, const char *text, size_t len)
{
	uint32_t s = ts_node_start_byte(node);

	if (s > len)
		return 0;
	while (s > 0 && (text[s - 1] == ' ' || text[s - 1] == '\t' || text[s - 1] == '\f'))
		s--;
	return s == 0 || text[s - 1] == '\n' || text[s - 1] == '\r';
}

/*
 * Python's indentation rules, which tree-sitter-python's error recovery
 * accepts silently: a block holds at least one statement, and the
 * statements of a block (of the module: column 0) start at one column.
 */
static void python_indent(problems *p, const char *prefix, TSNode node, const char *text,
			  size_t len, int depth)
{
	const char *type = ts_node_type(node);
	uint32_t n = ts_node_child_count(node);
	int is_module = !strcmp(type, "module"), is_block = !strcmp(type, "block");

	if (depth > 10000)
		return;
	if (is_module || is_block) {
		uint32_t want = 0, stmts = 0;
		int have = is_module;

		for (uint32_t i = 0; i < n; i++) {
			TSNode c = ts_node_child(node, i);
			TSPoint pt;

			if (!ts_node_is_named(c) || !strcmp(ts_node_type(c), "comment"))
				continue;
			stmts++;
			if (!starts_line(c, text, len))
				continue;
			pt = ts_node_start_point(c);
			if (!have) {
				want = pt.column;
				have = 1;
			} else if (pt.column != want && more(p)) {
				sl_buf_addf(&p->list, "%s%u:%u: %s\n", prefix, pt.row + 1, pt.column + 1,
					    pt.column > want ? "unexpected indent" :
					    "unindent does not match the block's indentation");
			}
		}
		if (is_block && !stmts && more(p)) {
			TSPoint pt = ts_node_start_point(node);     /* where the block should start */

			sl_buf_addf(&p->list, "%s%u:%u: expected an indented block\n", prefix,
				    pt.row + 1, pt.column + 1);
		}
	}
	for (uint32_t i = 0; i < n; i++)
		python_indent(p, prefix, ts_node_child(node, i), text, len, depth + 1);
}

/* Count problems of text; -1 when it could not be parsed in time. */
static int count(problems *p, TSParser *parser, int python, const char *prefix, const char *text,
		 size_t len)
{
	TSTree *tree;

	ts_parser_reset(parser);
	tree = ts_parser_parse_string(parser, NULL, text, (uint32_t)len);
	if (!tree)
		return -1;
	walk(p, prefix, ts_tree_root_node(tree), text, len, 0);
	if (python && !ts_node_has_error(ts_tree_root_node(tree)))
		python_indent(p, prefix, ts_tree_root_node(tree), text, len, 0);
	ts_tree_delete(tree);
	return 0;
}

static int check(const char *lang, const char *path, const char *old_text, size_t old_len,
		 const char *new_text, size_t new_len, sl_buf *report, int *ok_out, sl_err *err)
{
	const sl_lang *l = lang ? sl_lang_find(lang) : NULL;
	TSParser *parser = NULL;
	problems po = { 0, SL_BUF_INIT, 0 }, pn = { 0, SL_BUF_INIT, 0 };
	sl_buf prefix = SL_BUF_INIT;
	int ret = SL_ERROR, py = l && !strcmp(l->name, "python");

	*ok_out = 1;
	if (!l || new_len > SL_CAP_SYNTAX_BYTES || old_len > SL_CAP_SYNTAX_BYTES)
		return SL_OK;
	sl_buf_addf(&prefix, "%s:", path);
	if (!(parser = ts_parser_new()) || !ts_parser_set_language(parser, l->grammar())) {
		sl_err_set(err, SL_ERROR, "cannot set up the %s parser", lang);
		goto done;
	}
	ts_parser_set_timeout_micros(parser, PARSE_TIMEOUT_US);
	if (old_text && count(&po, parser, py, prefix.buf, old_text, old_len) < 0)
		po.n = SIZE_MAX / 2;        /* the base could not be parsed either: compare nothing */
	if (count(&pn, parser, py, prefix.buf, new_text, new_len) < 0) {
		*ok_out = 0;
		if (report)
			sl_buf_addf(report, "%s the new text could not be parsed in %d s\n",
				    prefix.buf, PARSE_TIMEOUT_US / 1000000);
	} else if (pn.n > po.n) {
		*ok_out = 0;
		if (report) {
			sl_buf_addf(report, "%s the change adds syntax errors (base %zu, candidate %zu)\n",
				    prefix.buf, old_text ? po.n : 0, pn.n);
			sl_buf_add(report, pn.list.buf, pn.list.len);
			if (pn.n > pn.listed)
				sl_buf_addf(report, "%s ... and %zu more\n", prefix.buf,
					    pn.n - pn.listed);
		}
	}
	ret = SL_OK;
done:
	if (parser)
		ts_parser_delete(parser);
	sl_buf_release(&po.list);
	sl_buf_release(&pn.list);
	sl_buf_release(&prefix);
	return ret;
}

static int blob_at(git_blob **out, git_repository *repo, const git_diff_file *f)
{
	*out = NULL;
	if (!(f->flags & GIT_DIFF_FLAG_EXISTS) || f->mode == GIT_FILEMODE_LINK ||
	    f->mode == GIT_FILEMODE_COMMIT)
		return 0;
	return git_blob_lookup(out, repo, &f->id);
}

int sl_syntax_check_commit(git_repository *repo, const git_oid *base, const git_oid *candidate,
			   sl_buf *report, int *ok_out, sl_err *err)
{
	git_diff *diff = NULL;
	int ret = SL_ERROR;

	*ok_out = 1;
	if (sl_diff_commits(&diff, NULL, repo, base, candidate, NULL, err))
		goto done;
	for (size_t i = 0; i < git_diff_num_deltas(diff); i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);
		const char *lang = sl_lang_for_path(d->new_file.path);
		git_blob *ob = NULL, *nb = NULL;
		int ok = 1, r;

		if (!lang || d->status == GIT_DELTA_DELETED)
			continue;
		if (blob_at(&ob, repo, &d->old_file) || blob_at(&nb, repo, &d->new_file)) {
			git_blob_free(ob);
			sl_err_set(err, SL_ERROR, "cannot read '%s'", d->new_file.path);
			goto done;
		}
		if (nb && !git_blob_is_binary(nb) && !(ob && git_blob_is_binary(ob))) {
			r = check(lang, d->new_file.path,
				  ob ? git_blob_rawcontent(ob) : NULL, ob ? (size_t)git_blob_rawsize(ob) : 0,
				  git_blob_rawcontent(nb), (size_t)git_blob_rawsize(nb), report, &ok, err);
			if (r) {
				git_blob_free(ob);
				git_blob_free(nb);
				goto done;
			}
			if (!ok)
				*ok_out = 0;
		}
		git_blob_free(ob);
		git_blob_free(nb);
	}
	ret = SL_OK;
done:
	git_diff_free(diff);
	return ret;
}
