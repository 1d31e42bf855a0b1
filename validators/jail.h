/*
 * jail.h - run one command of hostile code, contained.
 *
 * The command runs in new user, mount, pid, network, IPC, UTS and cgroup
 * namespaces: a tmpfs root (read-only) holding read-only binds of the
 * toolchain (/usr and the merged-/usr links as the host has them, or binds
 * where they are real directories), a curated /etc (alternatives, ld.so.*,
 * localtime, and generated passwd, group, hosts, hostname, nsswitch.conf:
 * no shadow, no keys), a minimal /dev (null zero full random urandom as
 * read-only binds, fd links, a /dev/shm tmpfs, a private devpts instance at
 * /dev/pts with /dev/ptmx: the jail's own terminals, never the caller's), a
 * /proc of its own pid namespace with the kernel's root-only files masked
 * (kcore, kpage*, kallsyms, keys, slabinfo, timer_list, sched_debug,
 * sysrq-trigger, ...: /dev/null binds; acpi, scsi, asound, driver: empty
 * read-only tmpfs) and /proc/sys, /proc/bus, /proc/fs, /proc/irq read-only,
 * no /sys, a private size-capped /tmp, and the candidate's worktree at /src,
 * its working directory, as an overlay: the worktree the read-only lower
 * layer, a tmpfs of disk_mb MiB the upper one, so nothing the command writes
 * reaches the host.  Every writable mount is nosuid and nodev.  No host path
 * shows inside: the overlay's layers are named /.lower and /.ovl (both
 * detached before the command starts), and a worktree's .git pointer file
 * is replaced by a read-only "gitdir: /nonexistent" (a .git directory is
 * bound read-only).  Hostname "sluice".  The network namespace has only its
 * own loopback (brought up, so tests can use 127.0.0.1 inside; it reaches
 * nothing outside).  The environment is cleared to PATH, HOME=/tmp,
 * LANG=C.UTF-8, TERM=dumb, TMPDIR=/tmp, plus opts->env (which may override
 * those).
 *
 * Limits: rlimits (core 0, nofile 1024, fsize 1 GiB, cpu timeout+5 s per
 * process, nproc = pids_max: counted per user namespace, so the jail's own
 * total; address space as_mb when given; without a cgroup memory limit,
 * RLIMIT_DATA = mem_mb per process), nice 10, the user namespace's own
 * inotify limits (an eighth of the host user's instances and watches, so a
 * gate cannot exhaust the budget the host user shares with it), and a
 * cgroup where this user may create one (memory, pids, CPU quota; killed
 * whole at the end).  A limit the caller asked for explicitly (mem_mb,
 * cpu_milli) that no layer here can enforce makes sl_jail_run() fail,
 * naming the missing layer, unless its bit is in opts.accept.
 *
 * The payload gets no inherited descriptors, stdin from /dev/null, a new
 * session, no-new-privileges, no nested user namespaces, and runs as
 * uid/gid 1000 inside with no capabilities, under Landlock where the kernel
 * has it (a second layer: everything read-only but /src, /tmp, /dev/shm and
 * the /dev nodes; no TCP; no abstract sockets or signals across its domain)
 * and a seccomp filter (sysfilter.h).  Process 1 of the jail
 * ("sluice-init") is a small reaper; when the payload exits, or the
 * wall-clock timeout fires, process 1 dies and the kernel kills every
 * process left in the pid namespace, so nothing of the command (daemons
 * included) outlives sl_jail_run().
 *
 * What a run had is in result.layers (SL_JAIL_* bits); sl_jail_probe()
 * tells what the machine offers.  A machine without a layer of
 * SL_JAIL_MINIMUM makes sl_jail_run() fail unless opts.unsafe.
 *
 * Linux only.  Works as root and as an unprivileged user (needs unprivileged
 * user namespaces).  Uid/gid 1000 inside is never root outside: it is the
 * caller's euid/egid, or, when the caller is root, the host's nobody
 * (65534/65534), with root's supplementary groups dropped; as root the
 * workdir's files are first given to 65534 (lchown, not following links,
 * not entering a top-level .git) so the jail can read and copy them up.
 * The new root's mount point is an empty directory made in $TMPDIR (or
 * /tmp) and removed afterwards.  Safe to call from several threads at once;
 * the calling thread must not exit during the call (the jail dies with it).
 * Output (stdout and stderr interleaved) is kept up to a cap: the last
 * output_cap bytes, with output_total counting everything and
 * output.truncated set when they differ.
 */
#ifndef SL_JAIL_H
#define SL_JAIL_H

#include <sys/types.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/err.h"

/*
 * The layers of the jail, as bits: what a run had (sl_jail_result.layers)
 * and what the machine offers (sl_jail_layers.available).
 */
enum sl_jail_layer {
	SL_JAIL_USERNS   = 1u << 0,
	SL_JAIL_MNTNS    = 1u << 1,
	SL_JAIL_PIDNS    = 1u << 2,
	SL_JAIL_NETNS    = 1u << 3,
	SL_JAIL_IPCNS    = 1u << 4,
	SL_JAIL_UTSNS    = 1u << 5,
	SL_JAIL_CGROUPNS = 1u << 6,
	SL_JAIL_ROOTFS   = 1u << 7,   /* tmpfs root, pivot_root, read-only toolchain */
	SL_JAIL_SECCOMP  = 1u << 8,
	SL_JAIL_LANDLOCK = 1u << 9,
	SL_JAIL_CG_MEMORY = 1u << 10, /* memory limit through a cgroup */
	SL_JAIL_CG_PIDS  = 1u << 11,  /* process limit through a cgroup */
	SL_JAIL_CG_KILL  = 1u << 12,  /* the group is killed with cgroup.kill */
	SL_JAIL_OVERLAY  = 1u << 13,  /* worktree behind a size-capped overlay */
	SL_JAIL_RLIMITS  = 1u << 14,
	SL_JAIL_NNP      = 1u << 15,  /* no-new-privileges */
	SL_JAIL_CG_CPU   = 1u << 16,  /* CPU quota through a cgroup */
	SL_JAIL_IDMAP    = 1u << 17,  /* uid/gid 1000 inside is an unprivileged host id */
	SL_JAIL_PROCMASK = 1u << 18,  /* /proc masked, /proc/sys read-only, no /sys */
	SL_JAIL_INOTIFY  = 1u << 19,  /* the user namespace's own inotify limits */
	SL_JAIL_PTY      = 1u << 20,  /* a private devpts instance */
};
#define SL_JAIL_NLAYERS 21
/* Without these a gate must not run (unless the user said --unsafe). */
#define SL_JAIL_MINIMUM (SL_JAIL_USERNS | SL_JAIL_MNTNS | SL_JAIL_PIDNS | SL_JAIL_NETNS)

/* "userns", "mntns", ... for one bit; NULL for an unknown bit. */
const char *sl_jail_layer_name(unsigned bit);
/*
 * Append the names of the bits in layers to out, comma-separated
 * ("userns,mntns,pidns,..."): the form to record with a verdict.
 */
void sl_jail_layers_format(sl_buf *out, unsigned layers);

typedef struct sl_jail_opts {
	const char *workdir;        /* host directory bound read-write at /src */
	const char *command;        /* run as /bin/sh -c COMMAND inside */
	unsigned timeout_ms;        /* wall clock; 0 = 600000 */
	size_t output_cap;          /* bytes of output tail kept; 0 = 64 KiB */
	unsigned tmp_mb;            /* size of /tmp (and /dev/shm); 0 = 256 */
	const char *const *env;     /* extra "NAME=VALUE" entries, NULL-terminated, or NULL */
	/*
	 * Memory limit (cgroup; where no cgroup can hold it, RLIMIT_DATA per
	 * process); 0 = 4096, best effort.  Nonzero is a requirement: without a
	 * memory cgroup the run fails unless accept has SL_JAIL_CG_MEMORY.
	 */
	unsigned mem_mb;
	/* process limit (cgroup, and RLIMIT_NPROC in the user namespace); 0 = 1024 */
	unsigned pids_max;
	/*
	 * /src is an overlay of workdir (read-only lower layer) and a tmpfs of
	 * disk_mb MiB (upper layer): the command sees the worktree and may
	 * write up to disk_mb MiB, and nothing it writes reaches the host; use
	 * collect to get files back.  0 = 2048.
	 */
	unsigned disk_mb;
	/*
	 * Paths relative to /src (NULL-terminated, borrowed) that process 1
	 * reads after the command exits (every other process of the jail
	 * killed first), through openat2 with RESOLVE_BENEATH and no symlinks,
	 * regular files only, at most collect_cap bytes each; returned in
	 * sl_jail_result.files, in this order.
	 */
	const char *const *collect;
	size_t collect_cap;         /* 0 = 16 MiB */
	int allow_inet;             /* IPv4/IPv6 sockets (on the jail's own loopback) */
	/*
	 * Run even where the machine lacks a layer of SL_JAIL_MINIMUM: with
	 * the namespaces that work, and without the private root when there
	 * is no mount namespace (the command then sees the host's file system,
	 * read-only through Landlock if the kernel has it, and runs in
	 * workdir).  Check result.layers to see what it got.
	 */
	int unsafe;
	/*
	 * CPU quota in thousandths of a CPU (cgroup cpu.max/cfs_quota_us).  0 =
	 * all online CPUs but one (at least one), best effort; nonzero is a
	 * requirement: without a CPU cgroup the run fails unless accept has
	 * SL_JAIL_CG_CPU (then only RLIMIT_CPU per process and nice 10 hold).
	 */
	unsigned cpu_milli;
	unsigned as_mb;             /* RLIMIT_AS per process; 0 = none (sanitizers
				       reserve terabytes of address space) */
	unsigned accept;            /* SL_JAIL_CG_MEMORY, SL_JAIL_CG_CPU: run without
				       that layer even where mem_mb, cpu_milli ask */
	int no_landlock;            /* for tests: leave the Landlock layer out, to
				       show that the others hold on their own */
	/*
	 * Bind workdir read-write at /src instead of the overlay: what the
	 * command writes stays (gates that share state), with no cap but the
	 * host's free space, and mountinfo shows the workdir's path.
	 */
	int writable_workdir;
	/*
	 * A host directory holding u/ and w/ (directories on one file system,
	 * empty the first time): /src is then an overlay of workdir (read-only
	 * below) and layer/u, which keeps what the command writes for the next
	 * run with the same layer (a candidate's gates in turn).  Not with
	 * writable_workdir; disk_mb is not enforced here (the caller measures
	 * the layer).  As root, layer is given to the jail's user instead of
	 * workdir, which must be readable by that user already.
	 */
	const char *layer;
} sl_jail_opts;
#define SL_JAIL_OPTS_INIT { .workdir = NULL }

/* One collected file. */
typedef struct sl_jail_file {
	char *path;                 /* as given in opts.collect */
	int err;                    /* 0, or why not read: ENOENT; ELOOP or EXDEV
				     * (a symlink or a mount on the way); EINVAL
				     * (not a regular file); another errno */
	int truncated;              /* longer than collect_cap */
	sl_buf data;
} sl_jail_file;

typedef struct sl_jail_result {
	int exited;                 /* the command exited (exit_status valid) */
	int exit_status;
	int term_signal;            /* the command died of this signal, else 0 */
	int timed_out;              /* the timeout fired and everything was killed */
	int oom;                    /* the cgroup memory limit killed something */
	int64_t cpu_ms;             /* user+system CPU time of every process of the jail */
	int64_t duration_ms;
	int64_t setup_ms;           /* of duration_ms: until the jail was set up and the
				       command about to start (0 when unknown) */
	sl_buf output;              /* the tail of stdout+stderr */
	size_t output_total;        /* bytes the command wrote in all */
	unsigned layers;            /* SL_JAIL_* bits this run had */
	sl_jail_file *files;        /* opts.collect, one entry each, owned */
	size_t nfiles;
} sl_jail_result;

void sl_jail_result_init(sl_jail_result *r);
void sl_jail_result_release(sl_jail_result *r);

/*
 * Run opts->command in the jail and wait for it.  Returns 0 when the command
 * ran (whatever its exit status; read *out), SL_ERROR when the jail could
 * not be set up (message in err).
 */
int sl_jail_run(sl_jail_result *out, const sl_jail_opts *opts, sl_err *err);
/*
 * Process-wide: while *stop is non-zero, every sl_jail_run in progress or
 * started kills its jail as at the timeout (result.timed_out set) within
 * about 0.1 s.  For a run being stopped by a signal.  NULL turns it off.
 */
void sl_jail_set_stop(const volatile int *stop);
/* 1 while the stop flag given to sl_jail_set_stop is set: verdicts are not verdicts. */
int sl_jail_stopping(void);

/*
 * The jail spawner (jail_spawner.c): sl_jail_spawner_start() forks, while
 * this process is still small, a process that runs every later
 * sl_jail_run() of this process (the jail is then a copy of that small
 * process, not of the caller); the same jails, results and errors.  Call it
 * from one thread before the threads that run jails start, and
 * sl_jail_spawner_stop() once they are done; a stop (sl_jail_set_stop)
 * reaches the jails in the spawner.  sl_jail_spawner_pid() is its process,
 * or -1.
 */
int sl_jail_spawner_start(sl_err *err);
void sl_jail_spawner_stop(void);
pid_t sl_jail_spawner_pid(void);
int sl_jail_spawner_active(void);
int sl_jail_spawner_run(sl_jail_result *out, const sl_jail_opts *opts, sl_err *err);

/* What this machine offers, for `sluice doctor` and for refusing to run. */
typedef struct sl_jail_layers {
	unsigned available;         /* SL_JAIL_* bits that work here */
	int landlock_abi;           /* 0 = none */
	int cgroup_version;         /* 0 none usable, 1 v1, 2 v2, 3 both (hybrid) */
	char cgroup_v2_controllers[128];   /* cgroup.controllers of our v2 group */
	char cgroup_detail[256];    /* where each cgroup layer comes from */
	char overlay_error[256];    /* why the overlay layer is missing, or "" */
	char run_error[256];        /* why a full jail run failed, or "" */
} sl_jail_layers;

/*
 * Probe every layer: each namespace on its own, then a real jail run of
 * "true" (which shows the private root, seccomp, Landlock, cgroups) and
 * one with an overlay.  Takes some milliseconds.  Returns 0 (missing
 * layers are not errors: read out->available), SL_ERROR if the probe
 * itself broke (no scratch directory).
 */
int sl_jail_probe(sl_jail_layers *out, sl_err *err);

#endif
