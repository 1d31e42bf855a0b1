/*
 * jail.c - sl_jail_run(): one command in fresh namespaces, reaped whole.
 *
 * Three processes take part:
 *
 *   supervisor (the caller's thread): resolves the workdir, builds the
 *     whole jail plan in memory (every path, file body and the environment),
 *     makes the new root's mount point with mkdtemp, clones the jail, writes
 *     its uid/gid maps and releases it through a pipe.  Then it polls the
 *     output pipe, the report pipe and a pidfd of pid 1 until pid 1 is gone,
 *     or the timeout fires and pid 1 gets SIGKILL.  Last it drains the pipes
 *     briefly, removes the mount point and fills the result.
 *
 *   pid 1 of the jail (a copy of the caller, never exec'd): mounts the new
 *     root's tmpfs while it still has the caller's host id (and clones a
 *     candidate's layer into its mount namespace when an ordinary user's
 *     tmpfs holds it, jail_layer.c), takes the jail's
 *     ids (keeping its capabilities in the namespace), carries out the rest
 *     of the plan (mounts, files, sysctls of its namespaces, pivot_root, the
 *     overlay at /src), forks the payload and reaps every
 *     process until the payload exits, then sends the payload's wait status
 *     up the report pipe and exits.  The kernel then kills everything left in
 *     the pid namespace before pid 1's exit is reported to the supervisor, so
 *     once waitpid() returns nothing of the command runs any more.
 *
 *   payload: new session, stdin /dev/null, stdout+stderr to the output pipe,
 *     no other descriptors, rlimits, no capabilities, no-new-privs, Landlock,
 *     the seccomp filter, a fresh environment, exec /bin/sh -c COMMAND
 *     (/bin/bash -o pipefail -c COMMAND with opts.pipefail).
 *
 * In a session (sl_jail_run_session(), jail_session.c) pid 1 does not run
 * one payload and exit: it takes commands on the session's control socket
 * and forks a payload for each (session_loop()), killing and reaping every
 * other process after each, until the socket closes.
 *
 * The supervisor also makes the jail's cgroup (cgroup.c) and moves pid 1 in
 * before releasing it; pid 1 then makes its cgroup namespace, so the jail
 * sees its own group as the root.  With opts.collect pid 1 kills everything
 * else in the jail once the payload exits and streams the files up a fourth
 * pipe (struct file_hdr + bytes each).
 *
 * sluice calls this from several threads at once.  A child cloned from a
 * multi-threaded process may find a lock (malloc's, stdio's) held by a thread
 * that does not exist in the copy, so between clone and exec the children only
 * make system calls on memory the supervisor prepared: no malloc, no stdio, no
 * glibc fork() (its atfork handlers take those locks); children are made with
 * the raw clone system call.  A failure there travels as a fixed-size record
 * (step, errno) on the report pipe; the supervisor writes the message.
 *
 * The payload raises its own oom_score_adj to 1000, so a memory cgroup's
 * out-of-memory killer takes the command, and pid 1 lives to report its
 * end; result.oom says the cgroup killed something (gate.c names the limit).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <limits.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <stddef.h>

#include "validators/cgroup.h"
#include "validators/jail.h"
#include "validators/landlock.h"
#include "validators/sysfilter.h"
#include "common/util.h"
#include "common/caps.h"

#define JAIL_UID 1000
#define JAIL_GID 1000
/* The host id the jail's user is when the caller is root: nobody/nogroup. */
#define HOST_NOBODY 65534
#define DEFAULT_TIMEOUT_MS 600000u
#define DEFAULT_TMP_MB 256u
#define DEFAULT_MEM_MB 4096u
#define DEFAULT_PIDS_MAX 1024u
#define DEFAULT_DISK_MB 2048u
#define DEFAULT_NICE 10
/* A jail gets this share of the host user's inotify instances and watches. */
#define INOTIFY_SHARE 8
#define ALL_NS (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | \
		CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP)
/* How long to keep reading the pipes once pid 1 is reaped. */
#define DRAIN_MS 1000

/*
 * Bench only: bench/jail.sh compiles this file with -DSL_JAIL_STEPS and
 * points sl_jail_steps at a page shared with every process of the jail;
 * each STEP() stores the monotonic time (ms) at which that step ended, in
 * the supervisor, pid 1 or the payload (before exec: no malloc, no lock).
 * With the flag, SL_JAIL_BENCH_NO_CGROUP in the environment also leaves
 * the cgroups out, to weigh them.  Without the flag, as sluice is built,
 * STEP() is nothing and the cgroups are always made.
 */
enum jail_step {
	ST_START, ST_PLAN, ST_CGROUP, ST_CLONE, ST_MAPPED, ST_RELEASED, ST_CG_ENTERED,
	ST_ROOT, ST_PIVOT, ST_POST, ST_NET, ST_PAYLOAD, ST_LIMITS, ST_LANDLOCK, ST_EXEC,
	ST_REAPED, ST_SUPERVISED, ST_END, ST_COUNT
};
#ifdef SL_JAIL_STEPS
const char *const sl_jail_step_names[ST_COUNT] = {
	"start", "plan (+seccomp, realpath)", "cgroup made", "clone", "uid/gid maps",
	"pid 1 released", "pid 1 in cgroup ns", "root ops", "pivot_root + detach",
	"post ops + remount", "hostname + lo", "payload forked", "payload limits + caps",
	"landlock", "seccomp (exec next)", "pid 1 reaped payload", "supervisor saw exit",
	"cleanup (cgroup, mount point)"
};
double *volatile sl_jail_steps;

static void step(enum jail_step i)
{
	struct timespec ts;

	if (sl_jail_steps && !clock_gettime(CLOCK_MONOTONIC, &ts))
		sl_jail_steps[i] = (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}
#define STEP(i) step(i)
#define BENCH_NO_CGROUP() (getenv("SL_JAIL_BENCH_NO_CGROUP") != NULL)
#else
#define STEP(i) ((void)0)
#define BENCH_NO_CGROUP() 0
#endif

/*
 * OP_WRITE writes into a file that exists (a sysctl; skipped if missing);
 * OP_DETACH lazily unmounts a directory and removes it.
 */
enum op_kind { OP_MKDIR, OP_SYMLINK, OP_FILE, OP_BIND, OP_MOUNT, OP_WRITE, OP_DETACH };

/* OP_BIND flags */
#define BIND_RO   1  /* read-only */
#define BIND_DEV  2  /* device nodes: keep them usable (no nodev) */
#define BIND_REC  4  /* may fall back to a recursive bind if the source has submounts */
#define BIND_IN   8  /* src is a path inside the jail, not on the host */

/*
 * One step of the plan.  All pointers are borrowed from the plan's strings
 * and stay valid until plan_release().  dst is the path inside the jail
 * ("/usr"): before pivot_root pid 1 works relative to the new root (its
 * working directory), after it (post) at the path itself.  what names the
 * step in error messages ("bind /usr").
 */
struct op {
	enum op_kind kind;
	const char *what;
	const char *src;      /* BIND: path; SYMLINK: target; FILE, WRITE: body; MOUNT: fstype */
	const char *dst;
	const char *data;     /* MOUNT: options */
	size_t len;           /* FILE, WRITE: body length */
	unsigned long flags;  /* BIND: BIND_*; MOUNT: MS_*; MKDIR: mode */
	int post;             /* carried out after pivot_root */
	int opt;              /* skipped when dst does not exist (kernel-dependent /proc) */
};

struct plan {
	char *root;           /* the mkdtemp directory (host side) */
	struct op *ops;
	size_t nops, alloc;
	sl_strvec strings;    /* owns every string the ops point at */
	sl_strvec env;        /* the payload's environment */
	const char *shell;    /* /bin/sh, or /bin/bash with pipefail */
	char *argv[6];
	const char *userns_max;  /* without a private root: /proc/sys/user/max_user_namespaces */
	unsigned tmp_mb;
	rlim_t cpu_s, nproc, as_bytes, data_bytes;
	int nice;                /* the payload's: 0 where a CPU cgroup holds it */
	int as_root;             /* the caller is root: drop its groups, map to nobody */
	const char *root_opts;   /* the options of the root's tmpfs */
	int post;                /* plan_add() makes post-pivot_root steps */
	unsigned long ns;        /* the namespaces pid 1 lives in (CLONE_NEW*) */
	int fs;                  /* build the private root (else: the host's, unsafe) */
	const char *hostdir;     /* the workdir on the host */
	const char *layerdir;    /* opts.layer on the host, or NULL */
	int layer_held;          /* it is a detached tmpfs (jail_layer.c): pid 1 clones it */
	const struct sock_fprog *filter;
	const sl_cgroup *cg;     /* pid 1 moves itself into its v1 groups */
	int landlock_abi, allow_inet;
	const char *ll_rw[4], *ll_dev[10];
	const char *const *collect;   /* relative paths, borrowed from opts */
	size_t collect_cap;
};

/* What the children send up the report pipe; small enough to be atomic. */
enum { REP_FAIL = 1, REP_STATUS = 2, REP_STARTED = 3 };
struct report {
	int kind;
	int err;              /* REP_FAIL: errno */
	int status;           /* REP_STATUS: the payload's wait status */
	char what[116];       /* REP_FAIL: the step */
};
_Static_assert(sizeof(struct report) == SL_JAIL_SESSION_REPORT && REP_STATUS == SL_JAIL_REP_STATUS &&
	       offsetof(struct report, status) == 2 * sizeof(int) &&
	       REP_STARTED == SL_JAIL_REP_STARTED, "a session's client reads struct report");

void sl_jail_result_init(sl_jail_result *r)
{
	memset(r, 0, sizeof(*r));
	sl_buf_init(&r->output, 0);
}

static void files_release(sl_jail_result *r)
{
	for (size_t i = 0; i < r->nfiles; i++) {
		free(r->files[i].path);
		sl_buf_release(&r->files[i].data);
	}
	free(r->files);
	r->files = NULL;
	r->nfiles = 0;
}

void sl_jail_result_release(sl_jail_result *r)
{
	sl_buf_release(&r->output);
	files_release(r);
}

static const char *const layer_names[SL_JAIL_NLAYERS] = {
	"userns", "mntns", "pidns", "netns", "ipcns", "utsns", "cgroupns", "rootfs",
	"seccomp", "landlock", "cgroup-memory", "cgroup-pids", "cgroup-kill", "overlay",
	"rlimits", "no-new-privs", "cgroup-cpu", "unprivileged-ids", "proc-masked",
	"inotify-limits", "pty",
};

const char *sl_jail_layer_name(unsigned bit)
{
	for (unsigned i = 0; i < SL_JAIL_NLAYERS; i++)
		if (bit == 1u << i)
			return layer_names[i];
	return NULL;
}

void sl_jail_layers_format(sl_buf *out, unsigned layers)
{
	int first = 1;

	for (unsigned i = 0; i < SL_JAIL_NLAYERS; i++) {
		if (!(layers & (1u << i)))
			continue;
		sl_buf_addf(out, "%s%s", first ? "" : ",", layer_names[i]);
		first = 0;
	}
}

/* ---- the plan (supervisor side, may allocate) ---- */

static const char *plan_str(struct plan *p, char *s)
{
	sl_strvec_push_nodup(&p->strings, s);
	return s;
}

static const char *plan_strf(struct plan *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static const char *plan_strf(struct plan *p, const char *fmt, ...)
{
	sl_buf b = SL_BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	sl_buf_vaddf(&b, fmt, ap);
	va_end(ap);
	return plan_str(p, sl_buf_detach(&b, NULL));
}

/* Add a step acting on the jail path jpath ("/usr"); returns it for extra fields. */
static struct op *plan_add(struct plan *p, enum op_kind kind, const char *verb,
			   const char *jpath)
{
	struct op *op;

	SL_ALLOC_GROW(p->ops, p->nops + 1, p->alloc);
	op = &p->ops[p->nops++];
	memset(op, 0, sizeof(*op));
	op->kind = kind;
	op->what = plan_strf(p, "%s %s", verb, jpath);
	op->dst = plan_str(p, sl_xstrdup(jpath));
	op->post = p->post;
	return op;
}

static void plan_mkdir(struct plan *p, const char *jpath, unsigned mode)
{
	plan_add(p, OP_MKDIR, "mkdir", jpath)->flags = mode;
}

static void plan_file(struct plan *p, const char *jpath, const char *body)
{
	struct op *op = plan_add(p, OP_FILE, "write", jpath);

	op->src = body;
	op->len = strlen(body);
}

static void plan_symlink(struct plan *p, const char *jpath, const char *target)
{
	plan_add(p, OP_SYMLINK, "symlink", jpath)->src = target;
}

static struct op *plan_bind(struct plan *p, const char *src, const char *jpath,
			    unsigned flags)
{
	struct op *op = plan_add(p, OP_BIND, "bind", jpath);

	op->src = src;
	op->flags = flags;
	return op;
}

/* Write body into the existing file jpath (a sysctl of the jail's namespaces). */
static void plan_write(struct plan *p, const char *jpath, const char *body)
{
	struct op *op = plan_add(p, OP_WRITE, "write", jpath);

	op->src = body;
	op->len = strlen(body);
}

static struct op *plan_mount(struct plan *p, const char *fstype, const char *jpath,
			     unsigned long flags, const char *data)
{
	struct op *op = plan_add(p, OP_MOUNT, "mount", jpath);

	op->src = fstype;
	op->flags = flags;
	op->data = data;
	return op;
}

/*
 * Mirror host path "/name" (or "/etc/name") into the jail as the host has it:
 * a symlink stays the same symlink, a directory or a file becomes a read-only
 * bind; a missing entry is skipped.
 */
static int plan_mirror(struct plan *p, const char *hpath, unsigned flags, sl_err *err)
{
	struct stat st;
	char target[PATH_MAX];
	ssize_t n;

	if (lstat(hpath, &st))
		return errno == ENOENT ? 0 :
			sl_err_set(err, SL_ERROR, "cannot stat '%s': %s", hpath, strerror(errno));
	if (S_ISLNK(st.st_mode)) {
		n = readlink(hpath, target, sizeof(target) - 1);
		if (n < 0)
			return sl_err_set(err, SL_ERROR, "cannot read link '%s': %s",
					  hpath, strerror(errno));
		target[n] = '\0';
		plan_symlink(p, hpath, plan_str(p, sl_xstrdup(target)));
	} else if (S_ISDIR(st.st_mode)) {
		plan_mkdir(p, hpath, 0755);
		plan_bind(p, hpath, hpath, BIND_RO | flags);
	} else if (S_ISREG(st.st_mode)) {
		plan_file(p, hpath, "");
		plan_bind(p, hpath, hpath, BIND_RO | flags);
	}
	return 0;
}

static const char passwd_body[] =
	"root:x:0:0:root:/root:/bin/sh\n"
	"sluice:x:1000:1000:sluice:/tmp:/bin/sh\n"
	"nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n";
static const char group_body[] =
	"root:x:0:\n"
	"sluice:x:1000:\n"
	"nogroup:x:65534:\n";
static const char hosts_body[] =
	"127.0.0.1\tlocalhost\n"
	"127.0.1.1\tsluice\n"
	"::1\tlocalhost ip6-localhost ip6-loopback\n";
static const char nsswitch_body[] =
	"passwd: files\ngroup: files\nshadow: files\nhosts: files\n"
	"networks: files\nprotocols: files\nservices: files\n";

/* Toolchain entries of /etc that compiling and running need; nothing secret. */
static const char *const etc_mirrored[] = {
	"alternatives", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime",
};
/* Merged-/usr links (or real directories on older systems). */
static const char *const top_mirrored[] = {
	"bin", "sbin", "lib", "lib32", "lib64", "libx32",
};
static const char *const dev_nodes[] = { "null", "zero", "full", "random", "urandom" };

static void env_set(sl_strvec *env, const char *entry)
{
	const char *eq = strchr(entry, '=');
	size_t nl = eq ? (size_t)(eq - entry) : strlen(entry);

	for (size_t i = 0; i < env->n; i++) {
		if (!strncmp(env->v[i], entry, nl) && env->v[i][nl] == '=') {
			free(env->v[i]);
			env->v[i] = sl_xstrdup(entry);
			return;
		}
	}
	sl_strvec_push(env, entry);
}

static void plan_release(struct plan *p)
{
	free(p->root);
	free(p->ops);
	sl_strvec_release(&p->strings);
	sl_strvec_release(&p->env);
}

/*
 * Root-only kernel files of /proc, masked by a /dev/null bind (nodev, so
 * not even that opens), and directories hidden under an empty read-only
 * tmpfs or made read-only, as container runtimes do; entries this kernel
 * lacks are skipped.
 */
static const char *const proc_masked[] = {
	"kcore", "kpageflags", "kpagecount", "kpagecgroup", "kallsyms", "keys", "key-users",
	"latency_stats", "timer_list", "timer_stats", "sched_debug", "slabinfo",
	"sysrq-trigger", "vmallocinfo", "pagetypeinfo", "iomem", "ioports", "mtrr", "kmsg",
};
static const char *const proc_emptied[] = { "acpi", "asound", "scsi", "driver" };
static const char *const proc_readonly[] = { "sys", "bus", "fs", "irq", "sysvipc" };

/* The host limit of one per-user inotify budget, or dflt when unreadable. */
static unsigned long host_limit(const char *path, unsigned long dflt)
{
	char buf[32];
	sl_buf b = SL_BUF_INIT;
	unsigned long v = dflt;

	if (!sl_read_file(&b, path, sizeof(buf), NULL))
		v = strtoul(b.buf, NULL, 10);
	sl_buf_release(&b);
	return v ? v : dflt;
}

/* /proc of the jail: its own sysctls set, then the masks. */
static void plan_proc(struct plan *p)
{
	unsigned long inst = host_limit("/proc/sys/fs/inotify/max_user_instances", 128);
	unsigned long watch = host_limit("/proc/sys/fs/inotify/max_user_watches", 8192);

	plan_mkdir(p, "/proc", 0555);
	plan_mount(p, "proc", "/proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL);
	if (!(p->ns & CLONE_NEWUSER))
		goto masks;     /* these would be the host's own sysctls */
	/*
	 * The user namespace's own limits, counted for the jail's user on top
	 * of (not instead of) the host user's: nested user namespaces none,
	 * inotify a share of the host user's budget.  Only pid 1 may write
	 * them (CAP_SYS_RESOURCE in the namespace), and /proc/sys becomes
	 * read-only below anyway.
	 */
	plan_write(p, "/proc/sys/user/max_user_namespaces", "0\n");
	plan_write(p, "/proc/sys/user/max_inotify_instances",
		   plan_strf(p, "%lu\n", inst / INOTIFY_SHARE ? inst / INOTIFY_SHARE : 1));
	plan_write(p, "/proc/sys/user/max_inotify_watches",
		   plan_strf(p, "%lu\n", watch / INOTIFY_SHARE ? watch / INOTIFY_SHARE : 1));
masks:
	for (size_t i = 0; i < sizeof(proc_masked) / sizeof(*proc_masked); i++)
		plan_bind(p, "/dev/null", plan_strf(p, "/proc/%s", proc_masked[i]),
			  BIND_IN | BIND_RO)->opt = 1;
	for (size_t i = 0; i < sizeof(proc_emptied) / sizeof(*proc_emptied); i++)
		plan_mount(p, "tmpfs", plan_strf(p, "/proc/%s", proc_emptied[i]),
			   MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "size=4k,mode=0555")->opt = 1;
	for (size_t i = 0; i < sizeof(proc_readonly) / sizeof(*proc_readonly); i++) {
		const char *d = plan_strf(p, "/proc/%s", proc_readonly[i]);

		plan_bind(p, d, d, BIND_IN | BIND_RO)->opt = 1;
	}
}

/*
 * The private root: what pid 1 mounts and writes before pivot_root, then
 * (post) the overlay at /src, made from inside so that its layers show as
 * /proc/self/fd/N and .ovl (detached once the overlay holds it; a writable
 * workdir is a bind through /.lower, detached too).  wfd is the workdir, opened
 * by the supervisor: pid 1 binds it through /proc/self/fd and never looks
 * its host path up.
 */
static int plan_root(struct plan *p, const char *workdir, int wfd, int lfd, unsigned disk_mb,
		     int writable, sl_err *err)
{
	const char *tmpdir = getenv("TMPDIR");
	const char *size;
	char hpath[64], *git;
	struct stat st;
	int git_kind = 0;

	if (!tmpdir || tmpdir[0] != '/')
		tmpdir = "/tmp";
	p->root = sl_path_join(tmpdir, "sluice-jail-XXXXXX");
	if (!mkdtemp(p->root)) {
		sl_err_set(err, SL_ERROR, "cannot create the jail's root '%s': %s",
			   p->root, strerror(errno));
		free(p->root);
		p->root = NULL;
		return SL_ERROR;
	}

	plan_mkdir(p, "/usr", 0755);
	plan_bind(p, "/usr", "/usr", BIND_RO | BIND_REC);
	for (size_t i = 0; i < sizeof(top_mirrored) / sizeof(*top_mirrored); i++) {
		snprintf(hpath, sizeof(hpath), "/%s", top_mirrored[i]);
		if (plan_mirror(p, plan_str(p, sl_xstrdup(hpath)), BIND_REC, err))
			return SL_ERROR;
	}

	plan_mkdir(p, "/etc", 0755);
	plan_file(p, "/etc/passwd", passwd_body);
	plan_file(p, "/etc/group", group_body);
	plan_file(p, "/etc/hosts", hosts_body);
	plan_file(p, "/etc/hostname", "sluice\n");
	plan_file(p, "/etc/nsswitch.conf", nsswitch_body);
	for (size_t i = 0; i < sizeof(etc_mirrored) / sizeof(*etc_mirrored); i++) {
		snprintf(hpath, sizeof(hpath), "/etc/%s", etc_mirrored[i]);
		if (plan_mirror(p, plan_str(p, sl_xstrdup(hpath)), 0, err))
			return SL_ERROR;
	}

	plan_mkdir(p, "/dev", 0755);
	for (size_t i = 0; i < sizeof(dev_nodes) / sizeof(*dev_nodes); i++) {
		const char *node = plan_strf(p, "/dev/%s", dev_nodes[i]);

		/* read-only: writing to a device works, chmod and utimes do not */
		plan_file(p, node, "");
		plan_bind(p, node, node, BIND_DEV | BIND_RO);
	}
	plan_symlink(p, "/dev/fd", "/proc/self/fd");
	plan_symlink(p, "/dev/stdin", "/proc/self/fd/0");
	plan_symlink(p, "/dev/stdout", "/proc/self/fd/1");
	plan_symlink(p, "/dev/stderr", "/proc/self/fd/2");
	size = plan_strf(p, "mode=1777,size=%um", p->tmp_mb);
	plan_mkdir(p, "/dev/shm", 0755);
	plan_mount(p, "tmpfs", "/dev/shm", MS_NOSUID | MS_NODEV, size);
	plan_mkdir(p, "/dev/pts", 0755);
	plan_mount(p, "devpts", "/dev/pts", MS_NOSUID | MS_NOEXEC,
		   "newinstance,ptmxmode=0666,mode=0620");
	plan_symlink(p, "/dev/ptmx", "pts/ptmx");

	plan_proc(p);
	plan_mkdir(p, "/tmp", 01777);
	plan_mount(p, "tmpfs", "/tmp", MS_NOSUID | MS_NODEV, size);
	plan_mkdir(p, "/src", 0755);

	/*
	 * The upper layer and overlayfs' work directory live on a size-capped
	 * tmpfs that pid 1 detaches once the overlay holds it: the payload
	 * cannot reach them except through /src.
	 */
	if (writable) {
		plan_mkdir(p, "/.lower", 0755);
		plan_bind(p, plan_strf(p, "/proc/self/fd/%d", wfd), "/.lower", 0);
	}
	plan_mkdir(p, "/.ovl", 0700);
	plan_mount(p, "tmpfs", "/.ovl", MS_NOSUID | MS_NODEV,
		   plan_strf(p, "mode=0755,size=%um", writable || lfd >= 0 ? 1 : disk_mb));
	plan_mkdir(p, "/.ovl/u", 0755);
	plan_mkdir(p, "/.ovl/w", 0755);
	git = sl_path_join(workdir, ".git");
	if (!lstat(git, &st))
		git_kind = S_ISDIR(st.st_mode) ? 'd' : S_ISREG(st.st_mode) ? 'f' : 0;
	free(git);
	if (git_kind == 'f')
		plan_file(p, "/.ovl/gitdir", "gitdir: /nonexistent\n");

	/*
	 * The overlay takes the workdir straight from the descriptor, so no
	 * mount of it (whose root would name its host path) ever shows; its
	 * options show just these strings.
	 */
	if (!writable && lfd < 0)
		plan_mount(p, "overlay", "/src", MS_NOSUID | MS_NODEV,
			   plan_strf(p, "lowerdir=/proc/self/fd/%d,upperdir=.ovl/u,workdir=.ovl/w",
				     wfd));
	/*
	 * A candidate's layer on the host: it outlives the jail, so opaque
	 * directories and redirects are kept as user.overlay.* attributes,
	 * which a user namespace may write.
	 */
	if (lfd >= 0)
		plan_mount(p, "overlay", "/src", MS_NOSUID | MS_NODEV,
			   plan_strf(p, "lowerdir=/proc/self/fd/%d,upperdir=/proc/self/fd/%d/u,"
				     "workdir=/proc/self/fd/%d/w,userxattr", wfd, lfd, lfd));
	p->post = 1;
	if (writable)
		plan_bind(p, "/.lower", "/src", BIND_IN);
	/*
	 * .git read-only, and being a mount point it cannot be removed or
	 * renamed either: no hooks, config (core.fsmonitor, core.hooksPath) or
	 * objects for host-side git to trip over afterwards.  A worktree's
	 * pointer file names the user's repository: the jail gets a neutral one.
	 */
	if (git_kind)
		plan_bind(p, git_kind == 'f' ? "/.ovl/gitdir" : "/src/.git", "/src/.git",
			  BIND_IN | BIND_RO);
	if (writable)
		plan_add(p, OP_DETACH, "detach", "/.lower");
	plan_add(p, OP_DETACH, "detach", "/.ovl");
	p->post = 0;
	p->ll_rw[0] = "/src";
	p->ll_rw[1] = "/tmp";
	p->ll_rw[2] = "/dev/shm";
	return 0;
}

static int plan_build(struct plan *p, const sl_jail_opts *opts, const char *workdir, int wfd,
		      int lfd, unsigned timeout_ms, sl_err *err)
{
	size_t nd = 0, na = 0;

	p->hostdir = workdir;
	p->layerdir = opts->layer;
	if (p->fs && plan_root(p, workdir, wfd, lfd, opts->disk_mb ? opts->disk_mb : DEFAULT_DISK_MB,
			       opts->writable_workdir, err))
		return SL_ERROR;
	if (!p->fs) {
		p->ll_rw[0] = workdir;
		p->ll_rw[1] = "/tmp";
		p->ll_rw[2] = "/dev/shm";
	}
	for (size_t i = 0; i < sizeof(dev_nodes) / sizeof(*dev_nodes); i++)
		p->ll_dev[nd++] = plan_strf(p, "/dev/%s", dev_nodes[i]);
	if (p->fs)
		p->ll_dev[nd++] = "/dev/pts";
	p->collect = opts->collect;
	p->collect_cap = opts->collect_cap ? opts->collect_cap : SL_CAP_JAIL_COLLECT;
	p->allow_inet = opts->allow_inet;

	env_set(&p->env, "PATH=" SL_JAIL_PATH);
	env_set(&p->env, "HOME=/tmp");
	env_set(&p->env, "LANG=C.UTF-8");
	env_set(&p->env, "TERM=dumb");
	env_set(&p->env, "TMPDIR=/tmp");
	for (size_t i = 0; opts->env && opts->env[i]; i++)
		env_set(&p->env, opts->env[i]);
	if (!p->env.v)
		BUG("empty jail environment");

	p->shell = opts->pipefail ? "/bin/bash" : "/bin/sh";
	p->argv[na++] = opts->pipefail ? "bash" : "sh";
	if (opts->pipefail) {
		p->argv[na++] = "-o";
		p->argv[na++] = "pipefail";
	}
	p->argv[na++] = "-c";
	/* a copy: pid 1 wipes the caller's argv and environ, which may hold it */
	p->argv[na++] = (char *)plan_str(p, sl_xstrdup(opts->command));
	p->argv[na] = NULL;
	p->cpu_s = (rlim_t)(timeout_ms / 1000 + 1 + 5);   /* timeout rounded up, + 5 s */
	p->nproc = opts->pids_max ? opts->pids_max : DEFAULT_PIDS_MAX;
	p->as_bytes = opts->as_mb ? (rlim_t)opts->as_mb << 20 : RLIM_INFINITY;
	p->data_bytes = RLIM_INFINITY;     /* set once we know there is no memory cgroup */
	return 0;
}

/* ---- the children: raw system calls on prepared memory only ---- */

static void report_fail(int fd, const char *what, int e)
{
	struct report r;
	size_t n = strlen(what);

	memset(&r, 0, sizeof(r));
	r.kind = REP_FAIL;
	r.err = e;
	if (n > sizeof(r.what) - 1)
		n = sizeof(r.what) - 1;
	memcpy(r.what, what, n);
	if (write(fd, &r, sizeof(r)) < 0) {
		/* the supervisor is gone; nobody to tell */
	}
}

static _Noreturn void fail(int fd, const char *what)
{
	report_fail(fd, what, errno);
	_exit(126);
}

static pid_t raw_fork(unsigned long flags)
{
	if ((flags & CLONE_NEWUSER) && sl_jail_test_no_userns()) {
		errno = EPERM;
		return -1;
	}
	return (pid_t)syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);
}

/* clone3's arguments (Debian 12's headers lack a usable struct clone_args). */
struct clone3_args {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
	uint64_t set_tid, set_tid_size, cgroup;
};
#define INTO_CGROUP 0x200000000ULL     /* CLONE_INTO_CGROUP, Linux 5.7 */

/*
 * raw_fork(), but born in the cgroup directory cgfd (if >= 0), which costs
 * nothing, where moving it afterwards waits for an RCU grace period.
 * *into says whether that worked (else the child is where we are).
 */
static pid_t raw_fork_into(unsigned long flags, int cgfd, int *into)
{
	pid_t pid;

	*into = 0;
#ifdef SYS_clone3
	if (cgfd >= 0 && !((flags & CLONE_NEWUSER) && sl_jail_test_no_userns())) {
		struct clone3_args a;

		memset(&a, 0, sizeof(a));
		a.flags = flags | INTO_CGROUP;
		a.exit_signal = SIGCHLD;
		a.cgroup = (uint64_t)cgfd;
		pid = (pid_t)syscall(SYS_clone3, &a, sizeof(a));
		if (pid >= 0) {
			*into = 1;
			return pid;
		}
	}
#endif
	return raw_fork(flags);
}

static void close_from(unsigned lo, unsigned hi)
{
	struct rlimit rl;
	unsigned max = 65536;

#ifdef SYS_close_range
	if (!syscall(SYS_close_range, lo, hi, 0))
		return;
#endif
	/* before Linux 5.9: one by one, up to the descriptor limit */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < max)
		max = (unsigned)rl.rlim_cur;
	for (unsigned fd = lo; fd <= hi && fd < max; fd++)
		close((int)fd);
}

/* Close every descriptor not in keep[0..n) (n small). */
static void close_except(int *keep, int n)
{
	unsigned next = 0;

	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && keep[j - 1] > keep[j]; j--) {
			int t = keep[j];

			keep[j] = keep[j - 1];
			keep[j - 1] = t;
		}
	for (int i = 0; i < n; i++) {
		if ((unsigned)keep[i] > next)
			close_from(next, (unsigned)keep[i] - 1);
		if ((unsigned)keep[i] + 1 > next)
			next = (unsigned)keep[i] + 1;
	}
	close_from(next, ~0u);
}

/* Move fd to 3 or above (so 0-2 can be set up freely); close-on-exec. */
static int fd_high(int fd)
{
	int nfd;

	if (fd >= 3)
		return fd;
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	close(fd);
	return nfd;
}

/*
 * The flags a bind mount must keep when it is remounted inside a user
 * namespace: the kernel locks read-only, nosuid, nodev, noexec and the atime
 * mode of mounts that came from a more privileged namespace, and a remount
 * that would clear one of them fails with EPERM.
 */
static unsigned long locked_flags(const char *path, int *ok)
{
	struct statfs sf;
	unsigned long f = 0;

	*ok = !statfs(path, &sf);
	if (!*ok)
		return 0;
	if (sf.f_flags & ST_RDONLY)
		f |= MS_RDONLY;
	if (sf.f_flags & ST_NOSUID)
		f |= MS_NOSUID;
	if (sf.f_flags & ST_NODEV)
		f |= MS_NODEV;
	if (sf.f_flags & ST_NOEXEC)
		f |= MS_NOEXEC;
	if (sf.f_flags & ST_NODIRATIME)
		f |= MS_NODIRATIME;
	if (sf.f_flags & ST_NOATIME)
		f |= MS_NOATIME;
	else if (sf.f_flags & ST_RELATIME)
		f |= MS_RELATIME;
	else
		f |= MS_STRICTATIME;
	return f;
}

/* A jail path as pid 1 reaches it: relative to the new root before pivot_root. */
static const char *at(const struct op *op, const char *jpath)
{
	return op->post ? jpath : jpath + 1;
}

static void do_bind(int rep, const struct op *op)
{
	unsigned long fl = MS_REMOUNT | MS_BIND | MS_NOSUID;
	const char *src = (op->flags & BIND_IN) ? at(op, op->src) : op->src;
	const char *dst = at(op, op->dst);
	int rec = 0, ok;

	/*
	 * Not recursive, so no submount of the source comes along unchecked.
	 * A source with submounts refuses that inside a user namespace (EINVAL);
	 * for the toolchain we then take the whole tree and make every mount of
	 * it read-only with mount_setattr(AT_RECURSIVE), or fail.
	 */
	if (mount(src, dst, NULL, MS_BIND, NULL)) {
		if (errno == ENOENT && op->opt)
			return;
		if (errno != EINVAL || !(op->flags & BIND_REC))
			fail(rep, op->what);
		if (mount(src, dst, NULL, MS_BIND | MS_REC, NULL))
			fail(rep, op->what);
		rec = 1;
	}
	fl |= locked_flags(dst, &ok);
	if (!ok)
		fail(rep, op->what);
	if (op->flags & BIND_RO)
		fl |= MS_RDONLY;
	if (!(op->flags & BIND_DEV))
		fl |= MS_NODEV;
	if (mount(NULL, dst, NULL, fl, NULL))
		fail(rep, op->what);
	if (rec) {
#if defined(SYS_mount_setattr) && defined(MOUNT_ATTR_RDONLY)
		struct mount_attr ma;

		memset(&ma, 0, sizeof(ma));
		ma.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
			((op->flags & BIND_RO) ? MOUNT_ATTR_RDONLY : 0);
		if (syscall(SYS_mount_setattr, AT_FDCWD, dst, AT_RECURSIVE, &ma, sizeof(ma)))
			fail(rep, op->what);
#else
		errno = ENOSYS;
		fail(rep, op->what);
#endif
	}
}

static void do_op(int rep, const struct op *op)
{
	const char *dst = at(op, op->dst);
	int fd;

	switch (op->kind) {
	case OP_MKDIR:
		if (mkdir(dst, (mode_t)op->flags) || chmod(dst, (mode_t)op->flags))
			fail(rep, op->what);
		break;
	case OP_SYMLINK:
		if (symlink(op->src, dst))
			fail(rep, op->what);
		break;
	case OP_FILE:
	case OP_WRITE:
		fd = op->kind == OP_FILE ? open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644) :
			open(dst, O_WRONLY | O_CLOEXEC);
		if (fd < 0 && errno == ENOENT && op->kind == OP_WRITE)
			break;     /* a kernel without this sysctl */
		if (fd < 0 || (op->len && write(fd, op->src, op->len) != (ssize_t)op->len))
			fail(rep, op->what);
		close(fd);
		break;
	case OP_BIND:
		do_bind(rep, op);
		break;
	case OP_MOUNT:
		if (mount(op->src, dst, op->src, op->flags, op->data)) {
			if (errno == ENOENT && op->opt)
				break;
			fail(rep, op->what);
		}
		break;
	case OP_DETACH:
		if (umount2(dst, MNT_DETACH) || rmdir(dst))
			fail(rep, op->what);
		break;
	}
}

/*
 * Wipe pid 1's copy of the caller's command line and environment, which
 * /proc/1/cmdline would otherwise show to the payload.  The addresses are
 * fields 48-51 of /proc/self/stat (after the parenthesised comm).
 */
static void wipe_args_and_env(void)
{
	char buf[2048], *s;
	unsigned long v[4];
	ssize_t n;
	int fd, field;

	fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	s = strrchr(buf, ')');
	if (!s)
		return;
	for (field = 2; *s && field < 48; s++)
		if (*s == ' ')
			field++;
	for (int i = 0; i < 4; i++) {
		v[i] = 0;
		while (*s == ' ')
			s++;
		if (*s < '0' || *s > '9')
			return;
		while (*s >= '0' && *s <= '9')
			v[i] = v[i] * 10 + (unsigned long)(*s++ - '0');
	}
	if (v[0] && v[1] > v[0] && v[1] - v[0] < (1ul << 24)) {
		memset((void *)v[0], 0, v[1] - v[0]);
		if (v[1] - v[0] > 12)
			memcpy((void *)v[0], "sluice-init", 12);
	}
	if (v[2] && v[3] > v[2] && v[3] - v[2] < (1ul << 24))
		memset((void *)v[2], 0, v[3] - v[2]);
}

/*
 * No nested user namespaces: inside one the payload would be root again and
 * could mount, unshare and reach kernel code that unprivileged users cannot.
 * The limit is per user namespace and the payload cannot write it back (it
 * has no CAP_SYS_RESOURCE).  Kernels before 4.9 lack the file.
 */
static void limit_userns(int rep, const char *path)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd < 0 && errno == ENOENT)
		return;
	if (fd < 0 || write(fd, "0\n", 2) != 2)
		fail(rep, "limit user namespaces");
	close(fd);
}

/*
 * Pid 1 takes the jail's ids (uid/gid 1000 inside), keeping its capabilities
 * in the namespace: as root it is host uid 0, which is not mapped, so the
 * kernel sees no "root gives up root" and drops nothing.  Root's
 * supplementary groups go (setgroups is allowed for a root-written map).
 */
static void become_jail_user(int rep, int as_root)
{
	if (as_root && syscall(SYS_setgroups, 0, NULL))
		fail(rep, "drop supplementary groups");
	if (syscall(SYS_setresgid, JAIL_GID, JAIL_GID, JAIL_GID) ||
	    syscall(SYS_setresuid, JAIL_UID, JAIL_UID, JAIL_UID))
		fail(rep, "become the jail's user");
}

static void loopback_up(int rep)
{
	struct ifreq ifr;
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, "lo", 3);
	if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr))
		fail(rep, "loopback up");
	ifr.ifr_flags |= IFF_UP;
	if (ioctl(s, SIOCSIFFLAGS, &ifr))
		fail(rep, "loopback up");
	close(s);
}

static void set_limit(int res, rlim_t v)
{
	struct rlimit rl;

	if (getrlimit(res, &rl))
		return;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < v)
		v = rl.rlim_max;
	rl.rlim_cur = rl.rlim_max = v;
	setrlimit(res, &rl);
}

static _Noreturn void payload(const struct plan *p, pid_t init, int out_w, int rep)
{
	struct __user_cap_header_struct ch = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct cd[2];
	struct sigaction sa;
	sigset_t all;
	int keep[4], fd;

	STEP(ST_PAYLOAD);
	if (setsid() < 0)
		fail(rep, "setsid");
	fd = open("/dev/null", O_RDONLY);
	if (fd < 0 || dup2(fd, 0) < 0 || dup2(out_w, 1) < 0 || dup2(out_w, 2) < 0)
		fail(rep, "set up stdio");
	keep[0] = 0;
	keep[1] = 1;
	keep[2] = 2;
	keep[3] = rep;
	close_except(keep, 4);

	set_limit(RLIMIT_CORE, 0);
	set_limit(RLIMIT_NOFILE, 1024);
	set_limit(RLIMIT_FSIZE, (rlim_t)1 << 30);
	/* none unless asked: sanitizer runtimes (ASan) reserve terabytes */
	set_limit(RLIMIT_AS, p->as_bytes);
	set_limit(RLIMIT_DATA, p->data_bytes);
	set_limit(RLIMIT_CPU, p->cpu_s);
	/* below the host's own work, where no CPU cgroup holds the jail */
	if (p->nice && setpriority(PRIO_PROCESS, 0, p->nice))
		fail(rep, "nice");
	/*
	 * Since Linux 5.14 RLIMIT_NPROC counts per user namespace, so this is
	 * the jail's own count, also when the caller is root (and root's own
	 * exemption does not apply: the payload has no capability in the
	 * initial namespace).  On older kernels it counts every process of the
	 * caller's real uid, which can make fork fail in a busy unprivileged
	 * session.
	 */
	set_limit(RLIMIT_NPROC, p->nproc);
	/* the out-of-memory killer takes the command, not pid 1 that reports its end */
	fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (fd >= 0 && write(fd, "1000", 4) < 0) {
		/* a kernel without it: pid 1's death is reported as well */
	}
	if (fd >= 0)
		close(fd);

	/* Ignored signals would survive exec; blocked ones too. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	for (int sig = 1; sig < NSIG; sig++)
		sigaction(sig, &sa, NULL);
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != init)
		fail(rep, "set parent-death signal");
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) && errno != EINVAL)
		fail(rep, "clear ambient capabilities");
	for (int cap = 0; cap < 64; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)) {
			if (errno == EINVAL)
				break;
			fail(rep, "drop capability bounding set");
		}
	memset(cd, 0, sizeof(cd));
	if (syscall(SYS_capset, &ch, cd))
		fail(rep, "drop capabilities");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		fail(rep, "set no-new-privs");
	umask(022);
	STEP(ST_LIMITS);
	if (p->landlock_abi > 0 &&
	    sl_landlock_apply(p->landlock_abi, p->ll_rw, p->ll_dev, p->allow_inet))
		fail(rep, "landlock");
	STEP(ST_LANDLOCK);
	/* last: from here on only execve */
	if (p->filter && sl_seccomp_install(p->filter))
		fail(rep, "install the seccomp filter");
	STEP(ST_EXEC);
	execve(p->shell, p->argv, p->env.v);
	fail(rep, p->shell);        /* "jail setup: /bin/bash: No such file or directory" */
}

/*
 * Send one collected file up the files pipe: a struct file_hdr, then len
 * bytes.  The file is opened from /src with openat2 so that nothing the
 * payload planted (a symlink, "..", a mount) leads pid 1 outside, and only
 * a regular file is read (a FIFO would block, a device would never end).
 */
struct file_hdr {
	uint32_t index;
	int32_t err;
	int32_t truncated;
	uint32_t pad;
	uint64_t len;
};

static int send_all(int fd, const void *data, size_t len)
{
	const char *s = data;

	while (len) {
		ssize_t n = write(fd, s, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		s += n;
		len -= (size_t)n;
	}
	return 0;
}

static void collect_one(const struct plan *p, int dirfd, uint32_t index, int fw)
{
	static char chunk[16384];
	struct file_hdr h;
	struct open_how how;
	struct stat st;
	uint64_t left;
	int fd;

	memset(&h, 0, sizeof(h));
	memset(&how, 0, sizeof(how));
	h.index = index;
	how.flags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
		RESOLVE_NO_XDEV;
	fd = (int)syscall(SYS_openat2, dirfd, p->collect[index], &how, sizeof(how));
	if (fd < 0) {
		h.err = errno;
	} else if (fstat(fd, &st)) {
		h.err = errno;
	} else if (!S_ISREG(st.st_mode)) {
		h.err = EINVAL;
	} else {
		h.len = (uint64_t)st.st_size;
		if (h.len > p->collect_cap) {
			h.len = p->collect_cap;
			h.truncated = 1;
		}
	}
	if (send_all(fw, &h, sizeof(h)))
		_exit(0);
	/* the file may shrink meanwhile: pad with zeros to the length announced */
	for (left = h.len; left; ) {
		size_t want = left < sizeof(chunk) ? (size_t)left : sizeof(chunk);
		ssize_t n = read(fd, chunk, want);

		if (n <= 0) {
			memset(chunk, 0, want);
			n = (ssize_t)want;
		}
		if (send_all(fw, chunk, (size_t)n))
			_exit(0);
		left -= (uint64_t)n;
	}
	if (fd >= 0)
		close(fd);
}

static void collect_files(const struct plan *p, const char *srcdir, int fw)
{
	int dirfd = open(srcdir, O_PATH | O_DIRECTORY | O_CLOEXEC);

	for (uint32_t i = 0; p->collect[i]; i++) {
		if (dirfd < 0) {
			struct file_hdr h;

			memset(&h, 0, sizeof(h));
			h.index = i;
			h.err = errno;
			if (send_all(fw, &h, sizeof(h)))
				return;
			continue;
		}
		collect_one(p, dirfd, i, fw);
	}
	if (dirfd >= 0)
		close(dirfd);
}

/* The descriptors pid 1 gets from the supervisor. */
struct init_fds {
	int sync_r, out_w, rep, files_w, wfd, lfd, ctl;
};

/*
 * First half of the root, in the new mount namespace while still the
 * caller's host id (so the path to the mount point is ours): a private
 * tmpfs to become /, and the workdir and layer opened again from this
 * namespace at the descriptor numbers the plan's "/proc/self/fd/N" name
 * (a bind takes no mount of another namespace).
 */
static void root_begin(const struct plan *p, int rep, int wfd, int lfd)
{
	int fd;

	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		fail(rep, "make / private");
	if (mount("tmpfs", p->root, "tmpfs", MS_NOSUID | MS_NODEV, p->root_opts))
		fail(rep, "mount tmpfs on /");
	if (chdir(p->root))
		fail(rep, "chdir /");
	fd = open(p->hostdir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || dup3(fd, wfd, O_CLOEXEC) < 0)
		fail(rep, "bind /.lower");
	close(fd);
	if (lfd >= 0 && p->layer_held) {
		/* a mount of no namespace: cloned into ours, the same tmpfs */
		fd = open_tree(lfd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
		if (fd < 0 || dup3(fd, lfd, O_CLOEXEC) < 0)
			fail(rep, "clone the layer's tmpfs");
		close(fd);
	} else if (lfd >= 0) {
		fd = open(p->layerdir, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0 || dup3(fd, lfd, O_CLOEXEC) < 0)
			fail(rep, "open the layer");
		close(fd);
	}
}

/*
 * Second half, as the jail's user: the plan's mounts, pivot into the new
 * root and detach the old one, the mounts that need the new root, then /
 * read-only and /src the working directory.
 */
static void root_finish(const struct plan *p, int rep)
{
	for (size_t i = 0; i < p->nops; i++)
		if (!p->ops[i].post)
			do_op(rep, &p->ops[i]);
	STEP(ST_ROOT);
	if (syscall(SYS_pivot_root, ".", "."))
		fail(rep, "pivot_root");
	if (umount2(".", MNT_DETACH))
		fail(rep, "detach the old root");
	STEP(ST_PIVOT);
	if (chdir("/"))
		fail(rep, "chdir /");
	for (size_t i = 0; i < p->nops; i++)
		if (p->ops[i].post)
			do_op(rep, &p->ops[i]);
	if (mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV, NULL))
		fail(rep, "remount / read-only");
	if (chdir("/src"))
		fail(rep, "chdir /src");
	STEP(ST_POST);
}

/*
 * Nothing of the command may run while pid 1 reads its files (nor outlive
 * it without a pid namespace): kill every process pid 1 may signal (in a
 * pid namespace: all but itself) and reap them.
 */
static void kill_the_rest(const struct plan *p, pid_t child)
{
	int dummy;

	if (p->ns & CLONE_NEWPID) {
		kill(-1, SIGKILL);
		while (wait4(-1, &dummy, __WALL, NULL) > 0 || errno == EINTR)
			;
	} else {
		/* best effort: what left the session is the cgroup's job */
		kill(-child, SIGKILL);
		while (wait4(-1, &dummy, __WALL | WNOHANG, NULL) > 0)
			;
	}
}

/* Tell the supervisor KIND (with STATUS); if it is gone, nobody listens. */
static void report_to(int rep, int kind, int status)
{
	struct report r;

	memset(&r, 0, sizeof(r));
	r.kind = kind;
	r.status = status;
	if (write(rep, &r, sizeof(r)) < 0) {
		/* the supervisor is gone */
	}
}

/*
 * A session's /tmp and /dev/shm made again between commands, so that a
 * command leaves the next one nothing but the files of /src.
 */
static void fresh_tmp(const struct plan *p, int rep)
{
	for (size_t i = 0; i < p->nops; i++) {
		const struct op *op = &p->ops[i];

		if (op->kind != OP_MOUNT || op->post ||
		    (strcmp(op->dst, "/tmp") && strcmp(op->dst, "/dev/shm")))
			continue;
		if (umount2(op->dst, MNT_DETACH) ||
		    mount(op->src, op->dst, op->src, op->flags, op->data))
			fail(rep, op->what);
	}
}

/* The next command of a session, as pid 1 receives it. */
struct session_msg {
	struct sl_jail_session_cmd h;
	char cmd[SL_JAIL_SESSION_CMD_MAX + 1];
};

/*
 * The next command of a session: one message on ctl, a struct
 * sl_jail_session_cmd then the command's bytes, with the write end of its
 * output pipe attached.  0, or -1 when the session is over (end of file,
 * or a message that breaks the protocol).
 */
static int session_recv(int ctl, struct session_msg *m, int *out_w)
{
	ssize_t n = sl_recv_fd(ctl, m, sizeof(*m) - 1, out_w);

	if (n < (ssize_t)sizeof(m->h) || *out_w < 0 || (size_t)n - sizeof(m->h) != m->h.len)
		return -1;
	m->cmd[m->h.len] = '\0';
	return 0;
}

/*
 * Wait for the payload (reaping every orphan meanwhile); anything on ctl
 * while it runs, or its end, is the client's timeout or death: pid 1 exits
 * and the kernel takes the rest.  Returns the payload's wait status.
 */
static int session_wait(int rep, int ctl, int sfd, pid_t child)
{
	struct signalfd_siginfo si;
	int st, status = 0, done = 0;
	pid_t w;

	while (!done) {
		struct pollfd pf[2] = { { ctl, POLLIN, 0 }, { sfd, POLLIN, 0 } };

		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			fail(rep, "wait for the payload");
		}
		if (pf[0].revents)
			_exit(0);
		while (read(sfd, &si, sizeof(si)) > 0)
			;
		while ((w = wait4(-1, &st, WNOHANG | __WALL, NULL)) > 0)
			if (w == child) {
				status = st;
				done = 1;
			}
	}
	return status;
}

/*
 * Pid 1 of a session: one command a message on ctl, each a fresh payload
 * (in a fresh IPC namespace) with the command's own output pipe; once it
 * exits every other process of the jail is killed and reaped, the status
 * goes back on ctl, and /tmp and /dev/shm are made anew.  The payload gets
 * none of pid 1's descriptors (close_except; all are close-on-exec too).
 * End of file on ctl ends the session: pid 1 exits and the kernel kills
 * whatever is left.  Signals from inside the jail cannot reach pid 1: it
 * has no handler (SIGCHLD, the only one it blocks, it reads itself).
 */
static _Noreturn void session_loop(const struct plan *p, pid_t me, int rep, int ctl)
{
	static struct session_msg m;
	struct plan q = *p;
	struct report r;
	sigset_t chld;
	size_t na = 0;
	int sfd, out_w, st;
	unsigned long fl = (p->ns & CLONE_NEWIPC) ? CLONE_NEWIPC : 0;

	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &chld, NULL) ||
	    (sfd = signalfd(-1, &chld, SFD_CLOEXEC | SFD_NONBLOCK)) < 0)
		fail(rep, "signalfd");
	while (q.argv[na])
		na++;
	q.argv[na - 1] = m.cmd;
	memset(&r, 0, sizeof(r));
	r.kind = REP_STARTED;
	if (send(ctl, &r, sizeof(r), MSG_NOSIGNAL) != (ssize_t)sizeof(r))
		_exit(0);
	for (;;) {
		pid_t child;

		/* received at the lowest free number, maybe 0-2, which stdio takes over */
		if (session_recv(ctl, &m, &out_w) < 0 || (out_w = fd_high(out_w)) < 0)
			_exit(0);
		q.cpu_s = (rlim_t)m.h.timeout_s + 1 + 5;
		child = raw_fork(fl);
		if (child < 0)
			fail(rep, "fork the payload");
		if (child == 0)
			payload(&q, me, out_w, rep);
		close(out_w);
		st = session_wait(rep, ctl, sfd, child);
		kill_the_rest(p, child);
		r.kind = REP_STATUS;
		r.status = st;
		if (send(ctl, &r, sizeof(r), MSG_NOSIGNAL) != (ssize_t)sizeof(r))
			_exit(0);
		if (p->fs)
			fresh_tmp(p, rep);
	}
}

static _Noreturn void jail_init(const struct plan *p, struct init_fds fds)
{
	struct sigaction sa;
	int keep[7] = { fds.sync_r, fds.out_w, fds.rep, -1, -1, -1, -1 };
	int nkeep = 3;
	int sync_r, out_w, rep, files_w = -1, wfd = fds.wfd, lfd = fds.lfd, ctl = -1;
	pid_t child, w, me;
	char c;
	int st;

	if (fds.wfd >= 0)
		keep[nkeep++] = fds.wfd;
	if (fds.lfd >= 0)
		keep[nkeep++] = fds.lfd;
	if (fds.files_w >= 0)
		keep[nkeep++] = fds.files_w;
	if (fds.ctl >= 0)
		keep[nkeep++] = fds.ctl;
	close_except(keep, nkeep);
	sync_r = fd_high(fds.sync_r);
	out_w = fd_high(fds.out_w);
	rep = fd_high(fds.rep);
	if (fds.files_w >= 0 && (files_w = fd_high(fds.files_w)) < 0)
		_exit(126);
	if (fds.ctl >= 0 && (ctl = fd_high(fds.ctl)) < 0)
		_exit(126);
	if (sync_r < 0 || out_w < 0 || rep < 0)
		_exit(126);
	/* If the supervisor dies before releasing us, read() sees EOF. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL))
		fail(rep, "set parent-death signal");
	if (read(sync_r, &c, 1) != 1)
		_exit(126);
	close(sync_r);
	STEP(ST_RELEASED);
	if (p->cg && sl_cgroup_enter_self(p->cg))
		fail(rep, "enter the jail's cgroup");
	me = (pid_t)syscall(SYS_getpid);
	prctl(PR_SET_NAME, "sluice-init", 0, 0, 0);
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	wipe_args_and_env();
	/* The caller may ignore SIGCHLD; then wait4 would see no status. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_DFL;
	sigaction(SIGCHLD, &sa, NULL);
	/* Now, after the supervisor moved us into our cgroup: that is our root. */
	if ((p->ns & CLONE_NEWCGROUP) && unshare(CLONE_NEWCGROUP))
		fail(rep, "new cgroup namespace");
	STEP(ST_CG_ENTERED);
	/* Without a pid namespace (unsafe mode) orphans come to us, for the kill. */
	if (!(p->ns & CLONE_NEWPID))
		prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);

	if (p->fs)
		root_begin(p, rep, wfd, lfd);
	if (p->ns & CLONE_NEWUSER) {
		become_jail_user(rep, p->as_root);
		/* a change of ids clears the parent-death signal: arm it again */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL))
			fail(rep, "set parent-death signal");
	}
	if (p->fs) {
		root_finish(p, rep);
	} else {
		if (p->ns & CLONE_NEWUSER)
			limit_userns(rep, p->userns_max);
		if (chdir(p->hostdir))
			fail(rep, "chdir to the workdir");
	}
	if ((p->ns & CLONE_NEWUTS) && sethostname("sluice", 6))
		fail(rep, "sethostname");
	if (p->ns & CLONE_NEWNET)
		loopback_up(rep);
	STEP(ST_NET);

	/* the jail is set up: the supervisor times it */
	report_to(rep, REP_STARTED, 0);
	if (ctl >= 0) {
		close(out_w);
		session_loop(p, me, rep, ctl);
	}
	child = raw_fork(0);
	if (child < 0)
		fail(rep, "fork the payload");
	if (child == 0)
		payload(p, me, out_w, rep);
	close(out_w);

	for (;;) {
		w = wait4(-1, &st, 0, NULL);
		if (w == child)
			break;
		if (w < 0 && errno != EINTR)
			fail(rep, "wait for the payload");
	}
	STEP(ST_REAPED);
	if (files_w >= 0 || !(p->ns & CLONE_NEWPID))
		kill_the_rest(p, child);
	report_to(rep, REP_STATUS, st);
	if (files_w >= 0)
		collect_files(p, p->fs ? "/src" : p->hostdir, files_w);
	_exit(0);
}

/* ---- the supervisor ---- */

static int write_proc(pid_t pid, const char *name, const char *data, sl_err *err)
{
	char path[64];
	int fd, ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || sl_write_all(fd, data, strlen(data)))
		ret = sl_err_set(err, SL_ERROR, "cannot write %s of the jail: %s",
				 name, strerror(errno));
	if (fd >= 0)
		close(fd);
	return ret;
}

/*
 * The jail's uid/gid 1000 is the caller's euid/egid, or nobody/nogroup when
 * the caller is root: root inside the jail's work is never root outside.
 */
static int map_ids(pid_t pid, int as_root, sl_err *err)
{
	char map[64];

	snprintf(map, sizeof(map), "%d %u 1\n", JAIL_UID,
		 as_root ? HOST_NOBODY : (unsigned)geteuid());
	if (write_proc(pid, "uid_map", map, err))
		return SL_ERROR;
	/*
	 * "deny" is required before an unprivileged gid_map; it also keeps the
	 * payload from dropping a supplementary group to pass a deny-by-group
	 * permission.  The caller's supplementary groups stay (unmapped).  Root
	 * may allow setgroups, and pid 1 then drops root's groups.
	 */
	if (!as_root && write_proc(pid, "setgroups", "deny", err))
		return SL_ERROR;
	snprintf(map, sizeof(map), "%d %u 1\n", JAIL_GID,
		 as_root ? HOST_NOBODY : (unsigned)getegid());
	return write_proc(pid, "gid_map", map, err);
}

/* nftw callback: the file to nobody, unless it is the top-level .git. */
static __thread int give_errno;
static int give_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	if (ftw->level == 1 && !strcmp(path + ftw->base, ".git"))
		return FTW_SKIP_SUBTREE;
	if (flag == FTW_NS || (st->st_uid == HOST_NOBODY && st->st_gid == HOST_NOBODY))
		return FTW_CONTINUE;
	if (lchown(path, HOST_NOBODY, HOST_NOBODY)) {
		give_errno = errno;
		return FTW_STOP;
	}
	return FTW_CONTINUE;
}

/*
 * As root, the jail's user is host nobody: the worktree becomes nobody's so
 * that the jail can read it and write through its overlay.
 */
static int give_to_jail(const char *workdir, sl_err *err)
{
	give_errno = 0;
	if (nftw(workdir, give_one, 32, FTW_PHYS | FTW_MOUNT | FTW_ACTIONRETVAL) && give_errno)
		return sl_err_set(err, SL_ERROR, "jail: cannot give '%s' to uid %d: %s", workdir,
				  HOST_NOBODY, strerror(give_errno));
	return 0;
}

/*
 * Every online CPU, in thousandths of a CPU: a jail alone runs make -jN at
 * the host's speed; jails at once share the cores (the group's low weight,
 * cgroup.c, keeps the host's own work first).
 */
static unsigned default_cpu_milli(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 1 ? (unsigned)n * 1000 : 1000;
}

/* A limit asked for that nothing here enforces: an error, unless accepted. */
static int refuse_unenforced(const sl_jail_opts *o, unsigned cg_layers, sl_err *err)
{
	if (o->mem_mb && !(cg_layers & SL_CG_MEMORY) && !(o->accept & SL_JAIL_CG_MEMORY))
		return sl_err_set(err, SL_ERROR, "jail: memory limit of %u MiB asked for, but "
				  "this user may not create a memory cgroup here (only "
				  "per-process limits would hold): run as root, or delegate a "
				  "cgroup with the memory controller to this user, or accept "
				  "'memory' as unenforced; see 'sluice doctor'", o->mem_mb);
	if (o->cpu_milli && !(cg_layers & SL_CG_CPU) && !(o->accept & SL_JAIL_CG_CPU))
		return sl_err_set(err, SL_ERROR, "jail: CPU quota of %u.%03u CPUs asked for, but "
				  "this user may not create a cpu cgroup here (only per-process "
				  "CPU time would be limited): run as root, or delegate a cgroup "
				  "with the cpu controller to this user, or accept 'cpu' as "
				  "unenforced; see 'sluice doctor'",
				  o->cpu_milli / 1000, o->cpu_milli % 1000);
	return 0;
}

/* Keep only the last cap bytes of b once it holds twice that (amortised). */
static void keep_tail(sl_buf *b, size_t cap, int final)
{
	if (b->len <= cap || (!final && b->len < 2 * cap))
		return;
	memmove(b->buf, b->buf + b->len - cap, cap);
	sl_buf_setlen(b, cap);
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/* The supervisor's view of one running jail. */
struct sup {
	pid_t pid;
	int pidfd, out_fd, rep_fd, files_fd;
	sl_buf files;                 /* the raw stream of collected files */
	int reaped, wst;              /* pid 1 reaped, and its wait status */
	struct rusage ru;             /* pid 1's, with every process it reaped */
	int got_status, status;       /* the payload's wait status, from pid 1 */
	struct report fail;           /* the first setup failure, if any */
	int64_t started_ms;           /* when pid 1 said the jail was set up, or 0 */
};

static void read_output(struct sup *s, sl_jail_result *out, size_t cap, char *chunk, size_t sz)
{
	ssize_t n = read(s->out_fd, chunk, sz);

	if (n > 0) {
		out->output_total += (size_t)n;
		sl_buf_add(&out->output, chunk, (size_t)n);
		keep_tail(&out->output, cap, 0);
	} else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
		close_fd(&s->out_fd);
	}
}

static void read_files(struct sup *s, char *chunk, size_t sz)
{
	ssize_t n = read(s->files_fd, chunk, sz);

	if (n > 0) {
		/* past the cap the stream is cut; parse_files() then stops */
		sl_buf_add(&s->files, chunk, (size_t)n);
	} else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
		close_fd(&s->files_fd);
	}
}

static void read_report(struct sup *s)
{
	struct report r;
	ssize_t n = read(s->rep_fd, &r, sizeof(r));

	if (n == (ssize_t)sizeof(r) && r.kind == REP_STATUS) {
		s->status = r.status;
		s->got_status = 1;
	} else if (n == (ssize_t)sizeof(r) && r.kind == REP_STARTED) {
		s->started_ms = sl_now_ms();
	} else if (n == (ssize_t)sizeof(r) && r.kind == REP_FAIL) {
		if (!s->fail.kind)
			s->fail = r;
	} else if (n >= 0 || (errno != EINTR && errno != EAGAIN)) {
		close_fd(&s->rep_fd);
	}
}

/*
 * Collect output and reports until pid 1 is reaped (killing it at the
 * deadline), then drain what is still in the pipes for at most DRAIN_MS: once
 * pid 1 is reaped nothing in the jail holds them any more, but a process of
 * the caller forked by another thread may, until it execs.
 */
static const volatile int *stop_flag;

void sl_jail_set_stop(const volatile int *stop)
{
	stop_flag = stop;
}

int sl_jail_stopping(void)
{
	return stop_flag && *stop_flag;
}

static int supervise(struct sup *s, sl_jail_result *out, size_t cap, int64_t deadline,
		     char *chunk, size_t sz, sl_err *err)
{
	int64_t drain_until = 0;

	for (;;) {
		struct pollfd pfd[4];
		int nfd = 0, i_out = -1, i_rep = -1, i_pid = -1, i_files = -1, wait_ms;
		int64_t now = sl_now_ms();

		if (s->reaped && s->out_fd < 0 && s->rep_fd < 0 && s->files_fd < 0)
			return 0;
		if (s->reaped && now >= drain_until) {
			out->drain_cut = 1;
			return 0;
		}
		if (!s->reaped && !out->timed_out && (now >= deadline || (stop_flag && *stop_flag))) {
			kill(s->pid, SIGKILL);
			out->timed_out = 1;
		}
		if (s->reaped)
			wait_ms = (int)(drain_until - now);
		else if (out->timed_out)
			wait_ms = 100;
		else
			wait_ms = deadline - now > INT_MAX ? INT_MAX : (int)(deadline - now);
		if (stop_flag && !s->reaped && wait_ms > 100)
			wait_ms = 100;      /* notice a stop within 0.1 s */
		if (!s->reaped && s->pidfd < 0 && wait_ms > 10)
			wait_ms = 10;
		if (s->out_fd >= 0) {
			pfd[nfd].fd = s->out_fd;
			pfd[nfd].events = POLLIN;
			i_out = nfd++;
		}
		if (s->rep_fd >= 0) {
			pfd[nfd].fd = s->rep_fd;
			pfd[nfd].events = POLLIN;
			i_rep = nfd++;
		}
		if (s->files_fd >= 0) {
			pfd[nfd].fd = s->files_fd;
			pfd[nfd].events = POLLIN;
			i_files = nfd++;
		}
		if (!s->reaped && s->pidfd >= 0) {
			pfd[nfd].fd = s->pidfd;
			pfd[nfd].events = POLLIN;
			i_pid = nfd++;
		}
		if (poll(pfd, (nfds_t)nfd, wait_ms) < 0) {
			if (errno == EINTR)
				continue;
			return sl_err_set(err, SL_ERROR, "jail: poll: %s", strerror(errno));
		}
		if (i_out >= 0 && pfd[i_out].revents)
			read_output(s, out, cap, chunk, sz);
		if (i_rep >= 0 && pfd[i_rep].revents)
			read_report(s);
		if (i_files >= 0 && pfd[i_files].revents)
			read_files(s, chunk, sz);
		if (!s->reaped && (i_pid < 0 || pfd[i_pid].revents)) {
			pid_t w = wait4(s->pid, &s->wst, WNOHANG, &s->ru);

			if (w == s->pid) {
				s->reaped = 1;
				drain_until = sl_now_ms() + DRAIN_MS;
			} else if (w < 0 && errno != EINTR) {
				return sl_err_set(err, SL_ERROR, "jail: waitpid: %s",
						  strerror(errno));
			}
		}
	}
}

/*
 * Turn the files stream into out->files: one entry per opts.collect path, in
 * order; an entry the stream does not cover (cut at the cap, or pid 1 died)
 * gets EIO.
 */
static void parse_files(sl_jail_result *out, const sl_jail_opts *opts, const sl_buf *raw)
{
	size_t n = 0, at = 0;

	while (opts->collect[n])
		n++;
	out->files = sl_xcalloc(n ? n : 1, sizeof(*out->files));
	out->nfiles = n;
	for (size_t i = 0; i < n; i++) {
		out->files[i].path = sl_xstrdup(opts->collect[i]);
		out->files[i].err = EIO;
		sl_buf_init(&out->files[i].data, 0);
	}
	while (raw->len - at >= sizeof(struct file_hdr)) {
		struct file_hdr h;
		sl_jail_file *f;

		memcpy(&h, raw->buf + at, sizeof(h));
		at += sizeof(h);
		if (h.index >= n || h.len > raw->len - at)
			break;
		f = &out->files[h.index];
		f->err = h.err;
		f->truncated = h.truncated;
		sl_buf_add(&f->data, raw->buf + at, (size_t)h.len);
		at += (size_t)h.len;
	}
}

/* Whether a child can be made in the namespaces of flags (else errno says why). */
static int ns_works(unsigned long flags)
{
	pid_t pid = raw_fork(flags);
	int st;

	if (pid < 0)
		return 0;
	if (pid == 0)
		_exit(0);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static const unsigned long ns_flags[] = {
	CLONE_NEWUSER, CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWNET, CLONE_NEWIPC, CLONE_NEWUTS,
	CLONE_NEWCGROUP,
};

static pthread_once_t ns_once = PTHREAD_ONCE_INIT;
static unsigned long ns_usable;
static int ns_user_errno;      /* why CLONE_NEWUSER failed */

static void probe_ns(void)
{
	int user = ns_works(CLONE_NEWUSER);
	unsigned long u = user ? CLONE_NEWUSER : 0;

	if (!user)
		ns_user_errno = errno;

	for (size_t i = 1; i < sizeof(ns_flags) / sizeof(*ns_flags); i++)
		if (ns_works((user ? CLONE_NEWUSER : 0) | ns_flags[i]))
			u |= ns_flags[i];
	ns_usable = u;
}

/* The namespaces that work here, as the jail uses them (inside a user namespace). */
static unsigned long usable_ns(void)
{
	pthread_once(&ns_once, probe_ns);
	return ns_usable;
}

#define MINIMUM_NS (CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET)

int sl_jail_minimum(sl_err *err)
{
	unsigned long have = usable_ns();
	sl_buf why = SL_BUF_INIT;
	int ret = 0;

	if ((have & MINIMUM_NS) == MINIMUM_NS)
		return 0;
	if (!(have & CLONE_NEWUSER))
		sl_jail_userns_why(&why, ns_user_errno);
	else
		sl_buf_addf(&why, "no %s namespace inside a user namespace",
			    !(have & CLONE_NEWNS) ? "mount" : !(have & CLONE_NEWPID) ? "pid" :
			    "network");
	ret = sl_err_set(err, SL_EBASE, "gates refuse to run without the jail's user, mount, "
			 "pid and network namespaces: %s; 'sluice doctor' says more; --unsafe "
			 "runs them without (recorded with every verdict)", why.buf);
	sl_buf_release(&why);
	return ret;
}

static unsigned ns_layers(unsigned long ns)
{
	unsigned l = 0;

	for (size_t i = 0; i < sizeof(ns_flags) / sizeof(*ns_flags); i++)
		if (ns & ns_flags[i])
			l |= 1u << i;
	return l;
}

/* A directory as an O_PATH descriptor at 3 or above (pid 1 moves 0-2 out of the way of its pipes). */
static int open_dir_high(const char *path)
{
	int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0 && fd < 3) {
		int hi = fcntl(fd, F_DUPFD_CLOEXEC, 3);

		close(fd);
		fd = hi;
	}
	return fd;
}

/* Clear everything a previous run left in OUT, keeping its buffers. */
static void result_reset(sl_jail_result *out)
{
	out->exited = out->exit_status = out->term_signal = out->timed_out = out->oom = 0;
	out->drain_cut = 0;
	out->duration_ms = out->cpu_ms = out->setup_ms = 0;
	out->output_total = 0;
	out->layers = 0;
	sl_buf_reset(&out->output);
	files_release(out);
}

/*
 * Decide the namespaces, the root file system, the seccomp filter and the
 * Landlock ABI for OPTS, refusing combinations that cannot be honoured.
 * Only --unsafe may run with less than every namespace or without a filter.
 */
static int plan_isolation(struct plan *p, const sl_jail_opts *opts, sl_err *err)
{
	p->ns = ALL_NS;
	if (opts->unsafe)
		p->ns &= usable_ns();
	else if (sl_jail_minimum(err))
		return SL_EBASE;
	p->fs = (p->ns & CLONE_NEWNS) && ((p->ns & CLONE_NEWUSER) || !geteuid());
	p->as_root = geteuid() == 0;
	p->root_opts = (p->ns & CLONE_NEWUSER) ? "mode=0755,size=1m,uid=1000,gid=1000" :
		"mode=0755,size=1m";
	if (!p->fs && opts->disk_mb)
		return sl_err_set(err, SL_ERROR, "jail: no overlay without a mount namespace");
	if (opts->writable_workdir && opts->disk_mb)
		return sl_err_set(err, SL_EINPUT, "jail: a writable workdir has no disk cap");
	if (opts->layer && (opts->writable_workdir || !p->fs))
		return sl_err_set(err, SL_EINPUT, "jail: a layer needs an overlay (%s)",
				  p->fs ? "the workdir is writable" : "no mount namespace");
	if (sl_seccomp_filter(&p->filter, opts->allow_inet ? SL_SECCOMP_ALLOW_INET : 0,
			      opts->unsafe ? NULL : err) && !opts->unsafe)
		return SL_ERROR;
	p->landlock_abi = opts->no_landlock ? 0 : sl_landlock_abi();
	return 0;
}

/* The SL_JAIL_* layers a jail planned as P, with CG_LAYERS of its cgroup, enforces. */
static unsigned jail_layers(const struct plan *p, const sl_jail_opts *opts, unsigned cg_layers)
{
	return ns_layers(p->ns) | SL_JAIL_RLIMITS | SL_JAIL_NNP |
		(p->fs ? SL_JAIL_ROOTFS : 0) | (p->filter ? SL_JAIL_SECCOMP : 0) |
		(p->landlock_abi > 0 ? SL_JAIL_LANDLOCK : 0) |
		(p->fs ? SL_JAIL_PROCMASK | SL_JAIL_PTY : 0) |
		(p->fs && !opts->writable_workdir ? SL_JAIL_OVERLAY : 0) |
		((p->ns & CLONE_NEWUSER) ? SL_JAIL_IDMAP : 0) |
		((p->fs && (p->ns & CLONE_NEWUSER)) ? SL_JAIL_INOTIFY : 0) |
		((cg_layers & SL_CG_CPU) ? SL_JAIL_CG_CPU : 0) |
		((cg_layers & SL_CG_MEMORY) ? SL_JAIL_CG_MEMORY : 0) |
		((cg_layers & SL_CG_PIDS) ? SL_JAIL_CG_PIDS : 0) |
		((cg_layers & SL_CG_KILL) ? SL_JAIL_CG_KILL : 0);
}

/*
 * Turn what the supervisor saw into OUT's status: the command's exit or
 * signal as pid 1 reported it, SIGKILL on a timeout, or pid 1's own death.
 * A setup step that failed inside the jail, or an init that exited before
 * running the command, is an error, never a verdict.
 */
static int read_outcome(sl_jail_result *out, struct sup *s, sl_err *err)
{
	out->cpu_ms = (int64_t)(s->ru.ru_utime.tv_sec + s->ru.ru_stime.tv_sec) * 1000 +
		(s->ru.ru_utime.tv_usec + s->ru.ru_stime.tv_usec) / 1000;
	if (s->fail.kind) {
		s->fail.what[sizeof(s->fail.what) - 1] = '\0';
		return sl_err_set(err, SL_ERROR, "jail setup: %s: %s", s->fail.what,
				  strerror(s->fail.err));
	}
	if (s->got_status) {
		if (WIFEXITED(s->status)) {
			out->exited = 1;
			out->exit_status = WEXITSTATUS(s->status);
		} else if (WIFSIGNALED(s->status)) {
			out->term_signal = WTERMSIG(s->status);
		}
	} else if (out->timed_out) {
		out->term_signal = SIGKILL;
	} else if (WIFSIGNALED(s->wst)) {
		/* pid 1 itself was killed (the OOM killer, someone outside) */
		out->term_signal = WTERMSIG(s->wst);
	} else {
		return sl_err_set(err, SL_ERROR,
				  "jail: init exited with status %d before the command ran",
				  WIFEXITED(s->wst) ? WEXITSTATUS(s->wst) : -1);
	}
	return 0;
}

/* The parent's pipes to pid 1: release, output, setup report, collected files. */
struct pipes {
	int sync[2], out[2], rep[2], files[2];
};
#define PIPES_INIT { .sync = { -1, -1 }, .out = { -1, -1 }, .rep = { -1, -1 }, \
		     .files = { -1, -1 } }

/* Open P's pipes, close-on-exec; the files pipe only when COLLECT. */
static int pipes_open(struct pipes *p, int collect, sl_err *err)
{
	if (pipe2(p->sync, O_CLOEXEC) || pipe2(p->out, O_CLOEXEC) || pipe2(p->rep, O_CLOEXEC) ||
	    (collect && pipe2(p->files, O_CLOEXEC)))
		return sl_err_set(err, SL_ERROR, "jail: cannot create pipes: %s", strerror(errno));
	return 0;
}

static void pipes_close(struct pipes *p)
{
	close_fd(&p->sync[0]);
	close_fd(&p->sync[1]);
	close_fd(&p->out[0]);
	close_fd(&p->out[1]);
	close_fd(&p->rep[0]);
	close_fd(&p->rep[1]);
	close_fd(&p->files[0]);
	close_fd(&p->files[1]);
}

/* The most bytes the files pipe may carry: each of PATHS at its cap, plus headers. */
static size_t files_cap(const char *const *paths, size_t each)
{
	size_t n = 0;

	while (paths[n])
		n++;
	return sl_st_add(sl_st_mult(n, sl_st_add(each, sizeof(struct file_hdr))), 1);
}

/*
 * sl_jail_run(), or with ctl >= 0 pid 1 of a session (jail_session.c):
 * ctl goes to pid 1 and is closed here, in every case.
 */
static int jail_run(sl_jail_result *out, const sl_jail_opts *opts_in, int ctl, sl_err *err)
{
	enum { CHUNK = 65536 };
	sl_jail_opts opts = SL_JAIL_OPTS_INIT;
	struct plan plan;
	struct sup s;
	struct init_fds fds;
	unsigned timeout_ms, cg_layers = 0;
	size_t cap;
	char *workdir = NULL, *layer = NULL, *chunk = NULL;
	struct pipes pp = PIPES_INIT;
	int ret = SL_ERROR, wfd = -1, lfd = -1, cgfd = -1, into = 0;
	int64_t start, deadline;
	sl_cgroup *cg = NULL;
	const char *const no_paths[] = { NULL };

	memset(&plan, 0, sizeof(plan));
	memset(&s, 0, sizeof(s));
	s.pid = -1;
	s.pidfd = s.out_fd = s.rep_fd = s.files_fd = -1;
	sl_buf_init(&s.files, 0);
	result_reset(out);

	if (!opts_in) {
		ret = sl_err_set(err, SL_EINPUT, "jail: no options");
		goto done;
	}
	opts = *opts_in;
	if (!opts.collect || ctl >= 0)
		opts.collect = no_paths;
	if (!opts.command || !opts.workdir) {
		ret = sl_err_set(err, SL_EINPUT, "jail: no %s given",
				 opts.command ? "workdir" : "command");
		goto done;
	}
	timeout_ms = opts.timeout_ms ? opts.timeout_ms : DEFAULT_TIMEOUT_MS;
	cap = opts.output_cap ? opts.output_cap : SL_CAP_GATE_OUTPUT;
	plan.tmp_mb = opts.tmp_mb ? opts.tmp_mb : DEFAULT_TMP_MB;
	start = sl_now_ms();
	deadline = start + timeout_ms;
	STEP(ST_START);

	if ((ret = plan_isolation(&plan, &opts, err)) != 0)
		goto done;
	ret = SL_ERROR;

	if (!(workdir = sl_realpath(opts.workdir, err)))
		goto done;
	if (plan.fs && (wfd = open_dir_high(workdir)) < 0) {
		sl_err_set(err, SL_ERROR, "jail setup: bind /src: %s", strerror(errno));
		goto done;
	}
	if (opts.layer) {
		/* a held layer's /proc link reads "/": it is its own name */
		plan.layer_held = sl_jail_layer_held(opts.layer, NULL, NULL);
		layer = plan.layer_held ? sl_xstrdup(opts.layer) : sl_realpath(opts.layer, err);
		if (!layer)
			goto done;
		opts.layer = layer;
		if ((lfd = open_dir_high(layer)) < 0) {
			sl_err_set(err, SL_ERROR, "jail setup: open the layer '%s': %s", layer,
				   strerror(errno));
			goto done;
		}
	}
	/* with a layer the workdir below is read-only: it was given when it was prepared */
	if (plan.as_root && (plan.ns & CLONE_NEWUSER) && give_to_jail(layer ? layer : workdir, err))
		goto done;
	if (plan_build(&plan, &opts, workdir, wfd, lfd, timeout_ms, err))
		goto done;
	if (!plan.fs)
		plan.userns_max = "/proc/sys/user/max_user_namespaces";
	STEP(ST_PLAN);
	if (pipes_open(&pp, opts.collect[0] != NULL, err))
		goto done;
	if (opts.collect[0])
		s.files.cap = files_cap(opts.collect, plan.collect_cap);
	chunk = sl_xmalloc(CHUNK);
	if (!BENCH_NO_CGROUP())
		cg = sl_cgroup_new((uint64_t)(opts.mem_mb ? opts.mem_mb : DEFAULT_MEM_MB) << 20,
				   opts.pids_max ? opts.pids_max : DEFAULT_PIDS_MAX,
				   opts.cpu_milli ? opts.cpu_milli : default_cpu_milli(), &cg_layers);
	STEP(ST_CGROUP);
	if (refuse_unenforced(&opts, cg_layers, err))
		goto done;
	/* asked for and accepted without a cgroup: what a process may hold */
	if (opts.mem_mb && !(cg_layers & SL_CG_MEMORY))
		plan.data_bytes = (rlim_t)opts.mem_mb << 20;
	plan.nice = (cg_layers & SL_CG_CPU) ? 0 : DEFAULT_NICE;
	out->nice = plan.nice;
	out->cpu_milli = (cg_layers & SL_CG_CPU) ?
		(opts.cpu_milli ? opts.cpu_milli : default_cpu_milli()) : 0;

	plan.cg = cg;
	cgfd = sl_cgroup_v2_fd(cg);
	/* the cgroup namespace is made by pid 1, once it is in its cgroup */
	s.pid = raw_fork_into(plan.ns & ~(unsigned long)CLONE_NEWCGROUP, cgfd, &into);
	if (s.pid < 0) {
		sl_err_set(err, SL_ERROR, "jail: cannot create namespaces: %s%s", strerror(errno),
			   errno == EPERM || errno == ENOSPC || errno == EINVAL ?
			   " (are unprivileged user namespaces enabled? see 'sluice doctor')" :
			   "");
		goto done;
	}
	if (s.pid == 0) {
		fds.sync_r = pp.sync[0];
		fds.out_w = pp.out[1];
		fds.rep = pp.rep[1];
		fds.files_w = pp.files[1];
		fds.wfd = wfd;
		fds.lfd = lfd;
		fds.ctl = ctl;
		jail_init(&plan, fds);
	}

	STEP(ST_CLONE);
	close_fd(&ctl);
	close_fd(&pp.out[1]);
	close_fd(&pp.rep[1]);
	close_fd(&pp.files[1]);
	s.out_fd = pp.out[0];
	s.rep_fd = pp.rep[0];
	s.files_fd = pp.files[0];
	pp.out[0] = pp.rep[0] = pp.files[0] = -1;
#ifdef SYS_pidfd_open
	/* Without a pidfd (before Linux 5.3) the loop polls waitpid every 10 ms. */
	s.pidfd = (int)syscall(SYS_pidfd_open, s.pid, 0);
#endif
	/* v1 groups: pid 1 moves itself; v2: born there, else moved now */
	if (cg && cgfd >= 0 && !into && sl_cgroup_add(cg, s.pid, 1))
		cg_layers &= ~(unsigned)SL_CG_KILL;
	if ((plan.ns & CLONE_NEWUSER) && map_ids(s.pid, plan.as_root, err))
		goto done;
	STEP(ST_MAPPED);
	/* We still hold the read end, so this write cannot raise SIGPIPE. */
	if (write(pp.sync[1], "x", 1) != 1) {
		sl_err_set(err, SL_ERROR, "jail: cannot release the jail: %s", strerror(errno));
		goto done;
	}
	close_fd(&pp.sync[1]);
	close_fd(&pp.sync[0]);

	out->layers = jail_layers(&plan, &opts, cg_layers);
	if (supervise(&s, out, cap, deadline, chunk, CHUNK, err))
		goto done;
	STEP(ST_SUPERVISED);
	out->duration_ms = sl_now_ms() - start;
	out->setup_ms = s.started_ms ? s.started_ms - start : 0;
	keep_tail(&out->output, cap, 1);
	out->output.truncated = out->output_total > out->output.len;
	out->oom = sl_cgroup_oom(cg);
	if (read_outcome(out, &s, err))
		goto done;
	if (opts.collect[0])
		parse_files(out, &opts, &s.files);
	ret = 0;

done:
	if (s.pid > 0 && !s.reaped) {
		kill(s.pid, SIGKILL);
		while (waitpid(s.pid, &s.wst, 0) < 0 && errno == EINTR)
			;
	}
	sl_cgroup_free(cg);
	close_fd(&s.pidfd);
	close_fd(&s.out_fd);
	close_fd(&s.rep_fd);
	close_fd(&s.files_fd);
	pipes_close(&pp);
	close_fd(&wfd);
	close_fd(&lfd);
	close_fd(&cgfd);
	close_fd(&ctl);
	if (plan.root)
		rmdir(plan.root);
	plan_release(&plan);
	sl_buf_release(&s.files);
	free(workdir);
	free(layer);
	free(chunk);
	STEP(ST_END);
	return ret;
}

int sl_jail_run(sl_jail_result *out, const sl_jail_opts *opts, sl_err *err)
{
	if (opts && sl_jail_spawner_active()) {
		result_reset(out);
		return sl_jail_spawner_run(out, opts, err);
	}
	return jail_run(out, opts, -1, err);
}

int sl_jail_run_session(sl_jail_result *out, const sl_jail_opts *opts, int ctl, sl_err *err)
{
	return jail_run(out, opts, ctl, err);
}

static void copy_msg(char *dst, size_t n, const char *msg)
{
	size_t len = strnlen(msg, n - 1);

	memcpy(dst, msg, len);     /* truncation is fine here */
	dst[len] = '\0';
}

/*
 * How a candidate's layer holds disk_mb here, as pipeline/apply/warm.c
 * makes it: root mounts a tmpfs; an ordinary user holds one made in a user
 * namespace (jail_layer.c); else a host directory, measured after each gate.
 */
static void probe_disk(sl_jail_layers *out, const char *dir)
{
	char *mnt = sl_path_join(dir, "layer"), *held = NULL;
	sl_err e = SL_ERR_INIT;

	out->disk = SL_JAIL_DISK_MEASURED;
	if (!geteuid()) {
		if (mkdir(mnt, 0755) ||
		    mount("tmpfs", mnt, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m"))
			snprintf(out->disk_error, sizeof(out->disk_error),
				 "root cannot mount a tmpfs here: %s", strerror(errno));
		else if (!umount2(mnt, MNT_DETACH))
			out->disk = SL_JAIL_DISK_TMPFS_ROOT;
	} else if (sl_jail_layer_new(&held, 1, &e)) {
		copy_msg(out->disk_error, sizeof(out->disk_error), e.msg);
	} else {
		out->disk = SL_JAIL_DISK_TMPFS_USERNS;
		sl_jail_layer_drop(held);
	}
	free(held);
	free(mnt);
}

int sl_jail_probe(sl_jail_layers *out, sl_err *err)
{
	sl_jail_opts o = SL_JAIL_OPTS_INIT;
	sl_jail_result r;
	sl_cgroup_info cgi;
	sl_err e = SL_ERR_INIT;
	const char *tmp = getenv("TMPDIR");
	char *dir = sl_path_join(tmp && *tmp == '/' ? tmp : "/tmp", "sluice-probe-XXXXXX");
	const struct sock_fprog *prog;
	int ret = SL_ERROR;

	memset(out, 0, sizeof(*out));
	sl_jail_result_init(&r);
	if (!mkdtemp(dir)) {
		sl_err_set(err, SL_ERROR, "cannot create '%s': %s", dir, strerror(errno));
		goto done;
	}
	out->available = ns_layers(usable_ns()) | SL_JAIL_RLIMITS | SL_JAIL_NNP;
	if (!(out->available & SL_JAIL_USERNS))
		out->userns_errno = ns_user_errno;
	if (!sl_seccomp_filter(&prog, 0, NULL))
		out->available |= SL_JAIL_SECCOMP;
	out->landlock_abi = sl_landlock_abi();
	if (out->landlock_abi > 0)
		out->available |= SL_JAIL_LANDLOCK;
	sl_cgroup_probe(&cgi);
	out->cgroup_version = cgi.version;
	snprintf(out->cgroup_v2_controllers, sizeof(out->cgroup_v2_controllers), "%s",
		 cgi.v2_controllers);
	snprintf(out->cgroup_detail, sizeof(out->cgroup_detail),
		 "memory: %s; pids: %s; cpu: %s; kill: %s",
		 cgi.v2_memory ? "v2" : *cgi.v1_memory ? "v1" : "no",
		 cgi.v2_pids ? "v2" : *cgi.v1_pids ? "v1" : "no",
		 cgi.v2_cpu ? "v2" : *cgi.v1_cpu ? "v1" : "no",
		 (cgi.layers & SL_CG_KILL) ? "v2 cgroup.kill" : "no");

	/* a real run shows what works together: the private root, the filters */
	o.workdir = dir;
	o.command = "true";
	o.timeout_ms = 10000;
	o.unsafe = 1;
	if (sl_jail_run(&r, &o, &e) || !r.exited || r.exit_status) {
		copy_msg(out->run_error, sizeof(out->run_error),
			 e.code ? e.msg : "'true' failed in the jail");
	} else {
		out->available &= ~(unsigned)(SL_JAIL_SECCOMP | SL_JAIL_LANDLOCK);
		out->available |= r.layers;
		sl_err_clear(&e);
		o.disk_mb = 1;
		o.command = "echo x >/src/probe";
		if (sl_jail_run(&r, &o, &e) || !r.exited || r.exit_status)
			copy_msg(out->overlay_error, sizeof(out->overlay_error),
				 e.code ? e.msg : "cannot write through the overlay");
		else
			out->available |= SL_JAIL_OVERLAY;
	}
	if (out->available & SL_JAIL_OVERLAY)
		probe_disk(out, dir);
	ret = 0;
done:
	sl_jail_result_release(&r);
	sl_rm_rf(dir, NULL);
	free(dir);
	return ret;
}
