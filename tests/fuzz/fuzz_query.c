/*
 * fuzz_query.c - a campaign's tree-sitter query with its predicates
 * (scoping/scope.c, predicate.c): the input is a query for C.  The checked
 * entry point screens it and compiles it in a bounded child; a query it
 * accepts is compiled here too, its predicates compiled, and it is run
 * with the scoper's match limit over a small C file, every match's
 * predicates evaluated.
 */
#include <tree_sitter/api.h>

#include "fuzz.h"
#include "scoping/lang.h"
#include "scoping/predicate.h"
#include "scoping/scope.h"

int sl_fuzz_query(const uint8_t *data, size_t size);

static const char fuzz_query_src[] =
	"#include <string.h>\n"
	"static int old_api(int x) { return x; }\n"
	"int f(char *a, const char *b)\n{\n\tstrcpy(a, b);\n\tif (a[0] == 'x')\n"
	"\t\treturn old_api(1) + old_api(2);\n\tfor (int i = 0; i < 3; i++)\n"
	"\t\ta[i] = \"xyz\"[i];\n\treturn 0;\n}\n"
	"struct s { int a; char *b; };\n";

int sl_fuzz_query(const uint8_t *data, size_t size)
{
	char *query = fuzz_str(data, size);
	const sl_lang *lang = sl_lang_find("c");
	TSParser *parser = NULL;
	TSTree *tree = NULL;
	TSQuery *q = NULL;
	TSQueryCursor *cursor = NULL;
	TSQueryMatch m;
	sl_preds *preds = NULL;
	sl_err err = SL_ERR_INIT;
	uint32_t off, eoff;
	TSQueryError etype;

	/* NUL bytes end the query for the spec loader too */
	if (memchr(data, 0, size) || sl_scope_check_query("c", query, NULL, &off, &err)) {
		FUZZ_CHECK(memchr(data, 0, size) || err.code == SL_EINPUT);
		goto done;
	}
	q = ts_query_new(lang->grammar(), query, (uint32_t)strlen(query), &eoff, &etype);
	FUZZ_CHECK(q != NULL);
	if (!q || sl_preds_compile(&preds, q, query, strlen(query), &off, &err))
		goto done;
	parser = ts_parser_new();
	ts_parser_set_language(parser, lang->grammar());
	tree = ts_parser_parse_string(parser, NULL, fuzz_query_src, sizeof(fuzz_query_src) - 1);
	cursor = ts_query_cursor_new();
	ts_query_cursor_set_match_limit(cursor, 10000);
	ts_query_cursor_exec(cursor, q, ts_tree_root_node(tree));
	for (int n = 0; n < 100000 && ts_query_cursor_next_match(cursor, &m); n++)
		(void)sl_preds_eval(preds, &m, fuzz_query_src, sizeof(fuzz_query_src) - 1);
done:
	if (cursor)
		ts_query_cursor_delete(cursor);
	if (tree)
		ts_tree_delete(tree);
	if (parser)
		ts_parser_delete(parser);
	sl_preds_free(preds);
	if (q)
		ts_query_delete(q);
	free(query);
	return 0;
}
SL_FUZZ_MAIN(sl_fuzz_query)
