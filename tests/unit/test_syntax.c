/*
 * test_syntax.c - the syntax check rejects what adds ERROR/MISSING nodes
 * (an unbalanced brace in C, a bad indent in Python) and passes the rest.
 */
#include <stdlib.h>
#include <string.h>
#include <git2.h>

#include "unit.h"
#include "validators/syntax.h"
#include "common/util.h"

static git_repository *test_repo;

static int commit_files(git_oid *out, git_repository *repo, const char *const *kv, size_t n)
{
	git_treebuilder *root = NULL, *src = NULL;
	git_signature *sig = NULL;
	git_tree *tree = NULL;
	git_oid oid, t;
	int ret = -1;

	if (git_treebuilder_new(&root, repo, NULL) || git_treebuilder_new(&src, repo, NULL))
		goto done;
	for (size_t i = 0; i < n; i++) {
		if (git_blob_create_from_buffer(&oid, repo, kv[2 * i + 1], strlen(kv[2 * i + 1])) ||
		    git_treebuilder_insert(NULL, src, kv[2 * i], &oid, GIT_FILEMODE_BLOB))
			goto done;
	}
	if (git_treebuilder_write(&t, src) ||
	    git_treebuilder_insert(NULL, root, "src", &t, GIT_FILEMODE_TREE) ||
	    git_treebuilder_write(&t, root) || git_tree_lookup(&tree, repo, &t) ||
	    git_signature_now(&sig, "t", "t@example.com") ||
	    git_commit_create(out, repo, NULL, sig, sig, NULL, "c", tree, 0, NULL))
		goto done;
	ret = 0;
done:
	git_tree_free(tree);
	git_signature_free(sig);
	git_treebuilder_free(src);
	git_treebuilder_free(root);
	return ret;
}

/* The file's name in lang: the check finds the language by the path. */
static const char *file_for(const char *lang)
{
	if (!lang)
		return "f.txt";
	return !strcmp(lang, "c") ? "f.c" : !strcmp(lang, "python") ? "f.py" : "f.cob";
}

/* Commit old_text (none: no such file) then new_text, and check the pair. */
static int run(const char *lang, const char *old_text, const char *new_text, sl_buf *rep)
{
	sl_err err = SL_ERR_INIT;
	const char *f = file_for(lang);
	const char *const o[] = { "keep.txt", "k", f, old_text };
	const char *const n[] = { "keep.txt", "k", f, new_text };
	git_oid base, cand;
	int ok = -1;

	sl_buf_reset(rep);
	CHECK_INT(commit_files(&base, test_repo, o, old_text ? 2 : 1), 0);
	CHECK_INT(commit_files(&cand, test_repo, n, 2), 0);
	CHECK_INT(sl_syntax_check_commit(test_repo, &base, &cand, rep, &ok, &err), 0);
	return ok;
}

static const char c_ok[] = "int add(int a, int b)\n{\n\treturn a + b;\n}\n";

static void test_c_unbalanced_brace(void)
{
	sl_buf rep = SL_BUF_INIT;

	CHECK_INT(run("c", c_ok, "int add(int a, int b)\n{\n\treturn a + b;\n\nint sub(int a)\n{\n"
		      "\treturn -a;\n}\n", &rep), 0);
	CHECK(strstr(rep.buf, "the change adds syntax errors (base 0, candidate") != NULL);
	CHECK(strstr(rep.buf, "missing '}'") != NULL || strstr(rep.buf, "syntax error near") != NULL);
	CHECK_INT(run("c", c_ok, "int add(int a, int b)\n{\n\treturn (a + b;\n}\n", &rep), 0);
	CHECK(strstr(rep.buf, "3:") != NULL);        /* the line of the error */
	CHECK_INT(run("c", c_ok, "int add(int a, int b)\n{\n\treturn b + a;\n}\n", &rep), 1);
	CHECK_STR(rep.buf, "");
	sl_buf_release(&rep);
}

static void test_python_bad_indent(void)
{
	sl_buf rep = SL_BUF_INIT;
	const char *old_py = "def f(x):\n    y = x + 1\n    return y\n";

	CHECK_INT(run("python", old_py, "def f(x):\n    y = x + 1\n      return y\n", &rep), 0);
	CHECK(strstr(rep.buf, "3:") != NULL);
	CHECK_INT(run("python", old_py, "def f(x):\ny = x + 1\n    return y\n", &rep), 0);
	CHECK_INT(run("python", old_py, "def f(x):\n    y = x + 1\n  return y\n", &rep), 0);
	CHECK(strstr(rep.buf, "3:3: ") != NULL);
	CHECK_INT(run("python", old_py, "def f(x):\n    y = x + 2\n    # note\n    return y\n", &rep), 1);
	sl_buf_release(&rep);
}

static void test_existing_errors_do_not_block(void)
{
	sl_buf rep = SL_BUF_INIT;
	const char *broken = "int f(void)\n{\n\treturn (1;\n}\n";

	/* the base was already broken: a change that fixes nothing still passes */
	CHECK_INT(run("c", broken, "int f(void)\n{\n\treturn (2;\n}\n", &rep), 1);
	CHECK_INT(run("c", broken, c_ok, &rep), 1);
	/* a new file: compared with zero errors */
	CHECK_INT(run("c", NULL, broken, &rep), 0);
	CHECK(strstr(rep.buf, "base 0") != NULL);
	/* unknown or absent language: passes */
	CHECK_INT(run("cobol", c_ok, "}}}{{{", &rep), 1);
	CHECK_INT(run(NULL, c_ok, "}}}{{{", &rep), 1);
	sl_buf_release(&rep);
}

static void test_commit(void)
{
	git_oid base, good, bad;
	sl_buf rep = SL_BUF_INIT;
	sl_err err = SL_ERR_INIT;
	int ok = -1;
	const char *const b[] = { "a.c", c_ok, "b.py", "x = 1\n", "notes.txt", "{{{" };
	const char *const g[] = { "a.c", "int add(int a, int b)\n{\n\treturn b + a;\n}\n",
				  "b.py", "x = 2\n", "notes.txt", "}}}", "new.py", "y = 3\n" };
	const char *const k[] = { "a.c", c_ok, "b.py", "if x:\nreturn\n", "notes.txt", "{{{" };

	CHECK_INT(commit_files(&base, test_repo, b, 3), 0);
	CHECK_INT(commit_files(&good, test_repo, g, 4), 0);
	CHECK_INT(commit_files(&bad, test_repo, k, 3), 0);
	CHECK_INT(sl_syntax_check_commit(test_repo, &base, &good, &rep, &ok, &err), 0);
	CHECK_INT(ok, 1);
	CHECK_STR(rep.buf, "");
	CHECK_INT(sl_syntax_check_commit(test_repo, &base, &bad, &rep, &ok, &err), 0);
	CHECK_INT(ok, 0);
	CHECK(!strncmp(rep.buf, "src/b.py: the change adds syntax errors", 39));
	if (!strstr(rep.buf, "\nsrc/b.py:1:6: expected an indented block")) {
		fprintf(stderr, "report: %s\n", rep.buf);
		CHECK(!"report lacks the location");
	}
	sl_buf_release(&rep);
}

int main(void)
{
	char dir[] = "/tmp/sluice-test-syntax-XXXXXX";

	git_libgit2_init();
	if (!mkdtemp(dir) || git_repository_init(&test_repo, dir, 1)) {
		fprintf(stderr, "cannot create a repository\n");
		return 1;
	}
	RUN(test_c_unbalanced_brace);
	RUN(test_python_bad_indent);
	RUN(test_existing_errors_do_not_block);
	RUN(test_commit);
	git_repository_free(test_repo);
	sl_rm_rf(dir, NULL);
	git_libgit2_shutdown();
	return unit_done();
}
