/*
 * mutate.c - mutants of one function (mutate.h).
 *
 * One pass over the body finds every mutation point (skipping comments and
 * literals); each point makes one mutant, the file with that span replaced.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "validators/mutate.h"
#include "common/util.h"

typedef struct ctx {
	sl_mutants *out;
	const char *file;
	size_t len, max, made;
} ctx;

static unsigned line_at(const char *file, size_t off)
{
	unsigned line = 1;

	for (size_t i = 0; i < off; i++)
		line += file[i] == '\n';
	return line;
}

/* One mutant: file[off, off + n) replaced by repl. */
static void emit(ctx *c, const char *op, size_t off, size_t n, const char *repl,
		 const char *what)
{
	sl_buf b = SL_BUF_INIT, w = SL_BUF_INIT;
	sl_mutant *m;

	if (c->max && c->made >= c->max)
		return;
	sl_buf_add(&b, c->file, off);
	sl_buf_adds(&b, repl);
	sl_buf_add(&b, c->file + off + n, c->len - off - n);
	SL_ALLOC_GROW(c->out->v, c->out->n + 1, c->out->alloc);
	m = &c->out->v[c->out->n++];
	m->line = line_at(c->file, off);
	sl_buf_addf(&w, "line %u: %s", m->line, what);
	m->op = op;
	m->text = sl_buf_detach(&b, &m->len);
	m->what = sl_buf_detach(&w, NULL);
	c->made++;
}

static int ident_char(int ch)
{
	return isalnum(ch) || ch == '_';
}

/* Past a comment or literal starting at i, or i when there is none. */
static size_t skip_opaque(const char *s, size_t i, size_t end)
{
	if (s[i] == '/' && i + 1 < end && s[i + 1] == '/') {
		while (i < end && s[i] != '\n')
			i++;
		return i;
	}
	if (s[i] == '/' && i + 1 < end && s[i + 1] == '*') {
		for (i += 2; i + 1 < end && !(s[i] == '*' && s[i + 1] == '/'); i++)
			;
		return i + 2 < end ? i + 2 : end;
	}
	if (s[i] == '"' || s[i] == '\'') {
		char q = s[i];

		for (i++; i < end && s[i] != q && s[i] != '\n'; i++)
			if (s[i] == '\\')
				i++;
		return i + 1 < end ? i + 1 : end;
	}
	return i;
}

static const struct {
	const char *op, *flip, *bound;
} comparisons[] = {
	{ "<=", ">", "<" }, { ">=", "<", ">" }, { "==", "!=", NULL }, { "!=", "==", NULL },
	{ "<", ">=", "<=" }, { ">", "<=", ">=" },
};

static void comparison(ctx *c, size_t i, size_t *adv)
{
	const char *s = c->file;
	char what[64];

	*adv = 1;
	/* shifts, arrows, compound assignment */
	if ((s[i] == '<' && s[i + 1] == '<') || (s[i] == '>' && s[i + 1] == '>') ||
	    (s[i] == '>' && i && s[i - 1] == '-') || (s[i] == '<' && i && s[i - 1] == '<') ||
	    (s[i] == '>' && i && s[i - 1] == '>')) {
		*adv = 2;
		return;
	}
	for (size_t k = 0; k < sizeof(comparisons) / sizeof(comparisons[0]); k++) {
		size_t n = strlen(comparisons[k].op);

		if (strncmp(s + i, comparisons[k].op, n))
			continue;
		if (n == 1 && s[i + 1] == '=')
			continue;
		snprintf(what, sizeof(what), "'%s' -> '%s'", comparisons[k].op, comparisons[k].flip);
		emit(c, "flip", i, n, comparisons[k].flip, what);
		if (comparisons[k].bound) {
			snprintf(what, sizeof(what), "'%s' -> '%s'", comparisons[k].op,
				 comparisons[k].bound);
			emit(c, "bound", i, n, comparisons[k].bound, what);
		}
		*adv = n;
		return;
	}
}

/* "if (" / "while (" at i: negate the parenthesised condition. */
static void condition(ctx *c, size_t i, size_t end, size_t kw)
{
	const char *s = c->file;
	size_t p = i + kw, q;
	int depth = 0;
	sl_buf b = SL_BUF_INIT;

	while (p < end && (s[p] == ' ' || s[p] == '\t'))
		p++;
	if (p >= end || s[p] != '(')
		return;
	for (q = p; q < end; q++) {
		size_t skip = skip_opaque(s, q, end);

		if (skip != q) {
			q = skip - 1;
			continue;
		}
		if (s[q] == '(')
			depth++;
		else if (s[q] == ')' && !--depth)
			break;
	}
	if (q >= end)
		return;
	sl_buf_adds(&b, "(!");
	sl_buf_add(&b, s + p, q - p + 1);
	sl_buf_adds(&b, ")");
	emit(c, "negate", p, q - p + 1, b.buf, kw == 2 ? "if condition negated" :
	     "while condition negated");
	sl_buf_release(&b);
}

static void constant(ctx *c, size_t i, size_t end, size_t *adv)
{
	const char *s = c->file;
	size_t j = i;
	unsigned long long v = 0;
	char repl[32], what[80];

	while (j < end && isdigit((unsigned char)s[j]) && v < 1000000000ULL)
		v = v * 10 + (unsigned long long)(s[j++] - '0');
	*adv = j - i;
	/* 0x.., 1.5, 1e3, digits inside a name */
	if ((j < end && (isalpha((unsigned char)s[j]) || s[j] == '.' || s[j] == '_')) ||
	    (i && (ident_char((unsigned char)s[i - 1]) || s[i - 1] == '.')) ||
	    (j < end && isdigit((unsigned char)s[j])))
		return;
	snprintf(repl, sizeof(repl), "%llu", v + 1);
	snprintf(what, sizeof(what), "constant %llu -> %llu", v, v + 1);
	emit(c, "constant", i, j - i, repl, what);
}

static const char *const type_words[] = {
	"int", "char", "long", "short", "unsigned", "signed", "float", "double", "void",
	"const", "static", "struct", "enum", "union", "size_t", "bool", "_Bool", "auto",
	"register", "volatile", "typedef", "extern", NULL
};

/* A statement on one line starting at i (first non-blank of its line)? Then delete it. */
static void statement(ctx *c, size_t i, size_t end)
{
	const char *s = c->file;
	size_t e = i, w1 = i, w2;
	char what[96];

	while (e < end && s[e] != '\n')
		e++;
	while (e > i && (s[e - 1] == ' ' || s[e - 1] == '\t'))
		e--;
	if (e <= i || s[e - 1] != ';' || memchr(s + i, '{', e - i) || memchr(s + i, '}', e - i))
		return;
	while (w1 < e && ident_char((unsigned char)s[w1]))
		w1++;
	if (w1 == i)
		return;
	for (size_t k = 0; type_words[k]; k++)
		if (w1 - i == strlen(type_words[k]) && !memcmp(s + i, type_words[k], w1 - i))
			return;
	if ((w1 - i == 5 && !memcmp(s + i, "break", 5)) ||
	    (w1 - i == 8 && !memcmp(s + i, "continue", 8)))
		return;
	/* "name *p" or "name x": a declaration of a user type */
	w2 = w1;
	while (w2 < e && (s[w2] == ' ' || s[w2] == '*'))
		w2++;
	if (w2 > w1 && w2 < e && (isalpha((unsigned char)s[w2]) || s[w2] == '_') &&
	    !(w1 - i == 6 && !memcmp(s + i, "return", 6)))
		return;
	snprintf(what, sizeof(what), "statement removed: %.*s", (int)(e - i > 60 ? 60 : e - i),
		 s + i);
	/* an empty statement keeps an if or loop around it well-formed */
	emit(c, "remove", i, e - i, ";", what);
}

size_t sl_mutants_make(sl_mutants *out, const char *file, size_t len, uint32_t start,
		       uint32_t end, size_t max)
{
	ctx c = { out, file, len, max, 0 };
	const char *brace;
	size_t i, stop = end < len ? end : len;
	int line_start = 0;

	if (start >= stop || !(brace = memchr(file + start, '{', stop - start)))
		return 0;
	for (i = (size_t)(brace - file) + 1; i < stop && (!max || c.made < max);) {
		size_t skip = skip_opaque(file, i, stop), adv = 1;
		char ch = file[i];

		if (skip != i) {
			i = skip;
			continue;
		}
		if (ch == '\n') {
			line_start = 1;
			i++;
			continue;
		}
		if (ch == ' ' || ch == '\t') {
			i++;
			continue;
		}
		if (line_start)
			statement(&c, i, stop);
		line_start = 0;
		if (ch == '<' || ch == '>' || ((ch == '=' || ch == '!') && file[i + 1] == '=')) {
			comparison(&c, i, &adv);
		} else if (isdigit((unsigned char)ch)) {
			constant(&c, i, stop, &adv);
		} else if (ident_char((unsigned char)ch)) {
			size_t j = i;

			while (j < stop && ident_char((unsigned char)file[j]))
				j++;
			if ((j - i == 2 && !memcmp(file + i, "if", 2)) ||
			    (j - i == 5 && !memcmp(file + i, "while", 5)))
				condition(&c, i, stop, j - i);
			adv = j - i;
		}
		i += adv;
	}
	return c.made;
}

void sl_mutants_release(sl_mutants *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->v[i].text);
		free(m->v[i].what);
	}
	free(m->v);
	m->v = NULL;
	m->n = m->alloc = 0;
}
