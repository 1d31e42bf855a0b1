/*
 * test_beneath.c - confined reads refuse links, "..", absolute paths and
 * non-regular files, and honour the cap.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"
#include "common/beneath.h"
#include "common/util.h"

static char dir[] = "/tmp/sluice-test-beneath-XXXXXX";
static char *root;

static void put(const char *rel, const char *text)
{
	char *p = sl_path_join(dir, rel);
	FILE *fp = fopen(p, "w");

	fputs(text, fp);
	fclose(fp);
	free(p);
}

static int read_rel(const char *rel, sl_buf *b, size_t cap)
{
	sl_err err = SL_ERR_INIT;

	sl_buf_reset(b);
	return sl_read_beneath(b, root, rel, cap, &err);
}

static void test_reads_regular_files(void)
{
	sl_buf b = SL_BUF_INIT;

	CHECK_INT(read_rel("report.xml", &b, 0), 0);
	CHECK_STR(b.buf, "<ok/>\n");
	CHECK_INT(read_rel("sub/../report.xml", &b, 0), 0);
	sl_buf_release(&b);
}

static void test_refuses_escapes(void)
{
	sl_buf b = SL_BUF_INIT;

	CHECK_INT(read_rel("link", &b, 0), SL_EREFUSED);         /* symlink to secret */
	CHECK_INT(read_rel("dirlink/secret", &b, 0), SL_EREFUSED); /* through a dir link */
	CHECK_INT(read_rel("../secret", &b, 0), SL_EREFUSED);    /* climbs out of root */
	CHECK_INT(read_rel("missing", &b, 0), SL_ENOTFOUND);
	CHECK_INT(read_rel("sub", &b, 0), SL_EREFUSED);           /* a directory */
	CHECK(strstr(b.buf, "top secret") == NULL);
	sl_buf_release(&b);
}

static void test_cap(void)
{
	sl_buf b = SL_BUF_INIT;

	CHECK_INT(read_rel("report.xml", &b, 3), 0);
	CHECK_INT(b.len, 3);
	CHECK(b.truncated);
	sl_buf_release(&b);
}

int main(void)
{
	char *p;

	if (!mkdtemp(dir))
		return 1;
	put("secret", "top secret\n");
	p = sl_path_join(dir, "wt");
	mkdir(p, 0755);
	root = p;
	p = sl_path_join(dir, "wt/sub");
	mkdir(p, 0755);
	free(p);
	put("wt/report.xml", "<ok/>\n");
	p = sl_path_join(dir, "wt/link");
	CHECK(symlink("../secret", p) == 0);
	free(p);
	p = sl_path_join(dir, "wt/dirlink");
	CHECK(symlink("..", p) == 0);
	free(p);
	RUN(test_reads_regular_files);
	RUN(test_refuses_escapes);
	RUN(test_cap);
	sl_rm_rf(dir, NULL);
	free(root);
	return unit_done();
}
