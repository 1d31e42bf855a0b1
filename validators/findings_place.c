/*
 * findings_place.c - put findings made outside the jail on the repository's
 * paths (findings.h, sl_findings_place).
 *
 * Reads a finding set whose files went through sl_report_path, the
 * repository's roots on the host and its tracked paths; rewrites each
 * finding's file (and the paths that open its note lines) in place.  The
 * suffix match looks paths up in a sorted copy of the tracked paths written
 * backwards, so each lookup is two binary searches, whatever the tree's size.
 */
#include <stdlib.h>
#include <string.h>

#include "validators/findings.h"
#include "common/util.h"

#define MAX_REPORTED 8

typedef struct placer {
	const char *const *roots;
	size_t nroots;
	const sl_strvec *tracked;   /* sorted */
	char **rev;                 /* tracked paths reversed, sorted */
	size_t nrev;
} placer;

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static char *reversed(const char *s, size_t n)
{
	char *r = sl_xmalloc(n + 1);

	for (size_t i = 0; i < n; i++)
		r[i] = s[n - 1 - i];
	r[n] = '\0';
	return r;
}

/* First index in v[0..n) whose entry is >= key (compared on the first klen bytes). */
static size_t lower_bound(char *const *v, size_t n, const char *key, size_t klen)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strncmp(v[mid], key, klen) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static int is_tracked(const placer *p, const char *path)
{
	size_t i = lower_bound(p->tracked->v, p->tracked->n, path, strlen(path) + 1);

	return i < p->tracked->n && !strcmp(p->tracked->v[i], path);
}

/*
 * How many tracked paths are suffix itself or end in "/" suffix (stopping
 * at 2); *hit = one of them, written backwards (borrowed).
 */
static size_t suffix_matches(const placer *p, const char *suffix, const char **hit)
{
	size_t n = strlen(suffix), count = 0, i;
	char *key = reversed(suffix, n);

	i = lower_bound(p->rev, p->nrev, key, n + 1);
	if (i < p->nrev && !strcmp(p->rev[i], key)) {
		*hit = p->rev[i];
		count++;
	}
	key = sl_xrealloc(key, n + 2);
	key[n] = '/';
	key[n + 1] = '\0';
	for (i = lower_bound(p->rev, p->nrev, key, n + 1);
	     i < p->nrev && count < 2 && !strncmp(p->rev[i], key, n + 1); i++) {
		*hit = p->rev[i];
		count++;
	}
	free(key);
	return count;
}

/*
 * The repository path of a normalised report path (the caller frees), or
 * NULL with *why set.
 * A path already tracked stays; an absolute one under a root loses it; then
 * the longest tail of whole segments that some tracked path ends with
 * decides, when exactly one does.  System paths (/usr/) are never guessed.
 */
static char *place(const placer *p, const char *path, int *why)
{
	const char *rel = path, *hit = NULL;

	*why = SL_PLACE_UNTRACKED;
	if (!*path)
		return NULL;
	if (is_tracked(p, path))
		return sl_xstrdup(path);
	for (size_t i = 0; i < p->nroots && *path == '/'; i++) {
		size_t n = strlen(p->roots[i]);

		while (n > 1 && p->roots[i][n - 1] == '/')
			n--;
		if (n > 1 && !strncmp(path, p->roots[i], n) && path[n] == '/') {
			rel = path + n + 1;
			break;
		}
	}
	if (rel != path && is_tracked(p, rel))
		return sl_xstrdup(rel);
	if (rel == path && !strncmp(path, "/usr/", 5))
		return NULL;
	for (const char *s = rel; s; s = strchr(s, '/')) {
		size_t c;

		while (*s == '/')
			s++;
		if (!*s)
			break;
		c = suffix_matches(p, s, &hit);
		if (c == 1)
			return reversed(hit, strlen(hit));
		if (c > 1) {
			*why = SL_PLACE_AMBIGUOUS;
			return NULL;
		}
	}
	return NULL;
}

/* Rewrite the path that opens each "PATH:LINE: note: ..." line of notes. */
static char *place_notes(const placer *p, const char *notes)
{
	sl_buf out = SL_BUF_INIT;

	for (const char *l = notes; *l;) {
		const char *eol = strchr(l, '\n');
		size_t len = eol ? (size_t)(eol - l + 1) : strlen(l);
		const char *colon = memchr(l, ':', len);
		char *path = colon ? sl_xstrndup(l, (size_t)(colon - l)) : NULL;
		char *to = NULL;
		int why;

		if (path && colon[1] >= '0' && colon[1] <= '9')
			to = place(p, path, &why);
		if (to && strcmp(to, path)) {
			sl_buf_adds(&out, to);
			sl_buf_add(&out, colon, len - (size_t)(colon - l));
		} else {
			sl_buf_add(&out, l, len);
		}
		free(to);
		free(path);
		l += len;
	}
	return sl_buf_detach(&out, NULL);
}

size_t sl_findings_place(sl_findings *f, const char *const *roots, size_t nroots,
			 const sl_strvec *tracked, sl_buf *report, unsigned char *why_out)
{
	placer p = { roots, nroots, tracked, NULL, 0 };
	sl_strvec seen = SL_STRVEC_INIT;
	size_t unplaced = 0, more = 0;

	p.rev = sl_xcalloc(tracked->n ? tracked->n : 1, sizeof(*p.rev));
	for (size_t i = 0; i < tracked->n; i++)
		p.rev[p.nrev++] = reversed(tracked->v[i], strlen(tracked->v[i]));
	qsort(p.rev, p.nrev, sizeof(*p.rev), cmp_str);

	for (size_t i = 0; i < f->n; i++) {
		sl_finding *x = &f->v[i];
		int why, again = 0;
		char *to = place(&p, x->file, &why);

		if (why_out)
			why_out[i] = to || !*x->file ? SL_PLACED : (unsigned char)why;
		if (to) {
			free(x->file);
			x->file = to;
			if (x->notes) {
				char *n = place_notes(&p, x->notes);

				free(x->notes);
				x->notes = n;
			}
			continue;
		}
		if (!*x->file)
			continue;
		unplaced++;
		for (size_t k = 0; k < seen.n && !again; k++)
			again = !strcmp(seen.v[k], x->file);
		if (again)
			continue;
		if (seen.n == MAX_REPORTED) {
			more++;
			continue;
		}
		sl_strvec_push(&seen, x->file);
		sl_buf_addf(report, "%s: %s\n", x->file,
			    why == SL_PLACE_AMBIGUOUS ? "ambiguous, several tracked files end with it" :
			    "not a tracked file of the repository");
	}
	if (more)
		sl_buf_addf(report, "(and %zu more findings in other paths)\n", more);
	for (size_t i = 0; i < p.nrev; i++)
		free(p.rev[i]);
	free(p.rev);
	sl_strvec_release(&seen);
	return unplaced;
}
