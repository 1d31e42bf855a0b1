/*
 * rules_where.c - what a rule reads of the unit's syntax tree: the
 * conditions of a rule (`where:`, rules.h), a regex on a capture's text, a
 * tree-sitter query inside the capture's node, or one on the declarator
 * that declares the capture's name in the target's unit; and the extent of
 * a sequence capture (${...name}: its node and the siblings after it).
 *
 * Reads the site's captures and the target's unit text, which it parses
 * once per target (kept in the context until sl_where_ctx_free).  The
 * queries were screened when the campaign was loaded (sl_rule_check, which
 * compiles them in a bounded child like the campaign's query); here they
 * are compiled again for each use: they are small, and a site is rarely
 * judged by more than a few.
 */
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/generate/rules.h"
#include "scoping/lang.h"
#include "scoping/predicate.h"

struct sl_where_ctx {
	const sl_target *t;
	const sl_lang *lang;
	TSParser *parser;
	TSTree *tree;               /* of t->unit_text; NULL when it did not parse */
	int tried;
};

void sl_where_ctx_free(struct sl_where_ctx *ctx)
{
	if (!ctx)
		return;
	if (ctx->tree)
		ts_tree_delete(ctx->tree);
	if (ctx->parser)
		ts_parser_delete(ctx->parser);
	free(ctx);
}

/* The unit's tree, parsed on first use; NULL when there is none. */
static TSTree *unit_tree(struct sl_where_ctx **pctx, const sl_target *t)
{
	struct sl_where_ctx *ctx = *pctx;

	if (ctx && ctx->t != t) {
		sl_where_ctx_free(ctx);
		ctx = *pctx = NULL;
	}
	if (!ctx) {
		ctx = *pctx = sl_xcalloc(1, sizeof(*ctx));
		ctx->t = t;
	}
	if (ctx->tried)
		return ctx->tree;
	ctx->tried = 1;
	if (!t->unit_text || !t->lang || !(ctx->lang = sl_lang_find(t->lang)))
		return NULL;
	if (!(ctx->parser = ts_parser_new()) ||
	    !ts_parser_set_language(ctx->parser, ctx->lang->grammar()))
		return NULL;
	ctx->tree = ts_parser_parse_string(ctx->parser, NULL, t->unit_text,
					   (uint32_t)strlen(t->unit_text));
	return ctx->tree;
}

static int regex_holds(const char *re, const char *text, sl_err *err)
{
	regex_t rx;
	int rc;

	if ((rc = regcomp(&rx, re, REG_EXTENDED | REG_NOSUB))) {
		char msg[128];

		regerror(rc, &rx, msg, sizeof(msg));
		return sl_err_set(err, SL_EINPUT, "bad regex '%s' in a rule condition: %s", re, msg);
	}
	rc = regexec(&rx, text, 0, NULL, 0);
	regfree(&rx);
	return rc == 0;
}

/* 1 if the query matches (predicates applied) inside node; <0 a bad query. */
static int query_matches(const sl_lang *lang, const char *query, TSNode node, const char *src,
			 size_t len, sl_err *err)
{
	uint32_t off = 0;
	TSQueryError type = TSQueryErrorNone;
	TSQuery *q = ts_query_new(lang->grammar(), query, (uint32_t)strlen(query), &off, &type);
	TSQueryCursor *cur = NULL;
	sl_preds *preds = NULL;
	TSQueryMatch m;
	int ret = 0;

	if (!q)
		return sl_err_set(err, SL_EINPUT, "bad query in a rule condition at offset %u: %s",
				  off, query);
	if (sl_preds_compile(&preds, q, query, strlen(query), NULL, err)) {
		ret = SL_EINPUT;
		goto done;
	}
	cur = ts_query_cursor_new();
	ts_query_cursor_exec(cur, q, node);
	while (!ret && ts_query_cursor_next_match(cur, &m))
		ret = sl_preds_eval(preds, &m, src, len);
done:
	if (cur)
		ts_query_cursor_delete(cur);
	sl_preds_free(preds);
	ts_query_delete(q);
	return ret;
}

/* The field name under which parent holds child, or NULL. */
static const char *field_of(TSNode parent, TSNode child)
{
	uint32_t n = ts_node_child_count(parent);

	for (uint32_t i = 0; i < n; i++)
		if (ts_node_eq(ts_node_child(parent, i), child))
			return ts_node_field_name_for_child(parent, i);
	return NULL;
}

/*
 * If the identifier id is the name a declaration declares, 1 and its
 * outermost declarator in *out (`buf[64]` of `char buf[64];`): climb while
 * each node is its parent's `declarator`, through the *declarator types,
 * to a *declaration.
 */
static int declarator_of(TSNode id, TSNode *out)
{
	TSNode child = id, decl = id, p;

	while (!ts_node_is_null(p = ts_node_parent(child))) {
		const char *field = field_of(p, child);
		const char *type = ts_node_type(p);

		if (!field || strcmp(field, "declarator"))
			return 0;
		if (strstr(type, "declaration")) {
			*out = decl;
			return 1;
		}
		if (!strstr(type, "declarator"))
			return 0;
		decl = p;
		child = p;
	}
	return 0;
}

/*
 * The declarator that declares name in the unit, the last one before
 * `before` (a byte offset in the unit's text): 1 and *out, or 0.
 */
static int find_declarator(TSNode root, const char *src, const char *name, uint32_t before,
			   TSNode *out)
{
	TSTreeCursor cur = ts_tree_cursor_new(root);
	size_t len = strlen(name);
	int found = 0, down = 1;

	for (;;) {
		TSNode n = ts_tree_cursor_current_node(&cur);

		if (down && ts_node_start_byte(n) >= before)
			down = 0;       /* everything from here on is after the site */
		else if (down && !ts_node_child_count(n) && ts_node_is_named(n) &&
			 ts_node_end_byte(n) - ts_node_start_byte(n) == len &&
			 !memcmp(src + ts_node_start_byte(n), name, len) && declarator_of(n, out))
			found = 1;
		if (down && ts_tree_cursor_goto_first_child(&cur))
			continue;
		down = 1;
		while (!ts_tree_cursor_goto_next_sibling(&cur)) {
			if (!ts_tree_cursor_goto_parent(&cur))
				goto done;
		}
	}
done:
	ts_tree_cursor_delete(&cur);
	return found;
}

/* One tree condition at capture c: 1 holds (before negation), 0 not, <0 error, 2 unknown. */
static int tree_holds(struct sl_where_ctx **ctx, const sl_rule_cond *cond, const sl_target *t,
		      const sl_capture *c, sl_err *err)
{
	TSTree *tree = unit_tree(ctx, t);
	const char *src = t->unit_text;
	uint32_t s, e;
	TSNode node;

	if (!tree || c->start_byte < t->start_byte || c->end_byte > t->end_byte)
		return 2;
	s = c->start_byte - t->start_byte;
	e = c->end_byte - t->start_byte;
	if (cond->kind == SL_COND_HAS)
		node = ts_node_descendant_for_byte_range(ts_tree_root_node(tree), s, e);
	else if (!find_declarator(ts_tree_root_node(tree), src, c->text ? c->text : "", s, &node))
		return 2;
	return query_matches((*ctx)->lang, cond->text, node, src, strlen(src), err);
}

int sl_where_rest_end(struct sl_where_ctx **ctx, const sl_target *t, uint32_t start,
		      uint32_t end, uint32_t *out)
{
	TSTree *tree = unit_tree(ctx, t);
	TSNode n, p, last;

	if (!tree || start < t->start_byte || end > t->end_byte || start >= end)
		return 0;
	n = ts_node_descendant_for_byte_range(ts_tree_root_node(tree), start - t->start_byte,
					      end - t->start_byte);
	while (!ts_node_is_null(p = ts_node_parent(n)) &&
	       ts_node_start_byte(p) == ts_node_start_byte(n) &&
	       ts_node_end_byte(p) == ts_node_end_byte(n))
		n = p;
	if (ts_node_start_byte(n) != start - t->start_byte ||
	    ts_node_end_byte(n) != end - t->start_byte)
		return 0;
	last = n;
	for (p = ts_node_next_sibling(n); !ts_node_is_null(p); p = ts_node_next_sibling(p))
		if (ts_node_is_named(p) && !ts_node_is_missing(p))
			last = p;
	*out = ts_node_end_byte(last) + t->start_byte;
	return 1;
}

int sl_rule_where_holds(struct sl_where_ctx **ctx, const sl_rule *r, const sl_target *t,
			const sl_site *s, sl_err *err)
{
	for (size_t i = 0; i < r->nwhere; i++) {
		const sl_rule_cond *cond = &r->where[i];
		const sl_capture *c = NULL;
		int ok;

		for (size_t k = 0; k < s->ncaps && !c; k++)
			if (!strcmp(s->caps[k].name, cond->capture))
				c = &s->caps[k];
		if (!c)
			return 0;
		if (cond->kind == SL_COND_MATCH)
			ok = regex_holds(cond->text, c->text ? c->text : "", err);
		else
			ok = tree_holds(ctx, cond, t, c, err);
		if (ok < 0)
			return ok;
		if (ok == 2 || ok == cond->negate)
			return 0;
	}
	return 1;
}

int sl_rule_cond_check(const sl_rule_cond *c, const char *language, sl_err *err)
{
	sl_buf q = SL_BUF_INIT;
	int ret;

	if (c->kind == SL_COND_MATCH) {
		ret = regex_holds(c->text, "", err);
		return ret < 0 ? ret : SL_OK;
	}
	/* the screen wants a capture; one on the query's end costs nothing */
	sl_buf_adds(&q, c->text);
	if (!strchr(c->text, '@'))
		sl_buf_adds(&q, " @sl_condition");
	ret = sl_scope_check_query(language, q.buf, NULL, NULL, err);
	sl_buf_release(&q);
	if (ret)
		sl_err_prefix(err, "rule condition on '%s': ", c->capture);
	return ret;
}
