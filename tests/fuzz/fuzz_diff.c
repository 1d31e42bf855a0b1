/*
 * fuzz_diff.c - sl_changed_parse (validators/diff_lines.c) on any bytes,
 * then the questions the gates ask of the result.  Every added line is
 * 1-based and the per-file counts add up to the totals.
 */
#include "validators/diff_lines.h"
#include "fuzz.h"

int sl_fuzz_diff(const uint8_t *data, size_t size);

static int fuzz_diff_added(void *d, const char *path, unsigned line, const char *text, size_t len)
{
	FUZZ_CHECK(line >= 1);
	FUZZ_CHECK(path != NULL);
	(*(size_t *)d)++;
	return 0;
}

int sl_fuzz_diff(const uint8_t *data, size_t size)
{
	sl_changed c;
	size_t calls = 0;
	unsigned added = 0, removed = 0;

	sl_changed_init(&c);
	if (!sl_changed_parse(&c, (const char *)data, size, fuzz_diff_added, &calls, NULL)) {
		for (size_t i = 0; i < c.nfiles; i++) {
			const sl_changed_file *f = &c.files[i];
			char *norm = sl_report_path(f->path);
			/* an added line is near itself, where the path names this file */
			int own = f->path && !strcmp(norm, f->path) && sl_changed_find(&c, norm) == f;

			added += f->added;
			removed += f->removed;

			for (size_t j = 0; j < f->nlines; j++) {
				FUZZ_CHECK(f->lines[j] >= 1);
				FUZZ_CHECK(!own || sl_changed_near(&c, f->path, f->lines[j], 0));
			}
			(void)sl_changed_near(&c, f->path, 1, 3);
			(void)sl_changed_find(&c, f->path);
			free(norm);
		}
		FUZZ_CHECK(added == c.added);
		FUZZ_CHECK(removed == c.removed);
		FUZZ_CHECK(calls == c.added);
	}
	sl_changed_release(&c);
	return 0;
}
SL_FUZZ_MAIN(sl_fuzz_diff)
