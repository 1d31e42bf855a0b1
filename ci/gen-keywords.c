/*
 * gen-keywords.c - the build's generator of scoping's keyword table
 * (scoping/keywords.h), run by the Makefile, never installed.
 *
 *   gen-keywords NAME=PATH/grammar.json... >keywords.c
 *
 * For each language NAME it reads the grammar tree-sitter generated the
 * parser from and writes the node types every node of which begins with a
 * keyword: a word token ([A-Za-z_][A-Za-z0-9_]*, a STRING of the grammar)
 * that is the first token of every production of the type, or one of a few
 * such words ("case|default").  That is the classic FIRST set, computed to
 * a fixed point over the rules: a SEQ begins as its first member does (and
 * as the next ones do while the members before can be empty), a CHOICE as
 * any member, REPEAT and optional members can be empty, a SYMBOL as its
 * rule, an ALIAS, FIELD or PREC as its content.  A PATTERN, a TOKEN or
 * IMMEDIATE_TOKEN, a STRING that is no word and an external token are
 * "other": a type whose FIRST set holds one gets no entry.  A named ALIAS
 * makes nodes of its value's type, so a type's set joins those of every
 * rule and alias that makes it.
 *
 * Only the first token counts, not every keyword of a production (a SEQ's
 * union), and only where another token must follow it in its production:
 * tree-sitter's error recovery inserts a token the text lacks, as a
 * MISSING node, where the lookahead can then be reduced (parser.c,
 * ts_parser__handle_error).  A do_statement may thus hold a MISSING
 * "while" that is nowhere in the text ("do {} (x);"), and a production
 * that may end right after its keyword (Python's "return" with no value,
 * C's NULL, a rule that is the keyword alone) may be a MISSING keyword
 * whole.  After a first keyword that a further token must follow, the
 * production is not complete, and nothing reduces on it there.  A second fixed point computes
 * that ("safe"), from "no" everywhere, so a cycle of rules proves nothing.
 *
 * Output: a C file defining sl_lang_keyword_table(), the pairs (node type,
 * keywords) of each language, NULL-terminated, in the form
 * sl_lang_keyword_nodes returns (lang.h).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#define MAX_WORDS 8                /* a type beginning with more words gets no entry */

/* A FIRST set: up to MAX_WORDS words, or "other" (anything else may begin it). */
struct first {
	const char *w[MAX_WORDS];
	int n, other, empty;       /* empty: a production may be empty */
	int safe;                  /* a token follows the first one in its production */
};

struct rule {
	const char *name;
	json_t *body;
	struct first f;
};

struct grammar {
	struct rule *r;
	size_t n;
	int changed;
};

static int is_word(const char *s)
{
	if (!*s || !(isalpha((unsigned char)*s) || *s == '_'))
		return 0;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return 0;
	return 1;
}

static struct rule *find_rule(struct grammar *g, const char *name)
{
	for (size_t i = 0; i < g->n; i++)
		if (!strcmp(g->r[i].name, name))
			return &g->r[i];
	return NULL;
}

static void add_word(struct first *f, const char *w)
{
	for (int i = 0; i < f->n; i++)
		if (!strcmp(f->w[i], w))
			return;
	if (f->n == MAX_WORDS)
		f->other = 1;
	else
		f->w[f->n++] = w;
}

/* f |= a, the empty flag apart. */
static void join(struct first *f, const struct first *a)
{
	for (int i = 0; i < a->n; i++)
		add_word(f, a->w[i]);
	f->other |= a->other;
}

static struct first first_of(struct grammar *g, json_t *e)
{
	struct first f = { .n = 0 };
	const char *type = json_string_value(json_object_get(e, "type"));
	json_t *m = json_object_get(e, "members"), *c = json_object_get(e, "content");

	if (!type) {
		f.other = 1;
	} else if (!strcmp(type, "STRING")) {
		const char *v = json_string_value(json_object_get(e, "value"));

		if (v && is_word(v))
			add_word(&f, v);
		else
			f.other = 1;
	} else if (!strcmp(type, "BLANK")) {
		f.empty = f.safe = 1;   /* no first token: nothing to follow it */
	} else if (!strcmp(type, "SEQ")) {
		size_t n = json_array_size(m), last = n;    /* the last member that cannot be empty */

		for (size_t i = 0; i < n; i++)
			if (!first_of(g, json_array_get(m, i)).empty)
				last = i;
		f.empty = f.safe = 1;
		for (size_t i = 0; f.empty && i < n; i++) {
			struct first a = first_of(g, json_array_get(m, i));

			join(&f, &a);
			/* the first token from member i: then a token must follow, in it or after */
			if (a.n || a.other)
				f.safe &= a.safe || (last != n && last > i);
			f.empty = a.empty;
		}
	} else if (!strcmp(type, "CHOICE")) {
		f.safe = 1;
		for (size_t i = 0; i < json_array_size(m); i++) {
			struct first a = first_of(g, json_array_get(m, i));

			join(&f, &a);
			f.empty |= a.empty;
			f.safe &= a.safe;
		}
	} else if (!strcmp(type, "REPEAT") || !strcmp(type, "REPEAT1")) {
		f = first_of(g, c);
		f.empty |= !strcmp(type, "REPEAT");
	} else if (!strcmp(type, "SYMBOL")) {
		struct rule *r = find_rule(g, json_string_value(json_object_get(e, "name")));

		if (r)
			f = r->f;      /* this round's value; the fixed point settles it */
		else
			f.other = 1;   /* an external token: alone in its production */
	} else if (!strcmp(type, "ALIAS") || !strcmp(type, "FIELD") || !strncmp(type, "PREC", 4)) {
		f = first_of(g, c);
	} else {
		f.other = 1;       /* PATTERN, TOKEN, IMMEDIATE_TOKEN, anything newer */
	}
	return f;
}

/* The sets only grow, so their sizes tell a change; safe is compared in the second pass. */
static int first_eq(const struct first *a, const struct first *b, int safe)
{
	return a->n == b->n && a->other == b->other && a->empty == b->empty &&
	       (!safe || a->safe == b->safe);
}

/* Every named ALIAS of type name below e: join its content's set into f. */
static void join_aliases(struct grammar *g, json_t *e, const char *name, struct first *f)
{
	const char *type = json_string_value(json_object_get(e, "type"));
	json_t *m = json_object_get(e, "members"), *c = json_object_get(e, "content");

	const char *value = json_string_value(json_object_get(e, "value"));

	if (type && !strcmp(type, "ALIAS") && json_is_true(json_object_get(e, "named")) && value &&
	    !strcmp(value, name)) {
		struct first a = first_of(g, c);

		join(f, &a);
		f->empty |= a.empty;
		f->safe &= a.safe;
	}
	for (size_t i = 0; i < json_array_size(m); i++)
		join_aliases(g, json_array_get(m, i), name, f);
	if (c)
		join_aliases(g, c, name, f);
}

/* Add the values of the named ALIASes below e that name no rule to types. */
static void alias_types(struct grammar *g, json_t *e, const char **types, size_t *n, size_t cap)
{
	const char *type = json_string_value(json_object_get(e, "type"));
	const char *value = json_string_value(json_object_get(e, "value"));
	json_t *m = json_object_get(e, "members"), *c = json_object_get(e, "content");

	if (type && !strcmp(type, "ALIAS") && json_is_true(json_object_get(e, "named")) && value &&
	    value[0] != '_' && !find_rule(g, value)) {
		size_t i;

		for (i = 0; i < *n && strcmp(types[i], value); i++)
			;
		if (i == *n && *n < cap)
			types[(*n)++] = value;
	}
	for (size_t i = 0; i < json_array_size(m); i++)
		alias_types(g, json_array_get(m, i), types, n, cap);
	if (c)
		alias_types(g, c, types, n, cap);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The pairs of one language, as a C array named kw_IDENT. */
static int emit(FILE *out, const char *lang, const char *path, int *count)
{
	json_error_t jerr;
	json_t *root = json_load_file(path, JSON_ALLOW_NUL, &jerr), *rules, *v;
	struct grammar g = { NULL, 0, 0 };
	const char *key, **types = NULL;
	size_t ntypes = 0;

	if (!root || !(rules = json_object_get(root, "rules"))) {
		fprintf(stderr, "gen-keywords: %s:%d: %s\n", path, jerr.line, root ? "no rules" : jerr.text);
		json_decref(root);
		return -1;
	}
	g.r = calloc(json_object_size(rules), sizeof(*g.r));
	json_object_foreach(rules, key, v) {
		g.r[g.n].name = key;
		g.r[g.n++].body = v;
	}
	/*
	 * First the sets, which only grow: iterate until none does.  Then,
	 * the sets fixed, safe from 0 everywhere up (a cycle proves nothing).
	 */
	for (int pass = 0; pass < 2 && !g.changed; pass++) {
		g.changed = 1;
		for (size_t i = 0; pass && i < g.n; i++)
			g.r[i].f.safe = 0;
		for (int round = 0; g.changed && round < 1000; round++) {
			g.changed = 0;
			for (size_t i = 0; i < g.n; i++) {
				struct first f = first_of(&g, g.r[i].body);

				if (!first_eq(&f, &g.r[i].f, pass)) {
					g.r[i].f = f;
					g.changed = 1;
				}
			}
		}
	}
	if (g.changed) {
		fprintf(stderr, "gen-keywords: %s: no fixed point\n", path);
		free(g.r);
		json_decref(root);
		return -1;
	}
	/* the visible types: rules not starting with '_', and named aliases' values */
	types = calloc(g.n * 4 + 1, sizeof(*types));
	for (size_t i = 0; i < g.n; i++)
		if (g.r[i].name[0] != '_')
			types[ntypes++] = g.r[i].name;
	for (size_t i = 0; i < g.n; i++)
		alias_types(&g, g.r[i].body, types, &ntypes, g.n * 4);
	fprintf(out, "static const char *const kw_%s[] = {\n", lang);
	qsort(types, ntypes, sizeof(*types), cmp_str);
	for (size_t t = 0; t < ntypes; t++) {
		struct rule *r = find_rule(&g, types[t]);
		struct first f = { .n = 0, .safe = 1 };

		if (r)
			f = r->f;

		for (size_t i = 0; i < g.n; i++)
			join_aliases(&g, g.r[i].body, types[t], &f);
		if (f.other || f.empty || !f.n || !f.safe)
			continue;
		qsort(f.w, (size_t)f.n, sizeof(f.w[0]), cmp_str);
		fprintf(out, "\t\"%s\", \"", types[t]);
		for (int i = 0; i < f.n; i++)
			fprintf(out, "%s%s", i ? "|" : "", f.w[i]);
		fprintf(out, "\",\n");
		(*count)++;
	}
	fprintf(out, "\tNULL\n};\n\n");
	free(types);
	free(g.r);
	json_decref(root);  /* it held every string the table printed */
	return 0;
}

int main(int argc, char **argv)
{
	int count = 0;

	printf("/* Generated by ci/gen-keywords.c from each grammar's grammar.json. */\n"
	       "#include <stddef.h>\n#include <string.h>\n\n#include \"scoping/keywords.h\"\n\n");
	for (int i = 1; i < argc; i++) {
		char *eq = strchr(argv[i], '=');

		if (!eq) {
			fprintf(stderr, "usage: gen-keywords NAME=grammar.json...\n");
			return 2;
		}
		*eq = '\0';
		if (emit(stdout, argv[i], eq + 1, &count))
			return 1;
	}
	printf("const char *const *sl_lang_keyword_table(const char *lang)\n{\n");
	for (int i = 1; i < argc; i++)
		printf("\tif (!strcmp(lang, \"%s\"))\n\t\treturn kw_%s;\n", argv[i], argv[i]);
	printf("\treturn NULL;\n}\n");
	return count ? 0 : 1;
}
