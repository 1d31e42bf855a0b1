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

static int run(const char *lang, const char *old_text, const char *new_text, sl_buf *rep)
{
	sl_err err = SL_ERR_INIT;
	int ok = -1;

	sl_buf_reset(rep);
	CHECK_INT(sl_syntax_check(lang, old_text, old_text ? strlen(old_text) : 0, new_text,
				  strlen(new_text), rep, &ok, &err), 0);
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

static void test_commit(void)
{
	char dir[] = "/tmp/sluice-test-syntax-XXXXXX";
	git_repository *repo = NULL;
	git_oid base, good, bad;
	sl_buf rep = SL_BUF_INIT;
	sl_err err = SL_ERR_INIT;
	int ok = -1;
	const char *const b[] = { "a.c", c_ok, "b.py", "x = 1\n", "notes.txt", "{{{" };
	const char *const g[] = { "a.c", "int add(int a, int b)\n{\n\treturn b + a;\n}\n",
				  "b.py", "x = 2\n", "notes.txt", "}}}", "new.py", "y = 3\n" };
	const char *const k[] = { "a.c", c_ok, "b.py", "if x:\nreturn\n", "notes.txt", "{{{" };

	if (!mkdtemp(dir) || git_repository_init(&repo, dir, 1)) {
		CHECK(!"cannot create repository");
		return;
	}
	CHECK_INT(commit_files(&base, repo, b, 3), 0);
	CHECK_INT(commit_files(&good, repo, g, 4), 0);
	CHECK_INT(commit_files(&bad, repo, k, 3), 0);
	CHECK_INT(sl_syntax_check_commit(repo, &base, &good, &rep, &ok, &err), 0);
	CHECK_INT(ok, 1);
	CHECK_STR(rep.buf, "");
	CHECK_INT(sl_syntax_check_commit(repo, &base, &bad, &rep, &ok, &err), 0);
	CHECK_INT(ok, 0);
	CHECK(!strncmp(rep.buf, "src/b.py: the change adds syntax errors", 39));
	if (!strstr(rep.buf, "\nsrc/b.py:1:6: expected an indented block")) {
		fprintf(stderr, "report: %s\n", rep.buf);
		CHECK(!"report lacks the location");
	}
	git_repository_free(repo);
	sl_rm_rf(dir, NULL);
	sl_buf_release(&rep);
}

int main(void)
{
	git_libgit2_init();
	RUN(test_c_unbalanced_brace);
	RUN(test_python_bad_indent);
	RUN(test_existing_errors_do_not_block);
	RUN(test_commit);
	git_libgit2_shutdown();
	return unit_done();
}
