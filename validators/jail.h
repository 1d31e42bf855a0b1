/*
 * jail.h - run one command of hostile code, contained.
 *
 * The command runs in new user, mount, pid, network, IPC, UTS and cgroup
 * namespaces: a tmpfs root (read-only) holding read-only binds of the
 * toolchain (/usr and the merged-/usr links as the host has them, or binds
 * where they are real directories), a curated /etc (alternatives, ld.so.*,
 * localtime, and generated passwd, group, hosts, hostname, nsswitch.conf:
 * no shadow, no keys), a minimal /dev (null zero full random urandom, fd
 * links, a /dev/shm tmpfs), a /proc of its own pid namespace, a private
 * size-capped /tmp, and the candidate's worktree bound read-write (nosuid,
 * nodev) at /src, its working directory.  Hostname "sluice".  The network
 * namespace has only its own loopback (brought up, so tests can use
 * 127.0.0.1 inside; it reaches nothing outside).  The environment is cleared
 * to PATH, HOME=/tmp, LANG=C.UTF-8, TERM=dumb, TMPDIR=/tmp, plus opts->env
 * (which may override those).  The payload gets rlimits (core 0, nofile
 * 1024, fsize 1 GiB, as 8 GiB, cpu timeout+5 s, nproc 512), no inherited
 * descriptors, stdin from /dev/null, a new session, no-new-privileges, no
 * nested user namespaces, and runs as uid/gid 1000 inside with no
 * capabilities.  Process 1 of the jail ("sluice-init") is a small reaper;
 * when the payload exits, or the wall-clock timeout fires, process 1 dies
 * and the kernel kills every process left in the pid namespace, so nothing
 * of the command (daemons included) outlives sl_jail_run().
 *
 * Linux only.  Works as root and as an unprivileged user (needs unprivileged
 * user namespaces).  Uid 1000 inside is the caller's euid outside: files the
 * command writes in /src belong to the caller.  The new root's mount point
 * is an empty directory made in $TMPDIR (or /tmp) and removed afterwards.
 * Safe to call from several threads at once; the calling thread must not
 * exit during the call (the jail dies with it).  Output (stdout and stderr
 * interleaved) is kept up to a cap: the last output_cap bytes, with
 * output_total counting everything and output.truncated set when they
 * differ.
 */
#ifndef SL_JAIL_H
#define SL_JAIL_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "err.h"

#define SL_JAIL_OPTS_VERSION 1
typedef struct sl_jail_opts {
	unsigned version;
	const char *workdir;        /* host directory bound read-write at /src */
	const char *command;        /* run as /bin/sh -c COMMAND inside */
	unsigned timeout_ms;        /* wall clock; 0 = 600000 */
	size_t output_cap;          /* bytes of output tail kept; 0 = 64 KiB */
	unsigned tmp_mb;            /* size of /tmp (and /dev/shm); 0 = 256 */
	const char *const *env;     /* extra "NAME=VALUE" entries, NULL-terminated, or NULL */
} sl_jail_opts;
#define SL_JAIL_OPTS_INIT { SL_JAIL_OPTS_VERSION, NULL, NULL, 0, 0, 0, NULL }

typedef struct sl_jail_result {
	int exited;                 /* the command exited (exit_status valid) */
	int exit_status;
	int term_signal;            /* the command died of this signal, else 0 */
	int timed_out;              /* the timeout fired and everything was killed */
	int64_t duration_ms;
	sl_buf output;              /* the tail of stdout+stderr */
	size_t output_total;        /* bytes the command wrote in all */
} sl_jail_result;

void sl_jail_result_init(sl_jail_result *r);
void sl_jail_result_release(sl_jail_result *r);

/*
 * Run opts->command in the jail and wait for it.  Returns 0 when the command
 * ran (whatever its exit status; read *out), SL_ERROR when the jail could
 * not be set up (message in err).
 */
int sl_jail_run(sl_jail_result *out, const sl_jail_opts *opts, sl_err *err);

#endif
