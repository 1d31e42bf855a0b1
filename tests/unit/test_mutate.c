/*
 * test_mutate.c - mutants of one function: each operator, their order, and
 * what must never be mutated (comments, literals, the signature, shifts,
 * arrows, declarations).
 */
#include <stdlib.h>
#include <string.h>

#include "validators/mutate.h"
#include "unit.h"

static const char src[] =
	"int g(int a);\n"                                   /* 1 */
	"int f(int n, int *p)\n"                            /* 2 */
	"{\n"                                               /* 3 */
	"\tint s = 0; /* < 9 */\n"                          /* 4 */
	"\tconst char *m = \"a < b\";\n"                    /* 5 */
	"\twhile (n >= 2)\n"                                /* 6 */
	"\t\tn = n >> 1;\n"                                 /* 7 */
	"\tif (p->x == 3)\n"                                /* 8 */
	"\t\ts = g(s);\n"                                   /* 9 */
	"\treturn s + n;\n"                                 /* 10 */
	"}\n";

static void test_operators(void)
{
	sl_mutants m = SL_MUTANTS_INIT;
	const char *f = strstr(src, "int f(");
	static const char *const want[] = {
		"constant|line 4: constant 0 -> 1",
		"negate|line 6: while condition negated",
		"flip|line 6: '>=' -> '<'",
		"bound|line 6: '>=' -> '>'",
		"constant|line 6: constant 2 -> 3",
		"remove|line 7: statement removed: n = n >> 1;",
		"constant|line 7: constant 1 -> 2",
		"negate|line 8: if condition negated",
		"flip|line 8: '==' -> '!='",
		"constant|line 8: constant 3 -> 4",
		"remove|line 9: statement removed: s = g(s);",
		"remove|line 10: statement removed: return s + n;",
	};
	char got[128];

	CHECK_INT(sl_mutants_make(&m, src, strlen(src), (uint32_t)(f - src),
				  (uint32_t)strlen(src), 0), sizeof(want) / sizeof(want[0]));
	for (size_t i = 0; i < m.n && i < sizeof(want) / sizeof(want[0]); i++) {
		snprintf(got, sizeof(got), "%s|%s", m.v[i].op, m.v[i].what);
		CHECK_STR(got, want[i]);
	}
	/* each mutant is the whole file with one change */
	CHECK(m.n > 2 && strstr(m.v[2].text, "while (n < 2)") && strstr(m.v[2].text, "int g(int a);"));
	CHECK(m.n > 1 && strstr(m.v[1].text, "while (!(n >= 2))"));
	CHECK(m.n > 5 && strstr(m.v[5].text, "\t\t;\n\tif (p->x == 3)"));
	sl_mutants_release(&m);
}

static void test_cap_and_determinism(void)
{
	sl_mutants a = SL_MUTANTS_INIT, b = SL_MUTANTS_INIT;
	const char *f = strstr(src, "int f(");

	CHECK_INT(sl_mutants_make(&a, src, strlen(src), (uint32_t)(f - src),
				  (uint32_t)strlen(src), 3), 3);
	sl_mutants_make(&b, src, strlen(src), (uint32_t)(f - src), (uint32_t)strlen(src), 0);
	for (size_t i = 0; i < a.n; i++)
		CHECK(a.v[i].len == b.v[i].len && !memcmp(a.v[i].text, b.v[i].text, a.v[i].len));
	sl_mutants_release(&a);
	sl_mutants_release(&b);
	/* no body, nothing to mutate */
	CHECK_INT(sl_mutants_make(&a, src, strlen(src), 0, 13, 0), 0);
	CHECK_INT(a.n, 0);
}

int main(void)
{
	RUN(test_operators);
	RUN(test_cap_and_determinism);
	return unit_done();
}
