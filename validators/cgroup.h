/*
 * cgroup.h - one control group per jail, where the machine lets us make one.
 *
 * sl_cgroup_probe() looks at /proc/self/cgroup and /proc/self/mountinfo
 * once: the caller's cgroup in the v2 hierarchy (with the controllers it
 * can enable below it) and in the v1 memory, pids and cpu hierarchies, kept
 * only where the caller may create a child directory.  sl_cgroup_new()
 * makes a child in each usable hierarchy ("sluice-PID-N"), sets the limits
 * it can (memory.max / memory.limit_in_bytes, pids.max, cpu.max /
 * cpu.cfs_quota_us with half the default weight: cpu.weight 50 /
 * cpu.shares 512, so the host's own work comes first) and reports in
 * *layers what took; nothing here is fatal: a machine without writable
 * cgroups gives a jail without this layer.  sl_cgroup_add() moves a
 * process in (do it before the process forks).  sl_cgroup_free() keeps an
 * empty group whose memory limit killed nothing, charged for no tmpfs
 * memory, for the next sl_cgroup_new() of this process with the same
 * limits (a few, see cgroup.c); any other it kills every process still in
 * (cgroup.kill on v2, SIGKILL to each listed pid on v1, a bounded number
 * of rounds) and removes.  The first probe also removes empty "sluice-PID-N" groups
 * whose PID is gone (a caller killed before its cleanup, or groups kept).
 */
#ifndef SL_CGROUP_H
#define SL_CGROUP_H

#include <stdint.h>
#include <sys/types.h>

/* Layer bits (also used in sl_jail_layers, see jail.h) */
#define SL_CG_MEMORY 1u       /* a memory limit is enforced */
#define SL_CG_PIDS   2u       /* a process-count limit is enforced */
#define SL_CG_KILL   4u       /* the whole group is killed through cgroup.kill */
#define SL_CG_GROUP  8u       /* at least one group was made */
#define SL_CG_CPU    16u      /* a CPU quota (cpu.max or cpu.cfs_quota_us) is enforced */

typedef struct sl_cgroup_info {
	int version;              /* 0 none usable, 1 v1 only, 2 v2 only, 3 both */
	unsigned layers;          /* what a new group would get (SL_CG_*) */
	char v2_dir[256];         /* the caller's v2 cgroup, "" if unusable */
	char v2_controllers[128]; /* cgroup.controllers there */
	int v2_memory, v2_pids, v2_cpu;   /* those controllers are enabled for children */
	char v1_memory[256];      /* the caller's v1 memory cgroup, "" if unusable */
	char v1_pids[256];
	char v1_cpu[256];
} sl_cgroup_info;

/* Probe once per process (cached, thread-safe); *out is a copy. */
void sl_cgroup_probe(sl_cgroup_info *out);

typedef struct sl_cgroup sl_cgroup;

/*
 * Make a group with these limits (0 = no limit of that kind; cpu_milli is
 * the CPU quota in thousandths of a CPU).  Returns NULL when no group could
 * be made; *layers gets the SL_CG_* bits that took.
 */
sl_cgroup *sl_cgroup_new(uint64_t mem_bytes, unsigned pids_max, unsigned cpu_milli,
			 unsigned *layers);

/*
 * Move pid into every hierarchy of the group (only the v2 one if v2_only);
 * 0, or -1 (errno).  Moving a process takes a lock whose write side waits
 * for an RCU grace period, milliseconds on a busy machine, once per
 * hierarchy: the jail instead creates pid 1 straight in the v2 group
 * (clone3 with CLONE_INTO_CGROUP and sl_cgroup_v2_fd()) and pid 1 moves
 * its single thread into the v1 ones (sl_cgroup_enter_self()), which the
 * kernel does without that lock.
 */
int sl_cgroup_add(sl_cgroup *cg, pid_t pid, int v2_only);

/* A descriptor of the v2 group for CLONE_INTO_CGROUP (caller closes), or -1. */
int sl_cgroup_v2_fd(const sl_cgroup *cg);

/*
 * Move the calling thread into every v1 hierarchy of the group (writes "0"
 * to each tasks file).  For a single-threaded process between clone and
 * exec: system calls only.  0, or -1 (errno).
 */
int sl_cgroup_enter_self(const sl_cgroup *cg);

/* Whether the memory limit made the kernel kill something in the group. */
int sl_cgroup_oom(sl_cgroup *cg);

/*
 * Done with the group: kept for reuse if empty, never OOM-killed and
 * charged for no tmpfs memory, else
 * kill what is left, remove the group, free it.  NULL is a no-op.
 */
void sl_cgroup_free(sl_cgroup *cg);

#endif
