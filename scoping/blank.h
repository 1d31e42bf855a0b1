/*
 * blank.h - a source file with its comments and the inside of its string
 * literals blanked, for the keyword prefilter (prefilter.h): a keyword
 * that is left can be a token, one that went cannot.
 *
 * A lexical scan per language, without parsing: Python ('#' comments; '',
 * "", ''' ''' and """ """ strings with their r, b and u prefixes) and Go
 * ('//' and block comments; "", `` and rune literals).  Where the scan
 * cannot vouch for what follows (an f-string, whose braces hold code; an
 * unterminated literal; a prefix it does not know) it copies the rest of
 * the file as it is, which keeps every keyword there: blanking too little
 * only keeps a file that could have been skipped.  C and C++ are blanked
 * by their item split (items.h).
 */
#ifndef SL_SCOPING_BLANK_H
#define SL_SCOPING_BLANK_H

#include <stddef.h>

/*
 * Write the len bytes of text, blanked, to out (len bytes, the caller's):
 * 1 when the language (sl_lang's name) has a scan, else 0 and out is not
 * touched.  A comment keeps its opening character ('#', '/'), a literal
 * its quotes; blanks are spaces, newlines stay.
 */
int sl_blank_code(const char *lang, const char *text, size_t len, char *out);

#endif
