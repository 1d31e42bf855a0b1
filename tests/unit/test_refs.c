/*
 * test_refs.c - candidate branches in packed-refs (refs.c): written and
 * deleted in one rewrite, compare and swap, the lock a crashed sluice left;
 * branch names made from long paths, bounded; who made a branch (the
 * Sluice-Store trailer of its commit); a pack built without reading refs.
 * Each test works in a fresh repository made with libgit2 in a temporary
 * directory.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <git2.h>

#include "unit.h"
#include "pipeline/apply/apply.h"
#include "common/util.h"

static char dir[] = "/tmp/sluice-test-refs-XXXXXX";

/* A fresh repository NAME with two commits, c[0] and c[1]. */
static git_repository *fresh(const char *name, git_oid c[2])
{
	char *p = sl_path_join(dir, name);
	git_repository *repo = NULL;
	git_treebuilder *tb = NULL;
	git_signature *sig = NULL;
	git_tree *tree = NULL;
	git_oid t;

	CHECK_INT(git_repository_init(&repo, p, 1), 0);
	free(p);
	CHECK_INT(git_treebuilder_new(&tb, repo, NULL), 0);
	CHECK_INT(git_treebuilder_write(&t, tb), 0);
	CHECK_INT(git_tree_lookup(&tree, repo, &t), 0);
	CHECK_INT(git_signature_new(&sig, "t", "t@example.com", 1, 0), 0);
	CHECK_INT(git_commit_create_v(&c[0], repo, NULL, sig, sig, NULL, "one", tree, 0), 0);
	CHECK_INT(git_commit_create_v(&c[1], repo, NULL, sig, sig, NULL, "two", tree, 0), 0);
	git_signature_free(sig);
	git_tree_free(tree);
	git_treebuilder_free(tb);
	return repo;
}

/* What refs/heads/BRANCH points at: 1 with *out, 0 when it does not exist. */
static int at(git_repository *repo, const char *branch, git_oid *out)
{
	git_reference *ref = NULL;
	int found = !git_branch_lookup(&ref, repo, branch, GIT_BRANCH_LOCAL);

	if (found)
		git_oid_cpy(out, git_reference_target(ref));
	git_reference_free(ref);
	return found;
}

static char *git_path(git_repository *repo, const char *rel)
{
	return sl_path_join(git_repository_commondir(repo), rel);
}

static void test_write_compare_and_swap(void)
{
	git_oid c[2], got, commits[3];
	git_repository *repo = fresh("write", c);
	char *names[3] = { "sluice/x/a", "sluice/x/b", "sluice/x/c" };
	char *loose = git_path(repo, "refs/heads/sluice/x/a");
	sl_err err = SL_ERR_INIT;

	commits[0] = commits[1] = commits[2] = c[0];
	CHECK_INT(sl_branches_write_packed(repo, names, commits, 2, NULL), 0);
	CHECK(at(repo, "sluice/x/a", &got) && git_oid_equal(&got, &c[0]));
	CHECK(access(loose, F_OK) && errno == ENOENT);
	/* a written again at the same commit: fine; moved elsewhere: refused, c still written */
	CHECK_INT(sl_branches_write_packed(repo, names, commits, 1, NULL), 0);
	commits[0] = c[1];
	CHECK_INT(sl_branches_write_packed(repo, names, commits, 3, &err), SL_ELEASE);
	CHECK(strstr(err.msg, "sluice/x/a") != NULL);
	CHECK(at(repo, "sluice/x/a", &got) && git_oid_equal(&got, &c[0]));
	CHECK(at(repo, "sluice/x/c", &got) && git_oid_equal(&got, &c[0]));
	/* a loose ref at another commit hides the packed one: refused as well */
	CHECK_INT(git_reference_create(NULL, repo, "refs/heads/sluice/x/d", &c[1], 0, NULL), 0);
	names[0] = "sluice/x/d";
	commits[0] = c[0];
	CHECK_INT(sl_branches_write_packed(repo, names, commits, 1, NULL), SL_ELEASE);
	CHECK(at(repo, "sluice/x/d", &got) && git_oid_equal(&got, &c[1]));
	free(loose);
	git_repository_free(repo);
}

static void test_delete_in_one_rewrite(void)
{
	git_oid c[2], got, *commits = NULL, expected[2];
	git_repository *repo = fresh("delete", c);
	sl_strvec names = SL_STRVEC_INIT;
	char *packed = git_path(repo, "packed-refs"), *two[2];
	sl_buf text = SL_BUF_INIT;
	size_t n = 0;

	commits = sl_xcalloc(500, sizeof(*commits));
	for (int i = 0; i < 500; i++) {
		char name[64];

		snprintf(name, sizeof(name), "sluice/x/t%03d", i);
		sl_strvec_push(&names, name);
		commits[i] = c[0];
	}
	CHECK_INT(sl_branches_write_packed(repo, names.v, commits, names.n, NULL), 0);
	/* a loose one too, at the same commit, and one moved since it was listed */
	CHECK_INT(git_reference_create(NULL, repo, "refs/heads/sluice/x/t001", &c[0], 1, NULL), 0);
	CHECK_INT(git_reference_create(NULL, repo, "refs/heads/sluice/x/t002", &c[1], 1, NULL), 0);
	CHECK_INT(sl_branches_delete_packed(repo, names.v, commits, names.n, &n, NULL), 0);
	CHECK_INT(n, 499);
	CHECK(!at(repo, "sluice/x/t000", &got));
	CHECK(!at(repo, "sluice/x/t001", &got));
	CHECK(at(repo, "sluice/x/t002", &got) && git_oid_equal(&got, &c[1]));
	CHECK_INT(sl_read_file(&text, packed, 0, NULL), 0);
	CHECK(strstr(text.buf, "sluice/x/t499") == NULL);
	CHECK(strstr(text.buf, "# pack-refs") == text.buf);
	/* expected NULL: whatever it points at; a missing one is no error */
	two[0] = "sluice/x/t002";
	two[1] = "sluice/x/none";
	expected[0] = expected[1] = c[0];
	CHECK_INT(sl_branches_delete_packed(repo, two, expected, 2, &n, NULL), 0);
	CHECK_INT(n, 0);
	CHECK_INT(sl_branches_delete_packed(repo, two, NULL, 2, &n, NULL), 0);
	CHECK_INT(n, 1);
	CHECK(!at(repo, "sluice/x/t002", &got));
	sl_buf_release(&text);
	sl_strvec_release(&names);
	free(commits);
	free(packed);
	git_repository_free(repo);
}

static void test_delete_matching(void)
{
	git_oid c[2], got;
	git_repository *repo = fresh("matching", c);

	CHECK_INT(git_reference_create(NULL, repo, "refs/heads/sluice/x/a", &c[1], 0, NULL), 0);
	CHECK_INT(sl_branch_delete_matching(repo, "sluice/x/a", &c[0], NULL), 0);
	CHECK(at(repo, "sluice/x/a", &got) && git_oid_equal(&got, &c[1]));
	CHECK_INT(sl_branch_delete_matching(repo, "sluice/x/a", &c[1], NULL), 0);
	CHECK(!at(repo, "sluice/x/a", &got));
	CHECK_INT(sl_branch_delete_matching(repo, "sluice/x/a", &c[1], NULL), 0);
	git_repository_free(repo);
}

/*
 * A sorted packed-refs is searched by its lines: the first, the last, one
 * between, names that sort before, between and after them, a peeled tag's
 * "^" line in the middle, and a file without its last newline.
 */
static void test_sorted_lookup(void)
{
	git_oid c[2], got;
	git_repository *repo = fresh("sorted", c);
	char *packed = git_path(repo, "packed-refs"), hex[2][GIT_OID_HEXSZ + 1];
	sl_buf text = SL_BUF_INIT;
	FILE *fp;

	git_oid_tostr(hex[0], sizeof(hex[0]), &c[0]);
	git_oid_tostr(hex[1], sizeof(hex[1]), &c[1]);
	sl_buf_adds(&text, "# pack-refs with: peeled fully-peeled sorted \n");
	for (int i = 0; i < 300; i++) {
		sl_buf_addf(&text, "%s refs/heads/b%03d\n", hex[i % 2], i * 2);
		if (i == 150)
			sl_buf_addf(&text, "^%s\n", hex[0]);
	}
	text.len--;                 /* no newline at the end */
	text.buf[text.len] = '\0';
	CHECK((fp = fopen(packed, "w")) != NULL);
	fputs(text.buf, fp);
	fclose(fp);
	CHECK_INT(sl_branch_target(&got, repo, "b000"), 0);
	CHECK(git_oid_equal(&got, &c[0]));
	CHECK_INT(sl_branch_target(&got, repo, "b598"), 0);
	CHECK(git_oid_equal(&got, &c[1]));
	CHECK_INT(sl_branch_target(&got, repo, "b301"), GIT_ENOTFOUND);
	CHECK_INT(sl_branch_target(&got, repo, "b302"), 0);
	CHECK(git_oid_equal(&got, &c[1]));
	CHECK_INT(sl_branch_target(&got, repo, "b300"), 0);
	CHECK(git_oid_equal(&got, &c[0]));
	CHECK_INT(sl_branch_target(&got, repo, "a"), GIT_ENOTFOUND);
	CHECK_INT(sl_branch_target(&got, repo, "c"), GIT_ENOTFOUND);
	CHECK_INT(sl_branch_target(&got, repo, "b5990"), GIT_ENOTFOUND);
	/* a rewrite keeps every line and the peel, and adds the new one in order */
	{
		char *name = "b301";

		CHECK_INT(sl_branches_write_packed(repo, &name, &c[0], 1, NULL), 0);
	}
	CHECK_INT(sl_branch_target(&got, repo, "b301"), 0);
	CHECK(git_oid_equal(&got, &c[0]));
	CHECK(at(repo, "b598", &got) && git_oid_equal(&got, &c[1]));
	CHECK(at(repo, "b300", &got) && git_oid_equal(&got, &c[0]));
	sl_buf_reset(&text);
	CHECK_INT(sl_read_file(&text, packed, 0, NULL), 0);
	CHECK(strstr(text.buf, "refs/heads/b300\n^") != NULL);
	CHECK(strstr(text.buf, "refs/heads/b300\n^") < strstr(text.buf, "refs/heads/b301\n"));
	CHECK(strstr(text.buf, "refs/heads/b301\n") < strstr(text.buf, "refs/heads/b302\n"));
	sl_buf_release(&text);
	free(packed);
	git_repository_free(repo);
}

/* A pid that is surely gone: a child that exited and was reaped. */
static long dead_pid(void)
{
	pid_t p = fork();

	if (!p)
		_exit(0);
	waitpid(p, NULL, 0);
	return (long)p;
}

/* A packed-refs.lock with the note a sluice process pid would have left. */
static void plant_lock(git_repository *repo, long pid, int with_note)
{
	char *lock = git_path(repo, "packed-refs.lock"), *note = git_path(repo,
		"packed-refs.sluice-lock"), host[256] = "";
	struct stat sb;
	FILE *f = fopen(lock, "w");

	CHECK(f != NULL);
	if (f)
		fclose(f);
	CHECK_INT(stat(lock, &sb), 0);
	CHECK_INT(gethostname(host, sizeof(host) - 1), 0);
	f = fopen(note, "w");
	CHECK(f != NULL);
	if (f && with_note)
		fprintf(f, "%s %ld %llu\n", host, pid, (unsigned long long)sb.st_ino);
	if (f)
		fclose(f);
	free(lock);
	free(note);
}

static void test_stale_lock(void)
{
	git_oid c[2], got;
	git_repository *repo = fresh("lock", c);
	char *names[1] = { "sluice/x/a" };
	char *lock = git_path(repo, "packed-refs.lock");
	sl_err err = SL_ERR_INIT;
	long pid = 0, gone = dead_pid();

	/* a crashed sluice's lock: writers break it, and so does the check */
	plant_lock(repo, gone, 1);
	CHECK_INT(sl_branches_write_packed(repo, names, c, 1, NULL), 0);
	CHECK(at(repo, "sluice/x/a", &got));
	CHECK(access(lock, F_OK) && errno == ENOENT);
	plant_lock(repo, gone, 1);
	CHECK_INT(sl_packed_lock_check(repo, &pid, NULL), 0);
	CHECK_INT(pid, gone);
	CHECK(access(lock, F_OK) && errno == ENOENT);
	/* a live process's lock, or one with no note (git's): left, with what to do */
	plant_lock(repo, (long)getpid(), 1);
	CHECK_INT(sl_packed_lock_check(repo, &pid, &err), SL_EREFUSED);
	CHECK(strstr(err.msg, "remove") != NULL);
	CHECK_INT(access(lock, F_OK), 0);
	unlink(lock);
	plant_lock(repo, gone, 0);
	sl_err_clear(&err);
	CHECK_INT(sl_packed_lock_check(repo, &pid, &err), SL_EREFUSED);
	CHECK_INT(access(lock, F_OK), 0);
	/* no lock: nothing to do */
	unlink(lock);
	CHECK_INT(sl_packed_lock_check(repo, &pid, NULL), 0);
	CHECK_INT(pid, 0);
	free(lock);
	git_repository_free(repo);
}

/* name with its part after from bounded to max; the result, which the caller frees */
static char *bound(const char *name, size_t from, size_t max)
{
	sl_buf b = SL_BUF_INIT;

	sl_buf_adds(&b, name);
	sl_ref_name_bound(&b, from, max, name);
	return sl_buf_detach(&b, NULL);
}

static int valid_branch(const char *name)
{
	sl_buf ref = SL_BUF_INIT;
	int valid = 0;

	sl_buf_addf(&ref, "refs/heads/%s", name);
	if (git_reference_name_is_valid(&valid, ref.buf))
		valid = 0;
	sl_buf_release(&ref);
	return valid;
}

static void test_name_bound(void)
{
	char comp[301], *a, *b, *c;
	sl_buf long_a = SL_BUF_INIT, long_b = SL_BUF_INIT;

	memset(comp, 'd', 300);
	comp[300] = '\0';
	a = bound("p/review/file/a.c", 2, SL_REF_NAME_MAX);
	CHECK_STR(a, "p/review/file/a.c");
	free(a);

	/* one long component, two names that differ only at their end */
	sl_buf_addf(&long_a, "p/%s-a", comp);
	sl_buf_addf(&long_b, "p/%s-b", comp);
	a = bound(long_a.buf, 2, SL_REF_NAME_MAX);
	b = bound(long_b.buf, 2, SL_REF_NAME_MAX);
	CHECK(strlen(a) == 2 + SL_REF_COMPONENT_MAX);
	CHECK(!strncmp(a, "p/ddd", 5));
	CHECK(strcmp(a, b));
	CHECK(valid_branch(a) && valid_branch(b));
	free(a);
	free(b);

	/* many short components: the whole is bounded, no component cut to '/' or '.' */
	sl_buf_reset(&long_a);
	sl_buf_adds(&long_a, "p");
	for (int i = 0; i < 200; i++)
		sl_buf_adds(&long_a, "/d.");
	sl_buf_adds(&long_a, "/x");
	c = bound(long_a.buf, 2, 100);
	CHECK(strlen(c) <= 100);
	CHECK(valid_branch(c));
	free(c);
	sl_buf_release(&long_a);
	sl_buf_release(&long_b);
}

/* A commit on c[0] whose message is msg. */
static void commit_with(git_oid *out, git_repository *repo, const char *msg)
{
	git_signature *sig = NULL;
	git_commit *parent = NULL;
	git_tree *tree = NULL;
	git_oid c[2];

	CHECK_INT(git_reference_name_to_id(&c[0], repo, "refs/heads/base"), 0);
	CHECK_INT(git_commit_lookup(&parent, repo, &c[0]), 0);
	CHECK_INT(git_commit_tree(&tree, parent), 0);
	CHECK_INT(git_signature_new(&sig, "t", "t@example.com", 1, 0), 0);
	CHECK_INT(git_commit_create_v(out, repo, NULL, sig, sig, NULL, msg, tree, 1, parent), 0);
	git_signature_free(sig);
	git_tree_free(tree);
	git_commit_free(parent);
}

static void test_holder(void)
{
	git_oid c[2], mine, other, prefix_only, got;
	git_repository *repo = fresh("holder", c);
	git_reference *ref = NULL;
	char *names[3] = { "sluice/h/mine", "sluice/h/other", "sluice/h/prefix" };
	git_oid commits[3];

	CHECK_INT(git_reference_create(&ref, repo, "refs/heads/base", &c[0], 0, NULL), 0);
	git_reference_free(ref);
	commit_with(&mine, repo, "s\n\nTarget: a.c:1-2\nSluice-Store: 0123456789abcdef/1\n");
	commit_with(&other, repo, "s\n\nSluice-Store: fedcba9876543210/1\n");
	/* the tag must be the whole line: one store's id is not another's prefix */
	commit_with(&prefix_only, repo, "s\n\nSluice-Store: 0123456789abcdef/12\n");
	commits[0] = mine;
	commits[1] = other;
	commits[2] = prefix_only;
	CHECK_INT(sl_branches_write_packed(repo, names, commits, 3, NULL), 0);
	CHECK_INT(sl_branch_holder(repo, "sluice/h/mine", "0123456789abcdef/1", &got),
		  SL_HOLDER_MINE);
	CHECK(git_oid_equal(&got, &mine));
	CHECK_INT(sl_branch_holder(repo, "sluice/h/other", "0123456789abcdef/1", NULL),
		  SL_HOLDER_OTHER);
	CHECK_INT(sl_branch_holder(repo, "sluice/h/prefix", "0123456789abcdef/1", NULL),
		  SL_HOLDER_OTHER);
	/* no trailer (a user's commit, an older sluice's): never proven ours */
	CHECK_INT(sl_branch_holder(repo, "base", "0123456789abcdef/1", NULL), SL_HOLDER_OTHER);
	CHECK_INT(sl_branch_holder(repo, "sluice/h/none", "0123456789abcdef/1", NULL),
		  SL_HOLDER_NONE);
	git_repository_free(repo);
}

/*
 * sl_pack_objects builds its pack without reading refs: with a packed-refs
 * file libgit2 cannot parse, the packbuilder (git_tag_foreach) fails, yet
 * the pack is made, indexes both commits, and the repository's own refs
 * are back in place after it.
 */
static void test_pack_without_refs(void)
{
	git_oid c[2], found;
	git_repository *repo = fresh("pack", c);
	git_buf pack = { 0 };
	git_indexer *idx = NULL;
	git_indexer_progress prog;
	git_reference *ref = NULL;
	char *packed = git_path(repo, "packed-refs");
	char *pdir = git_path(repo, "objects/pack");
	FILE *f = fopen(packed, "w");

	CHECK(f != NULL);
	fputs("# pack-refs with: peeled fully-peeled sorted \nnot a ref line\n", f);
	fclose(f);
	CHECK(git_reference_name_to_id(&found, repo, "refs/heads/x") < 0);
	CHECK_INT(sl_pack_objects(&pack, repo, c, 2), 0);
	CHECK(pack.size > 32 && !memcmp(pack.ptr, "PACK", 4));
	memset(&prog, 0, sizeof(prog));
	CHECK_INT(git_indexer_new(&idx, pdir, 0, NULL, NULL), 0);
	CHECK_INT(git_indexer_append(idx, pack.ptr, pack.size, &prog), 0);
	CHECK_INT(git_indexer_commit(idx, &prog), 0);
	CHECK_INT(prog.indexed_objects, 2);
	/* the repository's refs database is its own again */
	f = fopen(packed, "w");
	CHECK(f != NULL);
	fprintf(f, "# pack-refs with: peeled fully-peeled sorted \n%s refs/heads/x\n",
		git_oid_tostr_s(&c[1]));
	fclose(f);
	CHECK_INT(git_reference_lookup(&ref, repo, "refs/heads/x"), 0);
	CHECK(git_oid_equal(git_reference_target(ref), &c[1]));
	git_reference_free(ref);
	git_indexer_free(idx);
	git_buf_dispose(&pack);
	free(packed);
	free(pdir);
	git_repository_free(repo);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	git_libgit2_init();
	RUN(test_write_compare_and_swap);
	RUN(test_delete_in_one_rewrite);
	RUN(test_delete_matching);
	RUN(test_sorted_lookup);
	RUN(test_stale_lock);
	RUN(test_name_bound);
	RUN(test_holder);
	RUN(test_pack_without_refs);
	git_libgit2_shutdown();
	sl_rm_rf(dir, NULL);
	return unit_done();
}
