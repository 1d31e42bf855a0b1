/*
 * test_scope_lang.c - the language table and the literal prefilter:
 * every node type the table names exists in its grammar, extensions and
 * overrides pick the language, and the prefilter's literals are exactly
 * the ones that are safe to require.
 */
#include <stdio.h>
#include <stdlib.h>
#include <ctype.h>
#include <string.h>
#include <tree_sitter/api.h>

#include "scoping/lang.h"
#include "scoping/prefilter.h"
#include "scoping/scope.h"
#include "common/util.h"
#include "unit.h"

static int type_exists(const TSLanguage *g, const char *type)
{
	return ts_language_symbol_for_name(g, type, (uint32_t)strlen(type), 1) != 0;
}

static void check_list(const sl_lang *l, const char *const *list)
{
	for (const char *const *t = list; t && *t; t++)
		if (!strchr(*t, '*') && !strchr(*t, '"') && !type_exists(l->grammar(), *t)) {
			fprintf(stderr, "%s: no node type '%s'\n", l->name, *t);
			CHECK(0);
		}
}

/* Every built-in language, by name. */
static const char *const lang_names[] = { "c", "cpp", "python", "javascript", "typescript",
	"tsx", "go", "java", "rust", "bash", "json" };
#define NLANG_NAMES (sizeof(lang_names) / sizeof(lang_names[0]))

static void test_node_types_exist(void)
{
	size_t n = 0;

	for (const sl_lang *l; n < NLANG_NAMES && (l = sl_lang_find(lang_names[n])); n++) {
		TSParser *p = ts_parser_new();

		CHECK(ts_parser_set_language(p, l->grammar()));
		ts_parser_delete(p);
		check_list(l, l->func_types);
		check_list(l, l->class_types);
		check_list(l, l->stmt_types);
		check_list(l, l->not_stmt);
		check_list(l, l->import_types);
		check_list(l, l->def_types);
		check_list(l, l->item_holders);
		check_list(l, l->stmt_holders);
		check_list(l, l->list_nodes);
		if (l->func_wrapper)
			CHECK(type_exists(l->grammar(), l->func_wrapper));
	}
	CHECK_INT(n, 11);
}

/* How many matches query has in src, parsed as lang. */
static unsigned count_matches(const sl_lang *l, const char *query, const char *src)
{
	TSParser *p = ts_parser_new();
	TSTree *tree;
	TSQuery *q;
	TSQueryCursor *cur = ts_query_cursor_new();
	TSQueryMatch m;
	uint32_t off;
	TSQueryError qe;
	unsigned n = 0;

	ts_parser_set_language(p, l->grammar());
	tree = ts_parser_parse_string(p, NULL, src, (uint32_t)strlen(src));
	q = ts_query_new(l->grammar(), query, (uint32_t)strlen(query), &off, &qe);
	CHECK(q != NULL);
	if (q) {
		ts_query_cursor_exec(cur, q, ts_tree_root_node(tree));
		while (n < 100 && ts_query_cursor_next_match(cur, &m))
			n++;
	}
	ts_query_delete(q);
	ts_query_cursor_delete(cur);
	ts_tree_delete(tree);
	ts_parser_delete(p);
	return n;
}

/*
 * A fix campaign's default query (every function) and the whole-file query
 * compile for every language and find what they promise: here each snippet
 * holds three functions (or methods) among other code.
 */
static void test_default_queries(void)
{
	static const struct { const char *lang, *src; } cases[] = {
		{ "c", "int x;\nstatic int f(void) { return 1; }\nstruct s { int a; };\n"
		  "int g(int a) { return a; }\nvoid h(void) {}\n" },
		{ "cpp", "int x;\nint f() { return 1; }\nclass C { int m() { return 2; } };\n"
		  "void h() {}\n" },
		{ "python", "x = 1\ndef f():\n    return 1\nclass C:\n    def m(self):\n"
		  "        return 2\n@dec\ndef g():\n    pass\n" },
		{ "javascript", "let x = 1;\nfunction f() { return 1; }\n"
		  "class C { m() { return 2; } }\nconst g = (a) => a + 1;\n" },
		{ "typescript", "let x: number = 1;\nfunction f(): number { return 1; }\n"
		  "class C { m(): number { return 2; } }\nconst g = (a: number) => a + 1;\n" },
		{ "tsx", "function f() { return <div/>; }\nclass C { m() { return 2; } }\n"
		  "const g = () => 1;\n" },
		{ "go", "package p\nvar x = 1\nfunc f() int { return 1 }\ntype T struct{}\n"
		  "func (t T) m() int { return 2 }\nfunc g() {}\n" },
		{ "java", "class C {\n  int x;\n  C() { x = 1; }\n  int m() { return 2; }\n"
		  "  void n() {}\n}\n" },
		{ "rust", "struct S;\nfn f() -> i32 { 1 }\nimpl S { fn m(&self) -> i32 { 2 } }\n"
		  "fn g() {}\n" },
		{ "bash", "x=1\nf() { echo 1; }\nfunction g { echo 2; }\nh() { :; }\necho $x\n" },
	};
	size_t n = 0;

	for (const sl_lang *l; n < NLANG_NAMES && (l = sl_lang_find(lang_names[n])); n++) {
		sl_err err = SL_ERR_INIT;
		uint32_t off;
		const char *fq = sl_lang_function_query(l->name);

		CHECK(sl_lang_file_query(l->name) != NULL);
		CHECK_INT(sl_scope_check_query(l->name, sl_lang_file_query(l->name), NULL, &off,
					       &err), 0);
		if (!strcmp(l->name, "json")) {
			CHECK(fq == NULL);
			continue;
		}
		CHECK(fq != NULL);
		if (!fq)
			continue;
		CHECK_INT(sl_scope_check_query(l->name, fq, NULL, &off, &err), 0);
		CHECK_STR(err.msg, "");
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
			if (!strcmp(cases[i].lang, l->name)) {
				if (count_matches(l, fq, cases[i].src) != 3)
					fprintf(stderr, "%s: %u functions\n", l->name,
						count_matches(l, fq, cases[i].src));
				CHECK_INT(count_matches(l, fq, cases[i].src), 3);
				CHECK_INT(count_matches(l, sl_lang_file_query(l->name),
							cases[i].src), 1);
			}
	}
	CHECK(sl_lang_function_query("cobol") == NULL);
	CHECK(sl_lang_file_query(NULL) == NULL);
}

static void test_lang_for_path(void)
{
	sl_lang_override ov[] = { { "*.h", "cpp" }, { "gen/**", "json" } };

	CHECK_STR(sl_lang_for_path("a/b.c"), "c");
	CHECK_STR(sl_lang_for_path("x.h"), "c");
	CHECK_STR(sl_lang_for_path("x.hpp"), "cpp");
	CHECK_STR(sl_lang_for_path("x.tsx"), "tsx");
	CHECK_STR(sl_lang_for_path("x.ts"), "typescript");
	CHECK_STR(sl_lang_for_path("x.jsx"), "javascript");
	CHECK_STR(sl_lang_for_path("x.rs"), "rust");
	CHECK_STR(sl_lang_for_path("x.go"), "go");
	CHECK_STR(sl_lang_for_path("X.java"), "java");
	CHECK_STR(sl_lang_for_path("run.sh"), "bash");
	CHECK_STR(sl_lang_for_path("p.json"), "json");
	CHECK(sl_lang_for_path(".bashrc") == NULL);
	CHECK(sl_lang_for_path("Makefile") == NULL);
	CHECK_STR(sl_lang_for_path_ex("deep/dir/x.h", ov, 2), "cpp");
	CHECK_STR(sl_lang_for_path_ex("gen/a/b.c", ov, 2), "json");
	CHECK_STR(sl_lang_for_path_ex("src/a.c", ov, 2), "c");
}

static void test_statement_types(void)
{
	const sl_lang *c = sl_lang_find("c");

	CHECK(sl_lang_is_stmt_type(c, "expression_statement"));
	CHECK(sl_lang_is_stmt_type(c, "declaration"));
	CHECK(!sl_lang_is_stmt_type(c, "compound_statement"));
	CHECK(!sl_lang_is_stmt_type(c, "call_expression"));
}

static void check_regex(const char *re, const char *want)
{
	char out[64];

	sl_regex_literal(re, out, sizeof(out));
	if (strcmp(out, want))
		fprintf(stderr, "regex '%s': got '%s', want '%s'\n", re, out, want);
	CHECK_STR(out, want);
}

static void test_regex_literal(void)
{
	check_regex("^strcpy$", "strcpy");
	check_regex("foo.*barbaz", "barbaz");
	check_regex("ab?cd", "cd");
	check_regex("ab*", "a");
	check_regex("ab+c", "ab");
	check_regex("x{2}yz", "yz");
	check_regex("a|bcd", "");
	check_regex("a\\|bcd", "");
	check_regex("(foo)?barx", "barx");
	check_regex("(abcdef)bar", "bar");
	check_regex("[abc]de", "de");
	check_regex("[]x]yy", "yy");
	check_regex("\\.open", ".open");
	check_regex("\\wname", "name");
	check_regex("", "");
}

/* The alternatives of re, comma-separated ("" when none). */
static void check_alts(const char *re, const char *want)
{
	sl_strvec v = SL_STRVEC_INIT;
	sl_buf got = SL_BUF_INIT;
	size_t n = sl_regex_alternatives(re, &v);

	CHECK_INT(n, v.n);
	for (size_t i = 0; i < v.n; i++)
		sl_buf_addf(&got, "%s%s", i ? "," : "", v.v[i]);
	CHECK_STR(got.len ? got.buf : "", want);
	sl_buf_release(&got);
	sl_strvec_release(&v);
}

static void test_regex_alternatives(void)
{
	check_alts("a|bcd", "a,bcd");
	check_alts("^(memcpy|free|xfree)$", "memcpy,free,xfree");
	check_alts("^strcpy$", "");
	check_alts("^a$|^b$", "a,b");
	check_alts("(ab|cd)e", "");
	check_alts("a|(b|c)", "");
	check_alts("a|[|]", "");
	check_alts("a|b*", "");
	check_alts("foo|ba+r", "foo,ba");
	check_alts("a\\|b", "");
	check_alts("|a", "");
	check_alts("", "");
}

/*
 * The filter of a C query (keywords: with the language's keyword table)
 * requires exactly the literals in want (a comma-separated list; NULL: no
 * filter): a text holding all of them passes, a text with none is stopped.
 */
static void check_filter(const char *query, int keywords, const char *want)
{
	uint32_t off;
	TSQueryError type;
	TSQuery *q = ts_query_new(sl_lang_find("c")->grammar(), query, (uint32_t)strlen(query),
				  &off, &type);
	sl_prefilter *f;
	sl_strvec lits = SL_STRVEC_INIT;
	sl_buf all = SL_BUF_INIT;

	CHECK(q != NULL);
	if (!q)
		return;
	f = keywords ? sl_prefilter_new_ex(q, query, strlen(query),
					   sl_lang_keyword_nodes(sl_lang_find("c")), NULL) :
		       sl_prefilter_new(q);
	if (!want) {
		CHECK(f == NULL);
		goto done;
	}
	CHECK(f != NULL);
	for (const char *w = want, *e; *w; w = *e ? e + 1 : e) {
		e = strchr(w, ',');
		e = e ? e : w + strlen(w);
		sl_strvec_push_nodup(&lits, sl_xstrndup(w, (size_t)(e - w)));
		sl_buf_addf(&all, " %.*s ", (int)(e - w), w);
	}
	CHECK_INT(sl_prefilter_count(f), lits.n);
	CHECK(sl_prefilter_pass(f, all.buf, all.len));
	CHECK(!sl_prefilter_pass(f, "@@@", 3));
done:
	sl_buf_release(&all);
	sl_strvec_release(&lits);
	sl_prefilter_free(f);
	ts_query_delete(q);
}

static void check_pf(const char *query, const char *want)
{
	check_filter(query, 0, want);
}

static void check_kw(const char *query, const char *want)
{
	check_filter(query, 1, want);
}

static void test_prefilter_literals(void)
{
	check_pf("((identifier) @i (#eq? @i \"strcpy\"))", "strcpy");
	check_pf("((identifier) @i (#any-of? @i \"a\" \"bb\"))", "a,bb");
	check_pf("((identifier) @i (#match? @i \"^mem[a-z]+cpy$\"))", "mem");
	/* negations, capture comparisons, optional captures: nothing safe to require */
	check_pf("((identifier) @i (#not-eq? @i \"strcpy\"))", NULL);
	check_pf("((identifier) @i (#not-any-of? @i \"a\"))", NULL);
	check_pf("((call_expression function: (identifier) @a arguments: (argument_list (identifier) @b)) (#eq? @a @b))", NULL);
	check_pf("((call_expression function: (identifier) @f arguments: (argument_list (identifier)? @o)) @c (#eq? @o \"x\"))", NULL);
	check_pf("((call_expression function: (identifier) @f arguments: (argument_list (identifier)* @o)) @c (#eq? @o \"x\"))", NULL);
	/* an alternation: any one branch's literal */
	check_pf("((identifier) @i (#match? @i \"a|b\"))", "a,b");
	check_pf("((identifier) @i (#match? @i \"^(memcpy|free|x?strcpy)$\"))", "memcpy,free,strcpy");
	check_pf("((identifier) @i (#match? @i \"^(a|.*)$\"))", NULL);
	check_pf("((identifier) @i (#match? @i \"(a|b)c|d\"))", NULL);
	check_pf("((identifier) @i (#match? @i \"a\\\\|b\"))", NULL);
	check_pf("([(identifier) @a (number_literal)] @x (#eq? @a \"foo\"))", NULL);
	check_pf("([(identifier) @a (number_literal) @a] (#eq? @a \"foo\"))", "foo");
	check_pf("((identifier) @i (#eq? @i \"\"))", NULL);
	/* a pattern without a requirement disables the filter */
	check_pf("((identifier) @i (#eq? @i \"x\")) (string_literal) @s", NULL);
	/* two patterns: either literal */
	check_pf("((identifier) @i (#eq? @i \"x\")) ((identifier) @j (#eq? @j \"y\"))", "x,y");
}

static void test_prefilter_pass(void)
{
	const char *query = "((identifier) @i (#eq? @i \"strcpy\") (#any-of? @i \"strcpy\" \"z\"))"
			    " ((identifier) @j (#eq? @j \"puts\"))";
	uint32_t off;
	TSQueryError type;
	TSQuery *q = ts_query_new(sl_lang_find("c")->grammar(), query, (uint32_t)strlen(query),
				  &off, &type);
	sl_prefilter *f = sl_prefilter_new(q);

	CHECK(f != NULL);
	CHECK(sl_prefilter_pass(f, "x strcpy(a)", 11));
	CHECK(sl_prefilter_pass(f, "puts", 4));
	CHECK(!sl_prefilter_pass(f, "strcp puts_", 5));
	CHECK(!sl_prefilter_pass(f, "nothing", 7));
	CHECK(sl_prefilter_pass(NULL, "", 0));
	sl_prefilter_free(f);
	ts_query_delete(q);
}

/*
 * Every pair of the keyword tables (generated from the grammars) names a
 * visible node type and words (a token's text: anonymous "for", or named
 * as Python's (false) is "False").
 */
static void test_keyword_table(void)
{
	for (size_t i = 0; i < NLANG_NAMES; i++) {
		const sl_lang *l = sl_lang_find(lang_names[i]);
		const char *const *kw = sl_lang_keyword_nodes(l);

		for (size_t j = 0; kw && kw[j]; j += 2) {
			CHECK(kw[j + 1] != NULL && kw[j][0] != '_');
			for (const char *w = kw[j + 1], *e; *w; w = *e ? e + 1 : e) {
				e = strchr(w, '|');
				e = e ? e : w + strlen(w);
				CHECK(e > w && !isdigit((unsigned char)*w));
				while (w < e && (isalnum((unsigned char)*w) || *w == '_'))
					w++;
				CHECK(w == e);
			}
		}
	}
	CHECK(sl_lang_keyword_nodes(sl_lang_find("c")) != NULL);
	CHECK(sl_lang_keyword_nodes(sl_lang_find("python")) != NULL);
}

static void test_prefilter_keywords(void)
{
	check_kw("(for_statement) @f", "for");
	check_kw("(function_definition body: (compound_statement (for_statement) @for))", "for");
	check_kw("(if_statement consequence: (return_statement) @r) @i", "if,return");
	check_kw("; (while_statement)\n(if_statement) @i", "if");
	check_kw("\"while\" @w", "while");
	check_kw("(compound_statement (for_statement)+ @f) @c", "for");
	/* optional, alternatives, a type without a table entry: nothing safe to require */
	check_kw("(compound_statement (for_statement)? @f) @c", NULL);
	check_kw("(compound_statement (for_statement)* @f) @c", NULL);
	check_kw("[(for_statement) (while_statement)] @loop", NULL);
	/* a type that begins with one of several keywords: any one of them */
	check_kw("(case_statement) @c", "case,default");
	check_kw("(type_definition) @t", "__extension__,typedef");
	/* a keyword alone in its production may be a MISSING node: no requirement */
	check_kw("(null) @n", NULL);
	check_kw("(ms_restrict_modifier) @m", NULL);
	check_kw("(for_statement) @f (identifier) @i", NULL);
	/* what every branch shares; either pattern; with a predicate's literal */
	check_kw("[(for_statement (break_statement)) (while_statement (break_statement))] @l", "break");
	check_kw("(for_statement) @f (while_statement) @w", "for,while");
	check_kw("((for_statement) @f (#match? @f \"i\\+\\+\"))", "i,for");
	/* without the table: only predicates count */
	check_pf("(for_statement) @f", NULL);
}

static void test_prefilter_keyword_words(void)
{
	const char *query = "(for_statement) @f";
	uint32_t off;
	TSQueryError type;
	TSQuery *q = ts_query_new(sl_lang_find("c")->grammar(), query, (uint32_t)strlen(query),
				  &off, &type);
	sl_prefilter *f = sl_prefilter_new_ex(q, query, strlen(query),
					      sl_lang_keyword_nodes(sl_lang_find("c")), NULL);
	static const char *const yes[] = { "for (;;) {}", "x;for(", "/* for */", "1for",
					   "#definefor", "# definefor", "\xc3\xa9" "for", "a.for", "$for",
					   "\\u00e9for", "for" };
	static const char *const no[] = { "format(x)", "x_for", "for_each", "afor ", "before",
					  "forX", "for9", "" };

	CHECK(f != NULL);
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		CHECK(sl_prefilter_pass(f, yes[i], strlen(yes[i])));
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		CHECK(!sl_prefilter_pass(f, no[i], strlen(no[i])));
	sl_prefilter_free(f);
	ts_query_delete(q);
}

/* A filter with the C tables for query, or NULL; *q gets the query to free. */
static sl_prefilter *c_filter(const char *query, TSQuery **q)
{
	const sl_lang *c = sl_lang_find("c");
	uint32_t off;
	TSQueryError type;

	*q = ts_query_new(c->grammar(), query, (uint32_t)strlen(query), &off, &type);
	CHECK(*q != NULL);
	return *q ? sl_prefilter_new_ex(*q, query, strlen(query), sl_lang_keyword_nodes(c),
					c->list_nodes) : NULL;
}

/* Whether f passes code, the text already blanked (items.h). */
static int passes(const sl_prefilter *f, const char *code)
{
	return sl_prefilter_pass_code(f, code, code, strlen(code));
}

static void test_prefilter_separators(void)
{
	TSQuery *q;
	sl_prefilter *f = c_filter("(call_expression arguments: (argument_list . (_) . (_) . (_) .)) @c", &q);

	/* exactly three children: two separators, and at most two commas, in one group */
	CHECK(f != NULL);
	CHECK(passes(f, "x = f(a, b, c);"));
	CHECK(!passes(f, "x = f(a, b);"));
	CHECK(!passes(f, "x = f(a, b, c, d);"));
	CHECK(passes(f, "x = g(f(a, b, c), d, e, h);"));
	CHECK(!passes(f, "x = f(a, g(b, c, d, e));"));
	CHECK(!passes(f, "x = f[a, b, c] + { a, b, c };"));
	/* a comment is a child: what the blanking leaves of it is a '/' */
	CHECK(passes(f, "f(a, /          b);"));
	/* a function definition's parameters are no argument list */
	CHECK(!passes(f, "int f\x01int a, int b, int c)\n{"));
	CHECK(passes(f, "int f\x01int a, int b, int c)\n{ g(a, b, c);"));
	/* without the blanked text separators are not judged */
	CHECK(sl_prefilter_pass(f, "x;", 2));
	sl_prefilter_free(f);
	ts_query_delete(q);

	/* not anchored: at least three */
	f = c_filter("(argument_list (_) (_) (_)) @a", &q);
	CHECK(f != NULL);
	CHECK(passes(f, "f(a, b, c, d);"));
	CHECK(!passes(f, "f(a, b);"));
	sl_prefilter_free(f);
	ts_query_delete(q);
	/* anchored at one end only: at least */
	f = c_filter("(argument_list . (_) . (_)) @a", &q);
	CHECK(f != NULL);
	CHECK(passes(f, "f(a, b, c, d);"));
	CHECK(!passes(f, "f(a);"));
	sl_prefilter_free(f);
	ts_query_delete(q);
	/* nested in the pattern: needed too, with the keyword */
	f = c_filter("(if_statement condition: (_ (call_expression arguments: (argument_list (_) (_))))) @i", &q);
	CHECK(f != NULL);
	CHECK(passes(f, "if (f(a, b)) x;"));
	CHECK(!passes(f, "if (f(a)) x;"));
	CHECK(!passes(f, "g(f(a, b));"));
	sl_prefilter_free(f);
	ts_query_delete(q);
	/* what requires no separator gives no filter */
	for (size_t i = 0; i < 6; i++) {
		static const char *const none[] = {
			"(argument_list (_)) @a",
			"(argument_list (_)* (_)) @a",
			"(argument_list (_)? (_)) @a",
			"(argument_list . (_) .) @a",
			"(argument_list ((_) (_))) @a",
			"(argument_list \",\" \",\") @a",
		};

		f = c_filter(none[i], &q);
		CHECK(f == NULL);
		sl_prefilter_free(f);
		ts_query_delete(q);
	}
	/* an alternation needs what both branches do: the lesser, not exact */
	f = c_filter("[(argument_list . (_) . (_) .) (argument_list (_) (_) (_))] @a", &q);
	CHECK(f != NULL);
	CHECK(passes(f, "f(a, b, c, d);"));
	CHECK(passes(f, "f(a, b);"));
	CHECK(!passes(f, "f(a);"));
	sl_prefilter_free(f);
	ts_query_delete(q);
}

int main(void)
{
	RUN(test_node_types_exist);
	RUN(test_default_queries);
	RUN(test_lang_for_path);
	RUN(test_statement_types);
	RUN(test_regex_literal);
	RUN(test_regex_alternatives);
	RUN(test_prefilter_literals);
	RUN(test_prefilter_pass);
	RUN(test_keyword_table);
	RUN(test_prefilter_keywords);
	RUN(test_prefilter_keyword_words);
	RUN(test_prefilter_separators);
	return unit_done();
}
