/* check.c - the project's tests. */
#include <string.h>

#include "buf.h"
#include "net.h"
#include "ui.h"

int main(void)
{
	char t[40], b[8];
	struct conn c;

	ui_title(t, sizeof t, "a title longer than eight");
	conn_open(&c, "example.org");
	conn_banner(b);
	return !(strcmp(t, "a title longer than eight") == 0 && strcmp(c.host, "example.org") == 0 &&
		 strcmp(b, "sluice") == 0);
}
