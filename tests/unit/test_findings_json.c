/*
 * test_findings_json.c - gcc's -fdiagnostics-format=json as findings.
 *
 * Fixtures: tests/fixtures/gates/gcc-json/NAME.txt, real output of gcc 12
 * (two compiler runs, one with -fanalyzer, between make's lines) and
 * NAME.expect, the findings as sl_findings_text writes them.
 */
#include <string.h>

#include "validators/findings.h"
#include "gates_fixtures.h"

static void dump(sl_buf *got, const char *name, const sl_buf *in)
{
	sl_findings f;

	(void)name;
	sl_findings_init(&f);
	sl_findings_parse_gcc_json(&f, in->buf, in->len);
	sl_findings_text(&f, got, 0);
	sl_findings_release(&f);
}

static void test_fixtures(void)
{
	CHECK(fixture_run_all("gcc-json", "txt", dump) >= 1);
}

static void test_hostile(void)
{
	sl_findings f;
	static const char bad[] =
		"[{\"kind\": \"warning\"}]\n"                       /* no message, no location */
		"[{\"kind\": \"note\", \"message\": \"m\", \"locations\": [{\"caret\": "
		"{\"file\": \"a.c\", \"line\": 1}}]}]\n"            /* a lone note */
		"[{\"kind\": \"error\", \"message\": \"m\", \"locations\": [{\"caret\": "
		"{\"file\": \"/src/./b.c\", \"line\": -4}}]}\n"     /* truncated array */
		"[1, \"x\", null]\n[\n";

	sl_findings_init(&f);
	sl_findings_parse_gcc_json(&f, bad, strlen(bad));
	CHECK_INT(f.n, 0);
	sl_findings_release(&f);
}

int main(void)
{
	RUN(test_fixtures);
	RUN(test_hostile);
	return unit_done();
}
