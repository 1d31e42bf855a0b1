int a;

/*
 * TODO: x
 */
# ifdef U

int b(void);

#endif
