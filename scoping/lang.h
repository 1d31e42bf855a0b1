/*
 * lang.h - scoping's internal table of built-in languages.
 *
 * Each language names its tree-sitter grammar (linked in from the grammar
 * objects the build compiles), the file extensions that select it, and the
 * node types that make its units: "function" (functions and methods),
 * "class" (classes, structs, interfaces, impls...) and "statement".  The
 * public lookups (sl_lang_known, sl_lang_for_path, sl_lang_names) are
 * declared in scope.h.
 */
#ifndef SL_SCOPING_LANG_H
#define SL_SCOPING_LANG_H

#include <tree_sitter/api.h>

typedef struct sl_lang {
	const char *name;
	const char *const *exts;        /* NULL-terminated, with the dot: ".c" */
	const TSLanguage *(*grammar)(void);
	const char *const *func_types;  /* NULL-terminated node types of a function unit */
	const char *func_wrapper;       /* a parent type that owns a function or class
					   (decorators), or NULL */
	const char *const *class_types; /* NULL-terminated node types of a class unit */
	const char *const *stmt_types;  /* statement node types besides "*_statement" */
	const char *const *not_stmt;    /* "*_statement" types that are blocks, not statements */
	const char *const *import_types;/* top-level nodes that import or include */
	const char *const *def_types;   /* nodes that define a named symbol (context index) */
	const char *const *item_holders;/* when sl_items_split (items.h) finds the top-level
					   items of a file: the node types that hold them (the
					   root's, conditionals'), NULL-terminated; else NULL */
	const char *const *stmt_holders;/* and the types that may hold two statements of a
					   function's body (SL_ITEMS_STATEMENTS), in the form
					   sl_prefilter_below_root reads */
	const char *const *list_nodes;  /* '('-delimited lists whose children ',' separates
					   (prefilter.h), NULL-terminated; or NULL */
	const char *const *body_holders;/* with item_holders: the types a statement directly
					   in a function's body is not (SL_ITEMS_BODY), in the
					   form sl_prefilter_body_child reads; or NULL */
} sl_lang;

/* The built-in language called name, or NULL. */
const sl_lang *sl_lang_find(const char *name);

/* 1 if a node of this type is a function / class / statement unit of the language. */
int sl_lang_is_func_type(const sl_lang *lang, const char *type);
int sl_lang_is_class_type(const sl_lang *lang, const char *type);
int sl_lang_is_stmt_type(const sl_lang *lang, const char *type);
int sl_lang_is_import_type(const sl_lang *lang, const char *type);
int sl_lang_is_def_type(const sl_lang *lang, const char *type);

/*
 * Pairs (node type, keywords), NULL-terminated: every node of that type
 * begins with the keyword token, or with one of the keywords joined by
 * '|', so a file without one of them as a word holds no such node (the
 * keyword prefilter, prefilter.h).  Generated from the grammar
 * (keywords.h).  NULL for a language without a table.  Static.
 */
const char *const *sl_lang_keyword_nodes(const sl_lang *lang);

#endif
