/*
 * test_reply.c - sl_reply_parse against model replies, and the edit list.
 *
 * Most cases are data: tests/fixtures/replies/NAME.reply and NAME.expect
 * (see the README there); each reply is parsed and its edits dumped in the
 * expect format and compared.  The cases below need bytes a fixture file
 * would not keep (CR, NUL) or check the list and error behaviour.
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/generate/edit.h"
#include "common/util.h"
#include "unit.h"

#define FIXTURES "tests/fixtures/replies"

static const char *kind_name(int kind)
{
	switch (kind) {
	case SL_EDIT_SPLICE: return "splice";
	case SL_EDIT_REPLACE: return "replace";
	case SL_EDIT_HUNK: return "hunk";
	}
	return "?";
}

static void dump_text(sl_buf *out, const char *tag, const char *text)
{
	const char *p = text;

	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		sl_buf_addf(out, "%s|%.*s\n", tag, (int)len, p);
		if (!nl) {
			sl_buf_addf(out, "%s\\ no newline\n", tag);
			break;
		}
		p = nl + 1;
	}
}

static void dump(sl_buf *out, const sl_edit_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		const sl_edit *e = &l->v[i];

		sl_buf_addf(out, "edit %s %s", kind_name(e->kind), e->path ? e->path : "(null)");
		if (e->kind == SL_EDIT_HUNK)
			sl_buf_addf(out, " line=%u", e->old_line);
		if (e->new_file)
			sl_buf_adds(out, " new_file");
		if (e->delete_file)
			sl_buf_adds(out, " delete_file");
		sl_buf_addch(out, '\n');
		dump_text(out, "old", e->old_text);
		dump_text(out, "new", e->new_text);
	}
}

/* Parse and dump, or "error: MSG" (with the code checked to be SL_EINPUT). */
static void parse_dump(sl_buf *out, const char *reply, size_t len, int format)
{
	sl_edit_list l = SL_EDIT_LIST_INIT;
	sl_err err = SL_ERR_INIT;
	int rc = sl_reply_parse(&l, reply, len, format, &err);

	if (rc) {
		CHECK_INT(rc, SL_EINPUT);
		CHECK_INT(l.n, 0);
		sl_buf_addf(out, "error: %s\n", err.msg);
	} else {
		CHECK_INT(err.code, 0);
		dump(out, &l);
	}
	sl_edit_list_release(&l);
}

static int run_fixture(const char *name)
{
	sl_buf path = SL_BUF_INIT, reply = SL_BUF_INIT, expect = SL_BUF_INIT, got = SL_BUF_INIT;
	int format = !strncmp(name, "sr-", 3) ? SL_FORMAT_SEARCH_REPLACE : SL_FORMAT_UDIFF;
	int ok = 0;

	sl_buf_addf(&path, "%s/%s.reply", FIXTURES, name);
	if (sl_read_file(&reply, path.buf, 0, NULL))
		goto done;
	sl_buf_reset(&path);
	sl_buf_addf(&path, "%s/%s.expect", FIXTURES, name);
	if (sl_read_file(&expect, path.buf, 0, NULL))
		goto done;
	parse_dump(&got, reply.buf, reply.len, format);
	ok = !strcmp(got.buf, expect.buf);
	if (!ok)
		fprintf(stderr, "fixture %s:\n--- expected\n%s--- got\n%s", name, expect.buf, got.buf);
done:
	sl_buf_release(&path);
	sl_buf_release(&reply);
	sl_buf_release(&expect);
	sl_buf_release(&got);
	return ok;
}

static void test_fixtures(void)
{
	DIR *d = opendir(FIXTURES);
	struct dirent *de;
	int n = 0;

	CHECK(d != NULL);
	if (!d)
		return;
	while ((de = readdir(d)) && n < 1000) {
		size_t len = strlen(de->d_name);
		char *name;

		if (len < 7 || strcmp(de->d_name + len - 6, ".reply"))
			continue;
		name = sl_xstrndup(de->d_name, len - 6);
		n++;
		if (!run_fixture(name)) {
			fprintf(stderr, "fixture '%s' failed\n", name);
			unit_cur_failed = 1;
		}
		free(name);
	}
	closedir(d);
	CHECK(n >= 25);
}

static void test_crlf_udiff(void)
{
	const char *r = "Here:\r\n```diff\r\n--- a/w.c\r\n+++ b/w.c\r\n@@ -1,2 +1,2 @@\r\n"
			" int x;\r\n-int y;\r\n+int z;\r\n```\r\n";
	sl_buf got = SL_BUF_INIT;

	parse_dump(&got, r, strlen(r), SL_FORMAT_UDIFF);
	CHECK_STR(got.buf, "edit hunk w.c line=1\nold|int x;\nold|int y;\nnew|int x;\nnew|int z;\n");
	sl_buf_release(&got);
}

static void test_crlf_search_replace(void)
{
	const char *r = "w.c\r\n```\r\n<<<<<<< SEARCH\r\nint y;\r\n=======\r\nint z;\r\n"
			">>>>>>> REPLACE\r\n```\r\n";
	sl_buf got = SL_BUF_INIT;

	parse_dump(&got, r, strlen(r), SL_FORMAT_SEARCH_REPLACE);
	CHECK_STR(got.buf, "edit replace w.c\nold|int y;\nnew|int z;\n");
	sl_buf_release(&got);
}

static void test_no_final_newline_in_reply(void)
{
	const char *r = "--- a/q.c\n+++ b/q.c\n@@ -1 +1 @@\n-a\n+b";
	sl_buf got = SL_BUF_INIT;

	parse_dump(&got, r, strlen(r), SL_FORMAT_UDIFF);
	CHECK_STR(got.buf, "edit hunk q.c line=1\nold|a\nnew|b\n");
	sl_buf_release(&got);
}

static void test_prefix_only_when_consistent(void)
{
	/* "a/" without a matching "b/" is part of the path */
	const char *r = "--- a/x.c\n+++ a/x.c\n@@ -1 +1 @@\n-a\n+b\n";
	sl_buf got = SL_BUF_INIT;

	parse_dump(&got, r, strlen(r), SL_FORMAT_UDIFF);
	CHECK_STR(got.buf, "edit hunk a/x.c line=1\nold|a\nnew|b\n");
	sl_buf_release(&got);
}

static void test_path_in_prose(void)
{
	const char *r = "Update `lib/util.c` as follows:\n\n```c\n<<<<<<< SEARCH\nold\n=======\n"
			"new\n>>>>>>> REPLACE\n```\nThat's it.\n";
	sl_buf got = SL_BUF_INIT;

	parse_dump(&got, r, strlen(r), SL_FORMAT_SEARCH_REPLACE);
	CHECK_STR(got.buf, "edit replace lib/util.c\nold|old\nnew|new\n");
	sl_buf_release(&got);
}

static void test_error_keeps_list(void)
{
	sl_edit_list l = SL_EDIT_LIST_INIT;
	sl_err err = SL_ERR_INIT;
	/* the first file parses, the second has no hunk: nothing may be appended */
	const char *r = "--- a/a.c\n+++ b/a.c\n@@ -1 +1 @@\n-a\n+b\n--- a/b.c\n+++ b/b.c\nprose\n";

	sl_edit_list_add(&l, SL_EDIT_SPLICE, "keep.c", "x", "y");
	CHECK_INT(sl_reply_parse(&l, r, strlen(r), SL_FORMAT_UDIFF, &err), SL_EINPUT);
	CHECK_INT(l.n, 1);
	CHECK_STR(l.v[0].path, "keep.c");
	CHECK(strstr(err.msg, "'b.c' has no hunk") != NULL);
	sl_edit_list_release(&l);
}

static void test_appends(void)
{
	sl_edit_list l = SL_EDIT_LIST_INIT;
	sl_err err = SL_ERR_INIT;
	const char *r = "--- a/a.c\n+++ b/a.c\n@@ -1 +1 @@\n-a\n+b\n";

	CHECK_INT(sl_reply_parse(&l, r, strlen(r), SL_FORMAT_UDIFF, &err), 0);
	CHECK_INT(sl_reply_parse(&l, r, strlen(r), SL_FORMAT_UDIFF, &err), 0);
	CHECK_INT(l.n, 2);
	sl_edit_list_release(&l);
	CHECK_INT(l.n, 0);
	CHECK(l.v == NULL);
}

static void test_nul_and_bad_format(void)
{
	sl_edit_list l = SL_EDIT_LIST_INIT;
	sl_err err = SL_ERR_INIT;
	const char r[] = "--- a/a.c\n+++ b/a.c\n@@ -1 +1 @@\n-a\0\n+b\n";

	CHECK_INT(sl_reply_parse(&l, r, sizeof(r) - 1, SL_FORMAT_UDIFF, &err), SL_EINPUT);
	CHECK_STR(err.msg, "the reply contains a NUL byte");
	sl_err_clear(&err);
	CHECK_INT(sl_reply_parse(&l, "x", 1, 99, &err), SL_EINPUT);
	CHECK_INT(l.n, 0);
}

static void test_edit_list_and_names(void)
{
	sl_edit_list l = SL_EDIT_LIST_INIT;
	sl_edit *e;

	for (int i = 0; i < 100; i++)
		sl_edit_list_add(&l, SL_EDIT_REPLACE, "p", "o", "n");
	e = sl_edit_list_add(&l, SL_EDIT_SPLICE, "q", NULL, NULL);
	CHECK_INT(l.n, 101);
	CHECK_STR(e->old_text, "");
	CHECK_STR(e->new_text, "");
	CHECK_INT(e->start, 0);
	CHECK_INT(e->new_file, 0);
	CHECK_STR(l.v[57].path, "p");
	sl_edit_list_release(&l);
}

/* Node replacement: the fenced block replaces the unit; prose alone is a format error. */
static void test_node_needs_a_block(void)
{
	static const char unit[] = "int f(void) { return old(1); }";
	static const char fenced[] = "Here:\n```c\nint f(void) { return new(1); }\n```\n";
	static const char prose[] = "Call new() instead of old() and it works.\n";
	sl_edit_list l = SL_EDIT_LIST_INIT;
	sl_err err = SL_ERR_INIT;

	CHECK_INT(sl_reply_parse_node(&l, fenced, strlen(fenced), "a.c", 10, 10 + strlen(unit),
				      unit, &err), 0);
	CHECK_INT(l.n, 1);
	if (l.n)
		CHECK_STR(l.v[0].new_text, "int f(void) { return new(1); }");
	CHECK_INT(sl_reply_parse_node(&l, prose, strlen(prose), "a.c", 10, 10 + strlen(unit),
				      unit, &err), SL_EINPUT);
	CHECK(strstr(err.msg, "no fenced code block") != NULL);
	CHECK_INT(l.n, 1);
	sl_edit_list_release(&l);
}

int main(void)
{
	RUN(test_fixtures);
	RUN(test_crlf_udiff);
	RUN(test_crlf_search_replace);
	RUN(test_no_final_newline_in_reply);
	RUN(test_prefix_only_when_consistent);
	RUN(test_path_in_prose);
	RUN(test_error_keeps_list);
	RUN(test_appends);
	RUN(test_nul_and_bad_format);
	RUN(test_edit_list_and_names);
	RUN(test_node_needs_a_block);
	return unit_done();
}
