#include <stdio.h>
struct p { int x, y; };
struct p origin = (struct p) { 0, 0 };
#if 0
static int unused(void) { return '{'; } /* isn't used */
#endif
int f(int a)
#ifdef WIDE
	/* two headers, one body */
#endif
{
	for (;;)
		return a;
}
#define LOOP(n) for (int i = 0; i < (n); i++)
int g(void) { LOOP(3) f(i); return 0; }
int h(void) {
#if defined(A)
	for (;;) break;
#endif
	return 0;
}
int broken(void) { return + ; }
int k(int n) { for (; n; n--) ; return n; }
