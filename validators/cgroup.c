/*
 * cgroup.c - per-jail control groups on v2, v1 or a hybrid of both.
 *
 * The probe finds the caller's own cgroup in each hierarchy (a child of it
 * is where delegation, if any, allows us to write) and tries a real mkdir
 * and rmdir there, which is the only reliable test of "may I": mode bits say
 * nothing about a read-only cgroupfs or a delegation boundary.  Limits go to
 * v2 where its controllers are enabled (or can be), else to v1; cgroup.kill
 * needs a v2 group and Linux 5.14.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "validators/cgroup.h"
#include "common/util.h"

enum { H_V2, H_MEM, H_PIDS, H_CPU, H_N };

struct sl_cgroup {
	char dir[H_N][320];       /* "" when not used */
	char tasks[H_N][330];     /* v1: dir/tasks, for sl_cgroup_enter_self() */
	int v2_mem, v2_pids, v2_cpu, kill;
	uint64_t mem_bytes;       /* the limits asked for, and the layers they gave */
	unsigned pids_max, cpu_milli, layers;
	sl_cgroup *next;          /* in the pool */
};

/*
 * Groups whose jail is over, kept for the next jail that asks for the same
 * limits.  Making a group and removing it take the kernel's cgroup lock,
 * which every process of the machine shares, a dozen times (mkdir, limits,
 * cgroup.kill, rmdir, in each hierarchy): on a busy machine that was what
 * made a jail slower than bubblewrap at p90 (bench/jail.sh).  Only a group
 * found empty, whose memory limit never killed anything and that holds no
 * tmpfs memory is kept, so a reused group starts as a fresh one would (its
 * limits were never changed; what it is still charged for is page cache,
 * which the kernel reclaims at need).
 * A kept group is an empty "sluice-PID-N" directory: when this process
 * ends, the next probe of another one sweeps it.
 */
#define POOL_MAX 16
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static sl_cgroup *pool;
static unsigned pooled;
static pid_t pool_pid;     /* whose pool it is: a forked child starts its own */

/* CFS bandwidth period for the CPU quota, in microseconds (the kernel's default) */
#define CPU_PERIOD_US 100000u

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static sl_cgroup_info probed;
static unsigned counter;

static int read_small(const char *path, char *buf, size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t got;

	buf[0] = '\0';
	if (fd < 0)
		return -1;
	got = read(fd, buf, n - 1);
	close(fd);
	if (got < 0)
		return -1;
	buf[got] = '\0';
	while (got > 0 && buf[got - 1] == '\n')
		buf[--got] = '\0';
	return 0;
}

static int write_str(const char *dir, const char *name, const char *s)
{
	char path[512];
	int fd, rc = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (sl_write_all(fd, s, strlen(s)))
		rc = -1;
	close(fd);
	return rc;
}

static int has_word(const char *list, const char *word, char sep)
{
	size_t n = strlen(word);

	for (const char *p = list; p && *p; ) {
		const char *e = strchr(p, sep);
		size_t len = e ? (size_t)(e - p) : strlen(p);

		if (len == n && !strncmp(p, word, n))
			return 1;
		p = e ? e + 1 : NULL;
	}
	return 0;
}

/* Can we make (and remove) a child of dir?  If so, does it get cgroup.kill? */
static int try_child(const char *dir, int *kill_file)
{
	char path[512], f[600];
	struct stat st;

	snprintf(path, sizeof(path), "%s/sluice-probe-%d", dir, (int)getpid());
	if (mkdir(path, 0755) && errno != EEXIST)
		return 0;
	if (kill_file) {
		snprintf(f, sizeof(f), "%s/cgroup.kill", path);
		*kill_file = !stat(f, &st);
	}
	rmdir(path);
	return 1;
}

/* dir = mountpoint + cgroup path relative to the mount's root. */
static void join_mount(char *out, size_t n, const char *mnt, const char *root, const char *cg)
{
	size_t rl = strlen(root);

	if (strcmp(root, "/") && !strncmp(cg, root, rl))
		cg += rl;
	snprintf(out, n, "%s%s%s", mnt, *cg == '/' ? "" : "/", strcmp(cg, "/") ? cg : "");
}

/*
 * Remove the empty groups that callers killed before their cleanup left
 * behind ("sluice-PID-N" with PID gone).  A group still holding processes
 * refuses rmdir, so a live jail is never touched.
 */
static void sweep(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[600];

	while (d && (e = readdir(d))) {
		long pid;
		char *end;

		if (strncmp(e->d_name, "sluice-", 7) || e->d_name[7] < '0' || e->d_name[7] > '9')
			continue;
		pid = strtol(e->d_name + 7, &end, 10);
		if (*end != '-' || pid <= 0 || !kill((pid_t)pid, 0) || errno != ESRCH)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		rmdir(path);
	}
	if (d)
		closedir(d);
}

static void probe(void)
{
	sl_cgroup_info *in = &probed;
	char cg_v2[256] = "", cg_mem[256] = "", cg_pids[256] = "", cg_cpu[256] = "";
	char line[1024];
	FILE *fp;

	memset(in, 0, sizeof(*in));
	if ((fp = fopen("/proc/self/cgroup", "re"))) {
		while (fgets(line, sizeof(line), fp)) {
			char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;

			if (!b)
				continue;
			*a = *b = '\0';
			b[1 + strcspn(b + 1, "\n")] = '\0';
			if (!strcmp(line, "0") && !a[1])
				snprintf(cg_v2, sizeof(cg_v2), "%s", b + 1);
			else if (has_word(a + 1, "memory", ','))
				snprintf(cg_mem, sizeof(cg_mem), "%s", b + 1);
			else if (has_word(a + 1, "pids", ','))
				snprintf(cg_pids, sizeof(cg_pids), "%s", b + 1);
			else if (has_word(a + 1, "cpu", ','))
				snprintf(cg_cpu, sizeof(cg_cpu), "%s", b + 1);
		}
		fclose(fp);
	}
	if ((fp = fopen("/proc/self/mountinfo", "re"))) {
		while (fgets(line, sizeof(line), fp)) {
			char *f[6], *dash = strstr(line, " - "), *save = NULL, *fs, *super;
			int i = 0;

			if (!dash)
				continue;
			*dash = '\0';
			for (char *t = strtok_r(line, " ", &save); t && i < 6;
			     t = strtok_r(NULL, " ", &save))
				f[i++] = t;
			fs = strtok_r(dash + 3, " ", &save);
			strtok_r(NULL, " ", &save);
			super = strtok_r(NULL, " \n", &save);
			if (i < 5 || !fs || !super)
				continue;
			if (!strcmp(fs, "cgroup2") && *cg_v2 && !*in->v2_dir)
				join_mount(in->v2_dir, sizeof(in->v2_dir), f[4], f[3], cg_v2);
			else if (!strcmp(fs, "cgroup") && *cg_mem && has_word(super, "memory", ',') &&
				 !*in->v1_memory)
				join_mount(in->v1_memory, sizeof(in->v1_memory), f[4], f[3], cg_mem);
			else if (!strcmp(fs, "cgroup") && *cg_pids && has_word(super, "pids", ',') &&
				 !*in->v1_pids)
				join_mount(in->v1_pids, sizeof(in->v1_pids), f[4], f[3], cg_pids);
			else if (!strcmp(fs, "cgroup") && *cg_cpu && has_word(super, "cpu", ',') &&
				 !*in->v1_cpu)
				join_mount(in->v1_cpu, sizeof(in->v1_cpu), f[4], f[3], cg_cpu);
		}
		fclose(fp);
	}

	if (*in->v2_dir) {
		char path[512], sub[128];
		int kill_file = 0;

		if (try_child(in->v2_dir, &kill_file)) {
			snprintf(path, sizeof(path), "%s/cgroup.controllers", in->v2_dir);
			read_small(path, in->v2_controllers, sizeof(in->v2_controllers));
			snprintf(path, sizeof(path), "%s/cgroup.subtree_control", in->v2_dir);
			for (int k = 0; k < 3; k++) {
				static const char *const ctl[] = { "memory", "pids", "cpu" };
				static const unsigned bit[] = { SL_CG_MEMORY, SL_CG_PIDS, SL_CG_CPU };
				const char *c = ctl[k];
				int *on[] = { &in->v2_memory, &in->v2_pids, &in->v2_cpu };
				char plus[16];

				if (!has_word(in->v2_controllers, c, ' '))
					continue;
				read_small(path, sub, sizeof(sub));
				snprintf(plus, sizeof(plus), "+%s", c);
				if (!has_word(sub, c, ' ') && write_str(in->v2_dir,
						"cgroup.subtree_control", plus))
					continue;
				in->layers |= bit[k];
				*on[k] = 1;
			}
			in->layers |= SL_CG_GROUP | (kill_file ? SL_CG_KILL : 0);
			in->version |= 2;
		} else {
			in->v2_dir[0] = '\0';
		}
	}
	if (*in->v1_memory && try_child(in->v1_memory, NULL)) {
		in->layers |= SL_CG_GROUP | SL_CG_MEMORY;
		in->version |= 1;
	} else {
		in->v1_memory[0] = '\0';
	}
	if (*in->v1_pids && try_child(in->v1_pids, NULL)) {
		in->layers |= SL_CG_GROUP | SL_CG_PIDS;
		in->version |= 1;
	} else {
		in->v1_pids[0] = '\0';
	}
	if (*in->v1_cpu && try_child(in->v1_cpu, NULL)) {
		in->layers |= SL_CG_GROUP | SL_CG_CPU;
		in->version |= 1;
	} else {
		in->v1_cpu[0] = '\0';
	}
	if (*in->v2_dir)
		sweep(in->v2_dir);
	if (*in->v1_cpu)
		sweep(in->v1_cpu);
	if (*in->v1_memory)
		sweep(in->v1_memory);
	if (*in->v1_pids)
		sweep(in->v1_pids);
}

void sl_cgroup_probe(sl_cgroup_info *out)
{
	pthread_once(&probe_once, probe);
	*out = probed;
}

static void remove_group(sl_cgroup *cg);

/* Whether every directory of the group is still there (cheap: no cgroup lock). */
static int group_exists(const sl_cgroup *cg)
{
	struct stat st;

	for (int h = 0; h < H_N; h++)
		if (*cg->dir[h] && stat(cg->dir[h], &st))
			return 0;
	return 1;
}

/* Under pool_lock: a forked child forgets the pool it inherited (its parent's groups). */
static void pool_own(void)
{
	if (pool_pid != getpid()) {
		pool = NULL;
		pooled = 0;
		pool_pid = getpid();
	}
}

/*
 * A kept group with exactly these limits, out of the pool, or NULL.  The
 * pool is this process's: a forked child forgets the copy it inherited
 * (its parent may still use those groups), and a group someone removed
 * meanwhile is dropped.
 */
static sl_cgroup *pool_take(uint64_t mem_bytes, unsigned pids_max, unsigned cpu_milli)
{
	sl_cgroup **pp, *cg = NULL;

	pthread_mutex_lock(&pool_lock);
	pool_own();
	for (pp = &pool; *pp; pp = &(*pp)->next)
		if ((*pp)->mem_bytes == mem_bytes && (*pp)->pids_max == pids_max &&
		    (*pp)->cpu_milli == cpu_milli) {
			cg = *pp;
			*pp = cg->next;
			cg->next = NULL;
			pooled--;
			break;
		}
	pthread_mutex_unlock(&pool_lock);
	if (cg && !group_exists(cg)) {
		remove_group(cg);
		cg = NULL;
	}
	return cg;
}

sl_cgroup *sl_cgroup_new(uint64_t mem_bytes, unsigned pids_max, unsigned cpu_milli,
			 unsigned *layers)
{
	sl_cgroup_info in;
	sl_cgroup *cg;
	char name[64], num[32];
	unsigned n = __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED);
	const char *parent[H_N];

	*layers = 0;
	sl_cgroup_probe(&in);
	if (!(in.layers & SL_CG_GROUP))
		return NULL;
	if ((cg = pool_take(mem_bytes, pids_max, cpu_milli))) {
		*layers = cg->layers;
		return cg;
	}
	cg = sl_xcalloc(1, sizeof(*cg));
	cg->mem_bytes = mem_bytes;
	cg->pids_max = pids_max;
	cg->cpu_milli = cpu_milli;
	snprintf(name, sizeof(name), "sluice-%d-%u", (int)getpid(), n);
	cg->v2_mem = in.v2_memory;
	cg->v2_pids = in.v2_pids;
	cg->v2_cpu = in.v2_cpu;
	/* a v1 hierarchy only for what v2 cannot limit */
	parent[H_V2] = in.v2_dir;
	parent[H_MEM] = in.v2_memory || !mem_bytes ? "" : in.v1_memory;
	parent[H_PIDS] = in.v2_pids || !pids_max ? "" : in.v1_pids;
	parent[H_CPU] = in.v2_cpu || !cpu_milli ? "" : in.v1_cpu;
	for (int h = 0; h < H_N; h++) {
		if (!*parent[h])
			continue;
		snprintf(cg->dir[h], sizeof(cg->dir[h]), "%s/%s", parent[h], name);
		if (mkdir(cg->dir[h], 0755)) {
			cg->dir[h][0] = '\0';
		} else {
			*layers |= SL_CG_GROUP;
			if (h != H_V2)
				snprintf(cg->tasks[h], sizeof(cg->tasks[h]), "%s/tasks", cg->dir[h]);
		}
	}
	if (*cg->dir[H_V2]) {
		char f[400];
		struct stat st;

		snprintf(f, sizeof(f), "%s/cgroup.kill", cg->dir[H_V2]);
		if (!stat(f, &st)) {
			cg->kill = 1;
			*layers |= SL_CG_KILL;
		}
	}
	if (mem_bytes) {
		snprintf(num, sizeof(num), "%llu", (unsigned long long)mem_bytes);
		if (cg->v2_mem && *cg->dir[H_V2] &&
		    !write_str(cg->dir[H_V2], "memory.max", num)) {
			write_str(cg->dir[H_V2], "memory.swap.max", "0");
			*layers |= SL_CG_MEMORY;
		} else if (*cg->dir[H_MEM] &&
			   !write_str(cg->dir[H_MEM], "memory.limit_in_bytes", num)) {
			*layers |= SL_CG_MEMORY;
		}
	}
	if (pids_max) {
		snprintf(num, sizeof(num), "%u", pids_max);
		if (cg->v2_pids && *cg->dir[H_V2] && !write_str(cg->dir[H_V2], "pids.max", num))
			*layers |= SL_CG_PIDS;
		else if (*cg->dir[H_PIDS] && !write_str(cg->dir[H_PIDS], "pids.max", num))
			*layers |= SL_CG_PIDS;
	}
	if (cpu_milli) {
		unsigned long long quota = (unsigned long long)cpu_milli * CPU_PERIOD_US / 1000;

		if (quota < 1000)
			quota = 1000;     /* the kernel's minimum: 1 ms */
		snprintf(num, sizeof(num), "%llu %u", quota, CPU_PERIOD_US);
		/* half the default weight: the host's own work first (best effort) */
		if (cg->v2_cpu && *cg->dir[H_V2] && !write_str(cg->dir[H_V2], "cpu.max", num)) {
			*layers |= SL_CG_CPU;
			write_str(cg->dir[H_V2], "cpu.weight", "50");
		} else if (*cg->dir[H_CPU]) {
			char period[16];

			snprintf(period, sizeof(period), "%u", CPU_PERIOD_US);
			snprintf(num, sizeof(num), "%llu", quota);
			if (!write_str(cg->dir[H_CPU], "cpu.cfs_period_us", period) &&
			    !write_str(cg->dir[H_CPU], "cpu.cfs_quota_us", num))
				*layers |= SL_CG_CPU;
			write_str(cg->dir[H_CPU], "cpu.shares", "512");
		}
	}
	if (!(*layers & SL_CG_GROUP)) {
		remove_group(cg);
		return NULL;
	}
	cg->layers = *layers;
	return cg;
}

int sl_cgroup_add(sl_cgroup *cg, pid_t pid, int v2_only)
{
	char num[32];
	int rc = 0;

	snprintf(num, sizeof(num), "%d", (int)pid);
	for (int h = 0; h < H_N; h++)
		if (*cg->dir[h] && (h == H_V2 || !v2_only) &&
		    write_str(cg->dir[h], "cgroup.procs", num))
			rc = -1;
	return rc;
}

int sl_cgroup_v2_fd(const sl_cgroup *cg)
{
	return cg && *cg->dir[H_V2] ? open(cg->dir[H_V2], O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
}

int sl_cgroup_enter_self(const sl_cgroup *cg)
{
	for (int h = 0; h < H_N; h++) {
		int fd;

		if (h == H_V2 || !*cg->tasks[h])
			continue;
		fd = open(cg->tasks[h], O_WRONLY | O_CLOEXEC);
		if (fd < 0)
			return -1;
		if (write(fd, "0", 1) != 1) {
			close(fd);
			return -1;
		}
		close(fd);
	}
	return 0;
}

int sl_cgroup_oom(sl_cgroup *cg)
{
	char buf[1024], path[400], *p;

	if (!cg)
		return 0;
	if (*cg->dir[H_V2] && cg->v2_mem) {
		snprintf(path, sizeof(path), "%s/memory.events", cg->dir[H_V2]);
		if (!read_small(path, buf, sizeof(buf)) && (p = strstr(buf, "oom_kill ")))
			return atoi(p + 9) > 0;
	}
	if (*cg->dir[H_MEM]) {
		snprintf(path, sizeof(path), "%s/memory.oom_control", cg->dir[H_MEM]);
		if (!read_small(path, buf, sizeof(buf)) && (p = strstr(buf, "oom_kill ")))
			return atoi(p + 9) > 0;
	}
	return 0;
}

/* SIGKILL every pid listed in dir/cgroup.procs; returns how many were listed. */
static int kill_listed(const char *dir)
{
	char path[400], buf[4096];
	int n = 0;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	if (read_small(path, buf, sizeof(buf)))
		return 0;
	for (char *p = buf; *p; ) {
		long pid = strtol(p, &p, 10);

		if (pid > 0) {
			kill((pid_t)pid, SIGKILL);
			n++;
		}
		while (*p == '\n')
			p++;
		if (*p && (*p < '0' || *p > '9'))
			break;
	}
	return n;
}

static void remove_group(sl_cgroup *cg)
{
	const struct timespec ms = { 0, 1000000 };

	for (int h = 0; h < H_N; h++) {
		if (!*cg->dir[h])
			continue;
		if (h == H_V2 && cg->kill)
			write_str(cg->dir[h], "cgroup.kill", "1");
		/* exiting processes leave the group asynchronously: up to ~0.5 s */
		for (int round = 0; round < 500 && rmdir(cg->dir[h]) && errno == EBUSY; round++) {
			kill_listed(cg->dir[h]);
			nanosleep(&ms, NULL);
		}
	}
	free(cg);
}

/* Whether no process is in any hierarchy of the group (unreadable: not empty). */
static int group_empty(const sl_cgroup *cg)
{
	char path[400], buf[64];

	for (int h = 0; h < H_N; h++) {
		if (!*cg->dir[h])
			continue;
		snprintf(path, sizeof(path), "%s/cgroup.procs", cg->dir[h]);
		if (read_small(path, buf, sizeof(buf)) || *buf)
			return 0;
	}
	return 1;
}

/*
 * Whether the group is still charged for tmpfs or shared memory (the "shmem"
 * line of memory.stat; unreadable: yes): files a jail left on a tmpfs outside
 * it, such as a candidate's layer, which without swap nothing can reclaim,
 * so a next jail in the group would get less memory than its limit says.
 */
static int holds_shmem(const sl_cgroup *cg)
{
	const char *dir = cg->v2_mem && *cg->dir[H_V2] ? cg->dir[H_V2] : cg->dir[H_MEM];
	char path[400], buf[4096], *p;

	if (!*dir)
		return 0;
	snprintf(path, sizeof(path), "%s/memory.stat", dir);
	if (read_small(path, buf, sizeof(buf)))
		return 1;
	if (strncmp(buf, "shmem ", 6) && !(p = strstr(buf, "\nshmem ")))
		return 1;
	p = strncmp(buf, "shmem ", 6) ? p + 1 : buf;
	return strtoull(p + 6, NULL, 10) > 0;
}

/* Keep an empty group that saw no OOM kill for the next jail: 1, or 0 (not kept). */
static int pool_keep(sl_cgroup *cg)
{
	int kept = 0;

	if (sl_cgroup_oom(cg) || !group_empty(cg) || holds_shmem(cg))
		return 0;
	pthread_mutex_lock(&pool_lock);
	pool_own();
	if (pooled < POOL_MAX) {
		cg->next = pool;
		pool = cg;
		pooled++;
		kept = 1;
	}
	pthread_mutex_unlock(&pool_lock);
	return kept;
}

void sl_cgroup_free(sl_cgroup *cg)
{
	if (cg && !pool_keep(cg))
		remove_group(cg);
}
