/*
 * fuzz_glob.c - sl_glob_match: the first line of the input is the pattern,
 * each further line a path.  Matching must end (no recursion, no blowup)
 * and a pattern must match itself when it holds no special character.
 */
#include "fuzz.h"
#include "common/util.h"

int sl_fuzz_glob(const uint8_t *data, size_t size);

int sl_fuzz_glob(const uint8_t *data, size_t size)
{
	char *text = fuzz_str(data, size), *pat = text, *nl = strchr(text, '\n');
	char *path = nl ? nl + 1 : NULL;

	if (nl)
		*nl = '\0';
	if (!strpbrk(pat, "*?[\\"))
		FUZZ_CHECK(sl_glob_match(pat, pat));
	while (path) {
		char *end = strchr(path, '\n');

		if (end)
			*end = '\0';
		(void)sl_glob_match(pat, path);
		path = end ? end + 1 : NULL;
	}
	free(text);
	return 0;
}
SL_FUZZ_MAIN(sl_fuzz_glob)
