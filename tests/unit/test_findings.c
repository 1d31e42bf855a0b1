/*
 * test_findings.c - diagnostics and SARIF parsing, and the static gate's
 * "new and near a changed line" rule.
 *
 * Fixtures in tests/fixtures/gates/findings: *.gcc are real outputs made
 * here (gcc 12 in UTF-8 and C locales, clang 14, clang --analyze, cppcheck
 * 2.10 --template=gcc) of a base and a candidate of the same small file;
 * calc.diff is the real git diff between them; clang-analyzer.sarif is
 * clang 14's (paths moved to the jail's /src); semgrep.sarif and
 * cppcheck.sarif are written in those tools' shapes; bad-*.sarif are
 * hostile; host-paths.gcc and host-uris.sarif name files the ways a host
 * does (absolute, ./, ../ from a build directory, file:// URIs, uriBaseId
 * chains).  NAME.expect holds sl_findings_text of the parse (or "error: ").
 */
#include <stdlib.h>
#include <string.h>

#include "validators/findings.h"
#include "gates_fixtures.h"

static void dump_gcc(sl_buf *got, const char *name, const sl_buf *in)
{
	sl_findings f;

	sl_findings_init(&f);
	sl_findings_parse_gcc(&f, in->buf, in->len);
	sl_findings_text(&f, got, 0);
	sl_findings_release(&f);
}

static void dump_sarif(sl_buf *got, const char *name, const sl_buf *in)
{
	sl_findings f;
	sl_err err = SL_ERR_INIT;

	sl_findings_init(&f);
	if (sl_findings_parse_sarif(&f, in->buf, in->len, &err))
		sl_buf_addf(got, "error: %s\n", err.msg);
	else
		sl_findings_text(&f, got, 0);
	sl_findings_release(&f);
}

static void test_fixtures(void)
{
	CHECK(fixture_run_all("findings", "gcc", dump_gcc) >= 7);
	CHECK(fixture_run_all("findings", "sarif", dump_sarif) >= 6);
}

static int cmp_strp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void load_gcc(sl_findings *f, const char *name)
{
	sl_buf b = SL_BUF_INIT, p = SL_BUF_INIT;

	sl_buf_addf(&p, "%s/findings/%s", GATES_FIXTURES, name);
	CHECK_INT(sl_read_file(&b, p.buf, 0, NULL), 0);
	sl_findings_init(f);
	sl_findings_parse_gcc(f, b.buf, b.len);
	sl_buf_release(&b);
	sl_buf_release(&p);
}

static void load_diff(sl_changed *c)
{
	sl_buf b = SL_BUF_INIT;

	CHECK_INT(sl_read_file(&b, GATES_FIXTURES "/findings/calc.diff", 0, NULL), 0);
	sl_changed_init(c);
	CHECK_INT(sl_changed_parse(c, b.buf, b.len, NULL, NULL, NULL), 0);
	sl_buf_release(&b);
}

static void new_near_text(sl_buf *out, const char *base_name, const char *cand_name, unsigned radius)
{
	sl_findings base, cand, fresh;
	sl_changed ch;

	load_gcc(&base, base_name);
	load_gcc(&cand, cand_name);
	load_diff(&ch);
	sl_findings_init(&fresh);
	CHECK_INT(sl_findings_new_near(&base, &cand, &ch, radius, &fresh), fresh.n);
	sl_findings_text(&fresh, out, 0);
	sl_findings_release(&base);
	sl_findings_release(&cand);
	sl_findings_release(&fresh);
	sl_changed_release(&ch);
}

/*
 * The candidate moved every old warning down by 6 lines, kept the unused
 * variable at 13 next to its edit of line 14, and added an unused variable
 * (25) and a conflicting declaration (30).  Only the two new ones fail: the
 * sign-compare warning moved (19, far from edits), the old unused variable
 * and format warning are next to edits but were there before, and util.h's
 * warning is in a file the diff does not touch.
 */
static void test_new_on_changed_line_fails_old_does_not(void)
{
	sl_buf t = SL_BUF_INIT;

	new_near_text(&t, "gcc12-base.gcc", "gcc12-cand.gcc", 3);
	CHECK_STR(t.buf,
		  "src/calc.c:25:13: warning: unused variable ‘len’ [-Wunused-variable]\n"
		  "src/calc.c:30:6: error: conflicting types for ‘scale’; have ‘long int(long int)’\n"
		  "  src/calc.c:11: note: previous definition of ‘scale’ with type ‘int(int)’\n");
	/* The base compiled in the C locale (ASCII quotes): same answer. */
	sl_buf_reset(&t);
	new_near_text(&t, "gcc12-base-c-locale.gcc", "gcc12-cand.gcc", 3);
	CHECK(strstr(t.buf, "‘len’") != NULL);
	CHECK(strstr(t.buf, "conflicting types") != NULL);
	CHECK(strstr(t.buf, "unused variable ‘unused’") == NULL);
	CHECK(strstr(t.buf, "-Wformat") == NULL);
	/* clang: also the fortify warning on the new strcpy line. */
	sl_buf_reset(&t);
	new_near_text(&t, "clang14-base.gcc", "clang14-cand.gcc", 3);
	CHECK(strstr(t.buf, "src/calc.c:25:6: warning: unused variable 'len' [-Wunused-variable]\n") != NULL);
	CHECK(strstr(t.buf, "src/calc.c:27:2: warning: 'strcpy' will always overflow") != NULL);
	CHECK(strstr(t.buf, "src/calc.c:30:6: error: conflicting types for 'scale'\n") != NULL);
	CHECK(strstr(t.buf, "-Wsign-compare") == NULL);
	CHECK(strstr(t.buf, "unused_h") == NULL);
	sl_buf_release(&t);
}

/* A second copy of an old warning, on an edited line, is new. */
static void test_multiplicity(void)
{
	const char *base_txt = "a.c:50:5: warning: unused variable 'x' [-Wunused-variable]\n";
	const char *cand_txt =
		"a.c:10:5: warning: unused variable 'x' [-Wunused-variable]\n"
		"a.c:56:5: warning: unused variable 'x' [-Wunused-variable]\n";
	const char *diff = "--- a/a.c\n+++ b/a.c\n@@ -9,0 +10,6 @@\n+1\n+2\n+3\n+4\n+5\n+6\n";
	sl_findings base, cand, fresh;
	sl_changed ch;

	sl_findings_init(&base);
	sl_findings_init(&cand);
	sl_findings_init(&fresh);
	sl_changed_init(&ch);
	sl_findings_parse_gcc(&base, base_txt, strlen(base_txt));
	sl_findings_parse_gcc(&cand, cand_txt, strlen(cand_txt));
	CHECK_INT(sl_changed_parse(&ch, diff, strlen(diff), NULL, NULL, NULL), 0);
	CHECK_INT(sl_findings_new_near(&base, &cand, &ch, 0, &fresh), 1);
	CHECK_INT(fresh.v[0].line, 10);
	/* Both were there before: nothing new. */
	sl_findings_release(&fresh);
	CHECK_INT(sl_findings_new_near(&cand, &cand, &ch, 3, &fresh), 0);
	/* Nothing at base, but the second copy is far from the edit. */
	sl_findings_release(&base);
	CHECK_INT(sl_findings_new_near(&base, &cand, &ch, 3, &fresh), 1);
	sl_findings_release(&cand);
	sl_findings_release(&fresh);
	sl_changed_release(&ch);
}

/* SARIF new/near works on the same keys: semgrep flags the new strcpy line. */
static void test_sarif_new_near(void)
{
	sl_buf b = SL_BUF_INIT;
	sl_findings base, cand, fresh;
	sl_changed ch;

	sl_findings_init(&base);
	sl_findings_init(&cand);
	sl_findings_init(&fresh);
	CHECK_INT(sl_read_file(&b, GATES_FIXTURES "/findings/semgrep.sarif", 0, NULL), 0);
	CHECK_INT(sl_findings_parse_sarif(&cand, b.buf, b.len, NULL), 0);
	load_diff(&ch);
	CHECK_INT(sl_findings_new_near(&base, &cand, &ch, 0, &fresh), 1);
	CHECK_STR(fresh.v[0].file, "src/calc.c");
	CHECK_INT(fresh.v[0].level, SL_LEVEL_ERROR);
	sl_findings_filter_level(&fresh, SL_LEVEL_ERROR);
	CHECK_INT(fresh.n, 1);
	sl_findings_filter_level(&cand, SL_LEVEL_ERROR + 1);
	CHECK_INT(cand.n, 0);
	sl_findings_release(&base);
	sl_findings_release(&cand);
	sl_findings_release(&fresh);
	sl_changed_release(&ch);
	sl_buf_release(&b);
}

static void test_hostile(void)
{
	sl_findings f;
	sl_buf b = SL_BUF_INIT, t = SL_BUF_INIT;
	sl_err err = SL_ERR_INIT;

	sl_findings_init(&f);
	/* A 4 MiB message, a note with nothing before it, 20000 diagnostics. */
	sl_buf_adds(&b, "x.c:1:1: note: orphan\nx.c:2:3: warning: ");
	for (int i = 0; i < 4 << 20; i += 8)
		sl_buf_adds(&b, "AAAAAAAA");
	sl_buf_adds(&b, " [-Wlong]\n");
	for (int i = 0; i < 20000; i++)
		sl_buf_addf(&b, "y.c:%d:1: error: e%d\ny.c:%d:1: note: n\n", i + 1, i, i + 1);
	sl_findings_parse_gcc(&f, b.buf, b.len);
	CHECK_INT(f.n, 10000);
	CHECK_INT(f.dropped, 10001);
	CHECK(strlen(f.v[0].message) <= 1024 + 3);
	CHECK_STR(f.v[0].rule, "");   /* the flag was past the 64 KiB scanned */
	sl_findings_text(&f, &t, 4096);
	CHECK(t.len < 4096 + 200);
	CHECK(strstr(t.buf, "more findings") != NULL);
	sl_findings_release(&f);

	/* Lines that only look like diagnostics. */
	sl_buf_reset(&b);
	sl_buf_adds(&b, "   12 | x.c:1:2: warning: in a source excerpt\n"
		    ":1:2: warning: no file\nx.c:99999999999:1: warning: huge\n"
		    "x.c:1:2:warning: no space\ncc1: all warnings being treated as errors\n"
		    "x.c:1: warning: no column [-Werror=shadow]\n");
	sl_findings_parse_gcc(&f, b.buf, b.len);
	CHECK_INT(f.n, 1);
	CHECK_INT(f.n ? f.v[0].col : 1, 0);
	CHECK_STR(f.n ? f.v[0].rule : "", "-Wshadow");
	sl_findings_release(&f);

	/* Deep nesting and a NUL inside SARIF. */
	sl_buf_reset(&b);
	for (int i = 0; i < 100000; i++)
		sl_buf_addch(&b, '[');
	CHECK_INT(sl_findings_parse_sarif(&f, b.buf, b.len, &err), SL_EINPUT);
	CHECK_INT(sl_findings_parse_sarif(&f, "{\"runs\":[]}\0junk", 16, NULL), SL_EINPUT);
	CHECK_INT(sl_findings_parse_sarif(&f, "{\"runs\":[]}", 11, NULL), 0);
	CHECK_INT(f.n, 0);
	sl_findings_release(&f);
	sl_buf_release(&b);
	sl_buf_release(&t);
}

/* The files of the repository the host-paths fixtures were "made" in. */
static const char *const tracked_files[] = { "Makefile", "lib/util.c", "src/a b.c",
	"src/calc.c", "src/util.c", "tests/check.c" };

static void tracked_vec(sl_strvec *v)
{
	for (size_t i = 0; i < sizeof(tracked_files) / sizeof(tracked_files[0]); i++)
		sl_strvec_push(v, tracked_files[i]);
}

static void check_files(const sl_findings *f, const char *const *want, size_t n)
{
	CHECK_INT(f->n, n);
	for (size_t i = 0; i < n && i < f->n; i++)
		CHECK_STR(f->v[i].file, want[i]);
}

/*
 * Host paths are put on the repository's files: the root stripped, a
 * unique tail matched, ambiguous and system paths left and reported.
 */
static void test_place_gcc(void)
{
	static const char *const roots[] = { "/home/u/proj/" };
	sl_findings f;
	sl_strvec tracked = SL_STRVEC_INIT;
	sl_buf b = SL_BUF_INIT, report = SL_BUF_INIT, t = SL_BUF_INIT;
	unsigned char why[3];

	tracked_vec(&tracked);
	CHECK_INT(sl_read_file(&b, GATES_FIXTURES "/findings/host-paths.gcc", 0, NULL), 0);
	sl_findings_init(&f);
	sl_findings_parse_gcc(&f, b.buf, b.len);
	CHECK_INT(f.n, 8);
	CHECK_INT(sl_findings_place(&f, roots, 1, &tracked, &report, NULL), 3);
	sl_findings_text(&f, &t, 0);
	CHECK_STR(t.buf,
		  "src/calc.c:10:5: warning: unused variable 'x' [-Wunused-variable]\n"
		  "src/calc.c:11:5: warning: comparison of integer expressions of different "
		  "signedness [-Wsign-compare]\n"
		  "src/calc.c:12:1: warning: no return statement [-Wreturn-type]\n"
		  "src/calc.c:13:1: error: expected ';' before '}' token\n"
		  "util.c:5:1: warning: unused function 'helper' [-Wunused-function]\n"
		  "  /usr/include/stdio.h:100: note: declared here\n"
		  "/usr/include/string.h:44:14: warning: argument 1 null where non-null expected "
		  "[-Wnonnull]\n"
		  "other.c:1:1: warning: empty translation unit [-Wpedantic]\n"
		  "src/calc.c:20:3: warning: 'p' may be used uninitialized [-Wmaybe-uninitialized]\n"
		  "  src/calc.c:18: note: 'p' was declared here\n");
	CHECK_STR(report.buf,
		  "util.c: ambiguous, several tracked files end with it\n"
		  "/usr/include/string.h: not a tracked file of the repository\n"
		  "other.c: not a tracked file of the repository\n");
	/* placing again changes nothing: every placed path is tracked */
	sl_buf_reset(&report);
	CHECK_INT(sl_findings_place(&f, roots, 1, &tracked, &report, NULL), 3);
	sl_buf_reset(&b);
	sl_findings_text(&f, &b, 0);
	CHECK_STR(b.buf, t.buf);
	sl_findings_release(&f);

	/* without the root, the tail still decides; a root not followed by '/' is no root */
	sl_findings_init(&f);
	sl_buf_reset(&b);
	sl_buf_adds(&b, "/home/u/proj/Makefile:1:1: warning: w\n"
		    "/home/u/projx/lib/util.c:2:1: warning: w\n"
		    "/home/u/proj/util.c:3:1: warning: w\n");
	sl_findings_parse_gcc(&f, b.buf, b.len);
	sl_buf_reset(&report);
	CHECK_INT(sl_findings_place(&f, NULL, 0, &tracked, &report, why), 1);
	check_files(&f, (const char *[]){ "Makefile", "lib/util.c", "/home/u/proj/util.c" }, 3);
	/* each finding's result, for the caller to keep the unplaced ones */
	CHECK_INT(why[0], SL_PLACED);
	CHECK_INT(why[1], SL_PLACED);
	CHECK_INT(why[2], SL_PLACE_AMBIGUOUS);
	sl_findings_release(&f);
	sl_strvec_release(&tracked);
	sl_buf_release(&b);
	sl_buf_release(&t);
	sl_buf_release(&report);
}

/* SARIF: uriBaseId chains, percent-encoded relative URIs, file:// URIs. */
static void test_place_sarif(void)
{
	static const char *const roots[] = { "/home/u/my proj" };
	sl_findings f;
	sl_strvec tracked = SL_STRVEC_INIT;
	sl_buf b = SL_BUF_INIT, report = SL_BUF_INIT;

	tracked_vec(&tracked);
	CHECK_INT(sl_read_file(&b, GATES_FIXTURES "/findings/host-uris.sarif", 0, NULL), 0);
	sl_findings_init(&f);
	CHECK_INT(sl_findings_parse_sarif(&f, b.buf, b.len, NULL), 0);
	/* a base that names itself stops after 8 levels */
	check_files(&f, (const char *[]){ "/home/u/my proj/src/calc.c", "src/a b.c",
		    "/home/u/my proj/lib/util.c", "x/x/x/x/x/x/x/x/x/calc.c" }, 4);
	CHECK_INT(sl_findings_place(&f, roots, 1, &tracked, &report, NULL), 0);
	check_files(&f, (const char *[]){ "src/calc.c", "src/a b.c", "lib/util.c", "src/calc.c" },
		    4);
	CHECK_STR(report.buf, "");
	sl_findings_release(&f);
	sl_strvec_release(&tracked);
	sl_buf_release(&b);
}

/* Many findings against many files: the report stops at 8 paths. */
static void test_place_many(void)
{
	sl_findings f;
	sl_strvec tracked = SL_STRVEC_INIT;
	sl_buf b = SL_BUF_INIT, report = SL_BUF_INIT;

	for (int i = 0; i < 20000; i++) {
		sl_buf_reset(&b);
		sl_buf_addf(&b, "d%d/f%d.c", i % 100, i);
		sl_strvec_push(&tracked, b.buf);
	}
	qsort(tracked.v, tracked.n, sizeof(*tracked.v), cmp_strp);
	sl_buf_reset(&b);
	for (int i = 0; i < 5000; i++)
		sl_buf_addf(&b, "/build/x/d%d/f%d.c:1:1: warning: w\nnope%d.c:1:1: warning: w\n",
			    i % 100, i, i);
	sl_findings_init(&f);
	sl_findings_parse_gcc(&f, b.buf, b.len);
	CHECK_INT(sl_findings_place(&f, NULL, 0, &tracked, &report, NULL), 5000);
	CHECK_STR(f.v[2].file, "d1/f1.c");
	CHECK(strstr(report.buf, "nope7.c: not a tracked file") != NULL);
	CHECK(strstr(report.buf, "nope8.c") == NULL);
	CHECK(strstr(report.buf, "(and 4992 more findings in other paths)") != NULL);
	sl_findings_release(&f);
	sl_strvec_release(&tracked);
	sl_buf_release(&b);
	sl_buf_release(&report);
}

int main(void)
{
	RUN(test_fixtures);
	RUN(test_new_on_changed_line_fails_old_does_not);
	RUN(test_multiplicity);
	RUN(test_sarif_new_near);
	RUN(test_hostile);
	RUN(test_place_gcc);
	RUN(test_place_sarif);
	RUN(test_place_many);
	return unit_done();
}
