#ifndef REPORT_H
#define REPORT_H

#include <stdio.h>

void report_header(FILE *fp, const char *team);
void report_footer(FILE *fp, const char *author);

#endif
