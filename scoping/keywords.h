/*
 * keywords.h - the node types of each language whose every node begins
 * with a keyword, generated at build time from the grammars' grammar.json
 * by ci/gen-keywords.c (build/gen/keywords.c; how and why it is
 * computed is there).
 */
#ifndef SL_SCOPING_KEYWORDS_H
#define SL_SCOPING_KEYWORDS_H

/*
 * Pairs (node type, keywords), NULL-terminated, for the language named
 * lang (sl_lang's name), or NULL for a language the build did not read.
 * The keywords are one word or several joined by '|': a node of the type
 * begins with one of them.  The table is static.
 */
const char *const *sl_lang_keyword_table(const char *lang);

#endif
