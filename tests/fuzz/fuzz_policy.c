/*
 * fuzz_policy.c - the policy gate (validators/policy.c): the first line of
 * the input is a forbid pattern (an ERE from a campaign file), the whole
 * input the candidate's diff.  A pattern the gate accepts must compile and
 * run in bounded time and memory; the check never fails on a bad diff (it
 * is a violation, not an error).
 */
#include "fuzz.h"
#include "validators/policy.h"
#include "common/util.h"

int sl_fuzz_policy(const uint8_t *data, size_t size);

int sl_fuzz_policy(const uint8_t *data, size_t size)
{
	char *text = fuzz_str(data, size), *nl = strchr(text, '\n');
	char *pattern = nl ? sl_xstrndup(text, (size_t)(nl - text)) : sl_xstrdup(text);
	const char *forbid[] = { pattern, "system\\(", NULL };
	const char *allow[] = { "*.c", "src/**", NULL };
	sl_policy_opts opts = SL_POLICY_OPTS_INIT;
	sl_policy_result r;
	sl_changed ch;
	sl_buf out = SL_BUF_INIT;
	sl_err err = SL_ERR_INIT;

	opts.forbid = forbid;
	opts.allow_paths = allow;
	opts.max_files = 3;
	opts.max_lines = 50;
	sl_policy_result_init(&r);
	sl_changed_init(&ch);
	sl_changed_parse(&ch, text, size, NULL, NULL, NULL);
	if (!sl_policy_validate(&opts, &err)) {
		FUZZ_CHECK(sl_policy_check(&r, &opts, &ch, &err) == 0);
		sl_policy_result_text(&r, &out);
		FUZZ_CHECK(r.pass == (r.n == 0));
	} else {
		FUZZ_CHECK(err.code == SL_EINPUT);
	}
	opts.forbid = NULL;
	opts.allow_paths = NULL;
	sl_policy_result_release(&r);
	FUZZ_CHECK(sl_policy_check(&r, &opts, &ch, NULL) == 0);
	sl_policy_result_release(&r);
	sl_changed_release(&ch);
	sl_buf_release(&out);
	free(pattern);
	free(text);
	return 0;
}
SL_FUZZ_MAIN(sl_fuzz_policy)
