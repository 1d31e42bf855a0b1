/*
 * lang.h - scoping's internal table of built-in languages.
 *
 * Each language names its tree-sitter grammar (linked in from the grammar
 * objects the build compiles), the file extensions that select it, and the
 * node types that make a "function" unit.  The public lookups
 * (sl_lang_known, sl_lang_for_path, sl_lang_names) are declared in scope.h.
 */
#ifndef SL_SCOPING_LANG_H
#define SL_SCOPING_LANG_H

#include <tree_sitter/api.h>

typedef struct sl_lang {
	const char *name;
	const char *const *exts;        /* NULL-terminated, with the dot: ".c" */
	const TSLanguage *(*grammar)(void);
	const char *const *func_types;  /* NULL-terminated node types of a function unit */
	const char *func_wrapper;       /* a parent type that owns the function (decorators), or NULL */
} sl_lang;

/* The built-in language called name, or NULL. */
const sl_lang *sl_lang_find(const char *name);

/* 1 if a node of this type is a function unit of the language. */
int sl_lang_is_func_type(const sl_lang *lang, const char *type);

#endif
