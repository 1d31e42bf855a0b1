int sum(n)
int n;
{
	int t = 0;
	for (; n > 0; n--)
		t += n;
	return t;
}
