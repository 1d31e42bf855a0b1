/*
 * blank.c - comments and literals blanked per language (blank.h).
 *
 * Each scan copies the text, then walks it once, blanking the inside of
 * each comment and literal it recognises; it returns where it stopped,
 * the rest left as copied.
 */
#include <ctype.h>
#include <string.h>

#include "scoping/blank.h"

/* Blank out[from, to), newlines kept. */
static void blank(char *out, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++)
		if (out[i] != '\n')
			out[i] = ' ';
}

/* The end of the line at or after i (its '\n', or len). */
static size_t line_end(const char *t, size_t len, size_t i)
{
	const char *nl = memchr(t + i, '\n', len - i);

	return nl ? (size_t)(nl - t) : len;
}

/*
 * The closing quote q of a literal whose inside starts at i: its index, or
 * len when it is not closed (before a newline, unless multiline).  A '\\'
 * escapes the next byte, in raw Python strings too.
 */
static size_t literal_end(const char *t, size_t len, size_t i, char q, int multiline)
{
	while (i < len && t[i] != q) {
		if (t[i] == '\n' && !multiline)
			return len;
		i += t[i] == '\\' ? 2 : 1;
	}
	return i < len ? i : len;
}

/* The letters before Python's quote at q: none, or a prefix of r, b and u only. */
static int py_prefix_ok(const char *t, size_t q)
{
	size_t j = q;

	while (j && (isalnum((unsigned char)t[j - 1]) || t[j - 1] == '_'))
		j--;
	if (q - j > 2)
		return 0;
	for (; j < q; j++)
		if (!strchr("rRbBuU", t[j]))
			return 0;
	return 1;
}

static size_t scan_python(const char *t, size_t len, char *out)
{
	size_t i = 0;

	while (i < len) {
		char c = t[i];
		size_t open, e;

		if (c == '#') {
			e = line_end(t, len, i);
			blank(out, i + 1, e);
			i = e;
		} else if (c == '\'' || c == '"') {
			if (!py_prefix_ok(t, i))
				return i;      /* an f-string's braces hold code */
			open = i + 2 < len && t[i + 1] == c && t[i + 2] == c ? 3 : 1;
			e = i + open;
			for (;;) {
				if ((e = literal_end(t, len, e, c, open == 3)) >= len)
					return i;
				if (open == 1 || (e + 2 < len && t[e + 1] == c && t[e + 2] == c))
					break;
				e++;
			}
			blank(out, i + open, e);
			i = e + open;
		} else {
			i++;
		}
	}
	return len;
}

static size_t scan_go(const char *t, size_t len, char *out)
{
	size_t i = 0;

	while (i < len) {
		char c = t[i];
		const char *end;
		size_t e;

		if (c == '/' && i + 1 < len && t[i + 1] == '/') {
			e = line_end(t, len, i);
			blank(out, i + 1, e);
			i = e;
		} else if (c == '/' && i + 1 < len && t[i + 1] == '*') {
			if (!(end = memmem(t + i + 2, len - i - 2, "*/", 2)))
				return i;
			e = (size_t)(end - t) + 2;
			blank(out, i + 1, e);
			i = e;
		} else if (c == '"' || c == '\'' || c == '`') {
			/* a raw string has no escapes and may span lines */
			if (c == '`') {
				end = memchr(t + i + 1, '`', len - i - 1);
				e = end ? (size_t)(end - t) : len;
			} else {
				e = literal_end(t, len, i + 1, c, 0);
			}
			if (e >= len)
				return i;
			blank(out, i + 1, e);
			i = e + 1;
		} else {
			i++;
		}
	}
	return len;
}

int sl_blank_code(const char *lang, const char *text, size_t len, char *out)
{
	size_t (*scan)(const char *, size_t, char *) = NULL;

	if (!strcmp(lang, "python"))
		scan = scan_python;
	else if (!strcmp(lang, "go"))
		scan = scan_go;
	if (!scan)
		return 0;
	memcpy(out, text, len);
	scan(text, len, out);
	return 1;
}
