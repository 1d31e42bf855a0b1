/*
 * test_predicate.c - the predicate evaluator on its own: parse a C snippet
 * with tree-sitter, compile a query and its predicates, and count the
 * matches that survive; plus the errors for malformed predicates.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <tree_sitter/api.h>

#include "scoping/predicate.h"
#include "common/util.h"
#include "unit.h"

const TSLanguage *tree_sitter_c(void);

static const char SRC[] =
	"// keep\n"
	"// keep\n"
	"int g(void) { return 0; }\n"
	"// keep\n"
	"// drop\n"
	"int h(void) { return 1; }\n"
	"void f(void)\n"
	"{\n"
	"\tstrcpy(a, b);\n"
	"\tstrcpy(a, a);\n"
	"\tmemcpy(x, y, 3);\n"
	"\tstrlen(s);\n"
	"\tsum(1, 2, 3);\n"
	"\tsum(1, 1, 1);\n"
	"\tprint(\"a.b\");\n"
	"\tprint(\"a\\\\b\");\n"
	"}\n";

/*
 * Number of matches of query in SRC that pass the predicates, or the error
 * code of compilation.  When texts is not NULL, the text of each passing
 * match's capture @out (else its first capture) is appended to it.
 */
static int run(const char *query, sl_buf *texts, sl_err *err, uint32_t *off)
{
	TSParser *parser = ts_parser_new();
	TSTree *tree = NULL;
	TSQuery *q = NULL;
	TSQueryCursor *cur = ts_query_cursor_new();
	sl_preds *preds = NULL;
	TSQueryMatch m;
	uint32_t eoff;
	TSQueryError etype;
	int n = 0;

	ts_parser_set_language(parser, tree_sitter_c());
	tree = ts_parser_parse_string(parser, NULL, SRC, sizeof(SRC) - 1);
	q = ts_query_new(tree_sitter_c(), query, (uint32_t)strlen(query), &eoff, &etype);
	if (!q) {
		fprintf(stderr, "query failed at %u: %s\n", eoff, query);
		n = -100;
		goto done;
	}
	if ((n = sl_preds_compile(&preds, q, query, strlen(query), off, err)))
		goto done;
	ts_query_cursor_exec(cur, q, ts_tree_root_node(tree));
	while (ts_query_cursor_next_match(cur, &m) && n < 1000) {
		if (!sl_preds_eval(preds, &m, SRC, sizeof(SRC) - 1))
			continue;
		n++;
		if (texts && m.capture_count) {
			TSNode node = m.captures[0].node;
			uint32_t a, b;

			for (uint16_t i = 0; i < m.capture_count; i++) {
				uint32_t l;
				const char *name = ts_query_capture_name_for_id(q, m.captures[i].index, &l);

				if (l == 3 && !memcmp(name, "out", 3))
					node = m.captures[i].node;
			}
			a = ts_node_start_byte(node);
			b = ts_node_end_byte(node);

			sl_buf_addf(texts, "%s%.*s", texts->len ? "|" : "", (int)(b - a), SRC + a);
		}
	}
done:
	sl_preds_free(preds);
	if (q)
		ts_query_delete(q);
	ts_query_cursor_delete(cur);
	ts_tree_delete(tree);
	ts_parser_delete(parser);
	return n;
}

/* The first captures of the passing matches, '|'-separated. */
static char *hits(const char *query)
{
	sl_buf b = SL_BUF_INIT;
	sl_err err = SL_ERR_INIT;
	int n = run(query, &b, &err, NULL);

	if (n < 0) {
		sl_buf_reset(&b);
		sl_buf_addf(&b, "ERR %d: %s", n, err.msg);
	}
	return sl_buf_detach(&b, NULL);
}

#define CHECK_HITS(query, expected) do { char *h_ = hits(query); \
	CHECK_STR(h_, expected); free(h_); } while (0)

#define CALL "(call_expression function: (identifier) @fn arguments: (argument_list) @args)"

static void test_no_predicates(void)
{
	CHECK_HITS(CALL, "strcpy|strcpy|memcpy|strlen|sum|sum|print|print");
}

static void test_eq_string(void)
{
	CHECK_HITS("(" CALL " (#eq? @fn \"strcpy\"))", "strcpy|strcpy");
	CHECK_HITS("(" CALL " (#eq? @fn strcpy))", "strcpy|strcpy");
	CHECK_HITS("(" CALL " (#eq? @fn \"strcp\"))", "");
	CHECK_HITS("(" CALL " (#not-eq? @fn \"strcpy\"))", "memcpy|strlen|sum|sum|print|print");
	CHECK_HITS("(" CALL " (#eq? @args \"(s)\"))", "strlen");
}

static void test_eq_capture(void)
{
	const char *q = "((call_expression function: (identifier) @fn arguments: "
		"(argument_list . (identifier) @a . \",\" . (identifier) @b)) (#eq? @a @b))";
	const char *nq = "((call_expression function: (identifier) @fn arguments: "
		"(argument_list . (identifier) @a . \",\" . (identifier) @b)) (#not-eq? @a @b))";

	CHECK_HITS(q, "strcpy");
	CHECK_HITS(nq, "strcpy|memcpy");
}

static void test_match(void)
{
	CHECK_HITS("(" CALL " (#match? @fn \"^str\"))", "strcpy|strcpy|strlen");
	CHECK_HITS("(" CALL " (#match? @fn \"cpy\"))", "strcpy|strcpy|memcpy");
	CHECK_HITS("(" CALL " (#match? @fn \"^(sum|strlen)$\"))", "strlen|sum|sum");
	CHECK_HITS("(" CALL " (#not-match? @fn \"^str\"))", "memcpy|sum|sum|print|print");
	/* the regex only sees the node's text: "^" is the node start */
	CHECK_HITS("(" CALL " (#match? @args \"^\\\\(s\\\\)$\"))", "strlen");
	/* query strings unescape: "\\\\\\\\" in C is \\\\ in the query, \\ in the regex */
	CHECK_HITS("((string_literal) @s (#match? @s \"\\\\\\\\\"))", "\"a\\\\b\"");
	CHECK_HITS("((string_literal) @s (#match? @s \"a[.]b\"))", "\"a.b\"");
}

static void test_any_of(void)
{
	CHECK_HITS("(" CALL " (#any-of? @fn \"sum\" \"strlen\" \"nothing\"))", "strlen|sum|sum");
	CHECK_HITS("(" CALL " (#any-of? @fn memcpy))", "memcpy");
	CHECK_HITS("(" CALL " (#not-any-of? @fn \"sum\" \"strcpy\" \"print\"))", "memcpy|strlen");
}

static void test_several_predicates(void)
{
	/* all predicates of the pattern must hold */
	CHECK_HITS("(" CALL " (#match? @fn \"^s\") (#not-eq? @fn \"strlen\") (#not-any-of? @fn sum))",
		   "strcpy|strcpy");
	/* a directive is accepted and does not filter */
	CHECK_HITS("(" CALL " (#eq? @fn sum) (#set! priority 90))", "sum|sum");
}

#define DOC(pred) "((comment)+ @c . (function_definition declarator: " \
	"(function_declarator declarator: (identifier) @out)) " pred ")"

static void test_quantified(void)
{
	CHECK_HITS(DOC(""), "g|h");
	/* every node of a quantified capture must pass */
	CHECK_HITS(DOC("(#eq? @c \"// keep\")"), "g");
	CHECK_HITS(DOC("(#match? @c \"^// k\")"), "g");
	CHECK_HITS(DOC("(#not-eq? @c \"// drop\")"), "g");
	CHECK_HITS(DOC("(#any-of? @c \"// keep\" \"// drop\")"), "g|h");
	/* the any- forms: one node suffices */
	CHECK_HITS(DOC("(#any-eq? @c \"// drop\")"), "h");
	CHECK_HITS(DOC("(#any-not-eq? @c \"// keep\")"), "h");
	CHECK_HITS(DOC("(#any-match? @c \"k[e]+p\")"), "g|h");
	CHECK_HITS(DOC("(#any-not-match? @c \"k[e]+p\")"), "h");
	/* an absent capture passes a plain predicate and fails an any- one */
	CHECK_HITS("((function_definition declarator: (function_declarator declarator: "
		   "(identifier) @out)) (#eq? @out f))", "f");
	CHECK_HITS("((comment)* @c . (function_definition declarator: (function_declarator "
		   "declarator: (identifier) @out)) (#eq? @c \"// keep\"))", "g|f");
	CHECK_HITS("((comment)* @c . (function_definition declarator: (function_declarator "
		   "declarator: (identifier) @out)) (#any-eq? @c \"// keep\"))", "g|h");
}

static void expect_error(const char *query, const char *needle, const char *at)
{
	sl_err err = SL_ERR_INIT;
	uint32_t off = 12345;
	int rc = run(query, NULL, &err, &off);

	CHECK_INT(rc, SL_EINPUT);
	CHECK_INT(err.code, SL_EINPUT);
	if (!strstr(err.msg, needle)) {
		fprintf(stderr, "  message '%s' lacks '%s'\n", err.msg, needle);
		CHECK(0);
	}
	CHECK_INT(off, strstr(query, at) - query);
}

static void test_errors(void)
{
	expect_error("((identifier) @a (#foo? @a \"x\"))", "unknown predicate '#foo?'", "#foo?");
	expect_error("((identifier) @a (#eq? @a))", "#eq? takes 2 arguments, got 1 argument", "#eq?");
	expect_error("((identifier) @a (#eq? @a x y))", "got 3 arguments", "#eq?");
	expect_error("((identifier) @a (#eq? x @a))", "first argument of #eq? must be a capture", "#eq?");
	expect_error("((identifier) @a (#match? @a @a))", "argument 2 of #match? must be a string",
		     "#match?");
	expect_error("((identifier) @a (#any-of? @a))", "#any-of? takes a capture and at least one string",
		     "#any-of?");
	expect_error("((identifier) @a (#not-any-of? @a x @a))", "argument 3 of #not-any-of? must be a string",
		     "#not-any-of?");
	expect_error("((identifier) @a (#match? @a \"(\"))", "bad regex '('", "#match?");
	/* the offending one of two same-named predicates, in a later pattern */
	expect_error("((identifier) @a (#eq? @a x))\n((identifier) @b (#eq? @b x) (#eq? @b))",
		     "invalid query at 2:31: #eq? takes 2 arguments", "#eq? @b)");
	/* "#eq?" inside "#not-eq?" is not mistaken for it */
	expect_error("((identifier) @a (#not-eq? @a x) (#eq? @a))", "#eq? takes", "#eq? @a)");
}

static void test_directive_and_pos(void)
{
	TSQuery *q;
	sl_preds *p = NULL;
	sl_err err = SL_ERR_INIT;
	uint32_t eo;
	TSQueryError et;
	char pos[32];
	const char *src = "((identifier) @a (#eq? @a x) (#set! k v))\n((identifier) @b (#match? @b y))";

	q = ts_query_new(tree_sitter_c(), src, (uint32_t)strlen(src), &eo, &et);
	CHECK(q != NULL);
	if (!q)
		return;
	CHECK_INT(sl_preds_compile(&p, q, src, strlen(src), NULL, &err), 0);
	CHECK(p != NULL);
	sl_preds_free(p);
	ts_query_delete(q);
	sl_preds_free(NULL);
	/* a directive is no predicate: it lets every match through */
	CHECK_INT(run("((identifier) @a (#eq? @a strlen) (#set! k v))", NULL, &err, NULL), 1);
	CHECK_INT(run("((identifier) @a (#set! k v))", NULL, &err, NULL),
		  run("(identifier) @a", NULL, &err, NULL));

	sl_query_pos("ab\ncd\n", 6, 0, pos);
	CHECK_STR(pos, "1:1");
	sl_query_pos("ab\ncd\n", 6, 4, pos);
	CHECK_STR(pos, "2:2");
	sl_query_pos("ab\ncd\n", 6, 6, pos);
	CHECK_STR(pos, "3:1");
}

int main(void)
{
	RUN(test_no_predicates);
	RUN(test_eq_string);
	RUN(test_eq_capture);
	RUN(test_match);
	RUN(test_any_of);
	RUN(test_several_predicates);
	RUN(test_quantified);
	RUN(test_errors);
	RUN(test_directive_and_pos);
	return unit_done();
}
