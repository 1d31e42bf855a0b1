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
 * RLIMIT_DATA = mem_mb per process), nice 10 where no CPU cgroup holds the
 * jail (nice 0 where one does), the user namespace's own
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
 *
 * The public part (the layers, options, result, sl_jail_run, the stop
 * flag, the spawner's start and stop, the probe) is declared in
 * validators/validators.h; this header adds what only validators/ uses.
 */
#ifndef SL_JAIL_H
#define SL_JAIL_H

#include <sys/types.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/err.h"
#include "validators/validators.h"

/* The PATH of every jail: programs a gate runs are looked up here. */
#define SL_JAIL_PATH "/usr/local/bin:/usr/bin:/bin"

/*
 * Append the names of the bits in layers to out, comma-separated
 * ("userns,mntns,pidns,..."): the form to record with a verdict.
 */
void sl_jail_layers_format(sl_buf *out, unsigned layers);

/* 1 while the stop flag given to sl_jail_set_stop is set: verdicts are not verdicts. */
int sl_jail_stopping(void);

/*
 * The spawner's inside (sl_jail_spawner_start() and _stop(), validators.h):
 * sl_jail_spawner_pid() is its process, or -1; sl_jail_run() hands a run
 * to sl_jail_spawner_run() while it is active.
 */
pid_t sl_jail_spawner_pid(void);
int sl_jail_spawner_active(void);
int sl_jail_spawner_run(sl_jail_result *out, const sl_jail_opts *opts, sl_err *err);

/*
 * A session (jail_session.c): one jail whose pid 1 runs command after
 * command.  A command travels to pid 1 as one SOCK_SEQPACKET message on
 * the session's control socket: this header, then len bytes (at most
 * SL_JAIL_SESSION_CMD_MAX, the kernel's limit of one argument), with the
 * write end of the command's output pipe attached (SCM_RIGHTS).  Pid 1
 * answers with a struct report of kind REP_STATUS (jail.c: SL_JAIL_SESSION_REPORT
 * bytes, the kind an int at 0, the wait status an int at 8) once the
 * command and everything it started are gone; its first message, kind
 * REP_STARTED, says the jail is set up.
 */
#define SL_JAIL_SESSION_CMD_MAX 131071u
struct sl_jail_session_cmd {
	uint32_t timeout_s;         /* the command's CPU time limit: this + 6 s */
	uint32_t len;
};
/* The size of pid 1's messages on the control socket (jail.c's struct report). */
#define SL_JAIL_SESSION_REPORT 128
#define SL_JAIL_REP_STATUS 2
#define SL_JAIL_REP_STARTED 3

/*
 * sl_jail_run() with pid 1 serving the session's control socket ctl (the
 * jail's end; always closed by the call) instead of running opts.command:
 * returns when pid 1 is gone (ctl's other end closed, the timeout, the
 * stop) and the jail cleaned up.  Never through the spawner: the caller
 * chooses (sl_jail_spawner_session()).
 */
int sl_jail_run_session(sl_jail_result *out, const sl_jail_opts *opts, int ctl, sl_err *err);

/*
 * The spawner runs sl_jail_run_session(opts, ctl) in a thread of its own:
 * returns the request's socket (the reply comes on it when the session's
 * jail is gone: sl_jail_spawner_reply()), or -1 with err set.  ctl is sent,
 * not closed.
 */
int sl_jail_spawner_session(const sl_jail_opts *opts, int ctl, sl_err *err);
/* The reply to a request (sl_jail_spawner_session()) on fd, which is closed. */
int sl_jail_spawner_reply(int fd, sl_jail_result *out, sl_err *err);

#endif
