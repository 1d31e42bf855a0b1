/*
 * test_apply.c - the apply corpus, node splices, caps, the report, worktrees.
 *
 * The corpus (tests/fixtures/apply, see its README) is data: for every
 * cases/NAME.expect this builds a bare repository in a temporary directory
 * from base/ with libgit2, parses cases/NAME.reply with sl_reply_parse,
 * applies it with sl_apply_edits_ext and compares the candidate's tree with
 * base + the expected golden files (or the refusal with the expected
 * substring).  One TAP line per case.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <git2.h>

#include "unit.h"
#include "pipeline/apply/apply.h"
#include "pipeline/generate/edit.h"
#include "common/util.h"

#define CORPUS "tests/fixtures/apply"

static int build_tree(git_oid *out, git_repository *repo, const char *dir)
{
	git_treebuilder *tb = NULL;
	struct dirent **ents = NULL;
	int n = scandir(dir, &ents, NULL, alphasort), ret = -1;

	if (n < 0 || git_treebuilder_new(&tb, repo, NULL))
		goto done;
	for (int i = 0; i < n; i++) {
		const char *name = ents[i]->d_name;
		char *p = sl_path_join(dir, name);
		struct stat st;
		git_oid oid;
		int mode = 0, bad = 0;

		if (!strcmp(name, ".") || !strcmp(name, "..") || lstat(p, &st)) {
			free(p);
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			bad = build_tree(&oid, repo, p);
			mode = GIT_FILEMODE_TREE;
		} else if (S_ISLNK(st.st_mode)) {
			char target[4096];
			ssize_t len = readlink(p, target, sizeof(target));

			bad = len < 0 || git_blob_create_from_buffer(&oid, repo, target, (size_t)len);
			mode = GIT_FILEMODE_LINK;
		} else {
			sl_buf b = SL_BUF_INIT;

			bad = sl_read_file(&b, p, 0, NULL) ||
				git_blob_create_from_buffer(&oid, repo, b.buf, b.len);
			sl_buf_release(&b);
			mode = GIT_FILEMODE_BLOB;
		}
		free(p);
		if (bad || git_treebuilder_insert(NULL, tb, name, &oid, mode))
			goto done;
	}
	ret = git_treebuilder_write(out, tb) ? -1 : 0;
done:
	for (int i = 0; i < n; i++)
		free(ents[i]);
	free(ents);
	git_treebuilder_free(tb);
	return ret;
}

/* A bare repository in a new temporary directory, base/ committed. */
static git_repository *make_repo(char *tmpl, git_oid *commit_out)
{
	git_repository *repo = NULL;
	git_signature *sig = NULL;
	git_tree *tree = NULL;
	git_oid tree_oid;

	if (!mkdtemp(tmpl) || git_repository_init(&repo, tmpl, 1))
		return NULL;
	if (build_tree(&tree_oid, repo, CORPUS "/base") ||
	    git_tree_lookup(&tree, repo, &tree_oid) ||
	    git_signature_now(&sig, "t", "t@example.com") ||
	    git_commit_create(commit_out, repo, "HEAD", sig, sig, NULL, "base", tree, 0, NULL)) {
		fprintf(stderr, "cannot build base: %s\n", sl_git_error());
		git_repository_free(repo);
		repo = NULL;
	}
	git_tree_free(tree);
	git_signature_free(sig);
	return repo;
}

static void rm_tmp(const char *dir)
{
	sl_rm_rf(dir, NULL);
}

typedef struct expect {
	int format;
	char *refused, *parse_error, *tiers;
	sl_strvec results;          /* "PATH GOLDEN" */
	sl_strvec deletes;
	sl_strvec globs;
} expect;

static void expect_release(expect *e)
{
	free(e->refused);
	free(e->parse_error);
	free(e->tiers);
	sl_strvec_release(&e->results);
	sl_strvec_release(&e->deletes);
	sl_strvec_release(&e->globs);
}

static int read_expect(expect *e, const char *path)
{
	sl_buf b = SL_BUF_INIT;
	char *line, *save = NULL;

	memset(e, 0, sizeof(*e));
	if (sl_read_file(&b, path, 0, NULL))
		return -1;
	for (line = strtok_r(b.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp = strchr(line, ' '), *val = sp ? sp + 1 : (char *)"";

		if (sp)
			*sp = '\0';
		if (!strcmp(line, "format")) {
			e->format = !strcmp(val, "udiff") ? SL_FORMAT_UDIFF :
				!strcmp(val, "search-replace") ? SL_FORMAT_SEARCH_REPLACE : 0;
		} else if (!strcmp(line, "refused")) {
			e->refused = sl_xstrdup(val);
		} else if (!strcmp(line, "parse-error")) {
			e->parse_error = sl_xstrdup(val);
		} else if (!strcmp(line, "tiers")) {
			e->tiers = sl_xstrdup(val);
		} else if (!strcmp(line, "result")) {
			sl_strvec_push(&e->results, val);
		} else if (!strcmp(line, "delete")) {
			sl_strvec_push(&e->deletes, val);
		} else if (!strcmp(line, "globs")) {
			char *g, *s2 = NULL;

			for (g = strtok_r(val, " ", &s2); g; g = strtok_r(NULL, " ", &s2))
				sl_strvec_push(&e->globs, g);
		}
	}
	sl_buf_release(&b);
	return e->format ? 0 : -1;
}

/* base tree + the expected results, as a tree id. */
static int expected_tree(git_oid *out, git_repository *repo, const git_oid *base, const expect *e)
{
	git_commit *c = NULL;
	git_tree *t = NULL;
	git_tree_update *u = sl_xcalloc(e->results.n + e->deletes.n + 1, sizeof(*u));
	char **paths = sl_xcalloc(e->results.n + 1, sizeof(*paths));
	size_t n = 0;
	int ret = -1;

	if (git_commit_lookup(&c, repo, base) || git_commit_tree(&t, c))
		goto done;
	for (size_t i = 0; i < e->results.n; i++) {
		const char *sp = strchr(e->results.v[i], ' ');
		sl_buf b = SL_BUF_INIT, gp = SL_BUF_INIT;
		int bad;

		if (!sp)
			goto done;
		paths[i] = sl_xstrndup(e->results.v[i], (size_t)(sp - e->results.v[i]));
		sl_buf_addf(&gp, CORPUS "/golden/%s", sp + 1);
		bad = sl_read_file(&b, gp.buf, 0, NULL) ||
			git_blob_create_from_buffer(&u[n].id, repo, b.buf, b.len);
		sl_buf_release(&b);
		sl_buf_release(&gp);
		if (bad)
			goto done;
		u[n].action = GIT_TREE_UPDATE_UPSERT;
		u[n].filemode = GIT_FILEMODE_BLOB;
		u[n].path = paths[i];
		n++;
	}
	for (size_t i = 0; i < e->deletes.n; i++) {
		u[n].action = GIT_TREE_UPDATE_REMOVE;
		u[n].path = e->deletes.v[i];
		n++;
	}
	ret = git_tree_create_updated(out, repo, t, n, u) ? -1 : 0;
done:
	for (size_t i = 0; i < e->results.n; i++)
		free(paths[i]);
	free(paths);
	free(u);
	git_tree_free(t);
	git_commit_free(c);
	return ret;
}

static void show_blob(git_repository *repo, const git_oid *commit, const char *path)
{
	git_commit *c = NULL;
	git_tree *t = NULL;
	git_tree_entry *te = NULL;
	git_blob *b = NULL;

	if (!git_commit_lookup(&c, repo, commit) && !git_commit_tree(&t, c) &&
	    !git_tree_entry_bypath(&te, t, path) && !git_blob_lookup(&b, repo, git_tree_entry_id(te)))
		fprintf(stderr, "--- candidate %s:\n%.*s\n---\n", path, (int)git_blob_rawsize(b),
			(const char *)git_blob_rawcontent(b));
	git_blob_free(b);
	git_tree_entry_free(te);
	git_tree_free(t);
	git_commit_free(c);
}

static void run_case(const char *name)
{
	char tmpl[] = "/tmp/sluice-test-apply-XXXXXX";
	git_repository *repo = NULL;
	git_oid base, commit, want;
	git_commit *cc = NULL;
	expect e;
	sl_buf ep = SL_BUF_INIT, rp = SL_BUF_INIT, reply = SL_BUF_INIT, tiers = SL_BUF_INIT;
	sl_edit_list edits = SL_EDIT_LIST_INIT;
	sl_apply_report rep = SL_APPLY_REPORT_INIT;
	sl_apply_opts ao = SL_APPLY_OPTS_INIT;
	sl_err err = SL_ERR_INIT;
	int rc;

	sl_buf_addf(&ep, CORPUS "/cases/%s.expect", name);
	sl_buf_addf(&rp, CORPUS "/cases/%s.reply", name);
	if (read_expect(&e, ep.buf)) {
		fprintf(stderr, "%s: bad expect file\n", name);
		unit_cur_failed = 1;
		goto done;
	}
	CHECK_INT(sl_read_file(&reply, rp.buf, 0, NULL), 0);
	if (!(repo = make_repo(tmpl, &base))) {
		unit_cur_failed = 1;
		goto done;
	}
	rc = sl_reply_parse(&edits, reply.buf, reply.len, e.format, &err);
	if (e.parse_error) {
		CHECK(rc != 0);
		if (!strstr(err.msg, e.parse_error)) {
			fprintf(stderr, "%s: parse error '%s' lacks '%s'\n", name, err.msg, e.parse_error);
			unit_cur_failed = 1;
		}
		goto done;
	}
	if (rc) {
		fprintf(stderr, "%s: parse failed: %s\n", name, err.msg);
		unit_cur_failed = 1;
		goto done;
	}
	ao.allowed_globs = (const char *const *)e.globs.v;
	ao.nglobs = e.globs.n;
	rc = sl_apply_edits_ext(&commit, NULL, repo, &base, &edits, "candidate", &ao, &rep, &err);
	CHECK_INT(rep.n, edits.n);
	for (size_t i = 0; i < rep.n; i++)
		sl_buf_addf(&tiers, "%s%s", i ? " " : "", rep.v[i].tier);
	if (e.refused) {
		if (rc != SL_EREFUSED || !strstr(err.msg, e.refused)) {
			fprintf(stderr, "%s: wanted refusal with '%s', got %d: %s\n", name, e.refused,
				rc, err.msg);
			unit_cur_failed = 1;
		}
		CHECK(strstr(tiers.buf, "refused") != NULL);
		goto done;
	}
	if (rc) {
		fprintf(stderr, "%s: apply failed (%d): %s\n", name, rc, err.msg);
		unit_cur_failed = 1;
		goto done;
	}
	CHECK_INT(expected_tree(&want, repo, &base, &e), 0);
	CHECK_INT(git_commit_lookup(&cc, repo, &commit), 0);
	if (cc && !git_oid_equal(git_commit_tree_id(cc), &want)) {
		fprintf(stderr, "%s: the candidate's tree is not the expected one\n", name);
		for (size_t i = 0; i < e.results.n; i++) {
			char *p = sl_xstrndup(e.results.v[i], strcspn(e.results.v[i], " "));

			show_blob(repo, &commit, p);
			free(p);
		}
		unit_cur_failed = 1;
	}
	if (e.tiers)
		CHECK_STR(tiers.buf, e.tiers);
done:
	if (unit_cur_failed && rep.n) {
		sl_buf j = SL_BUF_INIT;

		sl_apply_report_json(&j, &rep);
		fprintf(stderr, "%s: report %s\n", name, j.buf);
		sl_buf_release(&j);
	}
	git_commit_free(cc);
	git_repository_free(repo);
	if (repo)
		rm_tmp(tmpl);
	sl_apply_report_release(&rep);
	sl_edit_list_release(&edits);
	expect_release(&e);
	sl_buf_release(&ep);
	sl_buf_release(&rp);
	sl_buf_release(&reply);
	sl_buf_release(&tiers);
}

static int run_corpus(void)
{
	struct dirent **ents = NULL;
	int n = scandir(CORPUS "/cases", &ents, NULL, alphasort), cases = 0;

	for (int i = 0; i < n; i++) {
		char *dot = strrchr(ents[i]->d_name, '.');

		if (dot && !strcmp(dot, ".expect")) {
			*dot = '\0';
			unit_cur_failed = 0;
			run_case(ents[i]->d_name);
			unit_n++;
			if (unit_cur_failed)
				unit_failed++;
			printf("%sok %d - corpus %s\n", unit_cur_failed ? "not " : "", unit_n,
			       ents[i]->d_name);
			fflush(stdout);
			cases++;
		}
		free(ents[i]);
	}
	free(ents);
	return cases;
}

/* ---- direct tests ---------------------------------------------------------- */

static git_repository *trepo;
static git_oid tbase;
static char tdir[] = "/tmp/sluice-test-apply-XXXXXX";

static int apply1(sl_edit_list *edits, const sl_apply_opts *ao, sl_apply_report *rep, sl_err *err)
{
	git_oid c;

	sl_err_clear(err);
	return sl_apply_edits_ext(&c, NULL, trepo, &tbase, edits, "t", ao, rep, err);
}

static void test_corpus_size(void)
{
	int n = run_corpus();

	CHECK(n >= 60);
}

static void test_splice_only_where_unchanged(void)
{
	sl_edit_list el = SL_EDIT_LIST_INIT;
	sl_apply_report rep = SL_APPLY_REPORT_INIT;
	sl_err err = SL_ERR_INIT;
	sl_edit *e;
	/* "\treturn a + b;" starts at byte 72 of base/src/calc.c */
	const char *calc_head = "#include <stdio.h>\n\n/* calc.c - a tiny calculator */\n\n"
		"int add(int a, int b)\n{\n";
	uint32_t at = (uint32_t)strlen(calc_head);

	e = sl_edit_list_add(&el, SL_EDIT_SPLICE, "src/calc.c", "\treturn a + b;", "\treturn b + a;");
	e->start = at;
	e->end = at + 14;
	CHECK_INT(apply1(&el, NULL, &rep, &err), 0);
	CHECK_STR(rep.v[0].tier, "exact");
	CHECK_INT(rep.v[0].line, 7);
	/* one byte off: the unit's text is not there any more */
	el.v[0].start = at + 1;
	el.v[0].end = at + 15;
	CHECK_INT(apply1(&el, NULL, &rep, &err), SL_EREFUSED);
	CHECK(strstr(err.msg, "not what the edit expects") != NULL);
	CHECK_STR(rep.v[0].tier, "refused");
	/* past the end */
	el.v[0].start = 100000;
	el.v[0].end = 100014;
	CHECK_INT(apply1(&el, NULL, &rep, &err), SL_EREFUSED);
	/* two overlapping splices */
	el.v[0].start = at;
	el.v[0].end = at + 14;
	e = sl_edit_list_add(&el, SL_EDIT_SPLICE, "src/calc.c", "return", "yield");
	e->start = at + 1;
	e->end = at + 7;
	CHECK_INT(apply1(&el, NULL, &rep, &err), SL_EREFUSED);
	CHECK(strstr(err.msg, "overlap") != NULL);
	sl_apply_report_release(&rep);
	sl_edit_list_release(&el);
}

static void test_size_caps(void)
{
	sl_edit_list el = SL_EDIT_LIST_INIT;
	sl_apply_report rep = SL_APPLY_REPORT_INIT;
	sl_apply_opts ao = SL_APPLY_OPTS_INIT;
	sl_err err = SL_ERR_INIT;
	size_t big = (256u << 10) + 10;
	char *text = sl_xmalloc(big + 1);

	for (size_t i = 0; i < big; i++)
		text[i] = i % 64 == 63 ? '\n' : 'x';
	text[big] = '\0';
	sl_edit_list_add(&el, SL_EDIT_REPLACE, "src/big.c", "", text)->new_file = 1;
	CHECK_INT(apply1(&el, NULL, &rep, &err), SL_EREFUSED);
	CHECK(strstr(err.msg, "the limit is 262144 per edit") != NULL);
	ao.max_edit_bytes = 1u << 20;
	CHECK_INT(apply1(&el, &ao, &rep, &err), 0);
	ao.max_file_bytes = 1000;
	CHECK_INT(apply1(&el, &ao, &rep, &err), SL_EREFUSED);
	CHECK(strstr(err.msg, "would grow to") != NULL);
	/* a NUL byte in the new text is binary */
	sl_edit_list_release(&el);
	free(text);
	sl_apply_report_release(&rep);
}

static void test_report_json(void)
{
	sl_edit_list el = SL_EDIT_LIST_INIT;
	sl_apply_report rep = SL_APPLY_REPORT_INIT;
	sl_err err = SL_ERR_INIT;
	sl_buf j = SL_BUF_INIT;

	sl_edit_list_add(&el, SL_EDIT_REPLACE, "calc.c", "\treturn a - b;\n", "\treturn b - a;\n");
	sl_edit_list_add(&el, SL_EDIT_REPLACE, "src/../x", "a\n", "b\n");
	CHECK_INT(apply1(&el, NULL, &rep, &err), SL_EREFUSED);
	sl_apply_report_json(&j, &rep);
	CHECK_STR(j.buf, "[{\"edit\":1,\"path\":\"src/calc.c\",\"kind\":\"replace\",\"tier\":\"exact\","
		  "\"line\":12,\"reason\":\"'calc.c' does not exist; applied to 'src/calc.c', the only "
		  "file with that name\"},{\"edit\":2,\"path\":\"src/../x\",\"kind\":\"replace\","
		  "\"tier\":\"refused\",\"line\":0,\"reason\":\"refusing path 'src/../x': it contains "
		  "'..'\"}]");
	CHECK(strstr(err.msg, "edit 2 for 'src/../x'") != NULL);
	CHECK(strstr(err.msg, "edit 1") == NULL);
	sl_buf_release(&j);
	sl_apply_report_release(&rep);
	sl_edit_list_release(&el);
}

static void test_no_edits_and_noop(void)
{
	sl_edit_list el = SL_EDIT_LIST_INIT;
	sl_err err = SL_ERR_INIT;

	CHECK_INT(apply1(&el, NULL, NULL, &err), SL_EREFUSED);
	sl_edit_list_add(&el, SL_EDIT_REPLACE, "src/calc.c", "\treturn a - b;\n", "\treturn a - b;\n");
	CHECK_INT(apply1(&el, NULL, NULL, &err), SL_EREFUSED);
	CHECK(strstr(err.msg, "change nothing") != NULL);
	sl_edit_list_release(&el);
}

/* The patch of diff, appended to out. */
static void patch_of(sl_buf *out, git_diff *diff)
{
	git_buf b = { 0 };

	if (diff && !git_diff_to_buf(&b, diff, GIT_DIFF_FORMAT_PATCH))
		sl_buf_add(out, b.ptr, b.size);
	git_buf_dispose(&b);
}

/*
 * sl_diff_trees reads only the subtrees that differ, yet gives the whole
 * diff: a nested change, a new directory, a deleted directory, a file that
 * becomes a directory and a mode change.
 */
static void test_diff_trees_narrow(void)
{
	git_commit *bc = NULL;
	git_tree *bt = NULL, *nt = NULL;
	git_diff *narrow = NULL, *whole = NULL;
	git_tree_update u[5];
	git_oid blob, t;
	sl_buf a = SL_BUF_INIT, b = SL_BUF_INIT;
	sl_err err = SL_ERR_INIT;

	memset(u, 0, sizeof(u));
	CHECK_INT(git_commit_lookup(&bc, trepo, &tbase), 0);
	CHECK_INT(git_commit_tree(&bt, bc), 0);
	CHECK_INT(git_blob_create_from_buffer(&blob, trepo, "int x;\n", 7), 0);
	u[0] = (git_tree_update){ GIT_TREE_UPDATE_UPSERT, blob, GIT_FILEMODE_BLOB, "src/calc.c" };
	u[1] = (git_tree_update){ GIT_TREE_UPDATE_UPSERT, blob, GIT_FILEMODE_BLOB, "new/dir/x.c" };
	u[2] = (git_tree_update){ GIT_TREE_UPDATE_REMOVE, blob, GIT_FILEMODE_BLOB, "lib/util.h" };
	u[3] = (git_tree_update){ GIT_TREE_UPDATE_REMOVE, blob, GIT_FILEMODE_BLOB, "data.bin" };
	u[4] = (git_tree_update){ GIT_TREE_UPDATE_UPSERT, blob, GIT_FILEMODE_BLOB_EXECUTABLE,
				  "tools/main.c" };
	/* two steps: one update cannot both remove a file and put a directory there */
	CHECK_INT(git_tree_create_updated(&t, trepo, bt, 5, u), 0);
	CHECK_INT(git_tree_lookup(&nt, trepo, &t), 0);
	u[0] = (git_tree_update){ GIT_TREE_UPDATE_UPSERT, blob, GIT_FILEMODE_BLOB, "data.bin/y.c" };
	if (nt)
		CHECK_INT(git_tree_create_updated(&t, trepo, nt, 1, u), 0);
	git_tree_free(nt);
	nt = NULL;
	CHECK_INT(git_tree_lookup(&nt, trepo, &t), 0);
	if (!nt)
		goto done;
	CHECK_INT(sl_diff_trees(&narrow, trepo, bt, nt, &err), 0);
	CHECK_INT(git_diff_tree_to_tree(&whole, trepo, bt, nt, NULL), 0);
	CHECK_INT(git_diff_num_deltas(narrow), git_diff_num_deltas(whole));
	CHECK_INT(git_diff_num_deltas(whole), 6);
	patch_of(&a, narrow);
	patch_of(&b, whole);
	CHECK(b.len > 0);
	CHECK_STR(a.buf, b.buf);
	git_diff_free(narrow);
	narrow = NULL;
	CHECK_INT(sl_diff_trees(&narrow, trepo, bt, bt, &err), 0);
	CHECK_INT(git_diff_num_deltas(narrow), 0);
done:
	sl_buf_release(&a);
	sl_buf_release(&b);
	git_diff_free(narrow);
	git_diff_free(whole);
	git_tree_free(nt);
	git_tree_free(bt);
	git_commit_free(bc);
}

/* ---- worktrees -------------------------------------------------------------- */

static char wdir[] = "/tmp/sluice-test-wt-XXXXXX";

static git_repository *work_repo(git_oid *commit)
{
	git_repository *repo = NULL;
	git_signature *sig = NULL;
	git_tree *tree = NULL;
	git_oid t;
	char *p;

	if (!mkdtemp(wdir))
		return NULL;
	p = sl_path_join(wdir, "repo");
	if (git_repository_init(&repo, p, 0) || build_tree(&t, repo, CORPUS "/base") ||
	    git_tree_lookup(&tree, repo, &t) || git_signature_now(&sig, "t", "t@example.com") ||
	    git_commit_create(commit, repo, "HEAD", sig, sig, NULL, "base", tree, 0, NULL)) {
		git_repository_free(repo);
		repo = NULL;
	}
	free(p);
	git_tree_free(tree);
	git_signature_free(sig);
	return repo;
}

static int exists(const char *dir, const char *rel)
{
	char *p = sl_path_join(dir, rel);
	struct stat st;
	int r = !lstat(p, &st);

	free(p);
	return r;
}

/* A worktree as a killed run leaves it: checkout and admin files, no sl_worktree. */
static int raw_worktree(git_repository *repo, const char *root, const char *name,
			const git_oid *commit)
{
	git_worktree_add_options o;
	git_worktree *w = NULL;
	git_reference *ref = NULL;
	git_commit *cm = NULL;
	char *p = sl_path_join(root, name);
	int ret;

	git_worktree_add_options_init(&o, GIT_WORKTREE_ADD_OPTIONS_VERSION);
	ret = git_commit_lookup(&cm, repo, commit) ||
		git_branch_create(&ref, repo, "sluice/crashed", cm, 1);
	o.ref = ref;
	if (!ret)
		ret = git_worktree_add(&w, repo, name, p, &o);
	git_worktree_free(w);
	git_reference_free(ref);
	git_commit_free(cm);
	free(p);
	return ret;
}

static void test_worktrees(void)
{
	git_repository *repo;
	git_oid c;
	sl_worktree *wt = NULL;
	sl_err err = SL_ERR_INIT;
	char *scratch, *inside, *marker, name[64];
	size_t removed = 0;
	sl_buf cfg = SL_BUF_INIT;

	if (!(repo = work_repo(&c))) {
		CHECK(!"cannot make repository");
		return;
	}
	scratch = sl_path_join(wdir, "scratch");
	inside = sl_path_join(wdir, "repo/sub/scratch");
	marker = sl_path_join(wdir, "pwned");

	/* a root inside the working tree (also one that does not exist yet) */
	CHECK_INT(sl_worktree_add(&wt, repo, inside, "sl-1-1", "sluice/t1", &c, &err), SL_EINPUT);
	CHECK(strstr(err.msg, "inside the repository") != NULL);
	CHECK(!exists(wdir, "repo/sub"));

	/* a normal worktree; then plant hooks, fsmonitor, hooksPath and remove it */
	sl_err_clear(&err);
	CHECK_INT(sl_worktree_add(&wt, repo, scratch, "sl-1-2", "sluice/t2", &c, &err), 0);
	CHECK(exists(scratch, "sl-1-2/src/calc.c"));
	sl_buf_addf(&cfg, "[core]\n\tfsmonitor = touch %s\n\thooksPath = hooks\n", marker);
	{
		char *gitp = sl_path_join(scratch, "sl-1-2/.git"), *hk;
		sl_buf hook = SL_BUF_INIT;

		unlink(gitp);
		mkdir(gitp, 0755);
		hk = sl_path_join(gitp, "hooks");
		mkdir(hk, 0755);
		free(hk);
		hk = sl_path_join(gitp, "config");
		sl_write_file(hk, cfg.buf, cfg.len, NULL);
		free(hk);
		sl_buf_addf(&hook, "#!/bin/sh\ntouch %s\n", marker);
		hk = sl_path_join(gitp, "hooks/post-checkout");
		sl_write_file(hk, hook.buf, hook.len, NULL);
		chmod(hk, 0755);
		free(hk);
		sl_buf_release(&hook);
		free(gitp);
	}
	CHECK_INT(sl_worktree_remove(wt, &err), 0);
	CHECK(!exists(scratch, "sl-1-2"));
	CHECK(!exists(wdir, "pwned"));

	/* a crashed run's worktree (dead pid) goes, a live process's stays */
	snprintf(name, sizeof(name), "sl-%ld-1", (long)getppid());
	CHECK_INT(raw_worktree(repo, scratch, "sl-999999-1", &c), 0);
	CHECK_INT(sl_worktree_add(&wt, repo, scratch, name, "sluice/t4", &c, &err), 0);
	{
		sl_worktree *keep = wt;

		wt = NULL;
		CHECK_INT(sl_worktree_cleanup_count(repo, scratch, &removed, &err), 0);
		CHECK_INT(removed, 1);
		CHECK(!exists(scratch, "sl-999999-1"));
		CHECK(exists(scratch, name));
		CHECK(!exists(wdir, "repo/.git/worktrees/sl-999999-1"));
		sl_worktree_remove(keep, NULL);
	}
	/* a leftover checkout no repository knows: swept */
	{
		char *d = sl_path_join(scratch, "camp/sl-999998-3");
		char *g = sl_path_join(d, ".git");

		sl_mkdir_p(d, 0755, NULL);
		sl_write_file(g, "gitdir: /nowhere\n", 17, NULL);
		CHECK_INT(sl_worktree_sweep(scratch, &removed, &err), 0);
		CHECK_INT(removed, 1);
		CHECK(!exists(scratch, "camp/sl-999998-3"));
		free(g);
		free(d);
	}
	CHECK(!exists(wdir, "pwned"));
	sl_buf_release(&cfg);
	free(scratch);
	free(inside);
	free(marker);
	git_repository_free(repo);
	sl_rm_rf(wdir, NULL);
}

int main(void)
{
	git_libgit2_init();
	git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, GIT_CONFIG_LEVEL_GLOBAL, "");
	git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, GIT_CONFIG_LEVEL_XDG, "");
	git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, GIT_CONFIG_LEVEL_SYSTEM, "");
	RUN(test_corpus_size);
	if ((trepo = make_repo(tdir, &tbase))) {
		RUN(test_splice_only_where_unchanged);
		RUN(test_size_caps);
		RUN(test_report_json);
		RUN(test_no_edits_and_noop);
		RUN(test_diff_trees_narrow);
		git_repository_free(trepo);
		rm_tmp(tdir);
	}
	RUN(test_worktrees);
	git_libgit2_shutdown();
	return unit_done();
}
