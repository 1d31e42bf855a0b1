/*
 * fuzz_apply.c - placement of a model's edits (pipeline/apply.c): every
 * input is parsed as a unified diff and as search/replace blocks and each
 * parse that succeeds is applied to a small base tree (CRLF, no final
 * newline, a symlink, a binary file) held in a libgit2 in-memory object
 * database, emptied after every input.  Applying either commits or refuses.
 */
#include <git2.h>
#include <git2/sys/mempack.h>
#include <git2/sys/repository.h>

#include "pipeline/apply/apply.h"
#include "pipeline/generate/edit.h"
#include "fuzz.h"

int sl_fuzz_apply(const uint8_t *data, size_t size);

static const struct { const char *path; const char *text; size_t len; int mode; } fuzz_apply_base[] = {
	{ "src/calc.c", "#include \"calc.h\"\n\nint add(int a, int b)\n{\n\treturn a + b;\n}\n\n"
	  "int old_api(int x)\n{\n\treturn x;\n}\n\nint f(void)\n{\n\treturn old_api(1);\n}\n",
	  0, GIT_FILEMODE_BLOB },
	{ "src/crlf.c", "int g(void)\r\n{\r\n\treturn old_api(2);\r\n}\r\n", 0, GIT_FILEMODE_BLOB },
	{ "src/nonl.txt", "first\nlast", 0, GIT_FILEMODE_BLOB },
	{ "src/trail.c", "int h(void)  \n{\t\n\treturn 3;   \n}\n", 0, GIT_FILEMODE_BLOB },
	{ "data.bin", "\x7f" "ELF\0\1\2\3", 8, GIT_FILEMODE_BLOB },
	{ "link", "src", 0, GIT_FILEMODE_LINK },
	{ "lib/util.py", "def f(x):\n    return old_api(x)\n", 0, GIT_FILEMODE_BLOB },
};

static git_repository *fuzz_apply_repo;
static git_odb_backend *fuzz_apply_pack;

/* A tree of the base files (paths with one directory at most), committed. */
static int fuzz_apply_commit(git_oid *out)
{
	git_treebuilder *root = NULL, *sub = NULL;
	git_signature *sig = NULL;
	git_tree *tree = NULL;
	git_oid oid, tree_oid;
	const char *dirs[] = { "src", "lib" };
	int ret = -1;

	if (git_treebuilder_new(&root, fuzz_apply_repo, NULL))
		goto done;
	for (size_t d = 0; d < 2; d++) {
		size_t dl = strlen(dirs[d]);

		if (git_treebuilder_new(&sub, fuzz_apply_repo, NULL))
			goto done;
		for (size_t i = 0; i < sizeof(fuzz_apply_base) / sizeof(fuzz_apply_base[0]); i++) {
			const char *p = fuzz_apply_base[i].path;
			size_t len = fuzz_apply_base[i].len ? fuzz_apply_base[i].len
							     : strlen(fuzz_apply_base[i].text);

			if (strncmp(p, dirs[d], dl) || p[dl] != '/')
				continue;
			if (git_blob_create_from_buffer(&oid, fuzz_apply_repo, fuzz_apply_base[i].text, len) ||
			    git_treebuilder_insert(NULL, sub, p + dl + 1, &oid, fuzz_apply_base[i].mode))
				goto done;
		}
		if (git_treebuilder_write(&oid, sub) ||
		    git_treebuilder_insert(NULL, root, dirs[d], &oid, GIT_FILEMODE_TREE))
			goto done;
		git_treebuilder_free(sub);
		sub = NULL;
	}
	for (size_t i = 0; i < sizeof(fuzz_apply_base) / sizeof(fuzz_apply_base[0]); i++) {
		const char *p = fuzz_apply_base[i].path;
		size_t len = fuzz_apply_base[i].len ? fuzz_apply_base[i].len
						     : strlen(fuzz_apply_base[i].text);

		if (strchr(p, '/'))
			continue;
		if (git_blob_create_from_buffer(&oid, fuzz_apply_repo, fuzz_apply_base[i].text, len) ||
		    git_treebuilder_insert(NULL, root, p, &oid, fuzz_apply_base[i].mode))
			goto done;
	}
	if (git_treebuilder_write(&tree_oid, root) ||
	    git_tree_lookup(&tree, fuzz_apply_repo, &tree_oid) ||
	    git_signature_new(&sig, "fuzz", "fuzz@localhost", 0, 0) ||
	    git_commit_create(out, fuzz_apply_repo, NULL, sig, sig, NULL, "base", tree, 0, NULL))
		goto done;
	ret = 0;
done:
	git_signature_free(sig);
	git_tree_free(tree);
	git_treebuilder_free(sub);
	git_treebuilder_free(root);
	return ret;
}

static int fuzz_apply_init(void)
{
	git_odb *odb = NULL;
	int ret = -1;

	if (fuzz_apply_repo)
		return 0;
	git_libgit2_init();
	if (git_odb_new(&odb) || git_mempack_new(&fuzz_apply_pack) ||
	    git_odb_add_backend(odb, fuzz_apply_pack, 1000) ||
	    git_repository_wrap_odb(&fuzz_apply_repo, odb))
		goto done;
	ret = 0;
done:
	git_odb_free(odb);
	return ret;
}

int sl_fuzz_apply(const uint8_t *data, size_t size)
{
	static const int formats[] = { SL_FORMAT_UDIFF, SL_FORMAT_SEARCH_REPLACE };
	const char *globs[] = { "src/**", "*.py", "lib/**" };
	git_oid base, commit;

	FUZZ_CHECK(fuzz_apply_init() == 0);
	if (!fuzz_apply_repo)
		return 0;
	FUZZ_CHECK(fuzz_apply_commit(&base) == 0);
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		sl_edit_list edits = SL_EDIT_LIST_INIT;
		sl_apply_opts opts = SL_APPLY_OPTS_INIT;
		sl_apply_report report;
		sl_buf diff = SL_BUF_INIT, json = SL_BUF_INIT;
		sl_err err = SL_ERR_INIT;
		int rc;

		memset(&report, 0, sizeof(report));
		if (sl_reply_parse(&edits, (const char *)data, size, formats[i], &err) || !edits.n) {
			sl_edit_list_release(&edits);
			continue;
		}
		opts.allowed_globs = globs;
		opts.nglobs = i ? 3 : 0;
		rc = sl_apply_edits_ext(&commit, &diff, fuzz_apply_repo, &base, &edits, "fuzz",
					&opts, &report, &err);
		if (rc && rc != SL_EREFUSED)
			fprintf(stderr, "apply: %d: %s\n", rc, err.msg);
		FUZZ_CHECK(rc == 0 || rc == SL_EREFUSED);
		sl_apply_report_json(&json, &report);
		sl_apply_report_release(&report);
		sl_buf_release(&json);
		sl_buf_release(&diff);
		sl_edit_list_release(&edits);
	}
	git_mempack_reset(fuzz_apply_pack);
	return 0;
}
SL_FUZZ_MAIN(sl_fuzz_apply)
