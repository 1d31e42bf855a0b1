/*
 * test_finding_gone.c - a fix's proof: line tracking through a diff, and
 * each reason sl_finding_gone_judge() gives (still, moved, silences,
 * deletes, new) against hand-made finding sets.
 */
#include <stdlib.h>
#include <string.h>

#include "validators/finding_gone.h"
#include "unit.h"

/* a.c: lines 3-4 replaced by three lines, a line inserted after 10, line 20 removed */
static const char diff1[] =
	"diff --git a/a.c b/a.c\n"
	"--- a/a.c\n"
	"+++ b/a.c\n"
	"@@ -2,4 +2,5 @@\n"
	" two\n"
	"-three\n"
	"-four\n"
	"+THREE\n"
	"+FOUR\n"
	"+FOUR-AND-A-HALF\n"
	" five\n"
	"@@ -10,1 +11,2 @@\n"
	" ten\n"
	"+ten-and-a-half\n"
	"@@ -19,3 +21,2 @@\n"
	" nineteen\n"
	"-twenty\n"
	" twenty-one\n"
	"diff --git a/b.c b/b.c\n"
	"--- a/b.c\n"
	"+++ b/b.c\n"
	"@@ -1,1 +1,1 @@\n"
	"-x\n"
	"+y\n";

static void test_track_line(void)
{
	int removed;

	CHECK_INT(sl_diff_track_line(diff1, "a.c", 1, &removed), 1);
	CHECK_INT(removed, 0);
	CHECK_INT(sl_diff_track_line(diff1, "a.c", 2, &removed), 2);
	CHECK_INT(sl_diff_track_line(diff1, "a.c", 3, &removed), 3);
	CHECK_INT(removed, 1);
	CHECK_INT(sl_diff_track_line(diff1, "a.c", 4, &removed), 3);
	CHECK_INT(removed, 1);
	CHECK_INT(sl_diff_track_line(diff1, "a.c", 5, &removed), 6);
	CHECK_INT(removed, 0);
	CHECK_INT(sl_diff_track_line(diff1, "a.c", 9, &removed), 10);
	CHECK_INT(sl_diff_track_line(diff1, "a.c", 10, &removed), 11);
	CHECK_INT(sl_diff_track_line(diff1, "a.c", 11, &removed), 13);
	CHECK_INT(sl_diff_track_line(diff1, "a.c", 20, &removed), 22);
	CHECK_INT(removed, 1);
	CHECK_INT(sl_diff_track_line(diff1, "a.c", 21, &removed), 22);
	CHECK_INT(removed, 0);
	CHECK_INT(sl_diff_track_line(diff1, "a.c", 100, &removed), 101);
	/* another file's hunks do not count; an untouched file maps to itself */
	CHECK_INT(sl_diff_track_line(diff1, "b.c", 5, &removed), 5);
	CHECK_INT(sl_diff_track_line(diff1, "c.c", 7, &removed), 7);
	CHECK_INT(removed, 0);
}

static void add(sl_findings *f, const char *file, unsigned line, const char *rule)
{
	sl_finding x = { (char *)file, line, 1, SL_LEVEL_WARNING, (char *)rule, (char *)"msg",
			 NULL };

	sl_findings_add_copy(f, &x);
}

/* judge with base {a.c:30 leak, a.c:80 leak}, the unit a.c:25-40 */
static int judge(const char *diff, const sl_findings *cand, sl_buf *note)
{
	sl_findings base;
	sl_unit_ref u = { "a.c", 25, 40 };
	sl_buf fb = SL_BUF_INIT;
	sl_changed ch;
	int ok;

	sl_changed_init(&ch);
	sl_changed_parse(&ch, diff, strlen(diff), NULL, NULL, NULL);
	sl_findings_init(&base);
	add(&base, "a.c", 30, "leak");
	add(&base, "a.c", 80, "leak");
	sl_buf_reset(note);
	ok = sl_finding_gone_judge(&base, cand, &ch, &u, 3, note, &fb);
	CHECK(ok || fb.len);
	sl_changed_release(&ch);
	sl_buf_release(&fb);
	sl_findings_release(&base);
	return ok;
}

static const char fix30[] =
	"--- a/a.c\n+++ b/a.c\n@@ -29,3 +29,4 @@\n x\n-leak();\n+free(p);\n+return;\n y\n";

static void test_judge(void)
{
	sl_findings cand;
	sl_buf note = SL_BUF_INIT;
	static const char suppress[] =
		"--- a/a.c\n+++ b/a.c\n@@ -29,2 +29,3 @@\n x\n+/* NOLINT */\n leak();\n";
	static const char build[] =
		"--- a/Makefile\n+++ b/Makefile\n@@ -1,1 +1,1 @@\n-CFLAGS = -Wall\n+CFLAGS =\n";
	static const char gut[] =
		"--- a/a.c\n+++ b/a.c\n@@ -26,10 +26,1 @@\n-1\n-2\n-3\n-4\n-5\n-6\n-7\n-8\n"
		"-9\n-10\n+return 0;\n";

	sl_findings_init(&cand);
	/* gone: the other leak moved down by one line with the diff */
	add(&cand, "a.c", 81, "leak");
	CHECK(judge(fix30, &cand, &note));
	/* still there at its line tracked through the diff */
	sl_findings_release(&cand);
	sl_findings_init(&cand);
	add(&cand, "a.c", 31, "leak");
	add(&cand, "a.c", 81, "leak");
	CHECK(!judge("--- a/a.c\n+++ b/a.c\n@@ -20,1 +20,2 @@\n x\n+y\n", &cand, &note));
	CHECK_STR(note.buf, "still there: a.c:31 [leak]");
	/* its line rewritten: the same rule anywhere in the unit is still there */
	sl_findings_release(&cand);
	sl_findings_init(&cand);
	add(&cand, "a.c", 33, "leak");
	add(&cand, "a.c", 81, "leak");
	CHECK(!judge(fix30, &cand, &note));
	CHECK_STR(note.buf, "still there: a.c:33 [leak]");
	/* the same rule outside the unit, where no base finding maps to: moved */
	sl_findings_release(&cand);
	sl_findings_init(&cand);
	add(&cand, "a.c", 60, "leak");
	add(&cand, "a.c", 81, "leak");
	CHECK(!judge(fix30, &cand, &note));
	CHECK_STR(note.buf, "moved: a.c:30 [leak] is now at line 60");
	/* a new finding of another rule next to the change */
	sl_findings_release(&cand);
	sl_findings_init(&cand);
	add(&cand, "a.c", 30, "null-deref");
	add(&cand, "a.c", 81, "leak");
	CHECK(!judge(fix30, &cand, &note));
	CHECK_STR(note.buf, "new finding near the change: a.c:30 [null-deref]");
	/* silencing, whatever the analyzer then says */
	CHECK(!judge(suppress, &(sl_findings){ 0 }, &note));
	CHECK_STR(note.buf, "silences the analyzer: adds 'NOLINT' at a.c:30");
	CHECK(!judge(build, &(sl_findings){ 0 }, &note));
	CHECK_STR(note.buf, "silences the analyzer: changes the build or analyzer "
		  "configuration file Makefile");
	/* ten of the sixteen lines removed, one added */
	CHECK(!judge(gut, &(sl_findings){ 0 }, &note));
	CHECK_STR(note.buf, "deletes code: removes 10 of the 16 lines of a.c:25-40 and adds 1");
	sl_findings_release(&cand);
	sl_buf_release(&note);
}

static void test_in_unit(void)
{
	sl_findings f, out;
	sl_unit_ref u = { "a.c", 10, 20 };

	sl_findings_init(&f);
	sl_findings_init(&out);
	add(&f, "a.c", 9, "r");
	add(&f, "a.c", 10, "r");
	add(&f, "a.c", 20, "r");
	add(&f, "a.c", 21, "r");
	add(&f, "b.c", 15, "r");
	CHECK_INT(sl_findings_in_unit(&f, &u, &out), 2);
	CHECK_INT(out.v[0].line, 10);
	CHECK_INT(out.v[1].line, 20);
	sl_findings_release(&f);
	sl_findings_release(&out);
}

static void test_old_text(void)
{
	static const char diff[] =
		"diff --git a/t.c b/t.c\n--- a/t.c\n+++ b/t.c\n"
		"@@ -1,4 +1,5 @@\n a\n-b\n+B\n c\n+x\n d\n"
		"@@ -8,2 +9,1 @@\n h\n-i\n"
		"diff --git a/u.c b/u.c\n--- a/u.c\n+++ b/u.c\n@@ -1 +1 @@\n-q\n+r\n";
	static const char now[] = "a\nB\nc\nx\nd\ne\nf\ng\nh\nj\n";
	sl_buf old = SL_BUF_INIT;

	CHECK_INT(sl_diff_old_text(diff, "t.c", now, strlen(now), &old), 0);
	CHECK_STR(old.buf, "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\n");
	/* a file the diff leaves alone comes back as it is */
	sl_buf_reset(&old);
	CHECK_INT(sl_diff_old_text(diff, "v.c", now, strlen(now), &old), 0);
	CHECK_STR(old.buf, now);
	sl_buf_release(&old);
}

/* 1 when a one-line edit of path changes a file of j (allow: NULL or one glob). */
static int touches(const sl_judging *j, const char *path, const char *allow, sl_buf *note)
{
	const char *globs[] = { allow, NULL };
	sl_buf diff = SL_BUF_INIT;
	sl_changed ch;
	int hit;

	sl_buf_addf(&diff, "--- a/%s\n+++ b/%s\n@@ -1 +1 @@\n-x\n+y\n", path, path);
	sl_changed_init(&ch);
	sl_changed_parse(&ch, diff.buf, diff.len, NULL, NULL, NULL);
	sl_buf_reset(note);
	hit = sl_judging_changed(j, allow ? globs : NULL, &ch, note);
	sl_changed_release(&ch);
	sl_buf_release(&diff);
	return hit;
}

static void test_judging(void)
{
	sl_judging j;
	sl_buf note = SL_BUF_INIT;

	sl_judging_init(&j);
	/* a location in the code under test protects nothing */
	sl_judging_add(&j, "clamp_above", "# src/calc.c:65: clamp(15, 0, 10) != 10");
	CHECK_INT((int)j.where.n, 0);
	/* a test file under a test directory protects the directory */
	sl_judging_add(&j, "clamp_above", "not ok 6\n# ./tests/check.c:40: clamp(15, 0, 10) != 10");
	/* a test-named file elsewhere protects itself and its stem's siblings */
	sl_judging_add(&j, "TestSpan", "lib/span_test.go:12: got 0");
	/* an automake id that is a path */
	sl_judging_add(&j, "t/basic.sh", NULL);
	/* a location without a directory names the file anywhere */
	sl_judging_add(&j, "com.x.BarTest.testY", "at com.x.BarTest.testY(BarTest.java:42)");
	CHECK_INT((int)j.where.n, 4);
	CHECK_INT(touches(&j, "tests/check.c", NULL, &note), 1);
	CHECK_STR(note.buf, "changes the test that judges it: tests/check.c (test clamp_above)");
	CHECK_INT(touches(&j, "tests/data/expected.out", NULL, &note), 1);
	CHECK_INT(touches(&j, "src/calc.c", NULL, &note), 0);
	CHECK_INT(touches(&j, "lib/span_test.go", NULL, &note), 1);
	CHECK_INT(touches(&j, "lib/span_test.golden", NULL, &note), 1);
	CHECK_INT(touches(&j, "lib/span.go", NULL, &note), 0);
	CHECK_INT(touches(&j, "t/basic.exp", NULL, &note), 1);
	CHECK_INT(touches(&j, "src/test/java/com/x/BarTest.java", NULL, &note), 1);
	CHECK_INT(touches(&j, "src/main/java/com/x/Bar.java", NULL, &note), 0);
	/* what the campaign allows by name */
	CHECK_INT(touches(&j, "tests/check.c", "tests/check.c", &note), 0);
	CHECK_INT(touches(&j, "tests/check.c", "*.c", &note), 0);
	CHECK_INT(touches(&j, "tests/other.c", "tests/check.c", &note), 1);
	sl_judging_release(&j);
	sl_buf_release(&note);
}

/* A file a test's name was found in protects itself; which paths are tests' files. */
static void test_judging_files(void)
{
	static const char *const globs[] = { "checks/*.c", NULL };
	sl_judging j;
	sl_buf note = SL_BUF_INIT;

	sl_judging_init(&j);
	sl_judging_add_file(&j, "checks/calc.c", "clamp_above");
	sl_judging_add_file(&j, "../etc/passwd", "x");
	sl_judging_add_file(&j, "/etc/passwd", "x");
	CHECK_INT((int)j.where.n, 1);
	CHECK_INT(touches(&j, "checks/calc.c", NULL, &note), 1);
	CHECK_STR(note.buf, "changes the test that judges it: checks/calc.c (test clamp_above)");
	CHECK_INT(touches(&j, "checks/other.c", NULL, &note), 0);
	CHECK_INT(sl_test_file("checks/calc.c", globs), 1);
	CHECK_INT(sl_test_file("checks/calc.c", NULL), 0);
	CHECK_INT(sl_test_file("tests/test_hex.c", NULL), 1);
	CHECK_INT(sl_test_file("lib/hex_test.c", NULL), 1);
	CHECK_INT(sl_test_file("src/hex.c", globs), 0);
	sl_judging_release(&j);
	sl_buf_release(&note);
}

/* FILE:LINE places in a failure text, in order. */
static void test_text_locations(void)
{
	const char *at = "#1 0x4011 in hex_digit /src/src/hex.c:10:3 then tests/t.c:4";
	char *file = NULL;

	CHECK_INT((int)sl_text_next_location(&at, &file), 10);
	CHECK_STR(file, "src/hex.c");
	free(file);
	CHECK_INT((int)sl_text_next_location(&at, &file), 4);
	CHECK_STR(file, "tests/t.c");
	free(file);
	CHECK_INT((int)sl_text_next_location(&at, &file), 0);
	CHECK(!file && !at);
}

int main(void)
{
	RUN(test_judging);
	RUN(test_judging_files);
	RUN(test_text_locations);
	RUN(test_old_text);
	RUN(test_track_line);
	RUN(test_judge);
	RUN(test_in_unit);
	return unit_done();
}
