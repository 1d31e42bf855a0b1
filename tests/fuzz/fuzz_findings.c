/*
 * fuzz_findings.c - the findings parsers (validators/findings.c): every
 * input is read as compiler text, as gcc's JSON diagnostics and as SARIF,
 * filtered, compared against itself (nothing is new), placed on a small
 * tree (sl_findings_place) and rendered.
 */
#include "validators/diff_lines.h"
#include "validators/findings.h"
#include "common/util.h"
#include "fuzz.h"

int sl_fuzz_findings(const uint8_t *data, size_t size);

int sl_fuzz_findings(const uint8_t *data, size_t size)
{
	sl_findings gcc, gjson, sarif, fresh;
	sl_changed ch;
	sl_buf text = SL_BUF_INIT;
	static const char diff[] = "--- a/src/a.c\n+++ b/src/a.c\n@@ -1,2 +1,3 @@\n a\n+b\n c\n";

	sl_findings_init(&gcc);
	sl_findings_init(&gjson);
	sl_findings_init(&sarif);
	sl_findings_init(&fresh);
	sl_changed_init(&ch);
	sl_changed_parse(&ch, diff, sizeof(diff) - 1, NULL, NULL, NULL);
	sl_findings_parse_gcc(&gcc, (const char *)data, size);
	sl_findings_parse_gcc_json(&gjson, (const char *)data, size);
	sl_findings_parse_sarif(&sarif, (const char *)data, size, NULL);
	sl_findings_text(&gjson, &text, 4096);
	FUZZ_CHECK(sl_findings_new_near(&gcc, &gcc, &ch, 3, &fresh) == 0);
	sl_findings_release(&fresh);
	sl_findings_init(&fresh);
	(void)sl_findings_new_near(&sarif, &gcc, &ch, 3, &fresh);
	sl_findings_text(&fresh, &text, 4096);
	sl_findings_text(&sarif, &text, 4096);
	{
		static const char *const roots[] = { "/home/u/proj" };
		static char *files[] = { "a.c", "lib/a.c", "src/a.c", "src/b c.c", NULL };
		sl_strvec tracked = { files, 4, 5 };

		sl_findings_place(&sarif, roots, 1, &tracked, &text, NULL);
		sl_findings_place(&gcc, roots, 1, &tracked, &text, NULL);
	}
	sl_findings_filter_level(&gcc, 2);
	sl_buf_release(&text);
	sl_findings_release(&gcc);
	sl_findings_release(&gjson);
	sl_findings_release(&sarif);
	sl_findings_release(&fresh);
	sl_changed_release(&ch);
	return 0;
}
SL_FUZZ_MAIN(sl_fuzz_findings)
