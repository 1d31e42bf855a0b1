#ifndef GUARD_H
#define GUARD_H

/* a comment with } and { and "for" */
struct s { int a; } one, two;

static const char *brace = "{ for }";
static const char close = '}';

int a(int n)
{
	int t = 0;
	for (int i = 0; i < n; i++)
		t += i;
	return t;
}

#ifdef X
int b(void) { while (1) { for (;;) break; } return 0; }
#else
int b(void) { return 1; }
#endif

int c(void) { return 2; }

#endif
