/*
 * fixtarget.c - a fix campaign's failing tests: their targets on the code
 * under test, and the files of the tests that judge a fix (fixjob.h,
 * sl_fix_tests).
 *
 * Reads the findings of failing tests (rule "test:ID", placed by
 * sl_findings_from_tests at the first FILE:LINE of the failure text), the
 * tests the gates must see fixed, the campaign (paths, test_paths,
 * language, fix.target) and the base's files, which it reads from the
 * object database and parses with tree-sitter through sl_scope; writes the
 * findings' new places and notes, and the gates' protected files and
 * findings (validators.h, sl_gating_protect, sl_gating_place_tests).
 * Nothing here runs a command.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "validators/validators.h"
#include "pipeline/campaign.h"
#include "pipeline/fixjob.h"
#include "pipeline/spec.h"
#include "common/util.h"
#include "common/caps.h"

#define MAX_CALLEES 64          /* distinct functions a test calls, looked up */
#define MAX_TEST_FILES 2000     /* test files searched for a test's name */
#define MAX_HOLDERS 8           /* files one test's name protects */
#define MAX_TEST_FILE (1u << 20) /* bytes of one test file searched */
#define MAX_TEST_SOURCE 4096    /* bytes of the test's function in the prompt */

/* How a language defines and calls a function by name (tree-sitter). */
typedef struct fn_syntax {
	const char *lang;
	const char *const *defs;    /* patterns with @name, each completed by a predicate */
	const char *call;           /* pattern with @callee */
} fn_syntax;

static const char *const c_defs[] = {
	"(function_definition declarator: (function_declarator declarator: (identifier) @name))",
	"(function_definition declarator: (pointer_declarator declarator: "
	"(function_declarator declarator: (identifier) @name)))",
	"(function_definition declarator: (pointer_declarator declarator: (pointer_declarator "
	"declarator: (function_declarator declarator: (identifier) @name))))",
	NULL
};
static const char *const py_defs[] = { "(function_definition name: (identifier) @name)", NULL };

static const fn_syntax syntaxes[] = {
	{ "c", c_defs, "(call_expression function: (identifier) @callee)" },
	{ "cpp", c_defs, "(call_expression function: (identifier) @callee)" },
	{ "python", py_defs, "(call function: (identifier) @callee)" },
};

typedef struct fix_tests {
	const sl_campaign *c;
	sl_store *cache;
	const fn_syntax *syn;       /* NULL: the language's functions are not known here */
	const char *const *globs;   /* test_paths, or NULL */
	sl_strvec tracked;          /* the base's files, sorted */
	size_t by_trace, by_calls;  /* tests moved, and how */
	sl_err *err;
} fix_tests;

static int is_code(const fix_tests *ft, const char *path)
{
	return *path && sl_fix_in_paths(ft->c->spec, path) && !sl_test_file(path, ft->globs);
}

static int is_tracked(const fix_tests *ft, const char *path)
{
	size_t lo = 0, hi = ft->tracked.n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(ft->tracked.v[mid], path);

		if (!c)
			return 1;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* Scope the base with query (capture, unit) over globs; the results into out. */
static int scope(fix_tests *ft, const char *query, const char *capture, const char *unit,
		 const char *const *globs, size_t nglobs, sl_target_list *out)
{
	sl_scope_opts so = SL_SCOPE_OPTS_INIT;
	sl_lang_override *ov = sl_campaign_scope_opts(&so, ft->c);
	int ret;

	so.query = query;
	so.capture = capture;
	so.unit = unit;
	so.globs = globs;
	so.nglobs = nglobs;
	so.cache = ft->cache;
	ret = sl_scope(out, ft->c->repo, &ft->c->base, &so, ft->err);
	free(ov);
	return ret;
}

static int is_ident(const char *s, size_t n)
{
	if (!n || isdigit((unsigned char)*s))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_')
			return 0;
	return 1;
}

/*
 * The functions named in names defined in the files of globs (NULL: the
 * language's files), into out: one target (unit function) per definition,
 * its site the name.
 */
static int find_defs(fix_tests *ft, const sl_strvec *names, const char *const *globs,
		     size_t nglobs, sl_target_list *out)
{
	sl_buf q = SL_BUF_INIT;
	int ret;

	for (size_t i = 0; ft->syn->defs[i]; i++) {
		sl_buf_addf(&q, "(%s (#any-of? @name", ft->syn->defs[i]);
		for (size_t k = 0; k < names->n; k++)
			sl_buf_addf(&q, " \"%s\"", names->v[k]);
		sl_buf_adds(&q, "))\n");
	}
	ret = scope(ft, q.buf, "name", "function", globs, nglobs, out);
	sl_buf_release(&q);
	return ret;
}

/*
 * The identifiers of a test's id, last first ("Suite.test_x" gives test_x,
 * Suite), but words every test file holds (TAP's "test 3").
 */
static void id_names(const char *id, sl_strvec *out)
{
	static const char *const common[] = { "test", "tests", "check", "main", "suite", NULL };
	const char *end = id + strlen(id);

	while (end > id) {
		const char *s = end;

		while (s > id && (isalnum((unsigned char)s[-1]) || s[-1] == '_'))
			s--;
		if (end - s >= 3 && is_ident(s, (size_t)(end - s)) && out->n < 4) {
			char *w = sl_xstrndup(s, (size_t)(end - s));
			int seen = 0;

			for (size_t i = 0; common[i] && !seen; i++)
				seen = !strcasecmp(common[i], w);
			for (size_t i = 0; i < out->n && !seen; i++)
				seen = !strcmp(out->v[i], w);
			if (seen)
				free(w);
			else
				sl_strvec_push_nodup(out, w);
		}
		end = s > id ? s - 1 : id;
	}
}

/* The function of path enclosing line, with a site per call, into fn (when it calls anything). */
static int enclosing_function(fix_tests *ft, const char *path, unsigned line, sl_target_list *fn)
{
	sl_target_list all = SL_TARGET_LIST_INIT;
	char *glob = sl_fix_glob_literal(path);
	long best = -1;
	int ret;

	if ((ret = scope(ft, ft->syn->call, "callee", "function", (const char *const *)&glob, 1,
			 &all)))
		goto done;
	for (size_t i = 0; i < all.n; i++)
		if (!strcmp(all.v[i].unit, "function") && all.v[i].start_line <= line &&
		    line <= all.v[i].end_line && (best < 0 || all.v[i].start_line >
						  all.v[best].start_line))
			best = (long)i;
	if (best >= 0) {
		SL_ALLOC_GROW(fn->v, fn->n + 1, fn->alloc);
		fn->v[fn->n++] = all.v[best];
		all.v[best] = all.v[--all.n];
	}
done:
	free(glob);
	sl_target_list_release(&all);
	return ret;
}

/*
 * The failing test's function with its calls (unit function, a site per
 * call) into fn (released by the caller): the function of a test file
 * enclosing the failure's place, else the function of a test file named as
 * the test.  fn->n 0 when none is found.
 */
static int test_function(fix_tests *ft, const sl_finding *x, sl_target_list *fn)
{
	sl_target_list defs = SL_TARGET_LIST_INIT;
	sl_strvec names = SL_STRVEC_INIT;
	int ret = SL_OK;

	if (*x->file && x->line && is_tracked(ft, x->file) && !is_code(ft, x->file) &&
	    ((ret = enclosing_function(ft, x->file, x->line, fn)) || fn->n))
		goto done;
	id_names(x->rule + 5, &names);
	if (!names.n || (ret = find_defs(ft, &names, ft->globs, ft->globs ?
					  ft->c->spec->test_paths.n : 0, &defs)))
		goto done;
	for (size_t i = 0; i < defs.n && !fn->n && !ret; i++)
		if (sl_test_file(defs.v[i].path, ft->globs))
			ret = enclosing_function(ft, defs.v[i].path, defs.v[i].start_line, fn);
done:
	sl_strvec_release(&names);
	sl_target_list_release(&defs);
	return ret;
}

static const char *site_name(const sl_site *s)
{
	for (size_t i = 0; i < s->ncaps; i++)
		if (!strcmp(s->caps[i].name, "callee"))
			return s->caps[i].text;
	return NULL;
}

static void push_name(sl_strvec *v, const char *name)
{
	for (size_t i = 0; i < v->n; i++)
		if (!strcmp(v->v[i], name))
			return;
	if (v->n < MAX_CALLEES)
		sl_strvec_push(v, name);
}

/*
 * The functions fn calls, in the order they are tried: nearest before
 * line first, then those after it; in call order when line is 0.
 */
static void callees(const sl_target *fn, unsigned line, sl_strvec *out)
{
	size_t before = 0;

	while (line && before < fn->nsites && fn->sites[before].start_line <= line)
		before++;
	for (size_t i = before; i > 0; i--)
		if (site_name(&fn->sites[i - 1]))
			push_name(out, site_name(&fn->sites[i - 1]));
	for (size_t i = before; i < fn->nsites; i++)
		if (site_name(&fn->sites[i]))
			push_name(out, site_name(&fn->sites[i]));
}

/* The definition in the code under test of the first of names that has one, or NULL. */
static const sl_target *first_defined(fix_tests *ft, const sl_target_list *defs,
				      const sl_strvec *names)
{
	for (size_t k = 0; k < names->n; k++)
		for (size_t i = 0; i < defs->n; i++) {
			const sl_target *d = &defs->v[i];

			if (d->nsites && d->sites[0].ncaps && is_code(ft, d->path) &&
			    !strcmp(d->sites[0].caps[0].text, names->v[k]))
				return d;
		}
	return NULL;
}

/* Where path (as a backtrace names it) is among the base's files, if it is code: else NULL. */
static char *code_path(fix_tests *ft, const char *path)
{
	sl_findings f;
	sl_finding x = { .file = (char *)path, .line = 1, .rule = (char *)"",
			 .message = (char *)"", .level = SL_LEVEL_ERROR };
	sl_buf report = SL_BUF_INIT;
	char *out = NULL;

	sl_findings_init(&f);
	sl_findings_add_copy(&f, &x);
	sl_fix_place(&f, ft->c, &ft->tracked, &report, NULL);
	if (is_tracked(ft, f.v[0].file) && is_code(ft, f.v[0].file))
		out = sl_xstrdup(f.v[0].file);
	sl_findings_release(&f);
	sl_buf_release(&report);
	return out;
}

/* The innermost frame of a backtrace in text that lies in the code: *file set, else NULL. */
static unsigned frame_in_code(fix_tests *ft, const char *text, char **file)
{
	unsigned line = 0;

	*file = NULL;
	for (const char *l = text; l && *l && !*file; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *p = l + strspn(l, " \t"), *at;
		char *one, *where = NULL;

		if (*p != '#' || !isdigit((unsigned char)p[1]))
			continue;
		at = one = sl_xstrndup(p, strcspn(p, "\n"));
		while (!*file && at && (line = sl_text_next_location(&at, &where))) {
			*file = code_path(ft, where);
			free(where);
			where = NULL;
		}
		free(where);
		free(one);
	}
	return *file ? line : 0;
}

/* Append the test's function to x's notes. */
static void note_test(sl_finding *x, const sl_target *fn, const char *callee)
{
	sl_buf n = SL_BUF_INIT;
	size_t len = strlen(fn->unit_text);

	if (x->notes && *x->notes)
		sl_buf_addf(&n, "%s\n", x->notes);
	sl_buf_addf(&n, "%s:%u: note: the failing test, %s:%u-%u", fn->path, fn->start_line,
		    fn->path, fn->start_line, fn->end_line);
	if (callee)
		sl_buf_addf(&n, " (it calls %s)", callee);
	sl_buf_adds(&n, ":\n");
	sl_buf_add(&n, fn->unit_text, len > MAX_TEST_SOURCE ? MAX_TEST_SOURCE : len);
	sl_buf_rtrim(&n);
	free(x->notes);
	x->notes = sl_buf_detach(&n, NULL);
}

static void move_to(sl_finding *x, const char *file, unsigned line)
{
	char *f = sl_xstrdup(file);

	free(x->file);
	x->file = f;
	x->line = line;
	x->col = 0;
}

/* One failing test's finding onto the code it exercises (sl_fix_tests, rules 1-3). */
static int test_to_code(fix_tests *ft, sl_finding *x)
{
	sl_target_list fn = SL_TARGET_LIST_INIT, defs = SL_TARGET_LIST_INIT;
	sl_strvec names = SL_STRVEC_INIT;
	const sl_target *def = NULL;
	char *frame = NULL;
	unsigned frame_line = frame_in_code(ft, x->message, &frame);
	int ret = SL_OK;

	if (!ft->syn && !frame)
		goto done;
	if (ft->syn && (ret = test_function(ft, x, &fn)))
		goto done;
	if (!frame && !is_code(ft, x->file) && fn.n) {
		callees(&fn.v[0], !strcmp(fn.v[0].path, x->file) ? x->line : 0, &names);
		if (names.n && (ret = find_defs(ft, &names, NULL, 0, &defs)))
			goto done;
		def = first_defined(ft, &defs, &names);
	}
	if (fn.n && (frame || def || is_code(ft, x->file)))
		note_test(x, &fn.v[0], def ? def->sites[0].caps[0].text : NULL);
	if (frame) {
		move_to(x, frame, frame_line);
		ft->by_trace++;
	} else if (def) {
		move_to(x, def->path, def->start_line);
		ft->by_calls++;
	}
done:
	free(frame);
	sl_strvec_release(&names);
	sl_target_list_release(&fn);
	sl_target_list_release(&defs);
	return ret;
}

/* 1 when text holds word as a whole identifier. */
static int has_word(const char *text, size_t len, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = text, *end = text + len; (p = memmem(p, (size_t)(end - p), word, n));
	     p += n)
		if ((p == text || !(isalnum((unsigned char)p[-1]) || p[-1] == '_')) &&
		    (p + n == end || !(isalnum((unsigned char)p[n]) || p[n] == '_')))
			return 1;
	return 0;
}

/* The test files of the base holding one of names as a word, protected for test id. */
static void protect_holders(fix_tests *ft, git_tree *tree, sl_gating *g, const char *id,
			    const sl_strvec *names)
{
	size_t held = 0, seen = 0;

	for (size_t i = 0; i < ft->tracked.n && held < MAX_HOLDERS && seen < MAX_TEST_FILES; i++) {
		const char *path = ft->tracked.v[i];
		git_tree_entry *e = NULL;
		git_blob *b = NULL;
		int hit = 0;

		if (!sl_test_file(path, ft->globs))
			continue;
		seen++;
		if (!git_tree_entry_bypath(&e, tree, path) &&
		    !git_blob_lookup(&b, ft->c->repo, git_tree_entry_id(e)) &&
		    git_blob_rawsize(b) <= MAX_TEST_FILE && !git_blob_is_binary(b))
			for (size_t k = 0; k < names->n && !hit; k++)
				hit = has_word(git_blob_rawcontent(b), (size_t)git_blob_rawsize(b),
					       names->v[k]);
		git_blob_free(b);
		git_tree_entry_free(e);
		if (hit) {
			sl_gating_protect(g, id, path);
			held++;
		}
	}
}

/*
 * The files that hold the tests the gates must see fixed: those of
 * test_paths their failure texts name, and the test files holding their
 * names (sl_fix_tests).
 */
static int protect_tests(fix_tests *ft, sl_gating *g)
{
	sl_tests judging;
	git_commit *commit = NULL;
	git_tree *tree = NULL;
	int ret = SL_OK;

	sl_tests_init(&judging);
	sl_gating_judging_tests(g, &judging);
	if (!judging.n)
		goto done;
	if (git_commit_lookup(&commit, ft->c->repo, &ft->c->base) ||
	    git_commit_tree(&tree, commit)) {
		ret = sl_err_set(ft->err, SL_ERROR, "cannot read the tree of %s: %s",
				 ft->c->base_hex, sl_git_error());
		goto done;
	}
	for (size_t i = 0; i < judging.n; i++) {
		const sl_test *t = &judging.v[i];
		sl_strvec names = SL_STRVEC_INIT;
		const char *at = t->message;
		char *file = NULL;

		while (ft->globs && at && *at) {
			sl_text_next_location(&at, &file);
			if (file && is_tracked(ft, file) && sl_test_file(file, ft->globs))
				sl_gating_protect(g, t->id, file);
			free(file);
			file = NULL;
		}
		id_names(t->id, &names);
		if (names.n)
			protect_holders(ft, tree, g, t->id, &names);
		sl_strvec_release(&names);
	}
done:
	git_tree_free(tree);
	git_commit_free(commit);
	sl_tests_release(&judging);
	return ret;
}

/*
 * The failing tests of u (a findings file's, whose first place is no file
 * of the base: a sanitizer's frame in libc) that test_to_code places: moved
 * from u to f.
 */
static int unplaced_to_code(fix_tests *ft, sl_unplaced *u, sl_findings *f)
{
	unsigned char *moved = sl_xcalloc(u->f.n ? u->f.n : 1, 1);
	size_t w = 0;
	int ret = SL_OK;

	for (size_t i = 0; i < u->f.n && !ret; i++) {
		size_t before = ft->by_trace + ft->by_calls;

		if (strncmp(u->f.v[i].rule, "test:", 5))
			continue;
		ret = test_to_code(ft, &u->f.v[i]);
		moved[i] = ft->by_trace + ft->by_calls > before;
	}
	for (size_t i = 0; i < u->f.n; i++) {
		if (moved[i]) {
			SL_ALLOC_GROW(f->v, f->n + 1, f->alloc);
			f->v[f->n++] = u->f.v[i];
			continue;
		}
		u->f.v[w] = u->f.v[i];
		u->why[w++] = u->why[i];
	}
	u->f.n = w;
	free(moved);
	return ret;
}

int sl_fix_tests(sl_findings *f, sl_unplaced *u, const sl_campaign *c, sl_store *cache,
		 sl_gating *g, sl_buf *note, sl_err *err)
{
	const sl_spec *spec = c->spec;
	fix_tests ft = { .c = c, .cache = cache, .err = err };
	int ret;

	ft.globs = spec->test_paths.n ? (const char *const *)spec->test_paths.v : NULL;
	for (size_t i = 0; i < sizeof(syntaxes) / sizeof(*syntaxes); i++)
		if (!strcmp(syntaxes[i].lang, spec->language))
			ft.syn = &syntaxes[i];
	if ((ret = sl_fix_tracked_files(&ft.tracked, c, err)) || (ret = protect_tests(&ft, g)) ||
	    spec->fix_target != SL_FIX_TARGET_CODE)
		goto done;
	for (size_t i = 0; i < f->n; i++)
		if (!strncmp(f->v[i].rule, "test:", 5) && (ret = test_to_code(&ft, &f->v[i])))
			goto done;
	if ((ret = unplaced_to_code(&ft, u, f)))
		goto done;
	if (ft.by_trace + ft.by_calls) {
		sl_gating_place_tests(g, f);
		sl_buf_addf(note, "fix: %zu failing tests put on the code they exercise "
			    "(%zu by a backtrace, %zu by the test's calls)",
			    ft.by_trace + ft.by_calls, ft.by_trace, ft.by_calls);
	}
done:
	sl_strvec_release(&ft.tracked);
	return ret;
}
