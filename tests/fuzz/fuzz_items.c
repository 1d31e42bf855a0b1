/*
 * fuzz_items.c - a C file's top-level items and its functions' statements
 * (scoping/items.c): the input is the file.  Pieces must tile the text in
 * order, with the points of their bytes, and the blanked copy differs
 * from the text only by blanks (and the mark of a definition's
 * parameters); when a parse of the whole file has no syntax error,
 * parsing only the items whose blanked copy holds the word "for" (and the
 * conditionals' lines) must find the same for_statement nodes, byte for
 * byte, as the whole parse finds in those items; and parsing any subset
 * of the statements with their frames must find the same call_expression
 * nodes in them: a split never cuts a construct, a statement parses alone
 * as among the others, and blanking never hides a token.
 */
#include <ctype.h>
#include <tree_sitter/api.h>

#include "fuzz.h"
#include "common/util.h"
#include "scoping/items.h"
#include "scoping/lang.h"

int sl_fuzz_items(const uint8_t *data, size_t size);

/* The point of byte b of text, counted the slow way. */
static TSPoint fuzz_items_point(const char *text, uint32_t b)
{
	TSPoint p = { 0, 0 };

	for (uint32_t i = 0; i < b; i++) {
		if (text[i] == '\n') {
			p.row++;
			p.column = 0;
		} else {
			p.column++;
		}
	}
	return p;
}

static int fuzz_items_has_for(const char *s, size_t n)
{
	for (size_t i = 0; i + 3 <= n; i++)
		if (!memcmp(s + i, "for", 3) && (!i || !(isalnum((unsigned char)s[i - 1]) || s[i - 1] == '_')) &&
		    (i + 3 == n || !(isalnum((unsigned char)s[i + 3]) || s[i + 3] == '_')))
			return 1;
	return 0;
}

/*
 * The [start, end) of every node of type inside the ranges r, in order,
 * into v, each with 1 if it is directly in a function's body.
 */
static size_t fuzz_items_nodes(TSTree *tree, const char *type, const TSRange *r, size_t nr,
			       uint32_t *v, size_t cap)
{
	TSTreeCursor cur = ts_tree_cursor_new(ts_tree_root_node(tree));
	size_t n = 0;

	for (;;) {
		TSNode node = ts_tree_cursor_current_node(&cur);

		if (!strcmp(ts_node_type(node), type)) {
			uint32_t s = ts_node_start_byte(node), e = ts_node_end_byte(node);

			for (size_t i = 0; i < nr; i++)
				if (s >= r[i].start_byte && e <= r[i].end_byte && n + 3 <= cap) {
					TSNode up = ts_node_parent(node);

					v[n++] = s;
					v[n++] = e;
					/* directly in a function's body (SL_ITEMS_BODY) */
					v[n++] = !ts_node_is_null(up) &&
						!strcmp(ts_node_type(up), "compound_statement") &&
						!ts_node_is_null(up = ts_node_parent(up)) &&
						!strcmp(ts_node_type(up), "function_definition");
					break;
				}
		}
		if (ts_tree_cursor_goto_first_child(&cur))
			continue;
		while (!ts_tree_cursor_goto_next_sibling(&cur))
			if (!ts_tree_cursor_goto_parent(&cur))
				goto done;
	}
done:
	ts_tree_cursor_delete(&cur);
	return n;
}

/* Keep of the n values of v (start, end, in a body) the nodes directly in a body. */
static size_t fuzz_items_in_body(uint32_t *v, size_t n)
{
	size_t m = 0;

	for (size_t i = 0; i + 3 <= n; i += 3)
		if (v[i + 2]) {
			memmove(v + m, v + i, 3 * sizeof(*v));
			m += 3;
		}
	return m;
}

static void fuzz_items_push(TSRange **v, size_t *n, const TSRange *r)
{
	*v = sl_xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = *r;
}

/*
 * Split text by flags; check the pieces; parse the pieces kept and
 * compare the nodes of type inside the pieces that were picked with a
 * parse of the whole file.  Without SL_ITEMS_STATEMENTS the items picked
 * hold the word "for"; with it or SL_ITEMS_BODY, any subset of the
 * statements is picked (by a hash of where each begins) with the frames
 * of their items (with SL_ITEMS_BODY_LEAF, the pieces kept with each, and
 * only the nodes directly in a body compared).
 */
static void fuzz_items_check(const char *text, size_t size, unsigned flags, const char *type)
{
	sl_item *v = NULL;
	TSRange *keep = NULL, *picked = NULL;
	char *blanked = sl_xmalloc(size + 1);
	unsigned char *pk;
	size_t alloc = 0, nkeep = 0, npicked = 0, n;
	TSParser *parser = NULL;
	TSTree *whole = NULL, *part = NULL;
	uint32_t a[256], b[256];

	n = sl_items_split(text, size, &v, &alloc, blanked, flags);
	pk = sl_xcalloc(n ? n : 1, 1);
	for (size_t i = 0; n && i < size; i++)
		FUZZ_CHECK(blanked[i] == text[i] || blanked[i] == ' ' ||
			   (blanked[i] == SL_ITEMS_PARAMS && text[i] == '('));
	FUZZ_CHECK(!n || v[0].first);
	for (size_t i = 0, j; i < n; i = j) {
		int any = 0, with = 0;

		for (j = i + 1; j < n && !v[j].first; j++)
			;
		for (size_t k = i; k < j; k++) {
			const TSRange *r = &v[k].r;
			TSPoint sp = fuzz_items_point(text, r->start_byte);
			TSPoint ep = fuzz_items_point(text, r->end_byte);
			int pick;

			FUZZ_CHECK(r->start_byte == (k ? v[k - 1].r.end_byte : 0));
			FUZZ_CHECK(r->end_byte > r->start_byte);
			FUZZ_CHECK(sp.row == r->start_point.row && sp.column == r->start_point.column);
			FUZZ_CHECK(ep.row == r->end_point.row && ep.column == r->end_point.column);
			FUZZ_CHECK(flags || v[k].kind == SL_ITEM_MAY || v[k].kind == SL_ITEM_ALWAYS);
			FUZZ_CHECK(!v[k].judge_end || v[k].judge_end >= r->end_byte);
			if (v[k].kind == SL_ITEM_WITH)
				pick = with;    /* kept with its statement's first piece */
			else if (flags)
				pick = v[k].kind == SL_ITEM_MAY && ((r->start_byte * 2654435761u) >> 7) & 1;
			else
				pick = v[k].kind == SL_ITEM_MAY &&
					fuzz_items_has_for(blanked + r->start_byte, r->end_byte - r->start_byte);
			if (v[k].kind == SL_ITEM_MAY)
				with = pick;
			if (pick && v[k].kind == SL_ITEM_MAY) {
				TSRange whole_r = *r;

				if (v[k].judge_end)
					whole_r.end_byte = v[k].judge_end;
				fuzz_items_push(&picked, &npicked, &whole_r);
			}
			pk[k] = (unsigned char)pick;
			any |= pick;
		}
		for (size_t k = i; k < j; k++)
			if (pk[k] || v[k].kind == SL_ITEM_ALWAYS || (any && v[k].kind == SL_ITEM_FRAME))
				fuzz_items_push(&keep, &nkeep, &v[k].r);
	}
	FUZZ_CHECK(!n || v[n - 1].r.end_byte == size);
	if (!npicked)
		goto done;
	parser = ts_parser_new();
	ts_parser_set_language(parser, sl_lang_find("c")->grammar());
	whole = ts_parser_parse_string(parser, NULL, text, (uint32_t)size);
	if (!whole || ts_node_has_error(ts_tree_root_node(whole)))
		goto done;
	if (!ts_parser_set_included_ranges(parser, keep, (uint32_t)nkeep))
		goto done;
	part = ts_parser_parse_string(parser, NULL, text, (uint32_t)size);
	if (part) {
		size_t na = fuzz_items_nodes(whole, type, picked, npicked, a, 256);
		size_t nb = fuzz_items_nodes(part, type, picked, npicked, b, 256);

		if (flags & SL_ITEMS_BODY_LEAF) {       /* only the nodes directly in a body */
			na = fuzz_items_in_body(a, na);
			nb = fuzz_items_in_body(b, nb);
		}

		FUZZ_CHECK(na == nb && !memcmp(a, b, na * sizeof(*a)));
	}
done:
	if (part)
		ts_tree_delete(part);
	if (whole)
		ts_tree_delete(whole);
	if (parser)
		ts_parser_delete(parser);
	free(keep);
	free(picked);
	free(pk);
	free(blanked);
	free(v);
}

int sl_fuzz_items(const uint8_t *data, size_t size)
{
	if (size > (1u << 16))
		return 0;
	fuzz_items_check((const char *)data, size, 0, "for_statement");
	fuzz_items_check((const char *)data, size, SL_ITEMS_STATEMENTS, "call_expression");
	fuzz_items_check((const char *)data, size, SL_ITEMS_BODY, "for_statement");
	fuzz_items_check((const char *)data, size, SL_ITEMS_BODY | SL_ITEMS_BODY_LEAF, "for_statement");
	return 0;
}
SL_FUZZ_MAIN(sl_fuzz_items)
