/*
 * test_cgroup.c - jails' control groups (validators/cgroup.h) on this
 * machine's real cgroup file systems: a finished jail's empty group is kept
 * and handed to the next one with the same limits; a group that still holds
 * a process, whose memory limit killed one, or that is charged for files on
 * the host's tmpfs, is never handed out again.
 *
 * A group is told apart by the inode of its directory (a new directory gets
 * a new inode number while the old one is still open), read through
 * sl_cgroup_v2_fd(), so these tests need a v2 group and skip without one.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "unit.h"
#include "validators/cgroup.h"

#define MB (1024ull * 1024)

/* The v2 directory of cg, open (the caller closes it), or -1. */
static int group_dir(const sl_cgroup *cg, struct stat *st)
{
	int fd = sl_cgroup_v2_fd(cg);

	if (fd >= 0 && fstat(fd, st)) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* A child moved into cg (every hierarchy) before it runs what(); its pid, or -1. */
static pid_t child_in(sl_cgroup *cg, void (*what)(void))
{
	int p[2];
	pid_t pid;
	char c;

	if (pipe(p))
		return -1;
	if ((pid = fork()) == 0) {
		close(p[1]);
		if (read(p[0], &c, 1) == 1)
			what();
		_exit(0);
	}
	close(p[0]);
	if (pid > 0 && sl_cgroup_add(cg, pid, 0)) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		pid = -1;
	}
	if (pid > 0 && write(p[1], "x", 1) != 1)
		pid = -1;
	close(p[1]);
	return pid;
}

/* After old (whose directory was *was) is freed: the next group with these limits is new. */
static void check_not_kept(uint64_t mem, unsigned pids, const struct stat *was)
{
	unsigned l = 0;
	sl_cgroup *b = sl_cgroup_new(mem, pids, 0, &l);
	struct stat sb;
	int fb = -1;

	CHECK(b != NULL);
	if (b && (fb = group_dir(b, &sb)) >= 0)
		CHECK(sb.st_ino != was->st_ino);
	CHECK(fb >= 0);
	CHECK_INT(sl_cgroup_oom(b), 0);
	sl_cgroup_free(b);
	if (fb >= 0)
		close(fb);
}

static void sleep_long(void)
{
	sleep(30);
}

static void eat_memory(void)
{
	size_t n = 512 * MB;
	char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		_exit(3);
	for (size_t i = 0; i < n; i += 4096)
		p[i] = 1;
	_exit(0);
}

static void test_reused_with_same_limits(void)
{
	unsigned l1 = 0, l2 = 0, l3 = 0;
	sl_cgroup *a = sl_cgroup_new(96 * MB, 33, 0, &l1), *b = NULL, *c = NULL;
	struct stat sa, sb, sc;
	int fa = -1, fb = -1, fc = -1;

	if (!a || (fa = group_dir(a, &sa)) < 0) {
		sl_cgroup_free(a);
		SKIP("no v2 cgroup for this user");
	}
	sl_cgroup_free(a);
	b = sl_cgroup_new(96 * MB, 33, 0, &l2);
	CHECK(b != NULL);
	if (b && (fb = group_dir(b, &sb)) >= 0)
		CHECK_INT(sb.st_ino, sa.st_ino);
	CHECK(fb >= 0);
	CHECK_INT(l2, l1);
	/* other limits: another group, while b is in use */
	c = sl_cgroup_new(64 * MB, 33, 0, &l3);
	CHECK(c != NULL);
	if (c && (fc = group_dir(c, &sc)) >= 0)
		CHECK(sc.st_ino != sa.st_ino);
	CHECK(fc >= 0);
	sl_cgroup_free(b);
	sl_cgroup_free(c);
	if (fa >= 0)
		close(fa);
	if (fb >= 0)
		close(fb);
	if (fc >= 0)
		close(fc);
}

/* a file on the host's tmpfs, written by a process of the group */
static char shm_file[64];

static void fill_shm(void)
{
	static char block[1 << 16];
	int fd = open(shm_file, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	memset(block, 'x', sizeof(block));
	for (int i = 0; fd >= 0 && i < 64; i++)
		if (write(fd, block, sizeof(block)) != (ssize_t)sizeof(block))
			_exit(3);
	_exit(fd < 0 ? 3 : 0);
}

enum how { BUSY, OOM, SHMEM };

/*
 * A group whose process was still running when the group was freed (BUSY:
 * the free must kill it), died of the memory limit (OOM), or exited after
 * leaving 4 MiB on the host's tmpfs (SHMEM).  No such group is kept.
 */
static void freed_not_kept(uint64_t mem, unsigned pids, enum how how)
{
	static void (*const what[])(void) = { sleep_long, eat_memory, fill_shm };
	unsigned l = 0;
	sl_cgroup *a = sl_cgroup_new(mem, pids, 0, &l);
	struct stat sa;
	int fa = -1, st = 0;
	pid_t pid;

	if (!a || (how != BUSY && !(l & SL_CG_MEMORY)) || (fa = group_dir(a, &sa)) < 0) {
		sl_cgroup_free(a);
		SKIP("no v2 cgroup (and memory limit) for this user");
	}
	snprintf(shm_file, sizeof(shm_file), "/dev/shm/sluice-test-cgroup-%d", (int)getpid());
	pid = child_in(a, what[how]);
	CHECK(pid > 0);
	if (how == BUSY)
		sl_cgroup_free(a);
	if (pid > 0) {
		CHECK_INT(waitpid(pid, &st, 0), pid);
		if (how == SHMEM)
			CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		else
			CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	}
	if (how != BUSY) {
		CHECK_INT(sl_cgroup_oom(a), how == OOM);
		sl_cgroup_free(a);
	}
	check_not_kept(mem, pids, &sa);
	unlink(shm_file);
	close(fa);
}

static void test_busy_group_killed_not_kept(void)
{
	freed_not_kept(128 * MB, 34, BUSY);
}

static void test_oom_group_not_kept(void)
{
	freed_not_kept(48 * MB, 35, OOM);
}

static void test_shmem_group_not_kept(void)
{
	struct stat st;

	if (stat("/dev/shm", &st) || access("/dev/shm", W_OK))
		SKIP("no writable /dev/shm");
	freed_not_kept(256 * MB, 36, SHMEM);
}

/* A forked child never takes its parent's kept groups; the parent still has them. */
static void test_forked_child_makes_its_own(void)
{
	unsigned l = 0;
	sl_cgroup *a = sl_cgroup_new(80 * MB, 37, 0, &l), *c = NULL;
	struct stat sa, sc;
	int fa = -1, fc = -1, st = 0;
	pid_t pid;

	if (!a || (fa = group_dir(a, &sa)) < 0) {
		sl_cgroup_free(a);
		SKIP("no v2 cgroup for this user");
	}
	sl_cgroup_free(a);
	pid = fork();
	if (pid == 0) {
		sl_cgroup *b = sl_cgroup_new(80 * MB, 37, 0, &l);
		struct stat sb;
		int fb = b ? group_dir(b, &sb) : -1;

		_exit(fb < 0 ? 2 : sb.st_ino == sa.st_ino);
	}
	CHECK(pid > 0);
	if (pid > 0) {
		CHECK_INT(waitpid(pid, &st, 0), pid);
		CHECK(WIFEXITED(st));
		CHECK_INT(WEXITSTATUS(st), 0);
	}
	c = sl_cgroup_new(80 * MB, 37, 0, &l);
	if (c && (fc = group_dir(c, &sc)) >= 0)
		CHECK_INT(sc.st_ino, sa.st_ino);
	CHECK(fc >= 0);
	sl_cgroup_free(c);
	close(fa);
	if (fc >= 0)
		close(fc);
}

int main(void)
{
	RUN(test_reused_with_same_limits);
	RUN(test_busy_group_killed_not_kept);
	RUN(test_oom_group_not_kept);
	RUN(test_shmem_group_not_kept);
	RUN(test_forked_child_makes_its_own);
	return unit_done();
}
