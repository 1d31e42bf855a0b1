/* buf.c - the library. */
#include <string.h>

#include "buf.h"

void buf_copy(char *dst, const char *src)
{
	strcpy(dst, src);
}

size_t buf_copy_n(char *dst, size_t size, const char *src)
{
	size_t n = strlen(src);

	if (size) {
		size_t k = n < size - 1 ? n : size - 1;

		memcpy(dst, src, k);
		dst[k] = '\0';
	}
	return n;
}
