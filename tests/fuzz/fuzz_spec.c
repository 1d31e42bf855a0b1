/*
 * fuzz_spec.c - the campaign file (pipeline/spec/) and the checks the
 * campaign loader makes of it before opening the repository
 * (pipeline/campaign.c: languages, query, prompt, rules and their captures).  The input
 * is written to a file in $TMPDIR (the loader reads a path); an error is
 * an input error with a message, never a crash.
 */
#include <unistd.h>

#include "fuzz.h"
#include "pipeline/run.h"
#include "pipeline/spec.h"
#include "common/util.h"

int sl_fuzz_spec(const uint8_t *data, size_t size);

int sl_fuzz_spec(const uint8_t *data, size_t size)
{
	static char path[4096];
	sl_spec *spec = NULL;
	sl_err err = SL_ERR_INIT;

	if (!*path)
		snprintf(path, sizeof(path), "%s/sl-fuzz-spec-%ld.yaml",
			 sl_getenv_or("TMPDIR", "/tmp"), (long)getpid());
	FUZZ_CHECK(sl_write_file(path, (const char *)data, size, NULL) == 0);
	if (!sl_spec_load(&spec, path, &err)) {
		sl_err_clear(&err);
		if (sl_campaign_check(spec, &err))
			FUZZ_CHECK(err.code == SL_EINPUT && *err.msg);
	} else {
		FUZZ_CHECK(err.code != 0 && *err.msg);
	}
	sl_spec_free(spec);
	unlink(path);
	return 0;
}
SL_FUZZ_MAIN(sl_fuzz_spec)
