/*
 * validators.h - the front door of validators/: gate definitions, verdicts
 * and the gate runner (validators/gating.c), which judges a candidate by the
 * campaign's gates, each by its kind, against a baseline measured once on
 * the base commit.  Code outside validators/ includes this header only, and
 * everything it uses of validators/ is declared here: after the gate
 * runner, the public parts of the jail (jail.h), the syntax gate
 * (syntax.h), findings (findings.h, finding_gone.h), test reports
 * (testreport.h), coverage (coverage.h) and policy checks (policy.h).  The
 * headers named hold the rest of each contract and are private to
 * validators/; each includes this one.
 *
 * pipeline/spec/ fills the types below from the campaign file; nothing here knows
 * the campaign file.
 *
 * Kinds (enum sl_gate_kind):
 *   policy    on the candidate's diff, before any checkout (validators/policy.h);
 *   build, custom
 *             the exit status decides, against the gate's expectation:
 *             expect pass (passes on the base, must pass) or expect fix
 *             (fails on the base, must pass);
 *   static    findings (gcc/clang text or SARIF, from the output or a report
 *             file) that are new compared with the base and on or near a
 *             changed line fail; the exit status does not decide;
 *   test      with a format (junit, tap, automake, ctest): a test that passed
 *             on the base and does not pass now fails the gate, as do a base
 *             test missing now ("vanished"), a new failing test, a must-fix
 *             test that does not pass, with expect fix any non-flaky base
 *             failure that does not pass, and a report naming no test; tests
 *             whose result flips between two runs on the base are flaky,
 *             excluded and reported; `reruns: N` means all N runs must pass.
 *             Without a format: the exit status, N times, like build gates;
 *   coverage  the candidate must raise the coverage of its target's lines;
 *   finding-gone
 *             findings (as static) must exist on the base; on a candidate
 *             the target's findings must be gone, not moved, silenced or
 *             deleted with their code (finding_gone.h).
 *
 * Baseline: sl_gating_baseline() runs each jailed gate on the base (twice
 * for test gates with a format) in a scratch worktree, unless the store has
 * it already, and checks each gate's expectation there: a gate that cannot
 * judge (exit 126/127 whatever the kind; a default gate failing; a fix gate
 * passing; a per-test gate with no test) is SL_EBASE, unless allow_skip
 * makes its candidates' failures "skip".  Exit 126/127 on a candidate is
 * recorded "error" (configuration), never "fail".  A "skip" lets a
 * candidate through only where the gate has allow_skip.
 *
 * Verdict cache: a jailed gate's verdict is stored under the key
 * sha256(tree id, base id, the gate's definition, environment digest); an
 * identical candidate, or a resumed run, never runs the same gate twice.
 * The environment digest covers sluice's version, the kernel release and
 * the toolchain (/usr's identity and modification time).
 *
 * Report files are read with openat2 beneath the worktree (common/beneath.h),
 * never through a link a candidate planted.
 *
 * Thread safety: after sl_gating_baseline(), sl_gating_policy_on() and
 * sl_gating_run_on() may be called from several threads at once.
 */
#ifndef SL_VALIDATORS_H
#define SL_VALIDATORS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <git2.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/util.h"
#include "scoping/scope.h"
#include "storage/store.h"

/* ---- findings (findings.h) ------------------------------------------- */

enum sl_finding_level {
	SL_LEVEL_NOTE = 1,
	SL_LEVEL_WARNING,
	SL_LEVEL_ERROR,
};

typedef struct sl_finding {
	char *file;                 /* repository-relative (sl_report_path); owned */
	unsigned line, col;         /* 1-based; 0 when unknown */
	enum sl_finding_level level;
	char *rule;                 /* "-Wunused-variable", "unix.Malloc", "" if none; owned */
	char *message;              /* as reported (capped at 1 KiB); owned */
	char *notes;                /* attached notes, one "FILE:LINE: note: MSG" per line, or NULL; owned */
} sl_finding;

typedef struct sl_findings {
	sl_finding *v;
	size_t n, alloc;
	size_t dropped;             /* findings past the cap of 10000, counted only */
} sl_findings;

void sl_findings_init(sl_findings *f);
void sl_findings_release(sl_findings *f);
/* Append a copy of *src to f (the strings are copied). */
void sl_findings_add_copy(sl_findings *f, const sl_finding *src);

/* Parse compiler output; never fails (what does not parse is skipped). */
void sl_findings_parse_gcc(sl_findings *out, const char *text, size_t len);

/*
 * Parse gcc's -fdiagnostics-format=json output (findings_json.c): one or
 * more JSON arrays, each at the start of a line, other lines skipped; never
 * fails.
 */
void sl_findings_parse_gcc_json(sl_findings *out, const char *text, size_t len);

/* Parse a SARIF 2.1.0 log; SL_EINPUT when it is not JSON or has no runs array. */
int sl_findings_parse_sarif(sl_findings *out, const char *text, size_t len, sl_err *err);

/*
 * Findings made outside the jail (a `findings` file produced on the host,
 * findings_place.c) name files as the host saw them: /home/u/proj/src/a.c,
 * file:///home/u/proj/src/a.c, ./src/a.c, ../src/a.c from a build
 * directory.  Rewrite each finding's file (and the path opening each note
 * line) to a path of tracked (the repository's files at the base, sorted
 * with strcmp): a tracked path stays; an absolute path under one of roots
 * (the repository's work tree as given and as resolved) loses that root;
 * otherwise the longest tail of whole path segments that tracked files end
 * with decides, when exactly one file does ("build/../src/a.c" and
 * "/ci/proj/src/a.c" name src/a.c).  Paths under /usr/ outside the roots are
 * never guessed.  A finding left unplaced keeps its file; one line per
 * distinct such path ("PATH: ambiguous, ..." or "PATH: not a tracked
 * file ...", at most 8) is appended to report.  why, when not NULL, has
 * f->n entries: each finding's enum sl_place_result.  Returns how many
 * findings (with a non-empty file) are left unplaced.
 */
enum sl_place_result { SL_PLACED = 0, SL_PLACE_UNTRACKED, SL_PLACE_AMBIGUOUS };
struct sl_strvec;
size_t sl_findings_place(sl_findings *f, const char *const *roots, size_t nroots,
			 const struct sl_strvec *tracked, sl_buf *report, unsigned char *why);

/*
 * Append "FILE:LINE:COL: LEVEL: MESSAGE [RULE]" lines (notes indented under
 * their finding) to out, stopping before out grows by more than cap bytes
 * (0 = no cap) and saying how many were left out.
 */
void sl_findings_text(const sl_findings *f, sl_buf *out, size_t cap);

/* ---- test reports (testreport.h) ------------------------------------- */

enum sl_test_result {
	SL_TEST_PASS = 1,
	SL_TEST_FAIL,
	SL_TEST_ERROR,
	SL_TEST_SKIP,
};

typedef struct sl_test {
	char *id;                   /* owned */
	enum sl_test_result result;
	char *message;              /* failure/error/skip text, capped at 1 KiB; owned; may be NULL */
} sl_test;

typedef struct sl_tests {
	sl_test *v;                 /* in report order */
	size_t n, alloc;
	size_t dropped;             /* tests past the cap, counted only */
	int bailed_out;             /* TAP "Bail out!" seen */
	size_t *slot, nslot, indexed; /* sl_tests_find's index of ids (private) */
} sl_tests;

void sl_tests_init(sl_tests *t);
void sl_tests_release(sl_tests *t);

/* Parse and append.  SL_EINPUT when the XML is not well-formed or too large. */
int sl_tests_parse_junit(sl_tests *out, const char *xml, size_t len, sl_err *err);
/* Never fails; text with no TAP line yields no tests. */
void sl_tests_parse_tap(sl_tests *out, const char *text, size_t len);

/*
 * Automake's test-suite results: "RESULT: NAME" lines (the output of `make
 * check`; the section headers of test-suite.log, which lists only the tests
 * that did not pass), "NAME.trs::test-result: RESULT" lines (grep -H over
 * the .trs files) and, when trs_name is not NULL, the ":test-result: RESULT"
 * lines of one .trs file, named trs_name.  PASS and XFAIL are PASS, FAIL and
 * XPASS FAIL, SKIP SKIP, ERROR ERROR.  Colour sequences are ignored; an id
 * seen more than once is one test, failed if any of its lines failed.  In
 * test-suite.log a failed test's section ("FAIL: NAME" over "=====", then
 * its log up to the next section) is its message.  Never fails.
 */
void sl_tests_parse_automake(sl_tests *out, const char *text, size_t len, const char *trs_name);

/*
 * ctest's output: "N/M Test #K: NAME ....   Passed  0.01 sec" lines, with
 * the numbers padded as ctest pads them ("  1/120 Test   #1:");
 * "***Failed" is FAIL, "***Skipped" and "***Not Run (Disabled)" SKIP, any
 * other "***" status (Timeout, Exception, Not Run) ERROR; a test listed
 * twice is one test, failed if either failed.  A failed test's output
 * printed after its line (--output-on-failure), up to the next "Start N:",
 * "Test #" or the summary, joins its message.  The summary blocks ("The
 * following tests FAILED:" / "did not run:", lines "\t 11 - NAME
 * (STATUS)") add the tests the result lines did not name (output cut by
 * `| tail`).  Text that starts with '<' is ctest's JUnit (--output-junit)
 * and is read as JUnit.
 * SL_EINPUT only for malformed JUnit.
 */
int sl_tests_parse_ctest(sl_tests *out, const char *text, size_t len, sl_err *err);

/* ---- a fix's findings (finding_gone.h) ------------------------------- */

/* A target's unit on the base: file and 1-based inclusive line range. */
typedef struct sl_unit_ref {
	const char *path;
	unsigned start_line, end_line;
} sl_unit_ref;

/* Append to out (copies) the findings of f whose line lies in the unit. */
size_t sl_findings_in_unit(const sl_findings *f, const sl_unit_ref *u, sl_findings *out);

/*
 * Failing tests as findings (a finding-gone gate reading a test report):
 * each failing or erroring test of t becomes a finding with rule
 * "test:ID", its failure text as message, placed at the first "FILE:LINE"
 * in that text (TAP diagnostics and YAML "at:", JUnit failure text); a
 * test whose text names no location gets line 0 and encloses no unit.
 */
void sl_findings_from_tests(const sl_tests *t, sl_findings *out);

/*
 * The next "FILE:LINE" of text from *at (FILE has a '.' and no blank; the
 * path as sl_findings_from_tests reads it): its line, with *file set (the
 * caller frees it) and *at moved past it; 0 with *file NULL and *at NULL
 * when there is none.
 */
unsigned sl_text_next_location(const char **at, char **file);

/*
 * 1 when path (repository-relative) is a test's file: under a test
 * directory, named like a test (finding_gone.h, sl_judging), or matching
 * one of globs (NULL-terminated, may be NULL: a campaign's test_paths).
 */
int sl_test_file(const char *path, const char *const *globs);

/* ---- coverage (coverage.h) ------------------------------------------- */

struct sl_coverage;
/*
 * Count executable lines in [start_line, end_line] (end 0 = to the end of
 * the file) and how many ran at least once.  SL_ENOTFOUND (both 0) when the
 * file is not in the report.
 */
int sl_coverage_of(const struct sl_coverage *c, const char *path, unsigned start_line,
		   unsigned end_line, unsigned *covered, unsigned *total);

/* ---- policy (policy.h) ----------------------------------------------- */

typedef struct sl_policy_opts {
	const char *const *allow_paths;   /* NULL-terminated globs; NULL = any path */
	unsigned max_files;               /* 0 = no limit */
	unsigned max_lines;               /* added + removed; 0 = no limit */
	const char *const *forbid;        /* NULL-terminated EREs on added lines; NULL = none */
	int allow_build_files;
	const char *const *build_files;   /* NULL = sl_policy_default_build_files */
} sl_policy_opts;
#define SL_POLICY_OPTS_INIT { .allow_paths = NULL }
/* All pointers in opts are borrowed for the duration of each call. */

/* Compile every forbid pattern; SL_EINPUT naming the bad one. */
int sl_policy_validate(const sl_policy_opts *opts, sl_err *err);

/* ---- the syntax gate (syntax.h) -------------------------------------- */

/*
 * Check every file the candidate commit adds or changes against the base
 * commit, language by path (sl_lang_for_path; unknown languages, binary
 * files, symbolic links and files over 8 MiB pass).  A file passes when its
 * new text has no more ERROR/MISSING nodes than its old text (none for a
 * new file).  *ok_out = 1 when every file passes, else 0 with the locations
 * appended to report (may be NULL).  Errors: SL_ERROR (libgit2, tree-sitter).
 */
int sl_syntax_check_commit(git_repository *repo, const git_oid *base, const git_oid *candidate,
			   sl_buf *report, int *ok_out, sl_err *err);

/* ---- the jail (jail.h: what it contains, and how) -------------------- */

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
typedef struct sl_jail_opts {
	const char *workdir;        /* host directory bound read-write at /src */
	const char *command;        /* run as /bin/sh -c COMMAND inside (see pipefail) */
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
	 * every online CPU, best effort: a jail alone runs at the host's speed
	 * (make -jN on every core), jails at once share the cores, and the
	 * group's weight is half the default (cpu.weight 50, cpu.shares 512),
	 * so the host's own work comes first; nonzero is a requirement: without
	 * a CPU cgroup the run fails unless accept has SL_JAIL_CG_CPU.  Where a
	 * CPU cgroup holds the jail its command runs at nice 0; without one at
	 * nice 10 (and RLIMIT_CPU per process).
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
	 * Run /bin/bash -o pipefail -c COMMAND instead of /bin/sh -c COMMAND,
	 * so that a failure anywhere in a pipeline is the command's status;
	 * the caller checks the machine has it (sl_gate_pipefail).
	 */
	int pipefail;
	/*
	 * A host directory holding u/ and w/ (directories on one file system,
	 * empty the first time): /src is then an overlay of workdir (read-only
	 * below) and layer/u, which keeps what the command writes for the next
	 * run with the same layer (a candidate's gates in turn).  Not with
	 * writable_workdir; disk_mb is not enforced here: the layer's own file
	 * system caps it (root's tmpfs, or sl_jail_layer_new's), else the
	 * caller measures the layer.  As root, layer is given to the jail's
	 * user instead of workdir, which must be readable by that user already.
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
	int drain_cut;              /* a pipe was still held open DRAIN_MS after pid 1
				       was reaped (output may be cut) */
	int64_t cpu_ms;             /* user+system CPU time of every process of the jail */
	int64_t duration_ms;
	int64_t setup_ms;           /* of duration_ms: until the jail was set up and the
				       command about to start (0 when unknown) */
	sl_buf output;              /* the tail of stdout+stderr */
	size_t output_total;        /* bytes the command wrote in all */
	unsigned layers;            /* SL_JAIL_* bits this run had */
	unsigned cpu_milli;         /* the CPU quota its cgroup enforced (0: none) */
	int nice;                   /* the command's nice value */
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
/*
 * The jail spawner (jail_spawner.c): sl_jail_spawner_start() forks, while
 * this process is still small, a process that runs every later
 * sl_jail_run() of this process (the jail is then a copy of that small
 * process, not of the caller); the same jails, results and errors.  Call it
 * from one thread before the threads that run jails start, and
 * sl_jail_spawner_stop() once they are done; a stop (sl_jail_set_stop)
 * reaches the jails in the spawner.
 */
int sl_jail_spawner_start(sl_err *err);
void sl_jail_spawner_stop(void);
/*
 * A jail for a session of commands (jail_session.c): built once, on
 * opts (opts.command is not run); each sl_jail_session_exec() runs one
 * command in it as a fresh process, with the jail's limits, and kills
 * everything the command left before it returns; /tmp is made anew
 * between commands, so only /src (opts.layer) carries anything over.
 * The cgroup's limits hold for the whole session.  exec fills out's status,
 * timed_out (timeout_ms ran out: the jail is then gone), duration_ms,
 * output (the first head and the last tail bytes, stdout and stderr
 * interleaved) and output_total; SL_ERROR when the jail is gone
 * (sl_jail_session_alive() says so beforehand).  One thread at a time per
 * session.  sl_jail_session_free() ends the jail and waits for its
 * cleanup; if NULL nothing occurs.
 */
typedef struct sl_jail_session sl_jail_session;
int sl_jail_session_open(sl_jail_session **out, const sl_jail_opts *opts, sl_err *err);
int sl_jail_session_exec(sl_jail_session *j, sl_jail_result *out, const char *command,
			 unsigned timeout_ms, size_t head, size_t tail, sl_err *err);
int sl_jail_session_alive(const sl_jail_session *j);
void sl_jail_session_free(sl_jail_session *j);
/* What this machine offers, for `sluice doctor` and for refusing to run. */
typedef struct sl_jail_layers {
	unsigned available;         /* SL_JAIL_* bits that work here */
	int landlock_abi;           /* 0 = none */
	int cgroup_version;         /* 0 none usable, 1 v1, 2 v2, 3 both (hybrid) */
	char cgroup_v2_controllers[128];   /* cgroup.controllers of our v2 group */
	char cgroup_detail[256];    /* where each cgroup layer comes from */
	char overlay_error[256];    /* why the overlay layer is missing, or "" */
	char run_error[256];        /* why a full jail run failed, or "" */
	enum sl_jail_disk {
		SL_JAIL_DISK_NONE = 0,      /* no overlay: no layer at all */
		SL_JAIL_DISK_TMPFS_ROOT,    /* a tmpfs mounted by root per candidate */
		SL_JAIL_DISK_TMPFS_USERNS,  /* a tmpfs in a user namespace (sl_jail_layer_new) */
		SL_JAIL_DISK_MEASURED,      /* a host directory measured after each gate */
	} disk;                     /* how a candidate's layer holds jail.disk_mb */
	char disk_error[256];       /* with SL_JAIL_DISK_MEASURED: why no tmpfs, or "" */
	int userns_errno;           /* without SL_JAIL_USERNS: the clone's errno */
} sl_jail_layers;

/*
 * Probe every layer: each namespace on its own, then a real jail run of
 * "true" (which shows the private root, seccomp, Landlock, cgroups) and
 * one with an overlay.  Takes some milliseconds.  Returns 0 (missing
 * layers are not errors: read out->available), SL_ERROR if the probe
 * itself broke (no scratch directory).
 */
int sl_jail_probe(sl_jail_layers *out, sl_err *err);

/*
 * 0 when user, mount, pid and network namespaces work here (probed once
 * per process), else SL_EBASE with a line in err naming what is missing
 * and the setting that enables it: what a gate refuses to run without
 * unless --unsafe.
 */
int sl_jail_minimum(sl_err *err);

/*
 * What keeps user namespaces off here (jail_host.c): each setting of
 * /proc/sys that exists (kernel.unprivileged_userns_clone,
 * kernel.apparmor_restrict_unprivileged_userns, user.max_user_namespaces)
 * and a seccomp filter on this process, with its value, whether that
 * value refuses them to this user, and what enables them.  Fills up to n
 * entries of out (name and fix are static strings) and returns how many.
 */
typedef struct sl_jail_hint {
	const char *name;
	char value[32];
	int blocks;
	const char *fix;
} sl_jail_hint;
size_t sl_jail_userns_hints(sl_jail_hint *out, size_t n);
/* "kubernetes", "slurm" or "": where this process runs, from its environment. */
const char *sl_jail_where(void);
/* What such a place needs for the jail ("" for none): static. */
const char *sl_jail_where_fix(const char *where);
/* Append "no user namespace (clone: ...)" and the settings that refuse it. */
void sl_jail_userns_why(sl_buf *out, int clone_errno);
/* 1 when SLUICE_TEST_NO_USERNS=1: the jail's clones of a user namespace fail (EPERM). */
int sl_jail_test_no_userns(void);

/*
 * A candidate's layer for an ordinary user (jail_layer.c): a tmpfs of
 * cap_mb MiB made in a user namespace of its own, with empty u/ and w/,
 * held by a descriptor of this process and named by *path_out
 * ("/proc/PID/fd/N", caller frees) for sl_jail_opts.layer.  Writes beyond
 * cap_mb fail with ENOSPC.  SL_ERROR (message in err) where the kernel or
 * its policy refuses: the caller then uses a host directory.
 */
int sl_jail_layer_new(char **path_out, unsigned cap_mb, sl_err *err);
/*
 * 1 if path names a layer of sl_jail_layer_new (of any process): its
 * process and descriptor in *pid_out and *fd_out (each may be NULL).
 */
int sl_jail_layer_held(const char *path, long *pid_out, int *fd_out);
/* Close the layer at path if it is one this process holds: 1 then, else 0. */
int sl_jail_layer_drop(const char *path);

/* ---- the gate runner ------------------------------------------------- */


enum sl_gate_kind {
	SL_GATE_CUSTOM = 0,         /* exit status decides (the default) */
	SL_GATE_BUILD,              /* exit status decides */
	SL_GATE_POLICY,             /* on the diff, before anything runs; no command */
	SL_GATE_STATIC,             /* new findings on or near changed lines fail */
	SL_GATE_TEST,               /* regressions and must-fix tests decide; reruns */
	SL_GATE_COVERAGE,           /* the candidate must raise its target's coverage */
	SL_GATE_FINDING_GONE,       /* the target's findings are gone (finding_gone.h) */
	SL_GATE_MUTANTS,            /* testgen: the new test kills a mutant the suite misses */
};

/* What a gate must say on the base and on the candidate (README, "Gate expectations"). */
enum sl_gate_expect {
	SL_EXPECT_PASS = 0,         /* passes on the base, must pass on the candidate; a test
				       gate with a report: the base's passing tests must pass */
	SL_EXPECT_FIX,              /* fails on the base, must pass on the candidate; a test
				       gate with a report: every test failing on the base
				       (not flaky) must pass */
};

/*
 * The report a gate reads (`format:`), and a fix campaign's findings file.
 * Names ("gcc", "sarif", ...) only where text enters: the campaign file.
 */
enum sl_report_format {
	SL_REPORT_NONE = 0,         /* the gate reads no report */
	SL_REPORT_GCC,              /* findings: gcc/clang text diagnostics */
	SL_REPORT_GCC_JSON,         /* findings: -fdiagnostics-format=json */
	SL_REPORT_SARIF,            /* findings: SARIF 2.1 */
	SL_REPORT_JUNIT,            /* tests: JUnit XML */
	SL_REPORT_TAP,              /* tests: TAP */
	SL_REPORT_AUTOMAKE,         /* tests: automake's .log/.trs */
	SL_REPORT_CTEST,            /* tests: ctest's output */
	SL_REPORT_LCOV,             /* coverage: lcov tracefile */
	SL_REPORT_GCOV,             /* coverage: gcov text */
	SL_REPORT_GCOV_JSON,        /* coverage: gcov JSON */
	SL_REPORT_NFORMATS
};

/* The format's name ("gcc" ...); NULL for SL_REPORT_NONE or a value that is none. */
const char *sl_report_format_name(int format);
/* The format named name, or SL_REPORT_NONE when there is none. */
int sl_report_format_parse(const char *name);
/* 1 for the formats of test reports (junit, tap, automake, ctest). */
int sl_report_format_is_tests(int format);

/* A static gate's `fail_on:` the lowest level of finding that fails it. */
enum sl_fail_on {
	SL_FAIL_ON_DEFAULT = 0,     /* not given: warning */
	SL_FAIL_ON_WARNING,
	SL_FAIL_ON_ERROR,
	SL_FAIL_ON_N
};

/* "warning", "error"; NULL for SL_FAIL_ON_DEFAULT or a value that is none. */
const char *sl_fail_on_name(int fail_on);
/* The level named name, or SL_FAIL_ON_DEFAULT when there is none. */
int sl_fail_on_parse(const char *name);

/*
 * Gate commands run as /bin/bash -o pipefail -c COMMAND where the machine
 * has /bin/bash (bash is essential on Debian; its /bin/sh, dash, has no
 * pipefail), so `make 2>&1 | tail` fails when make fails; else as /bin/sh -c
 * COMMAND.  1 when they run with pipefail here.  SLUICE_TEST_NO_BASH=1 in
 * the environment makes it 0 (for tests: a machine without bash).
 */
int sl_gate_pipefail(void);

/*
 * 1 when command holds a pipeline ('|' or '|&' outside quotes and
 * comments; '||' is not one): without pipefail its status is the last
 * stage's, whatever the stages before it did.
 */
int sl_gate_command_pipes(const char *command);

/* One gate as the campaign defines it (pipeline/spec/gates.c fills it; the gating owns none of it). */
typedef struct sl_gate_conf {
	char *name;
	char *command;              /* NULL only for policy gates */
	unsigned timeout_s;         /* default 600 */
	sl_pos pos;
	enum sl_gate_kind kind;
	enum sl_report_format format; /* static, finding-gone: findings
				       or tests; test: tests; coverage: coverage */
	char *report;               /* file the command writes, relative to the worktree;
				       NULL = parse the command's output */
	unsigned radius;            /* static: lines around a change (default 3) */
	enum sl_fail_on fail_on;    /* static */
	unsigned reruns;            /* test: runs that must all pass (default 1) */
	unsigned mutant_timeout_factor; /* mutants: a mutant's run is bounded by this many
				       times the unmutated run, plus a few seconds
				       (default 10; 0 = the default) */
	int loopback;               /* may use 127.0.0.1 inside the jail (default false) */
	sl_strvec must_fix;         /* test with a format: ids that must pass now */
	sl_strvec allow_test_changes; /* test and finding-gone gates with a test format:
				       globs of the files of their must-fix tests a
				       candidate may change (finding_gone.h, sl_judging) */
	enum sl_gate_expect expect; /* `expect:`, else the campaign's goal */
	int allow_skip;             /* `allow_skip: true`: a gate failing on the base is
				       recorded skip instead of stopping the campaign, and a
				       skip does not keep a candidate from review */
	int prepare;                /* `prepare: true`: the gate prepares the warm base
				       (configure, build): run once on the base tree, whose
				       result every candidate's tree starts from; such gates
				       come before the other gates that run a command */
	sl_strvec inputs;           /* `inputs:` of a preparing gate: globs of the files
				       whose change makes a candidate run it again (a glob
				       without '/' matches a file name at any depth) */
	int has_inputs;             /* `inputs:` given (else sl_gating's defaults for
				       autotools, CMake and Meson) */
	/* policy: */
	sl_strvec allow_paths, forbid, build_files;
	unsigned max_files, max_lines;
	int allow_build_files;
} sl_gate_conf;

/*
 * How a candidate's tree is made (`jail: {warm_base: ...}`):
 *   auto     a warm base under an overlay where the jail can mount one, else
 *            a plain worktree per candidate (the default);
 *   overlay  the warm base and an overlay, or the campaign does not run;
 *   off      a plain worktree per candidate.
 * Either way a candidate's gates share one writable tree, in order.
 */
enum sl_warm_mode { SL_WARM_AUTO = 0, SL_WARM_OVERLAY, SL_WARM_OFF };

/* The jail's limits for every gate of a campaign (0 = the jail's defaults). */
typedef struct sl_jail_limits {
	unsigned mem_mb, pids, tmp_mb;
	unsigned disk_mb;           /* the size of the overlay gates write to (0 = default) */
	unsigned cpus;              /* CPU quota in CPUs (0 = the jail's default) */
	unsigned as_mb;             /* address-space limit per process (0 = none) */
	unsigned accept;            /* SL_JAIL_CG_* layers that may go unenforced */
	int writable;               /* writable_worktree: no overlay */
	enum sl_warm_mode warm_base; /* `warm_base:` */
} sl_jail_limits;



typedef struct sl_gating sl_gating;

/* The gate runs of one candidate, in order; records own their strings. */
typedef struct sl_gate_outcome {
	sl_gate_run_rec *v;
	size_t n, alloc;
} sl_gate_outcome;

void sl_gate_outcome_release(sl_gate_outcome *o);

/*
 * The gates (ngates, borrowed until sl_gating_free) judged in jails with the
 * limits jail (copied).  unsafe: run gates even where the jail lacks user,
 * mount, pid or network namespaces.
 */
int sl_gating_open(sl_gating **out, const sl_gate_conf *gates, size_t ngates,
		   const sl_jail_limits *jail, sl_store *st, int64_t campaign_id,
		   const git_oid *base, int unsafe, sl_err *err);
void sl_gating_free(sl_gating *g);

/*
 * After the baseline: one line per per-test gate (a test gate with a format,
 * no must_fix, not expecting a fix) whose base has failing tests it will
 * blame on no candidate, naming them and the keys that would blame them
 * ("gate 'test': 1 test failing on the base is not blamed, ...: clamp_above
 * (name it in the gate's must_fix, or set goal: fix)"); nothing when none.
 */
void sl_gating_unblamed(const sl_gating *g, sl_buf *out);

/*
 * The tree a candidate's (or the base's) gates run on, in order, each
 * seeing what the ones before it left:
 *   layer NULL: dir is a plain checkout the gates write (the jail's writable
 *               workdir);
 *   layer set:  dir is the warm base, read-only, under an overlay whose
 *               upper layer is layer/u (sl_jail_opts.layer); the caller
 *               measures the layer's size when no tmpfs caps it.
 * Both strings are borrowed for the call.
 */
typedef struct sl_gate_tree {
	const char *dir;
	const char *layer;
	unsigned layer_cap_mb;      /* fail a gate that leaves layer/u larger; 0 = no check */
	int prepared;               /* dir is the warm base the preparing gates prepared
				       (sl_gating_prepare): one whose inputs the candidate
				       leaves alone is not run again (sl_gating_run_on) */
} sl_gate_tree;

/*
 * Where the base is checked out: the orchestrator creates the tree and
 * hands the runner its directories.  Called at most once per measurement,
 * and only when a gate must run on the base (nothing stored yet); what *out
 * points to stays the caller's.
 */
typedef int (*sl_base_checkout_fn)(void *ctx, sl_gate_tree *out, sl_err *err);

/*
 * Measure (or load) the baseline.  progress (may be NULL) is told of each
 * gate run on the base, with progress_ctx.
 */
int sl_gating_baseline(sl_gating *g, sl_base_checkout_fn checkout, void *ctx,
		       sl_notice_fn progress, void *progress_ctx, sl_err *err);

/*
 * Measure (or load) the baseline of every gate like sl_gating_baseline(),
 * without stopping at a gate that cannot judge, and render it into out
 * (text, or one JSON object with json): each gate's expectation, verdict
 * and exit status on the base, why it cannot judge, and for test gates each
 * base test with its result and what the campaign makes of it (must pass,
 * must fix, not blamed, flaky: excluded, skipped).  SL_EBASE (out filled)
 * when some gate cannot judge.
 */
int sl_gating_describe(sl_gating *g, sl_base_checkout_fn checkout, void *ctx,
		       sl_notice_fn progress, void *progress_ctx, int json, sl_buf *out,
		       sl_err *err);

/*
 * The warm base (README, "Warm base"): its key, one fact a line (base
 * commit, --unsafe, sluice's gating version, the jail's settings, the
 * kernel, the programs the preparing gates run with their size and mtime,
 * each preparing gate's definition digest, in order), appended to out;
 * its SHA-256 names the warm base (pipeline/apply/warm.h).
 */
void sl_gating_warm_key(const sl_gating *g, sl_buf *out);
/*
 * Why a warm base of key differs from one of old_key, in words appended to
 * why ("/usr/bin/cc changed, the gate 'build' changed"; at most three
 * reasons and how many more); nothing when they are the same.
 */
void sl_gating_warm_why(const char *old_key, const char *key, sl_buf *why);
/*
 * Share the baseline with other stores of the same campaign definition:
 * a file in dir named by a digest of the base commit, every gate's
 * definition in order and the environment.  sl_gating_baseline() then takes
 * a gate's runs from there when its store has none, and writes what it
 * measured there.
 */
void sl_gating_share_baselines(sl_gating *g, const char *dir);
/*
 * Fence the baseline rows sl_gating_baseline() writes (storage/lease.h):
 * each goes in a transaction that first checks owner still holds the
 * campaign's baseline lease with this epoch; once it does not, nothing
 * more is written and sl_gating_baseline() returns SL_ELEASE (gates already
 * loaded stay loaded; call it again to load the rest from the store).
 * owner is copied; NULL: no fencing (the default).
 */
void sl_gating_fence_baseline(sl_gating *g, const char *owner, int64_t epoch);
/* 1 when some gate has `prepare: true`. */
int sl_gating_has_prepare(const sl_gating *g);
/*
 * 1 when a gate writes the candidate's tree from the host between its runs
 * (mutants): such a campaign needs a plain worktree, not the overlay.
 */
int sl_gating_writes_tree(const sl_gating *g);
/*
 * Prepare the warm base checked out (exported) at dir: run the preparing
 * gates there in order, in the jail, writing dir (a tree without them is
 * still handed to the jail's user once).  Their verdicts are not recorded:
 * the baseline judges the base.  *ms_out (may be NULL) gets the time spent.
 * SL_ERROR when the jail could not run a gate.
 */
int sl_gating_prepare(sl_gating *g, const char *dir, sl_notice_fn progress, void *progress_ctx,
		      int64_t *ms_out, sl_err *err);

/*
 * Who watches the gates run (the run's live view and event stream): told
 * when a gate starts and when it ends, on the calling thread.  where is
 * "candidate", "baseline" or "prepare"; rec is NULL when the gate starts,
 * and at its end the candidate's gate run (a baseline's and a
 * preparation's carry the gate, verdict and duration only).  Borrowed for
 * the call.
 */
typedef void (*sl_gate_watch_fn)(void *ctx, const char *gate, const char *where,
				 const sl_gate_run_rec *rec);
/* Set (fn NULL: unset) who watches g's gates; ctx is borrowed until g is freed. */
void sl_gating_watch(sl_gating *g, sl_gate_watch_fn fn, void *ctx);

/*
 * A candidate's diff parsed once (validators/diff_lines.h), where the gate
 * runner starts judging the candidate, and handed to every gate that reads
 * it: policy, static, test, finding-gone, mutants.  diff is borrowed until
 * sl_cand_diff_free (the parse points into it).  Never NULL: a diff that
 * does not parse is kept as far as it goes, and the policy gate says so.
 * sl_cand_diff_free(NULL) does nothing.
 */
typedef struct sl_changed sl_changed;
sl_changed *sl_cand_diff_parse(const char *diff);
void sl_cand_diff_free(sl_changed *diff);

/*
 * Policy gates on the parsed diff.  *passed = 0 and feedback filled when
 * one fails.
 */
int sl_gating_policy_on(sl_gating *g, const sl_changed *diff, sl_gate_outcome *o, int *passed,
			sl_buf *feedback, sl_err *err);

/*
 * The jailed gates, in order, on the candidate's tree, stopping at the
 * first that fails.  tree_hex: the candidate's tree id.  A gate whose
 * verdict comes from the cache does not run; when a later one must run,
 * the cached ones before it run first (their results unused), so it sees
 * the tree as they leave it.  SL_ERROR when the jail itself could not run
 * a gate.  diff: the candidate's, parsed by sl_cand_diff_parse().
 *
 * On a prepared tree (tree->prepared) a preparing gate that passed on the
 * base is not run again, and is recorded pass, cached, with the note
 * "prepare: reused (no input changed)", when the candidate changes none of its
 * inputs (`inputs:`; without them autotools', CMake's and Meson's files,
 * and the last preparing gate, the build, always runs), no preparing gate
 * before it ran again, and a gate that does not prepare comes after it; a
 * preparing gate that runs says why in its note ("re-run: configure.ac
 * changed").
 */
int sl_gating_run_on(sl_gating *g, const sl_gate_tree *tree, const char *tree_hex,
		     const sl_changed *diff, const sl_target *t, sl_gate_outcome *o, int *passed,
		     sl_buf *feedback, sl_err *err);

/*
 * Append (copies) the base findings of every finding-gone gate, measured by
 * sl_gating_baseline(): a fix campaign's targets are the units enclosing them.
 */
void sl_gating_base_findings(const sl_gating *g, sl_findings *out);

/*
 * After the baseline, for a fix campaign (pipeline/fixtarget.c): the tests
 * failing on the base that a gate must see fixed (finding_gone.h,
 * sl_judging), appended to out (copies, each id once);
 * sl_gating_protect adds path, a file holding test id, to what those gates
 * protect; sl_gating_place_tests moves each finding-gone gate's base
 * finding of a failing test (rule "test:ID") to where f's finding of the
 * same rule lies, the code the test exercises.
 */
void sl_gating_judging_tests(const sl_gating *g, sl_tests *out);
void sl_gating_protect(sl_gating *g, const char *id, const char *path);
void sl_gating_place_tests(sl_gating *g, const sl_findings *f);

/* The base's report of the first coverage gate (borrowed; NULL when none was measured). */
struct sl_coverage;
const struct sl_coverage *sl_gating_base_coverage(const sl_gating *g);

#endif
