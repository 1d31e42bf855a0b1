/*
 * fuzz.h - what every libFuzzer harness under tests/fuzz/ shares.
 *
 * A harness file fuzz_NAME.c defines
 *
 *     int sl_fuzz_NAME(const uint8_t *data, size_t size)
 *     SL_FUZZ_MAIN(sl_fuzz_NAME)
 *
 * `make fuzz` builds each file alone with clang -fsanitize=fuzzer,address,
 * undefined, where SL_FUZZ_MAIN defines LLVMFuzzerTestOneInput and
 * FUZZ_CHECK aborts.  tests/unit/test_fuzz_regress.c includes every
 * harness with SL_FUZZ_REPLAY defined (built by gcc in `make test`), where
 * SL_FUZZ_MAIN is empty and FUZZ_CHECK is the unit layer's CHECK, and
 * replays tests/fuzz/regress/NAME/ (every crash once found) and
 * tests/fuzz/seed/NAME/ through the same functions.
 */
#ifndef SL_FUZZ_H
#define SL_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef SL_FUZZ_REPLAY
#include "unit.h"
#define SL_FUZZ_MAIN(fn)
#define FUZZ_CHECK(expr) CHECK(expr)
#else
#define SL_FUZZ_MAIN(fn) \
	int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size); \
	int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) { return fn(data, size); }
#define FUZZ_CHECK(expr) do { if (!(expr)) { \
	fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #expr); \
	abort(); } } while (0)
#endif

/* A NUL-terminated copy of the input (caller frees). */
static inline char *fuzz_str(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

#endif
