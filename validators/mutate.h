/*
 * mutate.h - deterministic mutants of one function, for the testgen job's
 * `mutants` gate: a generated test must fail on a mutant that the existing
 * suite lets live.
 *
 * Reads a file's text and the byte range of a function in it (C-family
 * syntax: the body is what follows the range's first '{'); writes nothing.
 * Comments, string and character literals are skipped.  Mutations, in
 * order of position in the body, then of this list:
 *   flip       a comparison negated: < >=, > <=, <= >, >= <, == !=, != ==
 *   bound      an off-by-one in a bound: < <=, <= <, > >=, >= >
 *   negate     an if/while condition negated: if (c) -> if (!(c))
 *   constant   a decimal integer literal N -> N+1
 *   remove     an expression or return statement on one line replaced by ";"
 *              (declarations are kept: a line whose first two tokens are
 *              identifiers, or that starts with a type keyword)
 * The same input always gives the same mutants in the same order.
 */
#ifndef SL_MUTATE_H
#define SL_MUTATE_H

#include <stddef.h>
#include <stdint.h>

typedef struct sl_mutant {
	char *text;                 /* the whole file with this one mutation; owned */
	size_t len;
	char *what;                 /* "line 65: '>' -> '>='" and the like; owned */
	const char *op;             /* static: "flip", "bound", "negate", "constant", "remove" */
	unsigned line;              /* 1-based line of the mutation */
} sl_mutant;

typedef struct sl_mutants {
	sl_mutant *v;
	size_t n, alloc;
} sl_mutants;

#define SL_MUTANTS_INIT { .v = NULL }

/*
 * Append the mutants of file[start, end) to out, at most max of them
 * (0 = no limit).  Returns how many were appended.
 */
size_t sl_mutants_make(sl_mutants *out, const char *file, size_t len, uint32_t start,
		       uint32_t end, size_t max);
/* Free everything; the struct is reusable. */
void sl_mutants_release(sl_mutants *m);

#endif
