/*
 * apply-one.c - apply one model reply the way sluice does, for bench/apply.
 *
 *   apply-one BASE_DIR FORMAT REPLY OUT_DIR [GLOB...]
 *
 * Commits BASE_DIR (files, symlinks, subdirectories) to a bare repository
 * in a temporary directory, parses REPLY (FORMAT udiff | search-replace)
 * with sl_reply_parse, applies it with sl_apply_edits_ext (GLOBs as the
 * allowed paths) and, when it applies, writes the files the candidate
 * changes into OUT_DIR (which should hold a copy of BASE_DIR) and deletes
 * those it deletes.  Prints the apply report (JSON) or the refusal on
 * stdout.  Exit status: 0 applied, 1 refused (parse or apply), 3 error.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <git2.h>

#include "pipeline/apply/apply.h"
#include "pipeline/generate/edit.h"
#include "common/util.h"

/* The edit format named on the command line; 0 (unknown) makes the parse fail. */
static int format_of(const char *name)
{
	return !strcmp(name, "udiff") ? SL_FORMAT_UDIFF :
		!strcmp(name, "search-replace") ? SL_FORMAT_SEARCH_REPLACE : 0;
}

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
		int mode, bad;

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

static int write_out(git_repository *repo, const git_oid *base, const git_oid *cand,
		     const char *out_dir)
{
	git_commit *bc = NULL, *cc = NULL;
	git_tree *bt = NULL, *ct = NULL;
	git_diff *diff = NULL;
	int ret = -1;

	if (git_commit_lookup(&bc, repo, base) || git_commit_lookup(&cc, repo, cand) ||
	    git_commit_tree(&bt, bc) || git_commit_tree(&ct, cc) ||
	    git_diff_tree_to_tree(&diff, repo, bt, ct, NULL))
		goto done;
	for (size_t i = 0; i < git_diff_num_deltas(diff); i++) {
		const git_diff_delta *d = git_diff_get_delta(diff, i);
		char *p = sl_path_join(out_dir, d->new_file.path);
		git_blob *b = NULL;

		if (d->status == GIT_DELTA_DELETED) {
			unlink(p);
		} else {
			char *slash = strrchr(p, '/');

			*slash = '\0';
			sl_mkdir_p(p, 0755, NULL);
			*slash = '/';
			if (git_blob_lookup(&b, repo, &d->new_file.id) ||
			    sl_write_file(p, git_blob_rawcontent(b), (size_t)git_blob_rawsize(b), NULL)) {
				git_blob_free(b);
				free(p);
				goto done;
			}
			git_blob_free(b);
		}
		free(p);
	}
	ret = 0;
done:
	git_diff_free(diff);
	git_tree_free(bt);
	git_tree_free(ct);
	git_commit_free(bc);
	git_commit_free(cc);
	return ret;
}

int main(int argc, char **argv)
{
	char tmpl[] = "/tmp/sluice-apply-one-XXXXXX";
	git_repository *repo = NULL;
	git_signature *sig = NULL;
	git_tree *tree = NULL;
	git_oid t, base, cand;
	sl_buf reply = SL_BUF_INIT, json = SL_BUF_INIT;
	sl_edit_list edits = SL_EDIT_LIST_INIT;
	sl_apply_report rep = SL_APPLY_REPORT_INIT;
	sl_apply_opts ao = SL_APPLY_OPTS_INIT;
	sl_err err = SL_ERR_INIT;
	int ret = 3, rc;

	if (argc < 5) {
		fprintf(stderr, "usage: apply-one BASE_DIR FORMAT REPLY OUT_DIR [GLOB...]\n");
		return 2;
	}
	git_libgit2_init();
	git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, GIT_CONFIG_LEVEL_GLOBAL, "");
	git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, GIT_CONFIG_LEVEL_XDG, "");
	git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, GIT_CONFIG_LEVEL_SYSTEM, "");
	if (!mkdtemp(tmpl) || git_repository_init(&repo, tmpl, 1) ||
	    build_tree(&t, repo, argv[1]) || git_tree_lookup(&tree, repo, &t) ||
	    git_signature_now(&sig, "b", "b@example.com") ||
	    git_commit_create(&base, repo, NULL, sig, sig, NULL, "base", tree, 0, NULL) ||
	    sl_read_file(&reply, argv[3], 0, &err)) {
		fprintf(stderr, "apply-one: setup failed: %s %s\n", err.msg, sl_git_error());
		goto done;
	}
	ao.allowed_globs = argc > 5 ? (const char *const *)argv + 5 : NULL;
	ao.nglobs = argc > 5 ? (size_t)(argc - 5) : 0;
	if (sl_reply_parse(&edits, reply.buf, reply.len, format_of(argv[2]), &err)) {
		printf("parse error: %s\n", err.msg);
		ret = 1;
		goto done;
	}
	rc = sl_apply_edits_ext(&cand, NULL, repo, &base, &edits, "candidate", &ao, &rep, &err);
	sl_apply_report_json(&json, &rep);
	printf("%s\n", json.buf);
	if (rc == SL_EREFUSED) {
		printf("refused: %s\n", err.msg);
		ret = 1;
	} else if (rc) {
		fprintf(stderr, "apply-one: %s\n", err.msg);
	} else {
		ret = write_out(repo, &base, &cand, argv[4]) ? 3 : 0;
	}
done:
	sl_apply_report_release(&rep);
	sl_edit_list_release(&edits);
	sl_buf_release(&reply);
	sl_buf_release(&json);
	git_tree_free(tree);
	git_signature_free(sig);
	git_repository_free(repo);
	sl_rm_rf(tmpl, NULL);
	git_libgit2_shutdown();
	return ret;
}
