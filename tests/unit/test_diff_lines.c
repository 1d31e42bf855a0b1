/*
 * test_diff_lines.c - changed-line sets from unified diffs.
 *
 * Fixtures: tests/fixtures/gates/diff/NAME.diff (git-mixed.diff is real
 * `git diff -M` output: modify, binary, delete, rename, create, no final
 * newline, a path with a space, a quoted UTF-8 path) and NAME.expect, the
 * dump below.  The cases here check nearness, path normalisation and
 * hostile input.
 */
#include <stdlib.h>
#include <string.h>

#include "validators/diff_lines.h"
#include "gates_fixtures.h"

static void dump_uints(sl_buf *out, const unsigned *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sl_buf_addf(out, "%s%u", i ? "," : "", v[i]);
}

static void dump(sl_buf *got, const char *name, const sl_buf *in)
{
	sl_changed c;
	sl_err err = SL_ERR_INIT;

	sl_changed_init(&c);
	if (sl_changed_parse(&c, in->buf, in->len, NULL, NULL, &err)) {
		sl_buf_addf(got, "error: %s\n", err.msg);
		goto done;
	}
	for (size_t i = 0; i < c.nfiles; i++) {
		const sl_changed_file *f = &c.files[i];

		sl_buf_addf(got, "file %s", f->path);
		if (f->old_path)
			sl_buf_addf(got, " old=%s", f->old_path);
		if (f->created)
			sl_buf_adds(got, " created");
		if (f->deleted)
			sl_buf_adds(got, " deleted");
		if (f->renamed)
			sl_buf_adds(got, " renamed");
		if (f->binary)
			sl_buf_adds(got, " binary");
		sl_buf_addf(got, " +%u -%u lines=", f->added, f->removed);
		dump_uints(got, f->lines, f->nlines);
		sl_buf_adds(got, " cuts=");
		dump_uints(got, f->cuts, f->ncuts);
		sl_buf_addch(got, '\n');
	}
	sl_buf_addf(got, "total +%u -%u\n", c.added, c.removed);
done:
	sl_changed_release(&c);
}

static void test_fixtures(void)
{
	CHECK(fixture_run_all("diff", "diff", dump) >= 6);
}

static void load(sl_changed *c, const char *file)
{
	sl_buf b = SL_BUF_INIT, path = SL_BUF_INIT;

	sl_buf_addf(&path, "%s/diff/%s", GATES_FIXTURES, file);
	sl_changed_init(c);
	CHECK_INT(sl_read_file(&b, path.buf, 0, NULL), 0);
	CHECK_INT(sl_changed_parse(c, b.buf, b.len, NULL, NULL, NULL), 0);
	sl_buf_release(&b);
	sl_buf_release(&path);
}

static void test_near(void)
{
	sl_changed c;

	load(&c, "git-mixed.diff");
	CHECK_INT(sl_changed_near(&c, "a.c", 13, 0), 1);
	CHECK_INT(sl_changed_near(&c, "a.c", 16, 2), 1);    /* 14 + 2 */
	CHECK_INT(sl_changed_near(&c, "a.c", 17, 2), 0);
	CHECK_INT(sl_changed_near(&c, "a.c", 24, 2), 1);    /* the cut at 22 */
	CHECK_INT(sl_changed_near(&c, "a.c", 30, 3), 0);
	CHECK_INT(sl_changed_near(&c, "a.c", 1, 0), 0);
	CHECK_INT(sl_changed_near(&c, "/src/a.c", 5, 0), 1);
	CHECK_INT(sl_changed_near(&c, "./a.c", 5, 0), 1);
	CHECK_INT(sl_changed_near(&c, "file:///src/a.c", 5, 0), 1);
	CHECK_INT(sl_changed_near(&c, "/elsewhere/a.c", 5, 0), 0);
	CHECK_INT(sl_changed_near(&c, "new.c", 4000, 0), 1); /* created: everywhere */
	CHECK_INT(sl_changed_near(&c, "mv_old.txt", 11, 0), 1); /* old name finds it */
	CHECK_INT(sl_changed_near(&c, "b.c", 5, 100), 0);
	CHECK_INT(sl_changed_near(&c, "a.c", 4294967295u, 4294967295u), 1);
	sl_changed_release(&c);
	sl_changed_release(&c);   /* reusable, idempotent */
}

static int collect(void *data, const char *path, unsigned line, const char *text, size_t len)
{
	sl_buf *b = data;

	sl_buf_addf(b, "%s:%u:%.*s\n", path, line, (int)len, text);
	return 0;
}

static int stop_at_two(void *data, const char *path, unsigned line, const char *text, size_t len)
{
	int *n = data;

	return ++*n == 2 ? SL_EREFUSED : 0;
}

static void test_added_callback(void)
{
	sl_buf b = SL_BUF_INIT, got = SL_BUF_INIT;
	sl_changed c;
	int n = 0;

	sl_read_file(&b, GATES_FIXTURES "/diff/git-mixed.diff", 0, NULL);
	sl_changed_init(&c);
	CHECK_INT(sl_changed_parse(&c, b.buf, b.len, collect, &got, NULL), 0);
	CHECK(strstr(got.buf, "a.c:13:inserted A\n") != NULL);
	CHECK(strstr(got.buf, "new.c:2:file\n") != NULL);
	CHECK(strstr(got.buf, "mv_new.txt:11:11\n") != NULL);
	CHECK(strstr(got.buf, "nn.c:1:no newline, changed\n") != NULL);
	{
		/* the parse keeps the added lines: walked again, the same calls */
		sl_buf again = SL_BUF_INIT;

		CHECK_INT(sl_changed_each_added(&c, collect, &again), 0);
		CHECK_STR(again.buf, got.buf);
		sl_buf_reset(&again);
		CHECK_INT(sl_changed_each_added(&c, stop_at_two, &n), SL_EREFUSED);
		n = 0;
		sl_buf_release(&again);
	}
	sl_changed_release(&c);
	CHECK_INT(sl_changed_parse(&c, b.buf, b.len, stop_at_two, &n, NULL), SL_EREFUSED);
	CHECK_INT(n, 2);
	sl_changed_release(&c);
	sl_buf_release(&b);
	sl_buf_release(&got);
}

static void test_report_path(void)
{
	static const char *cases[][2] = {
		{ "/src/lib/a.c", "lib/a.c" },
		{ "./lib//./a.c", "lib/a.c" },
		{ "file:///src/lib/a%20b.c", "lib/a b.c" },
		{ "file://host/src/x.c", "x.c" },
		{ "/src/build/../lib/a.c", "lib/a.c" },
		{ "lib/../../etc/passwd", "/../etc/passwd" },
		{ "/usr/include/stdio.h", "/usr/include/stdio.h" },
		{ "/src", "/src" },
		{ "", "" },
		{ "a.c", "a.c" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *p = sl_report_path(cases[i][0]);

		CHECK_STR(p, cases[i][1]);
		free(p);
	}
}

static void test_hostile(void)
{
	sl_buf b = SL_BUF_INIT;
	sl_changed c;

	/* A 16 MiB added line, and 200000 tiny files (over the cap). */
	sl_buf_adds(&b, "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -0,0 +1,1 @@\n+");
	sl_buf_grow(&b, 16u << 20);
	memset(b.buf + b.len, 'a', 16u << 20);
	sl_buf_setlen(&b, b.len + (16u << 20));
	sl_buf_addch(&b, '\n');
	sl_changed_init(&c);
	CHECK_INT(sl_changed_parse(&c, b.buf, b.len, NULL, NULL, NULL), 0);
	CHECK_INT(c.nfiles, 1);
	CHECK_INT(c.added, 1);
	sl_changed_release(&c);

	sl_buf_reset(&b);
	for (int i = 0; i < 100001; i++)
		sl_buf_addf(&b, "--- a/f%d\n+++ b/f%d\n", i, i);
	CHECK_INT(sl_changed_parse(&c, b.buf, b.len, NULL, NULL, NULL), SL_EINPUT);
	sl_changed_release(&c);

	/* Garbage, NULs, a lone header, an unterminated quoted path. */
	CHECK_INT(sl_changed_parse(&c, "\0\0@@\n+++ \n---", 13, NULL, NULL, NULL), 0);
	sl_changed_release(&c);
	CHECK_INT(sl_changed_parse(&c, "diff --git \"a/x\\", 16, NULL, NULL, NULL), 0);
	sl_changed_release(&c);
	CHECK_INT(sl_changed_parse(&c, "", 0, NULL, NULL, NULL), 0);
	CHECK_INT(c.nfiles, 0);
	sl_buf_release(&b);
}

static int record_line(void *data, const char *path, unsigned line, const char *text, size_t len)
{
	*(unsigned *)data = line;
	return 0;
}

/*
 * Lines are 1-based: "+0,1" once reported an added line 0 (to the policy
 * gate's forbid check and to every "near a changed line" question).  A start
 * of 0 is only valid with a count of 0 (a created or a deleted file).
 */
static void test_line_zero(void)
{
	const char *created = "--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+x\n";
	const char *deleted = "--- a/d\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n";
	static const char *const bad[] = {
		"--- a/x\n+++ b/x\n@@ -0,0 +0,1 @@\n+added\n",
		"--- a/x\n+++ b/x\n@@ -1 +0 @@\n-old\n+new\n",
		"--- a/x\n+++ b/x\n@@ -0,2 +1,2 @@\n a\n b\n",
	};
	sl_changed c;
	sl_err err = SL_ERR_INIT;
	unsigned line = 12345;

	sl_changed_init(&c);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		sl_err_clear(&err);
		CHECK_INT(sl_changed_parse(&c, bad[i], strlen(bad[i]), record_line, &line, &err),
			  SL_EINPUT);
		CHECK(strstr(err.msg, "bad hunk header") != NULL);
		sl_changed_release(&c);
	}
	CHECK_INT(line, 12345);
	/* created and deleted files keep their zero starts */
	CHECK_INT(sl_changed_parse(&c, created, strlen(created), record_line, &line, NULL), 0);
	CHECK_INT(line, 1);
	CHECK_INT(sl_changed_parse(&c, deleted, strlen(deleted), NULL, NULL, NULL), 0);
	CHECK_INT(c.nfiles, 2);
	CHECK_INT(c.files[1].ncuts, 1);
	CHECK_INT(c.files[1].cuts[0], 1);
	CHECK_INT(c.files[0].added, 1);
	sl_changed_release(&c);
}

int main(void)
{
	RUN(test_fixtures);
	RUN(test_near);
	RUN(test_added_callback);
	RUN(test_report_path);
	RUN(test_hostile);
	RUN(test_line_zero);
	return unit_done();
}
