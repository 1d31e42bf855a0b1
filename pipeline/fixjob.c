/*
 * fixjob.c - targets from findings (fixjob.h).
 *
 * Reads a scoped target list and a finding set; writes the pruned list and
 * prompt text.  Nothing here runs a command: the findings come from the
 * finding-gone gates' runs on the base.
 */
#include <stdlib.h>
#include <string.h>

#include "validators/validators.h"
#include "pipeline/fixjob.h"
#include "pipeline/spec.h"
#include "common/util.h"
#include "common/caps.h"

static int encloses(const sl_target *t, const sl_finding *x)
{
	return !strcmp(t->path, x->file) && x->line >= t->start_line && x->line <= t->end_line;
}

/* The innermost target enclosing x (list sorted by path, then start), or -1. */
static long owner_of(const sl_target_list *list, const sl_finding *x)
{
	long best = -1;

	for (size_t i = 0; i < list->n; i++) {
		const sl_target *t = &list->v[i];

		if (!encloses(t, x))
			continue;
		if (best < 0 || t->end_byte - t->start_byte <
		    list->v[best].end_byte - list->v[best].start_byte)
			best = (long)i;
	}
	return best;
}

/* Keep the targets whose keep[] is set, releasing the others. */
static void keep_only(sl_target_list *list, const unsigned char *keep)
{
	size_t w = 0;

	for (size_t i = 0; i < list->n; i++) {
		sl_target_list one = SL_TARGET_LIST_INIT;

		if (keep[i]) {
			if (w != i)
				list->v[w] = list->v[i];
			w++;
			continue;
		}
		/* a one-target list frees it the way the scoper allocated it */
		one.v = sl_xcalloc(1, sizeof(*one.v));
		one.v[0] = list->v[i];
		one.n = one.alloc = 1;
		sl_target_list_release(&one);
	}
	list->n = w;
}

void sl_testgen_select(sl_target_list *list, const struct sl_coverage *cov, unsigned percent)
{
	unsigned char *keep = sl_xcalloc(list->n ? list->n : 1, 1);

	for (size_t i = 0; i < list->n; i++) {
		const sl_target *t = &list->v[i];
		unsigned covered = 0, total = 0;

		keep[i] = !cov || sl_coverage_of(cov, t->path, t->start_line, t->end_line, &covered,
						 &total) || !total ||
			(uint64_t)covered * 100 < (uint64_t)percent * total;
	}
	keep_only(list, keep);
	free(keep);
}

void sl_fix_select(sl_target_list *list, const sl_findings *f, size_t *unplaced)
{
	unsigned char *keep = sl_xcalloc(list->n ? list->n : 1, 1);

	*unplaced = 0;
	for (size_t i = 0; i < f->n; i++) {
		long o = owner_of(list, &f->v[i]);

		if (o < 0)
			(*unplaced)++;
		else
			keep[o] = 1;
	}
	keep_only(list, keep);
	free(keep);
}

int sl_fix_parse_findings(sl_findings *out, const char *format, const char *text, size_t len,
			  sl_err *err)
{
	sl_tests t;
	int ret = SL_OK;

	if (!strcmp(format, "gcc")) {
		sl_findings_parse_gcc(out, text, len);
		return SL_OK;
	}
	if (!strcmp(format, "gcc-json")) {
		sl_findings_parse_gcc_json(out, text, len);
		return SL_OK;
	}
	if (!strcmp(format, "sarif"))
		return sl_findings_parse_sarif(out, text, len, err);
	sl_tests_init(&t);
	if (!strcmp(format, "junit"))
		ret = sl_tests_parse_junit(&t, text, len, err);
	else
		sl_tests_parse_tap(&t, text, len);
	if (!ret)
		sl_findings_from_tests(&t, out);
	sl_tests_release(&t);
	return ret;
}

int sl_fix_load_findings(sl_findings *out, const sl_spec *spec, sl_err *err)
{
	char *path = spec->findings_report[0] == '/' ? sl_xstrdup(spec->findings_report) :
		sl_path_join(spec->dir, spec->findings_report);
	sl_buf text = SL_BUF_INIT;
	int ret = sl_read_file(&text, path, SL_CAP_FINDINGS_FILE, err);

	if (!ret)
		ret = sl_fix_parse_findings(out, spec->findings_format, text.buf, text.len, err);
	if (ret) {
		sl_err_prefix(err, "findings: ");
		ret = SL_EINPUT;
	}
	free(path);
	sl_buf_release(&text);
	return ret;
}

void sl_fix_finding_text(const sl_findings *f, const sl_target *t, sl_buf *out)
{
	sl_findings mine;
	sl_unit_ref u = { t->path, t->start_line, t->end_line };

	sl_findings_init(&mine);
	if (sl_findings_in_unit(f, &u, &mine))
		sl_findings_text(&mine, out, 8192);
	sl_findings_release(&mine);
}
