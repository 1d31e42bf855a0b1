/* for the record: no loop here */
static const char *s = "for";
int y(void) { return 0; }
