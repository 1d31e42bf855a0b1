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
#define MAX_BRACES 256

/* what a statement's opening words make of a '{' that follows (SL_ITEMS_STATEMENTS) */
enum head {
	HEAD_NONE,                 /* nothing yet: a '{' opens a block */
	HEAD_KEYWORD,              /* if, while, for, switch: its '(' comes next */
	HEAD_PAREN,                /* inside that '(' */
	HEAD_DONE,                 /* just past its ')': a '{' opens the block it controls */
	HEAD_OTHER                 /* anything else: a '{' is a bracket (initialiser, lambda) */
};

struct lex {
	const char *s;
	size_t n, i;
	int brace, paren;
	unsigned char grp[MAX_GROUPS]; /* the open conditionals: 1 if it began at an item's start */
	int gbrace[MAX_GROUPS];    /* and the braces open where it began */
	size_t gpiece[MAX_GROUPS]; /* and the index of its line's piece, if it began one */
	int ngrp, inner;           /* how many are open; how many of them began inside an item */
	int code;                  /* the current item has more than blanks and comments */
	int body;                  /* the open '{' at depth 0 followed a ')' */
	int init;                  /* the current item has an '=' at depth 0 */
	int line_start;            /* only blanks and comments since the last newline */
	char last;                 /* the last character of code: ')' matters */
	size_t params;             /* 1 + where the item's last '(' outside brackets opened, or 0 */
	size_t start;              /* where the current item began */
	size_t row_at, row_off;    /* rows counted up to row_at; the last row began at row_off */
	uint32_t row;
	sl_item **v;
	size_t nv, *alloc;
	char *blanked;             /* NULL, or the text with comments and literals blanked */

	/* SL_ITEMS_STATEMENTS: a function's body split into its statements */
	int statements;
	int item_open;             /* the current item has pieces already */
	size_t item_first;         /* the index of its first piece */
	int item_whole;            /* it cannot be split: its pieces merge at its end */
	int in_body;               /* inside a function's body */
	unsigned char block[MAX_BRACES]; /* per open brace in the body: 1 a block, 0 a bracket */
	int p_code;                /* the current statement has code */
	int p_directive;           /* the last piece was a directive's line */
	enum head p_head;
	char p_last, p_last2;      /* its last two characters of code */
};

/* Blank [from, to) of the code copy. */
static void blank(struct lex *l, size_t from, size_t to)
{
	if (l->blanked && to > from)
		memset(l->blanked + from, ' ', to - from);
}

static int ident_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* The length of the run of word characters at l->i, which is one. */
static size_t ident_run(const struct lex *l)
{
	size_t k = 1;

	while (l->i + k < l->n && ident_char(l->s[l->i + k]))
		k++;
	return k;
}

static TSPoint point_at(struct lex *l, size_t b)
{
	TSPoint p;

	if (b < l->row_at)
		l->row = l->row_at = l->row_off = 0;    /* back to an earlier piece (join_group) */
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

/* The current piece ends just before b: append it as a piece of kind. */
static void piece(struct lex *l, size_t b, int kind)
{
	sl_item *it;
	TSRange *r;

	l->p_code = 0;
	l->p_directive = 0;
	l->p_head = HEAD_NONE;
	l->p_last = l->p_last2 = 0;
	if (b <= l->start)
		return;
	SL_ALLOC_GROW(*l->v, l->nv + 1, *l->alloc);
	it = &(*l->v)[l->nv];
	it->kind = (unsigned char)kind;
	it->first = !l->item_open;
	it->judge_end = 0;
	if (!l->item_open)
		l->item_first = l->nv;
	l->item_open = 1;
	l->nv++;
	r = &it->r;
	r->start_byte = (uint32_t)l->start;
	r->start_point = point_at(l, l->start);
	r->end_byte = (uint32_t)b;
	r->end_point = point_at(l, b);
	l->start = b;
}

/*
 * The current item ends just before b, its last piece of kind
 * (SL_ITEM_ALWAYS: a conditional's line).  An item that could not be
 * split into statements becomes one piece again.
 */
static void boundary(struct lex *l, size_t b, int kind)
{
	piece(l, b, kind);
	if (l->item_open && l->item_whole && l->nv - l->item_first > 1) {
		sl_item *v = *l->v, *first = &v[l->item_first];

		first->r.end_byte = v[l->nv - 1].r.end_byte;
		first->r.end_point = v[l->nv - 1].r.end_point;
		first->kind = SL_ITEM_MAY;
		l->nv = l->item_first + 1;
	}
	l->item_open = 0;
	l->item_whole = 0;
	l->params = 0;
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
	blank(l, from + 1, l->i);   /* its '/' stays: a separator (prefilter.h) */
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

/*
 * The innermost conditional began between items, and one of its #else,
 * #elif or #endif falls inside an item (two heads for one body, a macro
 * call with no ';' before #endif): the conditional's lines and the items
 * since its first are that item's, which is not split.
 */
static void join_group(struct lex *l)
{
	size_t at = l->gpiece[l->ngrp - 1];

	l->start = (*l->v)[at].r.start_byte;
	l->nv = at;
	l->item_open = 0;
	l->item_whole = 1;
	l->code = 1;
	l->grp[l->ngrp - 1] = 0;
	l->inner++;
}

static int word_is(const char *w, size_t wl, const char *want)
{
	return strlen(want) == wl && !memcmp(w, want, wl);
}

/* A directive whose word (wl bytes at w) must be followed by a name, path or condition. */
static int needs_argument(const char *w, size_t wl)
{
	static const char *const words[] = {
		"undef", "include", "if", "ifdef", "ifndef", "elif", "elifdef", "elifndef"
	};

	for (size_t k = 0; k < sizeof(words) / sizeof(*words); k++)
		if (word_is(w, wl, words[k]))
			return 1;
	return 0;
}

/* Past the blanks (spaces, tabs, a '\\' that continues the line) at j. */
static size_t skip_blanks(const struct lex *l, size_t j)
{
	for (;;) {
		if (j < l->n && (l->s[j] == ' ' || l->s[j] == '\t'))
			j++;
		else if (j + 1 < l->n && l->s[j] == '\\' && l->s[j + 1] == '\n')
			j += 2;
		else if (j + 2 < l->n && l->s[j] == '\\' && l->s[j + 1] == '\r' && l->s[j + 2] == '\n')
			j += 3;
		else
			return j;
	}
}

/* The line ends at j ("\n", "\r\n" or the text's end). */
static int line_end(const struct lex *l, size_t j)
{
	return j == l->n || l->s[j] == '\n' || (l->s[j] == '\r' && j + 1 < l->n && l->s[j + 1] == '\n');
}

/*
 * 1 if tree-sitter-c would read the argument of the directive whose word
 * is w (wl bytes; l->i just past it) from a line below: a word that needs
 * a name, path or condition with none on its line (or only a comment), and
 * where an argument may follow (after a define's name and parameters, after
 * any other word but else and endif), a line that ends in blanks before
 * any: "#define X " takes the next line that is not blank as its value.
 */
static int argument_below(const struct lex *l, const char *w, size_t wl)
{
	size_t j = skip_blanks(l, l->i), k;

	if (word_is(w, wl, "else") || word_is(w, wl, "endif"))
		return 0;
	if (needs_argument(w, wl))
		return line_end(l, j) ||
		       (l->s[j] == '/' && j + 1 < l->n && (l->s[j + 1] == '*' || l->s[j + 1] == '/'));
	j = l->i;
	if (word_is(w, wl, "define")) {
		j = skip_blanks(l, j);
		for (k = j; k < l->n && ident_char(l->s[k]); k++)
			;
		if (k == j)
			return 1;       /* no name */
		if (k < l->n && l->s[k] == '(') {
			while (k < l->n && l->s[k] != ')' && l->s[k] != '\n')
				k++;
			k += k < l->n && l->s[k] == ')';
		}
		j = k;
	}
	k = skip_blanks(l, j);
	return k > j && line_end(l, k);
}

/* The directive at l->i (its '#'): 0, or -1 to give up. */
static int directive(struct lex *l)
{
	size_t w, comment_end = 0;
	int opens = 0, closes = 0, other_branch = 0, fixed, line_comment = 0;
	/* in a function's body, between two statements of a block */
	int between = l->in_body && !l->p_code && !l->paren && l->block[l->brace];

	if (l->in_body ? !between : l->code)
		l->item_whole = 1;      /* inside a statement or a head: not split */
	if (between)
		piece(l, l->i, SL_ITEM_MAY);
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
	if (argument_below(l, l->s + w, l->i - w))
		return -1;      /* the parse of the whole file reads on */
	/* to the end of the line, continuation lines and comments included */
	while (l->i < l->n) {
		char c = l->s[l->i];

		if (c == '\n') {
			/*
			 * tree-sitter-c reads on past a '/' that ends the line, in a
			 * directive's argument or a '//' comment there (not after a
			 * block comment, nor a conditional's '//' comment)
			 */
			if (!l->i || l->s[l->i - 1] != '/' ||
			    (comment_end == l->i && (!line_comment || opens || closes || other_branch)))
				break;
			l->i++;
		} else if (c == '\\' && l->i + 1 < l->n && l->s[l->i + 1] == '\n') {
			l->i += 2;
		} else if (c == '/' && l->i + 1 < l->n && (l->s[l->i + 1] == '*' || l->s[l->i + 1] == '/')) {
			line_comment = l->s[l->i + 1] == '/';
			if (skip_comment(l))
				return -1;
			comment_end = l->i;
		} else if (c == '"' || c == '\'') {
			skip_literal(l, c);
		} else {
			l->i++;
		}
	}
	if (l->i < l->n)
		l->i++;
	l->line_start = 1;
	if (opens) {
		if (l->ngrp == MAX_GROUPS)
			return -1;
		fixed = !l->code && at_top(l);
		l->gbrace[l->ngrp] = l->brace;
		l->gpiece[l->ngrp] = l->nv;
		l->grp[l->ngrp++] = (unsigned char)fixed;
		l->inner += !fixed;
	} else if (closes || other_branch) {
		if (!l->ngrp)
			return -1;
		fixed = l->grp[l->ngrp - 1];
		if (fixed && (l->code || !at_top(l))) {
			join_group(l);
			fixed = 0;
		}
		/* each branch of a conditional among statements closes the blocks it opens */
		if (l->gbrace[l->ngrp - 1] != l->brace)
			l->item_whole = 1;
		if (closes) {
			l->ngrp--;
			l->inner -= !fixed;
		}
	} else {
		if (!l->code && at_top(l))
			boundary(l, l->i, SL_ITEM_MAY);
		else if (between)
			piece(l, l->i, SL_ITEM_MAY);
		l->p_directive = between;
		return 0;
	}
	if (fixed)
		boundary(l, l->i, SL_ITEM_ALWAYS);
	else if (between)
		piece(l, l->i, SL_ITEM_FRAME); /* a conditional's line keeps its branches apart */
	l->p_directive = between;
	return 0;
}

/* Digraphs and trigraphs for braces at l->i (c): the split gives up on them. */
static int digraph(const struct lex *l, char c)
{
	char d = l->i + 1 < l->n ? l->s[l->i + 1] : 0;

	return (c == '<' && d == '%') || (c == '%' && d == '>') || (c == '?' && d == '?');
}

/* Code c goes on the current statement (SL_ITEMS_STATEMENTS). */
static void note(struct lex *l, char c)
{
	if (!l->p_code || l->p_head == HEAD_KEYWORD || l->p_head == HEAD_DONE)
		l->p_head = HEAD_OTHER;
	l->p_code = 1;
	l->p_last2 = l->p_last;
	l->p_last = c;
}

/*
 * The first word of a statement at l->i.  "else" and "do" become pieces
 * of their own that are never parsed: what follows each is a statement
 * that parses alone (a do's "while (c);" as a loop with an empty body),
 * and "else" or "do" kept without what came before would not parse.
 */
static void statement_word(struct lex *l)
{
	const char *w = l->s + l->i;
	size_t wl = 0;

	while (l->i + wl < l->n && ident_char(w[wl]))
		wl++;
	if (word_is(w, wl, "else") && l->p_directive)
		l->item_whole = 1;      /* "#endif else": an else the grammar cannot attach */
	if (word_is(w, wl, "else") || word_is(w, wl, "do")) {
		piece(l, l->i, SL_ITEM_MAY);
		piece(l, l->i + wl, SL_ITEM_NEVER);
	} else {
		note(l, 'a');
		if (word_is(w, wl, "if") || word_is(w, wl, "while") || word_is(w, wl, "for") ||
		    word_is(w, wl, "switch"))
			l->p_head = HEAD_KEYWORD;
		else if (word_is(w, wl, "try") || word_is(w, wl, "__try"))
			l->item_whole = 1;      /* its catch clauses would not parse alone */
	}
	l->last = 'a';
	l->i += wl;
}

/*
 * One character of code at l->i inside a function's body, split into
 * statements: a piece ends after a ';' and around a block's braces, where
 * a '{' opens a block at a statement's start, after a control statement's
 * head ("if (...)", "while (...)", "for (...)", "switch (...)") or after a
 * label's ':'.  Any other '{' is a bracket: an initialiser, a compound
 * literal, a lambda, a macro's loop, all in one piece with what holds them.
 */
static int body_code(struct lex *l, char c)
{
	int level = !l->paren && l->block[l->brace];   /* at a statement's level */
	int block;

	if (level && !l->p_code && (isalpha((unsigned char)c) || c == '_')) {
		statement_word(l);
		return 0;
	}
	switch (c) {
	case '{':
		if (l->brace + 1 >= MAX_BRACES)
			return -1;
		block = level && (!l->p_code || l->p_head == HEAD_DONE ||
				  (l->p_last == ':' && l->p_last2 != ':'));
		if (block)
			piece(l, l->i, SL_ITEM_MAY);
		else
			note(l, c);
		l->block[++l->brace] = (unsigned char)block;
		l->i++;
		if (block)
			piece(l, l->i, SL_ITEM_FRAME);
		l->last = c;
		return 0;
	case '}':
		if (!l->block[l->brace]) {
			l->brace--;
			break;
		}
		if (l->paren)
			l->item_whole = 1;      /* a block closes inside brackets: no statements here */
		piece(l, l->i, SL_ITEM_MAY);
		l->brace--;
		l->i++;
		l->last = c;
		if (l->brace) {
			piece(l, l->i, SL_ITEM_FRAME);
		} else {
			l->in_body = 0;
			if (at_top(l))
				boundary(l, l->i, SL_ITEM_FRAME);
			else
				piece(l, l->i, SL_ITEM_FRAME);
		}
		return 0;
	case '(':
	case '[':
		block = level && c == '(' && l->p_head == HEAD_KEYWORD;
		note(l, c);
		if (block)
			l->p_head = HEAD_PAREN;
		l->paren++;
		l->last = c;
		l->i++;
		return 0;
	case ')':
	case ']':
		if (--l->paren < 0)
			return -1;
		note(l, c);
		if (l->p_head == HEAD_PAREN && !l->paren)
			l->p_head = HEAD_DONE;
		l->last = c;
		l->i++;
		return 0;
	case ';':
		if (!level)
			break;
		l->i++;
		l->last = c;
		piece(l, l->i, SL_ITEM_MAY);
		return 0;
	default:
		break;
	}
	note(l, c);
	if (ident_char(c)) {
		/* the rest of a word or number changes only the last two characters */
		size_t k = ident_run(l);

		if (k > 1) {
			l->p_last2 = l->s[l->i + k - 2];
			l->p_last = l->s[l->i + k - 1];
		}
		l->last = 'a';
		l->i += k;
		return 0;
	}
	l->last = c;
	l->i++;
	return 0;
}
/* One character of code at l->i: 0, or -1 to give up. */
static int code(struct lex *l)
{
	char c = l->s[l->i];
	int first = !l->code;

	/* split into statements, the comments before an item are an item of their own */
	if (first && l->statements && at_top(l))
		boundary(l, l->i, SL_ITEM_MAY);
	l->code = 1;
	l->line_start = 0;
	if (digraph(l, c))
		return -1;
	if (l->in_body)
		return body_code(l, c);
	switch (c) {
	case '{':
		if (!l->brace && !l->paren) {
			if (first)
				return -1;      /* a K&R function's body, or worse */
			/* a function's body; after an '=', a compound literal's */
			l->body = l->last == ')' && !l->init;
		}
		if (l->brace == 0 && l->body && l->blanked && l->params)
			l->blanked[l->params - 1] = SL_ITEMS_PARAMS;
		if (++l->brace == 1 && l->body && l->statements && !l->paren) {
			/*
			 * its '{' and '}' frame the statements: without its head,
			 * which is a piece of its own, a block at the top level
			 */
			l->in_body = 1;
			l->block[1] = 1;
			l->last = c;
			piece(l, l->i, SL_ITEM_MAY);
			l->i++;
			piece(l, l->i, SL_ITEM_FRAME);
			return 0;
		}
		break;
	case '}':
		if (--l->brace < 0)
			return -1;
		if (at_top(l) && l->body)
			goto item_end;
		break;
	case '(':
	case '[':
		if (!l->paren++ && !l->brace && c == '(')
			l->params = l->i + 1;
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
	default:
		break;
	}
	if (ident_char(c)) {
		l->last = 'a';
		l->i += ident_run(l);
		return 0;
	}
	l->last = c;
	l->i++;
	return 0;
item_end:
	l->last = c;
	l->i++;
	boundary(l, l->i, SL_ITEM_MAY);
	return 0;
}

/* A body's walk (SL_ITEMS_BODY): where its statement of the top level stands. */
struct walk {
	const char *code;          /* the text with comments and literals blanked (or the text) */
	int depth;                 /* open blocks, the body's own included */
	int complete;              /* the statement so far is whole: it ends in ';' or a block */
	int lead;                  /* the group so far holds no code */
	unsigned dos;              /* the "do" seen whose "while (c);" has not come */
	size_t group;              /* the index of the group's first piece, or SIZE_MAX */
	int leaf;                  /* SL_ITEMS_BODY_LEAF: a group's pieces are kept apart */
	size_t out;                /* and where its first was written */
};

/* 1 if the code of r begins with word, as a word. */
static int first_word(const struct walk *w, const TSRange *r, const char *word)
{
	size_t i = r->start_byte, wl = strlen(word);

	while (i < r->end_byte && (isspace((unsigned char)w->code[i]) || w->code[i] == '/'))
		i++;
	return i + wl <= r->end_byte && !memcmp(w->code + i, word, wl) &&
	       (i + wl == r->end_byte || !ident_char(w->code[i + wl]));
}

/* How many times the code of r holds "do" as a word. */
static unsigned count_do(const struct walk *w, const TSRange *r)
{
	unsigned n = 0;

	for (size_t i = r->start_byte; i + 2 <= r->end_byte; i++)
		if (w->code[i] == 'd' && w->code[i + 1] == 'o' &&
		    (i == r->start_byte || !ident_char(w->code[i - 1])) &&
		    (i + 2 == r->end_byte || !ident_char(w->code[i + 2])))
			n++;
	return n;
}

/* 1 if r holds code: more than blanks and what is left of comments. */
static int has_code(const struct walk *w, const TSRange *r)
{
	for (size_t i = r->start_byte; i < r->end_byte; i++)
		if (!isspace((unsigned char)w->code[i]) && w->code[i] != '/')
			return 1;
	return 0;
}

/*
 * A piece at the body's level (w->depth 1, or the '{' that opens a block
 * there): 1 if a new statement of the body's top level begins with it,
 * and the walk past it.  A group closes only after a ';' or a block, and
 * only when no "else" or "do" waits on what follows: closing one too late
 * only joins two statements.
 */
static int body_piece(struct walk *w, const sl_item *it, const char *s)
{
	const TSRange *r = &it->r;
	int none = w->group == SIZE_MAX, may_close = !w->lead && w->complete && !w->dos, starts;

	if (it->kind == SL_ITEM_FRAME) {           /* a block's '{' */
		starts = none || may_close;
		w->complete = 0;
	} else if (!has_code(w, r)) {
		return none;
	} else if (it->kind == SL_ITEM_NEVER) {    /* "else", "do" */
		starts = none || (may_close && first_word(w, r, "do"));
		w->dos += count_do(w, r);
		w->complete = 0;
	} else if (w->complete && w->dos && first_word(w, r, "while")) {
		starts = 0;                         /* the tail of a do */
		w->dos += count_do(w, r) - 1;
		w->complete = s[r->end_byte - 1] == ';';
	} else {
		starts = none || may_close;
		w->dos += count_do(w, r);
		w->complete = s[r->end_byte - 1] == ';';
	}
	w->lead = 0;
	return starts;
}

/*
 * Append the group [w->group, end) to v at *n (when write); when leaf, its
 * pieces were written already, its first at w->out, which is judged on
 * the whole group.
 */
static void close_group(struct walk *w, sl_item *v, size_t end, size_t *n, int write)
{
	if (w->group == SIZE_MAX)
		return;
	if (w->leaf) {
		if (write)
			v[w->out].judge_end = v[*n - 1].r.end_byte;
		return;
	}
	if (write) {
		sl_item g = v[w->group];

		g.r.end_byte = v[end - 1].r.end_byte;
		g.r.end_point = v[end - 1].r.end_point;
		g.kind = SL_ITEM_MAY;
		g.first = 0;
		v[*n] = g;
	}
	(*n)++;
}

/*
 * The pieces of one item, v[from .. to), when it is a function split into
 * statements: its head and its body's braces SL_ITEM_FRAME, and each
 * statement of the body's top level one SL_ITEM_MAY piece (whole, with
 * the blocks, "else" and "do" it holds), written from v[out] on when
 * write (out <= from: each is written after it is read).  Returns how many
 * pieces, or 0 when the item is no such function.
 */
static size_t body_item(const struct lex *l, sl_item *v, size_t from, size_t to, size_t out,
			int write, int leaf)
{
	struct walk w = { l->blanked ? l->blanked : l->s, 1, 1, 0, 0, SIZE_MAX, leaf, 0 };
	size_t n = out + 2;

	if (to - from < 3 || v[from].kind != SL_ITEM_MAY ||
	    v[from + 1].kind != SL_ITEM_FRAME || l->s[v[from + 1].r.start_byte] != '{' ||
	    v[to - 1].kind != SL_ITEM_FRAME || l->s[v[to - 1].r.start_byte] != '}')
		return 0;
	if (write) {
		v[out] = v[from];
		v[out].kind = SL_ITEM_FRAME;
		v[out + 1] = v[from + 1];
	}
	for (size_t i = from + 2; i < to - 1; i++) {
		sl_item it = v[i];
		int starts = 0, level = w.depth == 1;

		if (it.kind == SL_ITEM_FRAME) {
			char c = l->s[it.r.start_byte];

			if (it.r.end_byte - it.r.start_byte != 1 || (c != '{' && c != '}')) {
				/* a conditional's line: in a statement, or a frame between two */
				if (w.depth == 1) {
					if (w.group != SIZE_MAX && !w.lead && !(w.complete && !w.dos))
						return 0;
					close_group(&w, v, i, &n, write);
					w.group = SIZE_MAX;
				} else if (!leaf) {
					continue;
				} else {
					it.kind = SL_ITEM_WITH;
				}
				if (write)
					v[n] = it;
				n++;
				continue;
			}
			if (c == '{' && w.depth == 1)
				starts = body_piece(&w, &it, l->s);
			w.depth += c == '{' ? 1 : -1;
			if (w.depth < 1)
				return 0;
			if (c == '}' && w.depth == 1)
				w.complete = 1;
			level = 1;      /* a brace in a statement is kept with it */
		} else if (w.depth == 1) {
			starts = body_piece(&w, &it, l->s);
		}
		if (starts) {
			close_group(&w, v, i, &n, write);
			w.group = i;
			w.out = n;
			w.lead = it.kind != SL_ITEM_FRAME && !has_code(&w, &it.r);
		}
		if (!leaf)
			continue;
		it.kind = starts ? SL_ITEM_MAY : level ? SL_ITEM_WITH : SL_ITEM_NEVER;
		if (write)
			v[n] = it;
		n++;
	}
	if (w.depth != 1)
		return 0;
	close_group(&w, v, to - 1, &n, write);
	if (write)
		v[n] = v[to - 1];
	return n + 1 - out;
}

/*
 * SL_ITEMS_BODY: each function's pieces (nv of them in v) regrouped by
 * body_item (their statements kept apart when leaf), any other item of
 * several pieces made one.  Returns the new count.
 */
static size_t body_items(const struct lex *l, sl_item *v, size_t nv, int leaf)
{
	size_t out = 0;

	for (size_t i = 0, j; i < nv; i = j) {
		for (j = i + 1; j < nv && !v[j].first; j++)
			;
		if (body_item(l, v, i, j, out, 0, leaf)) {
			out += body_item(l, v, i, j, out, 1, leaf);
			continue;
		}
		v[out] = v[i];
		if (j - i > 1) {
			v[out].r.end_byte = v[j - 1].r.end_byte;
			v[out].r.end_point = v[j - 1].r.end_point;
			v[out].kind = SL_ITEM_MAY;
		}
		out++;
	}
	return out;
}

size_t sl_items_split(const char *text, size_t len, sl_item **v, size_t *alloc, char *blanked,
		      unsigned flags)
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
	l.statements = !!(flags & (SL_ITEMS_STATEMENTS | SL_ITEMS_BODY));
	while (l.i < l.n) {
		char c = text[l.i];

		if (c == '\n') {
			l.line_start = 1;
			l.i++;
		} else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
			l.i++;
		} else if (c == SL_ITEMS_PARAMS) {
			blank(&l, l.i, l.i + 1);        /* not to be taken for the mark */
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
			if (l.in_body)
				note(&l, c);
			skip_literal(&l, c);
		} else if (c == '\'') {
			l.line_start = 0;
			if (l.i && isdigit((unsigned char)text[l.i - 1])) {
				l.i++;      /* a digit separator */
				continue;
			}
			l.code = 1;
			l.last = c;
			if (l.in_body)
				note(&l, c);
			skip_literal(&l, c);
		} else if (code(&l)) {
			return 0;
		}
	}
	if (l.brace || l.paren || l.ngrp)
		return 0;
	boundary(&l, l.n, SL_ITEM_MAY);
	if (flags & SL_ITEMS_BODY)
		return body_items(&l, *v, l.nv, !!(flags & SL_ITEMS_BODY_LEAF));
	return l.nv;
}
