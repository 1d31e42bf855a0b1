/* statements of every shape, for the split into statements (items.h) */
#include <string.h>

struct p { int x, y; };

static int three(int a, int b, int c)
{
	return a + b + c;
}

int chains(int a, int b)
{
	if (a)
		three(1, 2, 3);
	else if (b)
		three(4, 5, 6);
	else
		three(7, 8, 9);
	if (a) {
		three(a, b, 0);
	} else {
		memset(&a, 0, sizeof(a));
	}
	do
		three(a, a, a);
	while (three(b, b, b));
	do {
		a--;
	} while (a > three(1, 1, 1));
	return 0;
}

int labels(int n)
{
	switch (n) {
	case 1:
		return three(n, n, 1);
	case 2: {
		int k = three(n, 2, 2);
		return k;
	}
	default:
		break;
	}
	if (n < 0)
		goto out;
	n = three(n, 0, 0) /* a comment */ + 1;
out:
	three(9, 9, 9);
	return n;
}

struct p make(int a)
{
	struct p q = { a, three(a, a, a) };
	static const int t[] = { 1, 2, 3 };

	(void)t;
	return (struct p){ three(1, 2, 3), 0 };
}

int loops(int n)
{
	int s = 0;

	for (int i = 0; i < n; i++) {
		s += three(i, i, i);
		for (;;)
			break;
	}
	while (n--)
		s += three(n, s, 0);
	{
		int inner = three(s, s, s);
		s += inner;
	}
	three(s, /* two named children and a comment */ n);
	return s + ({ int v = three(1, 2, 3); v; });
}

int conditional(int a)
{
#ifdef FAST
	a = three(a, 1, 1);
#else
	a = three(a, 2, 2);
#endif
	if (a)
		return 1;
#if defined(EXTRA)
	else if (a > 1)
		return three(a, 3, 3);
#endif
	else
		return three(a, 4, 4);
}

int many(int a)
{
	memcpy(&a, &a, sizeof(a));
	three(a, a, a);
	printf("%d %d %d\n", a, a, a);
	return 0;
}
