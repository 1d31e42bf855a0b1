/*
 * lang.c - the built-in languages: names, extensions, grammars and the node
 * types of a "function" unit.  Adding a language means adding its grammar
 * objects to the build (GRAMMARS in the Makefile) and one row here.
 */
#include <stddef.h>
#include <string.h>

#include "lang.h"
#include "scope.h"
#include "util.h"

const TSLanguage *tree_sitter_c(void);
const TSLanguage *tree_sitter_python(void);

static const char *const c_exts[] = { ".c", ".h", NULL };
static const char *const c_funcs[] = { "function_definition", NULL };
static const char *const py_exts[] = { ".py", NULL };
static const char *const py_funcs[] = { "function_definition", NULL };

static const sl_lang langs[] = {
	{ "c", c_exts, tree_sitter_c, c_funcs, NULL },
	{ "python", py_exts, tree_sitter_python, py_funcs, "decorated_definition" },
};

const sl_lang *sl_lang_find(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < sizeof(langs) / sizeof(langs[0]); i++)
		if (!strcmp(langs[i].name, name))
			return &langs[i];
	return NULL;
}

int sl_lang_is_func_type(const sl_lang *lang, const char *type)
{
	for (const char *const *t = lang->func_types; *t; t++)
		if (!strcmp(*t, type))
			return 1;
	return 0;
}

int sl_lang_known(const char *name)
{
	return sl_lang_find(name) != NULL;
}

const char *sl_lang_for_path(const char *path)
{
	const char *base, *dot;

	if (!path)
		return NULL;
	base = strrchr(path, '/');
	base = base ? base + 1 : path;
	dot = strrchr(base, '.');
	/* a leading dot names a hidden file, not an extension */
	if (!dot || dot == base)
		return NULL;
	for (size_t i = 0; i < sizeof(langs) / sizeof(langs[0]); i++)
		for (const char *const *e = langs[i].exts; *e; e++)
			if (!strcmp(*e, dot))
				return langs[i].name;
	return NULL;
}

const char *sl_lang_names(void)
{
	return "c, python";
}
