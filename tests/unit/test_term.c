/*
 * test_term.c - common/term: control characters and escape sequences of
 * outside text are shown, not sent; valid UTF-8 passes; JSON stays JSON.
 */
#include <jansson.h>
#include <string.h>

#include "common/term.h"
#include "unit.h"

static char *safe(const char *s, size_t n, unsigned flags)
{
	sl_buf b = SL_BUF_INIT;

	sl_term_safe(&b, s, n, flags);
	return sl_buf_detach(&b, NULL);
}

#define CHECK_SAFE(in, want) do { char *got_ = safe(in, sizeof(in) - 1, 0); \
	CHECK_STR(got_, want); free(got_); } while (0)

static void test_plain_text_unchanged(void)
{
	CHECK_SAFE("line 1\n\tline 2\n", "line 1\n\tline 2\n");
	CHECK_SAFE("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80");
	CHECK_SAFE("", "");
}

static void test_attacks_shown(void)
{
	/* window title (OSC 0), clipboard write (OSC 52), cursor position request (CSI 6n) */
	CHECK_SAFE("\x1b]0;pwned\x07", "^[]0;pwned^G");
	CHECK_SAFE("\x1b]52;c;ZWNobyBwd25lZA==\x1b\\", "^[]52;c;ZWNobyBwd25lZA==^[\\");
	CHECK_SAFE("\x1b[6n", "^[[6n");
	CHECK_SAFE("over\rwrite\b\x7f", "over^Mwrite^H^?");
	CHECK_SAFE("nul\0byte", "nul^@byte");
	/* C1 controls as UTF-8 (CSI U+009B, OSC U+009D) and raw 8-bit */
	CHECK_SAFE("\xc2\x9b" "6n \xc2\x9d" "0;t", "\\xc2\\x9b6n \\xc2\\x9d0;t");
	CHECK_SAFE("\x9b" "6n", "\\x9b6n");
	/* not UTF-8: overlong, surrogate, truncated */
	CHECK_SAFE("\xc0\x9b", "\\xc0\\x9b");
	CHECK_SAFE("\xed\xa0\x80", "\\xed\\xa0\\x80");
	CHECK_SAFE("end\xe2\x82", "end\\xe2\\x82");
}

static void test_json_stays_json(void)
{
	const char raw[] = "t\x7f\xc2\x9b" "6n\xe2\x82\xac";
	json_t *j = json_pack("{s:s}", "out", raw), *back;
	json_error_t e;
	char *text = json_dumps(j, JSON_COMPACT), *got = safe(text, strlen(text), SL_TERM_JSON);

	CHECK(strchr(got, 0x7f) == NULL);
	CHECK(strstr(got, "\xc2\x9b") == NULL);
	CHECK_STR(got, "{\"out\":\"t\\u007f\\u009b6n\xe2\x82\xac\"}");
	back = json_loads(got, 0, &e);
	CHECK(back != NULL);
	if (back)
		CHECK_STR(json_string_value(json_object_get(back, "out")), raw);
	json_decref(back);
	json_decref(j);
	free(text);
	free(got);
}

int main(void)
{
	RUN(test_plain_text_unchanged);
	RUN(test_attacks_shown);
	RUN(test_json_stays_json);
	return unit_done();
}
