#include <stdio.h>
#include <string.h>

#include "greet.h"

void greet_old(char *out, const char *name)
{
	/* unbounded: the reason this function is deprecated */
	memcpy(out, "Hello, ", 7);
	memcpy(out + 7, name, strlen(name));
	memcpy(out + 7 + strlen(name), "!", 2);
}

int greet(char *out, size_t size, const char *name)
{
	return snprintf(out, size, "Hello, %s!", name);
}
