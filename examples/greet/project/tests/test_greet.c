#include <stdio.h>
#include <string.h>

#include "greet.h"
#include "../src/report.h"

static int failed;

#define EXPECT(c) do { if (!(c)) { printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #c); failed = 1; } } while (0)

int main(void)
{
	char small[8], buf[64];
	FILE *fp;

	EXPECT(greet(buf, sizeof buf, "Ada") == 11);
	EXPECT(strcmp(buf, "Hello, Ada!") == 0);
	EXPECT(greet(small, sizeof small, "a very long name") > 7);
	EXPECT(strlen(small) == 7);

	fp = tmpfile();
	report_header(fp, "team");
	report_footer(fp, "me");
	rewind(fp);
	EXPECT(fgets(buf, sizeof buf, fp) && strcmp(buf, "Hello, team!\n") == 0);
	EXPECT(fgets(buf, sizeof buf, fp) && strcmp(buf, "-- Hello, me!\n") == 0);
	fclose(fp);
	puts(failed ? "tests failed" : "all tests passed");
	return failed;
}
