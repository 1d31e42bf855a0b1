/*
 * gates_fixtures.h - the data-driven half of the gate parsers' unit tests.
 *
 * For every tests/fixtures/gates/DIR/NAME.EXT, read it, let the test turn it
 * into text (a dump of what was parsed), and compare that with NAME.expect.
 * With SLUICE_FIXTURE_WRITE=1 in the environment a missing .expect is
 * written instead (review it before committing).  Header-only, for
 * tests/unit/test_{diff_lines,policy,findings,testreport,coverage,feedback}.c.
 */
#ifndef SL_GATES_FIXTURES_H
#define SL_GATES_FIXTURES_H

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"
#include "unit.h"

#define GATES_FIXTURES "tests/fixtures/gates"

typedef void (*fixture_fn)(sl_buf *got, const char *name, const sl_buf *input);

static int fixture_one(const char *dir, const char *name, const char *ext, fixture_fn fn)
{
	sl_buf path = SL_BUF_INIT, in = SL_BUF_INIT, expect = SL_BUF_INIT, got = SL_BUF_INIT;
	int ok = 0, have_expect;

	sl_buf_addf(&path, "%s/%s/%s.%s", GATES_FIXTURES, dir, name, ext);
	if (sl_read_file(&in, path.buf, 0, NULL))
		goto done;
	sl_buf_reset(&path);
	sl_buf_addf(&path, "%s/%s/%s.expect", GATES_FIXTURES, dir, name);
	have_expect = !sl_read_file(&expect, path.buf, 0, NULL);
	fn(&got, name, &in);
	if (!have_expect && getenv("SLUICE_FIXTURE_WRITE")) {
		ok = !sl_write_file(path.buf, got.buf, got.len, NULL);
		goto done;
	}
	ok = have_expect && !strcmp(got.buf, expect.buf);
	if (!ok)
		fprintf(stderr, "fixture %s/%s.%s:\n--- expected\n%s--- got\n%s", dir, name, ext,
			have_expect ? expect.buf : "(no .expect file)\n", got.buf);
done:
	sl_buf_release(&path);
	sl_buf_release(&in);
	sl_buf_release(&expect);
	sl_buf_release(&got);
	return ok;
}

/* Run fn over every DIR/ *.EXT; returns how many fixtures ran (all CHECKed). */
static int fixture_run_all(const char *dir, const char *ext, fixture_fn fn)
{
	sl_buf path = SL_BUF_INIT;
	DIR *d;
	struct dirent *de;
	size_t elen = strlen(ext);
	int n = 0;

	sl_buf_addf(&path, "%s/%s", GATES_FIXTURES, dir);
	d = opendir(path.buf);
	CHECK(d != NULL);
	while (d && (de = readdir(d)) && n < 1000) {
		size_t len = strlen(de->d_name);
		char *name;

		if (len < elen + 2 || de->d_name[len - elen - 1] != '.' ||
		    strcmp(de->d_name + len - elen, ext))
			continue;
		name = sl_xstrndup(de->d_name, len - elen - 1);
		if (!fixture_one(dir, name, ext, fn)) {
			fprintf(stderr, "fixture %s/%s failed\n", dir, name);
			unit_cur_failed = 1;
		}
		free(name);
		n++;
	}
	if (d)
		closedir(d);
	sl_buf_release(&path);
	return n;
}

#endif
