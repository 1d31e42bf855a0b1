/*
 * test_scope_cache.c - sl_scope with a cache in a real store: a warm run
 * returns exactly the targets of a cold one (every field, captures
 * included) without parsing; a changed blob misses while the others hit; a
 * different unit or query misses; a corrupt row is ignored and rewritten;
 * the stats add up; several threads give the same targets as one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <git2.h>
#include <sqlite3.h>

#include "scoping/scope.h"
#include "storage/scope_cache.h"
#include "storage/store_internal.h"
#include "common/util.h"
#include "unit.h"

static git_repository *repo;
static git_oid c1, c2;
static char tmpdir[] = "/tmp/sl-test-scope-cache-XXXXXX";
static sl_store *store;

static const char a_c[] =
	"#include <string.h>\n"
	"void f(char *d, char *s)\n{\n\tstrcpy(d, s);\n\tstrcpy(s, d);\n}\n";
static const char b_c[] = "int g(void) { return 0; }\n";
static const char b2_c[] = "int g(char *x) { strcpy(x, \"y\"); return 0; }\n";
static const char m_h[] = "#define CP(a, b) strcpy(a, b)\n";

static void commit_files(git_oid *out, const char *const *files, size_t n, const git_oid *parent)
{
	git_index *idx = NULL;
	git_oid tree_id;
	git_tree *tree = NULL;
	git_signature *sig = NULL;
	git_commit *p = NULL;

	if (git_repository_index(&idx, repo))
		exit(2);
	for (size_t i = 0; i < n; i += 2) {
		git_index_entry e;

		memset(&e, 0, sizeof(e));
		e.mode = GIT_FILEMODE_BLOB;
		e.path = files[i];
		if (git_index_add_from_buffer(idx, &e, files[i + 1], strlen(files[i + 1])))
			exit(2);
	}
	if (parent && git_commit_lookup(&p, repo, parent))
		exit(2);
	if (git_index_write_tree(&tree_id, idx) || git_tree_lookup(&tree, repo, &tree_id) ||
	    git_signature_new(&sig, "T", "t@example.com", 1700000000, 0) ||
	    git_commit_create_v(out, repo, "HEAD", sig, sig, NULL, "c", tree, p ? 1 : 0, p)) {
		fprintf(stderr, "commit failed: %s\n", git_error_last()->message);
		exit(2);
	}
	git_commit_free(p);
	git_signature_free(sig);
	git_tree_free(tree);
	git_index_free(idx);
}

static void setup(void)
{
	const char *const v1[] = { "src/a.c", a_c, "src/b.c", b_c, "inc/m.h", m_h };
	const char *const v2[] = { "src/b.c", b2_c };
	sl_err err = SL_ERR_INIT;
	char *db;

	git_libgit2_init();
	if (!mkdtemp(tmpdir) || git_repository_init(&repo, tmpdir, 0))
		exit(2);
	commit_files(&c1, v1, 6, NULL);
	commit_files(&c2, v2, 2, &c1);
	db = sl_path_join(tmpdir, "store.db");
	if (sl_store_open(&store, db, 1, &err)) {
		fprintf(stderr, "store: %s\n", err.msg);
		exit(2);
	}
	free(db);
}

/* Every field of every target. */
static void render(sl_buf *b, const sl_target_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		const sl_target *t = &l->v[i];

		sl_buf_addf(b, "%s %s %s %s %u-%u %u:%u-%u:%u [%s]\n", t->path, t->lang, t->blob,
			    t->unit, t->start_byte, t->end_byte, t->start_line, t->start_col,
			    t->end_line, t->end_col, t->unit_text);
		for (size_t j = 0; j < t->nsites; j++) {
			const sl_site *s = &t->sites[j];

			sl_buf_addf(b, "  site %u-%u %u:%u-%u:%u\n", s->start_byte, s->end_byte,
				    s->start_line, s->start_col, s->end_line, s->end_col);
			for (size_t k = 0; k < s->ncaps; k++)
				sl_buf_addf(b, "    @%s %u-%u [%s]\n", s->caps[k].name,
					    s->caps[k].start_byte, s->caps[k].end_byte, s->caps[k].text);
		}
	}
}

static char *scope(const git_oid *commit, const char *unit, sl_store *cache, unsigned threads,
		   sl_scope_stats *st)
{
	sl_scope_opts o = SL_SCOPE_OPTS_INIT;
	sl_target_list l = SL_TARGET_LIST_INIT;
	sl_err err = SL_ERR_INIT;
	sl_buf b = SL_BUF_INIT;

	o.language = "c";
	o.query = "((call_expression function: (identifier) @fn) @call (#eq? @fn \"strcpy\"))";
	o.capture = "call";
	o.unit = unit;
	o.cache = cache;
	o.threads = threads;
	o.stats = st;
	if (sl_scope(&l, repo, commit, &o, &err))
		sl_buf_addf(&b, "ERR %s", err.msg);
	else
		render(&b, &l);
	sl_target_list_release(&l);
	return sl_buf_detach(&b, NULL);
}

static void test_warm_equals_cold(void)
{
	sl_scope_stats st = SL_SCOPE_STATS_INIT;
	char *plain = scope(&c1, "function", NULL, 1, NULL);
	char *cold = scope(&c1, "function", store, 1, &st);
	char *warm;

	CHECK(strstr(plain, "@fn") != NULL);
	CHECK_STR(cold, plain);
	CHECK_INT(st.cache_hits, 0);
	CHECK_INT(st.files_seen, 3);
	CHECK_INT(st.parsed, 2);             /* b.c has no strcpy */
	CHECK_INT(st.skipped_prefilter, 1);
	CHECK_INT(st.literal_no_match, 1);   /* m.h: only in a macro */
	CHECK_STR(st.literal_no_match_paths.n ? st.literal_no_match_paths.v[0] : "", "inc/m.h");
	warm = scope(&c1, "function", store, 1, &st);
	CHECK_STR(warm, plain);
	CHECK_INT(st.cache_hits, 3);
	CHECK_INT(st.parsed, 0);
	CHECK_INT(st.skipped_prefilter, 0);
	CHECK_INT(st.literal_no_match, 1);   /* remembered by the cache */
	sl_scope_stats_release(&st);
	free(plain);
	free(cold);
	free(warm);
}

static void test_changed_blob_misses(void)
{
	sl_scope_stats st = SL_SCOPE_STATS_INIT;
	char *plain = scope(&c2, "function", NULL, 1, NULL);
	char *cached = scope(&c2, "function", store, 1, &st);

	CHECK_STR(cached, plain);
	CHECK(strstr(cached, "src/b.c") != NULL);
	CHECK_INT(st.cache_hits, 2);
	CHECK_INT(st.parsed, 1);
	sl_scope_stats_release(&st);
	free(plain);
	free(cached);
}

static void test_unit_is_part_of_the_key(void)
{
	sl_scope_stats st = SL_SCOPE_STATS_INIT;
	char *plain = scope(&c1, "statement", NULL, 1, NULL);
	char *cached = scope(&c1, "statement", store, 1, &st);

	CHECK_STR(cached, plain);
	CHECK_INT(st.cache_hits, 0);
	sl_scope_stats_release(&st);
	free(plain);
	free(cached);
}

static void test_corrupt_row_is_ignored(void)
{
	sl_scope_stats st = SL_SCOPE_STATS_INIT;
	char *plain = scope(&c1, "function", NULL, 1, NULL);
	char *cached;

	CHECK_INT(sqlite3_exec(sl_store_sqlite(store), "UPDATE scope_cache SET data = x'0500'",
			       NULL, NULL, NULL), SQLITE_OK);
	cached = scope(&c1, "function", store, 1, &st);
	CHECK_STR(cached, plain);
	CHECK_INT(st.cache_hits, 0);
	free(cached);
	cached = scope(&c1, "function", store, 1, &st);
	CHECK_STR(cached, plain);
	CHECK_INT(st.cache_hits, 3);
	sl_scope_stats_release(&st);
	free(plain);
	free(cached);
}

static void test_threads_same_result(void)
{
	char *one = scope(&c1, "capture", NULL, 1, NULL);
	char *four = scope(&c1, "capture", NULL, 4, NULL);

	CHECK_STR(four, one);
	free(one);
	free(four);
}

int main(void)
{
	sl_err err = SL_ERR_INIT;

	setup();
	RUN(test_warm_equals_cold);
	RUN(test_changed_blob_misses);
	RUN(test_unit_is_part_of_the_key);
	RUN(test_corrupt_row_is_ignored);
	RUN(test_threads_same_result);
	sl_store_free(store);
	git_repository_free(repo);
	sl_rm_rf(tmpdir, &err);
	git_libgit2_shutdown();
	return unit_done();
}
