#include <stdio.h>

#include "greet.h"
#include "report.h"

int main(int argc, char **argv)
{
	char banner[32];

	greet_old(banner, argc > 1 ? argv[1] : "world");
	puts(banner);
	report_header(stdout, "platform");
	report_footer(stdout, "sluice");
	return 0;
}
