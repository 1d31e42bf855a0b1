/*
 * lang.c - the built-in languages: names, extensions, grammars and the node
 * types of each unit.  Adding a language means adding its grammar objects
 * to the build (GRAMMARS in the Makefile) and one row here; test_scope_lang
 * checks that every node type named here exists in its grammar.
 *
 * A path's language comes from its extension; a list of (glob, language)
 * overrides, first match wins, is consulted before the extension.
 */
#include <stddef.h>
#include <string.h>

#include "scoping/lang.h"
#include "scoping/keywords.h"
#include "scoping/scope.h"
#include "common/util.h"

const TSLanguage *tree_sitter_bash(void);
const TSLanguage *tree_sitter_c(void);
const TSLanguage *tree_sitter_cpp(void);
const TSLanguage *tree_sitter_go(void);
const TSLanguage *tree_sitter_java(void);
const TSLanguage *tree_sitter_javascript(void);
const TSLanguage *tree_sitter_json(void);
const TSLanguage *tree_sitter_python(void);
const TSLanguage *tree_sitter_rust(void);
const TSLanguage *tree_sitter_typescript(void);
const TSLanguage *tree_sitter_tsx(void);

#define L(...) ((const char *const[]){ __VA_ARGS__, NULL })
#define NONE ((const char *const[]){ NULL })

#define JS_FUNCS L("function_declaration", "function_expression", "arrow_function", \
		   "method_definition", "generator_function_declaration", "generator_function")
#define JS_DEFS L("function_declaration", "generator_function_declaration", \
		  "class_declaration", "method_definition", "variable_declarator")
#define TS_DEFS L("function_declaration", "generator_function_declaration", \
		  "class_declaration", "abstract_class_declaration", "method_definition", \
		  "variable_declarator", "interface_declaration", "type_alias_declaration", \
		  "enum_declaration")
#define TS_CLASSES L("class_declaration", "abstract_class_declaration", "class", \
		     "interface_declaration", "enum_declaration")

/* the root and the conditionals that hold top-level items (items.h) */
#define C_ITEM_HOLDERS L("translation_unit", "preproc_if", "preproc_ifdef", "preproc_else", \
			 "preproc_elif", "preproc_elifdef")
/*
 * and what may hold two of a function's statements: blocks, statements
 * (a labelled or a case one holds the next), the function, any directive,
 * a quoted keyword ("else")
 */
#define C_STMT_HOLDERS L("translation_unit", "preproc_*", "function_definition", \
			 "compound_statement", "*_statement", "else_clause", "\"")
#define CPP_STMT_HOLDERS L("translation_unit", "preproc_*", "function_definition", \
			   "compound_statement", "*_statement", "else_clause", "catch_clause", \
			   "declaration_list", "\"")
/*
 * what a statement directly in a function's body is not (SL_ITEMS_BODY):
 * the function, the file, a directive (its function is one piece), an
 * anonymous node (a body's own braces), a MISSING one
 */
#define C_BODY_HOLDERS L("translation_unit", "preproc_*", "function_definition", "\"", \
			 "MISSING")
/* not parameter_list: a definition's are not counted (SL_ITEMS_PARAMS) */
#define C_LISTS L("argument_list")

static const sl_lang langs[] = {
	{ "c", L(".c", ".h"), tree_sitter_c,
	  L("function_definition"), NULL,
	  L("struct_specifier", "union_specifier", "enum_specifier"),
	  L("declaration"), L("compound_statement"),
	  L("preproc_include"),
	  L("function_definition", "type_definition", "struct_specifier", "union_specifier",
	    "enum_specifier", "preproc_def", "preproc_function_def", "declaration"),
	  C_ITEM_HOLDERS, C_STMT_HOLDERS, C_LISTS, C_BODY_HOLDERS },
	{ "cpp", L(".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx", ".h++", ".ipp"),
	  tree_sitter_cpp,
	  L("function_definition", "lambda_expression"), NULL,
	  L("class_specifier", "struct_specifier", "union_specifier", "enum_specifier"),
	  L("declaration"), L("compound_statement"),
	  L("preproc_include", "using_declaration"),
	  L("function_definition", "type_definition", "class_specifier", "struct_specifier",
	    "union_specifier", "enum_specifier", "preproc_def", "preproc_function_def",
	    "alias_declaration", "declaration"),
	  C_ITEM_HOLDERS, CPP_STMT_HOLDERS, C_LISTS, C_BODY_HOLDERS },
	{ "python", L(".py", ".pyi"), tree_sitter_python,
	  L("function_definition"), "decorated_definition",
	  L("class_definition"),
	  L("decorated_definition"), NONE,
	  L("import_statement", "import_from_statement"),
	  L("function_definition", "class_definition", "assignment"), NULL, NULL, NULL, NULL },
	{ "javascript", L(".js", ".mjs", ".cjs", ".jsx"), tree_sitter_javascript,
	  JS_FUNCS, NULL,
	  L("class_declaration", "class"),
	  L("lexical_declaration", "variable_declaration"), NONE,
	  L("import_statement"),
	  JS_DEFS, NULL, NULL, NULL, NULL },
	{ "typescript", L(".ts", ".mts", ".cts"), tree_sitter_typescript,
	  JS_FUNCS, NULL, TS_CLASSES,
	  L("lexical_declaration", "variable_declaration", "type_alias_declaration"), NONE,
	  L("import_statement"),
	  TS_DEFS, NULL, NULL, NULL, NULL },
	{ "tsx", L(".tsx"), tree_sitter_tsx,
	  JS_FUNCS, NULL, TS_CLASSES,
	  L("lexical_declaration", "variable_declaration", "type_alias_declaration"), NONE,
	  L("import_statement"),
	  TS_DEFS, NULL, NULL, NULL, NULL },
	{ "go", L(".go"), tree_sitter_go,
	  L("function_declaration", "method_declaration", "func_literal"), NULL,
	  L("type_declaration"),
	  L("short_var_declaration", "var_declaration", "const_declaration"), NONE,
	  L("import_declaration"),
	  L("function_declaration", "method_declaration", "type_spec", "var_spec", "const_spec"), NULL, NULL, NULL, NULL },
	{ "java", L(".java"), tree_sitter_java,
	  L("method_declaration", "constructor_declaration", "lambda_expression"), NULL,
	  L("class_declaration", "interface_declaration", "enum_declaration",
	    "record_declaration", "annotation_type_declaration"),
	  L("local_variable_declaration"), NONE,
	  L("import_declaration", "package_declaration"),
	  L("method_declaration", "constructor_declaration", "class_declaration",
	    "interface_declaration", "enum_declaration", "record_declaration", "field_declaration"), NULL, NULL, NULL, NULL },
	{ "rust", L(".rs"), tree_sitter_rust,
	  L("function_item", "closure_expression"), NULL,
	  L("struct_item", "enum_item", "union_item", "trait_item", "impl_item"),
	  L("let_declaration"), NONE,
	  L("use_declaration", "extern_crate_declaration", "mod_item"),
	  L("function_item", "struct_item", "enum_item", "union_item", "trait_item",
	    "type_item", "const_item", "static_item", "macro_definition"), NULL, NULL, NULL, NULL },
	{ "bash", L(".sh", ".bash"), tree_sitter_bash,
	  L("function_definition"), NULL,
	  NONE,
	  L("command", "pipeline", "list", "variable_assignment", "declaration_command",
	    "redirected_statement", "negated_command", "test_command", "subshell"),
	  L("redirected_statement"),
	  NONE,
	  L("function_definition"), NULL, NULL, NULL, NULL },
	{ "json", L(".json"), tree_sitter_json,
	  NONE, NULL,
	  NONE,
	  L("pair"), NONE,
	  NONE,
	  NONE, NULL, NULL, NULL, NULL },
};

#define NLANGS (sizeof(langs) / sizeof(langs[0]))

const sl_lang *sl_lang_find(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < NLANGS; i++)
		if (!strcmp(langs[i].name, name))
			return &langs[i];
	return NULL;
}

static int in_list(const char *const *list, const char *type)
{
	for (const char *const *t = list; *t; t++)
		if (!strcmp(*t, type))
			return 1;
	return 0;
}

int sl_lang_is_func_type(const sl_lang *lang, const char *type)
{
	return in_list(lang->func_types, type);
}

int sl_lang_is_class_type(const sl_lang *lang, const char *type)
{
	return in_list(lang->class_types, type);
}

int sl_lang_is_stmt_type(const sl_lang *lang, const char *type)
{
	static const char suffix[] = "_statement";
	size_t n = strlen(type), s = sizeof(suffix) - 1;

	if (n > s && !strcmp(type + n - s, suffix))
		return !in_list(lang->not_stmt, type);
	return in_list(lang->stmt_types, type);
}

int sl_lang_is_import_type(const sl_lang *lang, const char *type)
{
	return in_list(lang->import_types, type);
}

int sl_lang_is_def_type(const sl_lang *lang, const char *type)
{
	return in_list(lang->def_types, type);
}

const char *const *sl_lang_keyword_nodes(const sl_lang *lang)
{
	return sl_lang_keyword_table(lang->name);
}

int sl_lang_known(const char *name)
{
	return sl_lang_find(name) != NULL;
}

const char *sl_lang_for_path(const char *path)
{
	return sl_lang_for_path_ex(path, NULL, 0);
}

/* A glob without '/' matches the base name in any directory, as in .gitignore. */
static int override_match(const char *glob, const char *path)
{
	const char *base = strrchr(path, '/');

	if (!strchr(glob, '/'))
		return sl_glob_match(glob, base ? base + 1 : path);
	return sl_glob_match(glob, path);
}

const char *sl_lang_for_path_ex(const char *path, const sl_lang_override *ov, size_t nov)
{
	const char *base, *dot;

	if (!path)
		return NULL;
	for (size_t i = 0; i < nov; i++)
		if (ov[i].glob && ov[i].language && override_match(ov[i].glob, path))
			return sl_lang_find(ov[i].language) ? sl_lang_find(ov[i].language)->name : NULL;
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	dot = strrchr(base, '.');
	/* a leading dot names a hidden file, not an extension */
	if (!dot || dot == base)
		return NULL;
	for (size_t i = 0; i < NLANGS; i++)
		for (const char *const *e = langs[i].exts; *e; e++)
			if (!strcmp(*e, dot))
				return langs[i].name;
	return NULL;
}

#define JS_FUNC_QUERY "[(function_declaration) (generator_function_declaration) " \
	"(function_expression) (generator_function) (arrow_function) (method_definition)] @unit"

/* Per language: the default query of a fix campaign, the query of a whole file. */
static const struct {
	const char *lang, *func, *file;
} queries[] = {
	{ "c", "(function_definition) @unit", "(translation_unit) @file" },
	{ "cpp", "(function_definition) @unit", "(translation_unit) @file" },
	{ "python", "(function_definition) @unit", "(module) @file" },
	{ "javascript", JS_FUNC_QUERY, "(program) @file" },
	{ "typescript", JS_FUNC_QUERY, "(program) @file" },
	{ "tsx", JS_FUNC_QUERY, "(program) @file" },
	{ "go", "[(function_declaration) (method_declaration)] @unit", "(source_file) @file" },
	{ "java", "[(method_declaration) (constructor_declaration)] @unit", "(program) @file" },
	{ "rust", "(function_item) @unit", "(source_file) @file" },
	{ "bash", "(function_definition) @unit", "(program) @file" },
	{ "json", NULL, "(document) @file" },
};

const char *sl_lang_function_query(const char *name)
{
	for (size_t i = 0; name && i < sizeof(queries) / sizeof(queries[0]); i++)
		if (!strcmp(queries[i].lang, name))
			return queries[i].func;
	return NULL;
}

const char *sl_lang_file_query(const char *name)
{
	for (size_t i = 0; name && i < sizeof(queries) / sizeof(queries[0]); i++)
		if (!strcmp(queries[i].lang, name))
			return queries[i].file;
	return NULL;
}

const char *sl_lang_names(void)
{
	return "c, cpp, python, javascript, typescript, tsx, go, java, rust, bash, json";
}
