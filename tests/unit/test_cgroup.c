/*
 * test_cgroup.c - jails' control groups (validators/cgroup.h) on this
 * machine's real cgroup file systems: a finished jail's empty group is kept
 * and handed to the next one with the same limits; a group that still holds
 * a process, or whose memory limit killed one, is never handed out again.
 *
 * A group is told apart by the inode of its directory (a new directory gets
 * a new inode number while the old one is still open), read through
 * sl_cgroup_v2_fd(), so these tests need a v2 group and skip without one.
 */
#include <errno.h>
#include <signal.h>
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

/*
 * A group whose process ran what(): freed while the process runs (busy: the
 * free must kill it), or after the process died of the memory limit (oom).
 * Either way the group is not kept.
 */
static void freed_not_kept(uint64_t mem, unsigned pids, int oom)
{
	unsigned l = 0;
	sl_cgroup *a = sl_cgroup_new(mem, pids, 0, &l);
	struct stat sa;
	int fa = -1, st = 0;
	pid_t pid;

	if (!a || (oom && !(l & SL_CG_MEMORY)) || (fa = group_dir(a, &sa)) < 0) {
		sl_cgroup_free(a);
		SKIP("no v2 cgroup (and memory limit) for this user");
	}
	pid = child_in(a, oom ? eat_memory : sleep_long);
	CHECK(pid > 0);
	if (!oom)
		sl_cgroup_free(a);
	if (pid > 0) {
		CHECK_INT(waitpid(pid, &st, 0), pid);
		CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	}
	if (oom) {
		CHECK_INT(sl_cgroup_oom(a), 1);
		sl_cgroup_free(a);
	}
	check_not_kept(mem, pids, &sa);
	close(fa);
}

static void test_busy_group_killed_not_kept(void)
{
	freed_not_kept(128 * MB, 34, 0);
}

static void test_oom_group_not_kept(void)
{
	freed_not_kept(48 * MB, 35, 1);
}

int main(void)
{
	RUN(test_reused_with_same_limits);
	RUN(test_busy_group_killed_not_kept);
	RUN(test_oom_group_not_kept);
	return unit_done();
}
