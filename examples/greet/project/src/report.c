#include <stdio.h>

#include "greet.h"
#include "report.h"

void report_header(FILE *fp, const char *team)
{
	char line[64];

	greet_old(line, team);
	fprintf(fp, "%s\n", line);
}

void report_footer(FILE *fp, const char *author)
{
	char line[64];

	greet_old(line, author);
	fprintf(fp, "-- %s\n", line);
}
