/*
 * finding_gone.c - judging a fix against the findings of its target
 * (finding_gone.h).
 *
 * Reads a candidate's unified diff (walked hunk by hunk for the lines of one
 * file) and two finding sets; writes only the note and feedback buffers.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "validators/diff_lines.h"
#include "validators/finding_gone.h"
#include "validators/policy.h"
#include "common/util.h"

/* Added text that asks an analyzer or compiler to look away. */
static const char *const suppressions[] = {
	"cppcheck-suppress", "NOLINT", "#pragma GCC diagnostic", "#pragma clang diagnostic",
	"#pragma warning", "# pragma GCC diagnostic", "noqa", "type: ignore",
	"eslint-disable", "@SuppressWarnings", "nosemgrep", "lgtm[", "codeql[", "coverity[",
	"pylint: disable", "clang-analyzer-", "__attribute__((no_sanitize", NULL
};

/* Analyzer configuration, beyond the policy gate's build files. */
static const char *const analyzer_files[] = {
	".clang-tidy", ".clang-format", ".cppcheck", "*.cppcheck", "*suppress*", ".semgrep*",
	".flake8", "setup.cfg", "pyproject.toml", "tox.ini", ".pylintrc", ".eslintrc*",
	"*.sarif", ".codeql/**", NULL
};

static int match_any(const char *const *pats, const char *path)
{
	const char *base = strrchr(path, '/');

	for (size_t i = 0; pats[i]; i++) {
		const char *p = pats[i];

		if (strchr(p, '/') ? sl_glob_match(p, path) : sl_glob_match(p, base ? base + 1 : path))
			return 1;
	}
	return 0;
}

size_t sl_findings_in_unit(const sl_findings *f, const sl_unit_ref *u, sl_findings *out)
{
	size_t n = 0;

	for (size_t i = 0; i < f->n; i++) {
		const sl_finding *x = &f->v[i];

		if (!strcmp(x->file, u->path) && x->line >= u->start_line && x->line <= u->end_line) {
			sl_findings_add_copy(out, x);
			n++;
		}
	}
	return n;
}

/* One diff line at a time, within the file named path. */
typedef struct diff_walk {
	const char *p, *end;
	const char *path;
	int in_file, old_match;     /* in the file's hunks; its "---" header named path */
	unsigned old_no, new_no;    /* the next line of each side in the current hunk */
	unsigned old_left, new_left;/* lines of each side the hunk header announced */
	const char *line;           /* the last body line returned, after its marker */
	size_t line_len;            /* without its newline */
} diff_walk;

static int header_is(const char *s, size_t len, const char *path)
{
	size_t n = strlen(path);

	if (len >= 2 && (s[0] == 'a' || s[0] == 'b') && s[1] == '/') {
		s += 2;
		len -= 2;
	}
	while (len && (s[len - 1] == '\r' || s[len - 1] == '\t'))
		len--;
	return len == n && !memcmp(s, path, n);
}

static unsigned hunk_num(const char **s, const char *end)
{
	unsigned v = 0;

	while (*s < end && **s >= '0' && **s <= '9' && v < 100000000u)
		v = v * 10 + (unsigned)(*(*s)++ - '0');
	return v;
}

/* "A[,B]" of a hunk header: the start in *start, the count (default 1) returned. */
static unsigned hunk_range(const char **s, const char *end, unsigned *start)
{
	*start = hunk_num(s, end);
	if (*s < end && **s == ',') {
		(*s)++;
		return hunk_num(s, end);
	}
	return 1;
}

/*
 * The next body line of the file's hunks: its kind (' ', '-', '+') in *kind
 * and the old/new numbers it stands at (before it advances the counters).
 * 0 at the end.
 */
static int walk_next(diff_walk *w, char *kind, unsigned *old_no, unsigned *new_no)
{
	while (w->p < w->end) {
		const char *s = w->p, *nl = memchr(s, '\n', (size_t)(w->end - s));
		size_t len = nl ? (size_t)(nl - s) : (size_t)(w->end - s);

		w->p = nl ? nl + 1 : w->end;
		if (w->in_file && (w->old_left || w->new_left) && len &&
		    (*s == ' ' || *s == '-' || *s == '+')) {
			*kind = *s;
			*old_no = w->old_no;
			*new_no = w->new_no;
			w->line = s + 1;
			w->line_len = len - 1;
			if (*s != '+') {
				w->old_no++;
				w->old_left -= !!w->old_left;
			}
			if (*s != '-') {
				w->new_no++;
				w->new_left -= !!w->new_left;
			}
			return 1;
		}
		if (len >= 4 && !memcmp(s, "--- ", 4)) {
			w->old_match = header_is(s + 4, len - 4, w->path);
			w->in_file = 0;
			continue;
		}
		if (len >= 4 && !memcmp(s, "+++ ", 4)) {
			/* a deleted file is named by its "---" header */
			w->in_file = header_is(s + 4, len - 4, w->path) ||
				(w->old_match && len == 13 && !memcmp(s + 4, "/dev/null", 9));
			continue;
		}
		if (len >= 5 && !memcmp(s, "diff ", 5)) {
			w->in_file = w->old_match = 0;
			continue;
		}
		if (!w->in_file)
			continue;
		if (len >= 3 && !memcmp(s, "@@ ", 3)) {
			const char *q = s + 3, *e = s + len;

			if (q < e && *q == '-')
				q++;
			w->old_left = hunk_range(&q, e, &w->old_no);
			while (q < e && *q != '+')
				q++;
			if (q < e)
				q++;
			w->new_left = hunk_range(&q, e, &w->new_no);
			/* "-0,0": the first line comes after line 0 */
			if (!w->old_left)
				w->old_no++;
			if (!w->new_left)
				w->new_no++;
			continue;
		}
	}
	return 0;
}

static void walk_init(diff_walk *w, const char *diff, size_t len, const char *path)
{
	memset(w, 0, sizeof(*w));
	w->p = diff;
	w->end = diff + len;
	w->path = path;
}

static unsigned track_line(const char *diff, size_t len, const char *path, unsigned line,
			   int *removed)
{
	diff_walk w;
	char kind;
	unsigned o, n;
	long offset = 0;

	*removed = 0;
	walk_init(&w, diff, len, path);
	while (walk_next(&w, &kind, &o, &n)) {
		if (kind == '+') {
			if (o <= line)
				offset = (long)n + 1 - (long)o;
			continue;
		}
		if (o > line)
			break;
		if (o == line) {
			*removed = kind == '-';
			return n;
		}
		offset = kind == '-' ? (long)n - (long)o - 1 : (long)n - (long)o;
	}
	return (unsigned)((long)line + offset);
}

unsigned sl_diff_track_line(const char *diff, const char *path, unsigned line, int *removed)
{
	return track_line(diff, strlen(diff), path, line, removed);
}

/* Where base line `line` of `path` is in the candidate (sl_diff_track_line). */
static unsigned track(const sl_changed *ch, const char *path, unsigned line, int *removed)
{
	return track_line(ch->diff, ch->diff_len, path, line, removed);
}

/* Lines removed from and added inside the unit [start, end] of the base. */
static void unit_churn(const sl_changed *ch, const sl_unit_ref *u, unsigned *removed,
		       unsigned *added)
{
	diff_walk w;
	char kind;
	unsigned o, n;

	*removed = *added = 0;
	walk_init(&w, ch->diff, ch->diff_len, u->path);
	while (walk_next(&w, &kind, &o, &n)) {
		if (o < u->start_line || o > u->end_line)
			continue;
		if (kind == '-')
			(*removed)++;
		else if (kind == '+')
			(*added)++;
	}
}

typedef struct scan_ctx {
	sl_buf *note, *fb;
	int hit;
} scan_ctx;

static int scan_added(void *data, const char *path, unsigned line, const char *text,
		      size_t len)
{
	scan_ctx *c = data;

	for (size_t i = 0; suppressions[i]; i++) {
		size_t k = strlen(suppressions[i]);

		for (size_t j = 0; j + k <= len; j++)
			if (!memcmp(text + j, suppressions[i], k)) {
				sl_buf_addf(c->note, "silences the analyzer: adds '%s' at %s:%u",
					    suppressions[i], path, line);
				c->hit = 1;
				return 1;
			}
	}
	return 0;
}

static int silences(const sl_changed *ch, sl_buf *note)
{
	scan_ctx c = { note, NULL, 0 };

	sl_changed_each_added(ch, scan_added, &c);
	for (size_t i = 0; !c.hit && i < ch->nfiles; i++) {
		const sl_changed_file *f = &ch->files[i];

		if (match_any(sl_policy_default_build_files, f->path) ||
		    match_any(analyzer_files, f->path) ||
		    (f->old_path && (match_any(sl_policy_default_build_files, f->old_path) ||
				     match_any(analyzer_files, f->old_path)))) {
			sl_buf_addf(note, "silences the analyzer: changes the build or analyzer "
				    "configuration file %s", f->path);
			c.hit = 1;
		}
	}
	return c.hit;
}

static int same_kind(const sl_finding *a, const sl_finding *b)
{
	if (strcmp(a->file, b->file))
		return 0;
	if (a->rule[0] || b->rule[0])
		return !strcmp(a->rule, b->rule);
	return !strcmp(a->message, b->message);
}

/* 1 if some base finding like c sits, tracked through the diff, at c's line. */
static int tracked_from_base(const sl_findings *base, const sl_changed *ch, const sl_finding *c)
{
	for (size_t i = 0; i < base->n; i++) {
		int removed;

		if (same_kind(&base->v[i], c) &&
		    track(ch, c->file, base->v[i].line, &removed) == c->line &&
		    !removed)
			return 1;
	}
	return 0;
}

static void say(const sl_finding *f, sl_buf *b)
{
	sl_buf_addf(b, "%s:%u", f->file, f->line);
	if (f->rule[0])
		sl_buf_addf(b, " [%s]", f->rule);
}

int sl_finding_gone_judge(const sl_findings *base, const sl_findings *cand,
			  const sl_changed *ch, const sl_unit_ref *unit, unsigned radius,
			  sl_buf *note, sl_buf *fb)
{
	sl_findings mine, fresh;
	unsigned removed, added, lines, new_start, new_end;
	int gone_line, ok = 0;

	sl_findings_init(&mine);
	sl_findings_init(&fresh);
	sl_findings_in_unit(base, unit, &mine);
	if (silences(ch, note)) {
		sl_buf_addf(fb, "The change %s. Fix the cause of the finding instead of hiding "
			    "it from the analyzer.\n", note->buf);
		goto done;
	}
	lines = unit->end_line - unit->start_line + 1;
	unit_churn(ch, unit, &removed, &added);
	if (removed >= 3 && removed > added && removed - added >= (lines + 1) / 2) {
		sl_buf_addf(note, "deletes code: removes %u of the %u lines of %s:%u-%u and "
			    "adds %u", removed, lines, unit->path, unit->start_line,
			    unit->end_line, added);
		sl_buf_addf(fb, "The change %s. Keep what the code does and fix the finding.\n",
			    note->buf);
		goto done;
	}
	new_start = track(ch, unit->path, unit->start_line, &gone_line);
	new_end = track(ch, unit->path, unit->end_line + 1, &gone_line);
	new_end = new_end > new_start ? new_end - 1 : new_start;
	for (size_t i = 0; i < mine.n; i++) {
		const sl_finding *b = &mine.v[i];
		unsigned at = track(ch, b->file, b->line, &gone_line);

		for (size_t j = 0; j < cand->n; j++) {
			const sl_finding *c = &cand->v[j];

			if (!same_kind(b, c))
				continue;
			if (c->line == at ||
			    (gone_line && c->line >= new_start && c->line <= new_end &&
			     !tracked_from_base(base, ch, c))) {
				sl_buf_adds(note, "still there: ");
				say(c, note);
				sl_buf_addf(fb, "The finding is still reported at %s:%u: %s\n",
					    c->file, c->line, c->message);
				goto done;
			}
		}
	}
	for (size_t i = 0; i < mine.n; i++)
		for (size_t j = 0; j < cand->n; j++) {
			const sl_finding *c = &cand->v[j];

			if (!same_kind(&mine.v[i], c) || tracked_from_base(base, ch, c))
				continue;
			sl_buf_adds(note, "moved: ");
			say(&mine.v[i], note);
			sl_buf_addf(note, " is now at line %u", c->line);
			sl_buf_addf(fb, "The finding moved to %s:%u instead of going away: %s\n",
				    c->file, c->line, c->message);
			goto done;
		}
	if (sl_findings_new_near(base, cand, ch, radius, &fresh)) {
		sl_buf_adds(note, "new finding near the change: ");
		say(&fresh.v[0], note);
		sl_buf_adds(fb, "The change adds new findings near the lines it touches:\n");
		sl_findings_text(&fresh, fb, 4096);
		goto done;
	}
	ok = 1;
done:
	sl_findings_release(&mine);
	sl_findings_release(&fresh);
	return ok;
}

/*
 * The next "FILE:LINE" of text from *at on: FILE has a '.' and no blank;
 * *at moves past it.  0 (and *file NULL) when there is none.
 */
unsigned sl_text_next_location(const char **at, char **file)
{
	*file = NULL;
	for (const char *p = *at; p && *p; p++) {
		const char *s = p, *dot = NULL;
		unsigned line = 0;

		while (*p && (isalnum((unsigned char)*p) || strchr("._/-+", *p))) {
			if (*p == '.')
				dot = p;
			p++;
		}
		if (*p != ':' || !dot || p == s || !isdigit((unsigned char)p[1])) {
			if (!*p)
				break;
			continue;
		}
		for (const char *q = p + 1; isdigit((unsigned char)*q) && line < 100000000u; q++)
			line = line * 10 + (unsigned)(*q - '0');
		{
			char *raw = sl_xstrndup(s, (size_t)(p - s));

			*file = sl_report_path(raw);
			free(raw);
		}
		*at = p + 1;
		return line;
	}
	*at = NULL;
	return 0;
}

/* The first "FILE:LINE" of text: FILE has a '.' and no blank; 0 if none. */
static unsigned first_location(const char *text, char **file)
{
	return sl_text_next_location(&text, file);
}

void sl_findings_from_tests(const sl_tests *t, sl_findings *out)
{
	for (size_t i = 0; i < t->n; i++) {
		const sl_test *x = &t->v[i];
		sl_buf rule = SL_BUF_INIT, msg = SL_BUF_INIT;
		char *file = NULL;
		sl_finding f = { 0 };

		if (!sl_test_failed(x->result))
			continue;
		sl_buf_addf(&rule, "test:%s", x->id);
		f.line = first_location(x->message, &file);
		f.file = file ? file : (char *)"";
		f.level = SL_LEVEL_ERROR;
		f.rule = rule.buf;
		sl_buf_addf(&msg, "failing test %s: %s", x->id, x->message ? x->message : "");
		sl_buf_rtrim(&msg);
		f.message = msg.buf;
		sl_findings_add_copy(out, &f);
		free(file);
		sl_buf_release(&rule);
		sl_buf_release(&msg);
	}
}

int sl_tests_fixed_judge(const sl_findings *base, const sl_tests *cand, const sl_unit_ref *unit,
			 sl_buf *note, sl_buf *fb)
{
	sl_findings mine;
	int ok = 1;

	sl_findings_init(&mine);
	sl_findings_in_unit(base, unit, &mine);
	for (size_t i = 0; i < mine.n && ok; i++) {
		const char *id = mine.v[i].rule + 5;
		const sl_test *t;

		if (strncmp(mine.v[i].rule, "test:", 5))
			continue;
		t = sl_tests_find(cand, id);
		if (t && t->result == SL_TEST_PASS)
			continue;
		ok = 0;
		sl_buf_addf(note, "%s: %s", t ? "still failing" : "vanished", id);
		sl_buf_addf(fb, "The test %s %s.\n%s\n", id, t ? "still fails" :
			    "is missing from the report", t && t->message ? t->message : "");
	}
	sl_findings_release(&mine);
	return ok;
}

void sl_judging_init(sl_judging *j)
{
	memset(j, 0, sizeof(*j));
}

void sl_judging_release(sl_judging *j)
{
	sl_strvec_release(&j->where);
	sl_strvec_release(&j->test);
	sl_judging_init(j);
}

/* Directories whose files are tests, their fixtures and expected output. */
static const char *const test_dirs[] = {
	"test", "tests", "t", "testing", "testsuite", "testsuites", "spec", "specs",
	"__tests__", "unittest", "unittests", "unit-tests", "unit_tests", "testdata",
	"test-data", "test_data", "fixtures", NULL
};

/* Base names of test files outside those directories. */
static const char *const test_names[] = {
	"test_*", "test-*", "*_test.*", "*-test.*", "*.test.*", "*.test", "*_tests.*",
	"*Test.*", "*Tests.*", "*_spec.*", "*.spec.*", "*_unittest.*", NULL
};

static void judging_push(sl_judging *j, const char *where, size_t len, const char *id)
{
	char *w = sl_xstrndup(where, len);

	for (size_t i = 0; i < j->where.n; i++)
		if (!strcmp(j->where.v[i], w)) {
			free(w);
			return;
		}
	sl_strvec_push_nodup(&j->where, w);
	sl_strvec_push(&j->test, id);
}

/*
 * How much of path (repository-relative) a test's file protects: its
 * test directory with the '/', or the whole path; 0 when it is no test's.
 */
static size_t test_prefix(const char *path, const char *const *globs)
{
	const char *s = path;

	if (!*path || *path == '/' || strstr(path, ".."))
		return 0;
	while (*s) {
		const char *e = strchr(s, '/');
		size_t n = e ? (size_t)(e - s) : strlen(s);

		if (!e)
			break;
		for (size_t i = 0; test_dirs[i]; i++)
			if (strlen(test_dirs[i]) == n && !strncasecmp(s, test_dirs[i], n))
				return (size_t)(e + 1 - path);
		s = e + 1;
	}
	if (match_any(test_names, path) || (globs && match_any(globs, path)))
		return strlen(path);
	return 0;
}

int sl_test_file(const char *path, const char *const *globs)
{
	return test_prefix(path, globs) > 0;
}

/* What path protects, if it is a test's file (sl_judging). */
static void judging_path(sl_judging *j, const char *path, const char *id)
{
	size_t n = test_prefix(path, NULL);

	if (n)
		judging_push(j, path, n, id);
}

void sl_judging_add_file(sl_judging *j, const char *path, const char *id)
{
	if (*path && *path != '/' && !strstr(path, ".."))
		judging_push(j, path, strlen(path), id);
}

void sl_judging_add(sl_judging *j, const char *id, const char *message)
{
	const char *at = message;
	char *file = NULL;

	if (strchr(id, '/')) {
		char *norm = sl_report_path(id);

		judging_path(j, norm, id);
		free(norm);
	}
	while (at && *at) {
		sl_text_next_location(&at, &file);
		if (file)
			judging_path(j, file, id);
		free(file);
		file = NULL;
	}
}

/* The stem of a path: without its last extension (the whole base name has none). */
static size_t stem_len(const char *path)
{
	const char *base = strrchr(path, '/'), *dot;

	base = base ? base + 1 : path;
	dot = strchr(base, '.');
	return dot && dot != base ? (size_t)(dot - path) : strlen(path);
}

/* The entry of j that protects path, or -1. */
static long judging_find(const sl_judging *j, const char *path)
{
	for (size_t i = 0; i < j->where.n; i++) {
		const char *w = j->where.v[i];
		size_t n = strlen(w), k;

		if (n && w[n - 1] == '/') {
			if (!strncmp(path, w, n))
				return (long)i;
			continue;
		}
		/* the file, and the files beside it with its stem */
		k = stem_len(w);
		if (!strcmp(path, w) ||
		    (!strncmp(path, w, k) && (path[k] == '.' || path[k] == '\0') &&
		     !strchr(path + k, '/')))
			return (long)i;
		/* a location without a directory (BarTest.java:12) names a file anywhere */
		if (!strchr(w, '/') && (k = strlen(path)) > n && path[k - n - 1] == '/' &&
		    !strcmp(path + k - n, w))
			return (long)i;
	}
	return -1;
}

int sl_judging_changed(const sl_judging *j, const char *const *allow, const sl_changed *ch,
		       sl_buf *note)
{
	for (size_t i = 0; i < ch->nfiles; i++) {
		const sl_changed_file *f = &ch->files[i];
		const char *paths[2] = { f->path, f->old_path };

		for (size_t k = 0; k < 2; k++) {
			long at;

			if (!paths[k] || (at = judging_find(j, paths[k])) < 0 ||
			    (allow && match_any(allow, paths[k])))
				continue;
			sl_buf_addf(note, "changes the test that judges it: %s (test ", paths[k]);
			for (const char *c = j->test.v[at]; *c; c++)
				sl_buf_addch(note, *c >= 0x20 && *c < 0x7f ? *c : '?');
			sl_buf_adds(note, ")");
			return 1;
		}
	}
	return 0;
}

/* Append lines [from, to) (1-based) of text to out; *at is the offset of line `from`. */
static size_t copy_lines(sl_buf *out, const char *text, size_t len, size_t at, unsigned from,
			 unsigned to)
{
	for (; from < to && at < len; from++) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t end = nl ? (size_t)(nl - text) + 1 : len;

		if (out)
			sl_buf_add(out, text + at, end - at);
		at = end;
	}
	return at;
}

int sl_diff_old_text(const char *diff, const char *path, const char *text, size_t len,
		     sl_buf *out)
{
	diff_walk w;
	char kind;
	unsigned o, n, next = 1;    /* the next line of text not yet consumed */
	size_t at = 0;

	walk_init(&w, diff, strlen(diff), path);
	while (walk_next(&w, &kind, &o, &n)) {
		if (n < next)
			return SL_EINPUT;
		at = copy_lines(out, text, len, at, next, n);
		next = n;
		if (kind == '-') {
			sl_buf_add(out, w.line, w.line_len);
			sl_buf_addch(out, '\n');
			continue;
		}
		/* context is copied from text, an added line dropped */
		at = copy_lines(kind == ' ' ? out : NULL, text, len, at, n, n + 1);
		next = n + 1;
	}
	copy_lines(out, text, len, at, next, UINT32_MAX);
	return SL_OK;
}
