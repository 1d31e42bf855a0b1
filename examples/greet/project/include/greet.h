/* greet.h - greetings for the demo application. */
#ifndef GREET_H
#define GREET_H

#include <stddef.h>

/*
 * Deprecated: writes "Hello, NAME!" into out without knowing its size.
 * Use greet(), which takes the size of the buffer and truncates safely.
 */
__attribute__((deprecated("use greet(out, size, name)")))
void greet_old(char *out, const char *name);

/* Write "Hello, NAME!" into out (size bytes); returns the length it needed. */
int greet(char *out, size_t size, const char *name);

#endif
