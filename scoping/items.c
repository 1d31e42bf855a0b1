/*
 * items.c - a C or C++ file's top-level items, found without parsing.
 *
 * One pass over the bytes that skips comments, string and character
 * literals and directives, and counts brackets; the rules and what makes
 * it give up are in items.h.
 */
#include <ctype.h>
#include <string.h>

#include "scoping/items.h"
#include "common/util.h"

#define MAX_GROUPS 64

struct lex {
	const char *s;
	size_t n, i;
	int brace, paren;
	unsigned char grp[MAX_GROUPS]; /* the open conditionals: 1 if it began at an item's start */
	int ngrp, inner;           /* how many are open; how many of them began inside an item */
	int code;                  /* the current item has more than blanks and comments */
	int body;                  /* the open '{' at depth 0 followed a ')' */
	int init;                  /* the current item has an '=' at depth 0 */
	int line_start;            /* only blanks and comments since the last newline */
	char last;                 /* the last character of code: ')' matters */
	size_t start;              /* where the current item began */
	size_t row_at, row_off;    /* rows counted up to row_at; the last row began at row_off */
	uint32_t row;
	sl_item **v;
	size_t nv, *alloc;
	char *blanked;             /* NULL, or the text with comments and literals blanked */
};

/* Blank [from, to) of the code copy. */
static void blank(struct lex *l, size_t from, size_t to)
{
	if (l->blanked && to > from)
		memset(l->blanked + from, ' ', to - from);
}

static int ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

static TSPoint point_at(struct lex *l, size_t b)
{
	TSPoint p;

	for (const char *nl; (nl = memchr(l->s + l->row_at, '\n', b - l->row_at)); ) {
		l->row++;
		l->row_at = l->row_off = (size_t)(nl - l->s) + 1;
	}
	l->row_at = b;
	p.row = l->row;
	p.column = (uint32_t)(b - l->row_off);
	return p;
}

/* An item may end here: outside brackets and conditionals begun inside an item. */
static int at_top(const struct lex *l)
{
	return !l->brace && !l->paren && !l->inner;
}

/* The current item ends just before b; fixed: a conditional's line. */
static void boundary(struct lex *l, size_t b, int fixed)
{
	sl_item *it;
	TSRange *r;

	if (b <= l->start)
		return;
	SL_ALLOC_GROW(*l->v, l->nv + 1, *l->alloc);
	it = &(*l->v)[l->nv++];
	it->fixed = fixed;
	r = &it->r;
	r->start_byte = (uint32_t)l->start;
	r->start_point = point_at(l, l->start);
	r->end_byte = (uint32_t)b;
	r->end_point = point_at(l, b);
	l->start = b;
	l->code = 0;
	l->body = 0;
	l->init = 0;
}

/* Past a literal quoted by q at l->i; an unescaped newline ends it too. */
static void skip_literal(struct lex *l, char q)
{
	size_t from = l->i + 1;

	for (l->i++; l->i < l->n; l->i++) {
		if (l->s[l->i] == '\\' && l->i + 1 < l->n) {
			l->i++;
		} else if (l->s[l->i] == q) {
			blank(l, from, l->i);
			l->i++;
			return;
		} else if (l->s[l->i] == '\n') {
			break;
		}
	}
	blank(l, from, l->i);
}

/* Past a comment at l->i (which is "/" followed by '*' or '/'): 0, or -1 if unterminated. */
static int skip_comment(struct lex *l)
{
	size_t from = l->i;

	if (l->s[l->i + 1] == '*') {
		const char *end = memmem(l->s + l->i + 2, l->n - l->i - 2, "*/", 2);

		if (!end)
			return -1;
		l->i = (size_t)(end - l->s) + 2;
	} else {
		for (l->i += 2; l->i < l->n; l->i++)
			if (l->s[l->i] == '\n' && l->s[l->i - 1] != '\\')
				break;
	}
	blank(l, from, l->i);
	return 0;
}

/* A raw string's opening at l->i (a '"'): R"( and its prefixed forms. */
static int raw_string(const struct lex *l)
{
	size_t j = l->i;

	if (!j || l->s[j - 1] != 'R')
		return 0;
	j--;
	if (j && (l->s[j - 1] == 'L' || l->s[j - 1] == 'u' || l->s[j - 1] == 'U'))
		j--;
	else if (j >= 2 && l->s[j - 2] == 'u' && l->s[j - 1] == '8')
		j -= 2;
	return !j || !ident_char(l->s[j - 1]);
}

/* The directive at l->i (its '#'): 0, or -1 to give up. */
static int directive(struct lex *l)
{
	size_t w;
	int opens = 0, closes = 0, other_branch = 0, fixed;

	for (l->i++; l->i < l->n && (l->s[l->i] == ' ' || l->s[l->i] == '\t'); l->i++)
		;
	for (w = l->i; l->i < l->n && ident_char(l->s[l->i]); l->i++)
		;
	if (l->i - w == 2 && !memcmp(l->s + w, "if", 2))
		opens = 1;
	else if ((l->i - w == 5 && !memcmp(l->s + w, "ifdef", 5)) ||
		 (l->i - w == 6 && !memcmp(l->s + w, "ifndef", 6)))
		opens = 1;
	else if (l->i - w == 5 && !memcmp(l->s + w, "endif", 5))
		closes = 1;
	else if (l->i - w >= 4 && (!memcmp(l->s + w, "else", 4) || !memcmp(l->s + w, "elif", 4)))
		other_branch = 1;
	/* to the end of the line, continuation lines and comments included */
	while (l->i < l->n && l->s[l->i] != '\n') {
		char c = l->s[l->i];

		if (c == '\\' && l->i + 1 < l->n && l->s[l->i + 1] == '\n')
			l->i += 2;
		else if (c == '/' && l->i + 1 < l->n && (l->s[l->i + 1] == '*' || l->s[l->i + 1] == '/')) {
			if (skip_comment(l))
				return -1;
		} else if (c == '"' || c == '\'')
			skip_literal(l, c);
		else
			l->i++;
	}
	if (l->i < l->n)
		l->i++;
	l->line_start = 1;
	if (opens) {
		if (l->ngrp == MAX_GROUPS)
			return -1;
		fixed = !l->code && at_top(l);
		l->grp[l->ngrp++] = (unsigned char)fixed;
		l->inner += !fixed;
	} else if (closes || other_branch) {
		if (!l->ngrp)
			return -1;
		fixed = l->grp[l->ngrp - 1];
		if (closes) {
			l->ngrp--;
			l->inner -= !fixed;
		}
		/* a conditional begun between items ends between items */
		if (fixed && (l->code || !at_top(l)))
			return -1;
	} else {
		if (!l->code && at_top(l))
			boundary(l, l->i, 0);
		return 0;
	}
	if (fixed)
		boundary(l, l->i, 1);
	return 0;
}

/* One character of code at l->i: 0, or -1 to give up. */
static int code(struct lex *l)
{
	char c = l->s[l->i];
	int first = !l->code;

	l->code = 1;
	l->line_start = 0;
	switch (c) {
	case '{':
		if (!l->brace && !l->paren) {
			if (first)
				return -1;      /* a K&R function's body, or worse */
			/* a function's body; after an '=', a compound literal's */
			l->body = l->last == ')' && !l->init;
		}
		l->brace++;
		break;
	case '}':
		if (--l->brace < 0)
			return -1;
		if (at_top(l) && l->body)
			goto item_end;
		break;
	case '(':
	case '[':
		l->paren++;
		break;
	case ')':
	case ']':
		if (--l->paren < 0)
			return -1;
		break;
	case ';':
		if (at_top(l))
			goto item_end;
		break;
	case '=':
		if (!l->brace && !l->paren)
			l->init = 1;
		break;
	case '<':
	case '%':
	case '?':
		/* digraphs and trigraphs for braces */
		if (l->i + 1 < l->n && ((c == '<' && l->s[l->i + 1] == '%') ||
					(c == '%' && l->s[l->i + 1] == '>') ||
					(c == '?' && l->s[l->i + 1] == '?')))
			return -1;
		break;
	default:
		break;
	}
	l->last = ident_char(c) ? 'a' : c;
	l->i++;
	return 0;
item_end:
	l->last = c;
	l->i++;
	boundary(l, l->i, 0);
	return 0;
}

size_t sl_items_split(const char *text, size_t len, sl_item **v, size_t *alloc, char *blanked)
{
	struct lex l;

	memset(&l, 0, sizeof(l));
	if (blanked)
		memcpy(blanked, text, len);
	l.blanked = blanked;
	l.s = text;
	l.n = len;
	l.line_start = 1;
	l.v = v;
	l.alloc = alloc;
	while (l.i < l.n) {
		char c = text[l.i];

		if (c == '\n') {
			l.line_start = 1;
			l.i++;
		} else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
			l.i++;
		} else if (c == '/' && l.i + 1 < l.n && (text[l.i + 1] == '*' || text[l.i + 1] == '/')) {
			if (skip_comment(&l))
				return 0;
		} else if (c == '#' && l.line_start) {
			if (directive(&l))
				return 0;
		} else if (c == '"') {
			if (raw_string(&l))
				return 0;
			l.code = 1;
			l.line_start = 0;
			l.last = c;
			skip_literal(&l, c);
		} else if (c == '\'') {
			l.line_start = 0;
			if (l.i && isdigit((unsigned char)text[l.i - 1])) {
				l.i++;      /* a digit separator */
				continue;
			}
			l.code = 1;
			l.last = c;
			skip_literal(&l, c);
		} else if (code(&l)) {
			return 0;
		}
	}
	if (l.brace || l.paren || l.ngrp)
		return 0;
	boundary(&l, l.n, 0);
	return l.nv;
}
