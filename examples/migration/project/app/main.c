/* main.c - the program: greets, connects, shows a title. */
#include <stdio.h>

#include "buf.h"
#include "net.h"
#include "ui.h"

int main(int argc, char **argv)
{
	char name[32];
	char title[40];
	struct conn c;

	buf_copy(name, argc > 1 ? argv[1] : "world");
	conn_open(&c, "example.org");
	ui_title(title, sizeof title, name);
	printf("%s %s %s\n", name, c.host, title);
	return 0;
}
