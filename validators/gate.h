/*
 * gate.h - a gate: one command whose exit status judges a candidate.
 *
 * The command runs in the jail (jail.h) with the candidate's worktree as its
 * working directory.  Verdicts: pass (exit 0), fail (any other exit, or
 * killed by a signal), timeout (the wall clock ran out; everything killed),
 * error (the jail itself could not run the command: not the candidate's
 * fault).
 */
#ifndef SL_GATE_H
#define SL_GATE_H

#include <stdint.h>

#include "common/buf.h"
#include "common/err.h"
#include "storage/store.h"

/* A gate run's verdict: pass, fail, timeout or error (sl_verdict, storage/store.h). */

typedef struct sl_gate_def {
	const char *name;
	const char *command;
	unsigned timeout_s;         /* 0 = 600 */
	int loopback;               /* the gate may use 127.0.0.1 inside its own network
				       namespace (IP sockets are denied otherwise) */
	int unsafe;                 /* run even without the minimum jail (--unsafe) */
	const char *report;         /* a file the command writes, relative to the worktree,
				       read back without following links; NULL = none */
	unsigned mem_mb, pids_max;  /* cgroup limits where the machine has them; 0 = defaults */
	unsigned tmp_mb;            /* private /tmp; 0 = default */
	unsigned disk_mb;           /* the command writes to a tmpfs overlay of this size,
				       never to the worktree itself; 0 = the jail's default */
	unsigned cpu_milli;         /* CPU quota (thousandths of a CPU); 0 = the jail's default */
	unsigned as_mb;             /* RLIMIT_AS; 0 = none */
	unsigned accept;            /* SL_JAIL_CG_MEMORY, SL_JAIL_CG_CPU: limits that may go
				       unenforced (jail.h) */
	int writable_worktree;      /* no overlay: the command writes the worktree itself */
	const char *layer;          /* the overlay's upper layer kept on the host
				       (sl_jail_opts.layer), or NULL */
	unsigned layer_cap_mb;      /* with layer: a run that leaves layer/u larger
				       fails (where no tmpfs caps it); 0 = no check */
} sl_gate_def;

typedef struct sl_gate_result {
	sl_verdict verdict;
	int exit_status;            /* -1 unless the command exited */
	int64_t duration_ms;
	int64_t setup_ms;           /* of duration_ms: setting the jail up */
	sl_buf output;              /* the tail of the output (capped at 64 KiB) */
	size_t output_total;
	char error[256];            /* why, when verdict is error */
	unsigned layers;            /* SL_JAIL_* bits the jail had (jail.h) */
	int has_report;             /* the report file was there and readable */
	sl_buf report;              /* its text (capped at 32 MiB) */
} sl_gate_result;

void sl_gate_result_init(sl_gate_result *r);
void sl_gate_result_release(sl_gate_result *r);

/* Run the gate in the jail on workdir; always fills *out, returns 0. */
int sl_gate_run(sl_gate_result *out, const sl_gate_def *gate, const char *workdir);

#endif
