#ifdef NEW
int m(int a, int b) {
#else
int m(int a) { int b = 0;
#endif
	for (; a < b; a++) ;
	return a;
}
