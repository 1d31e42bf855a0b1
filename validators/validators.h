/*
 * validators.h - the front door of validators/: gate definitions, verdicts
 * and the gate runner (validators/gating.c), which judges a candidate by the
 * campaign's gates, each by its kind, against a baseline measured once on
 * the base commit.  Code outside validators/ includes this header only; it
 * brings the parts of the validators a caller needs (the jail's probe, the
 * syntax gate, findings, test reports, coverage, policy checks).
 *
 * spec.c fills the types below from the campaign file; nothing here knows
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
 * Thread safety: after sl_gating_baseline(), sl_gating_policy() and
 * sl_gating_run() may be called from several threads at once.
 */
#ifndef SL_VALIDATORS_H
#define SL_VALIDATORS_H

#include <git2.h>

#include "common/buf.h"
#include "common/err.h"
#include "common/util.h"
#include "scoping/scope.h"
#include "storage/store.h"
#include "validators/coverage.h"
#include "validators/finding_gone.h"
#include "validators/findings.h"
#include "validators/gate.h"
#include "validators/jail.h"
#include "validators/policy.h"
#include "validators/syntax.h"
#include "validators/testreport.h"

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

/* One gate as the campaign defines it (spec.c fills it; the gating owns none of it). */
typedef struct sl_gate_conf {
	char *name;
	char *command;              /* NULL only for policy gates */
	unsigned timeout_s;         /* default 600 */
	sl_pos pos;
	int kind;                   /* enum sl_gate_kind */
	int format;                 /* enum sl_report_format; static, finding-gone: findings
				       or tests; test: tests; coverage: coverage */
	char *report;               /* file the command writes, relative to the worktree;
				       NULL = parse the command's output */
	unsigned radius;            /* static: lines around a change (default 3) */
	int fail_on;                /* enum sl_fail_on (static) */
	unsigned reruns;            /* test: runs that must all pass (default 1) */
	int loopback;               /* may use 127.0.0.1 inside the jail (default false) */
	sl_strvec must_fix;         /* test with a format: ids that must pass now */
	int expect;                 /* enum sl_gate_expect; `expect:`, else the campaign's goal */
	int allow_skip;             /* `allow_skip: true`: a gate failing on the base is
				       recorded skip instead of stopping the campaign, and a
				       skip does not keep a candidate from review */
	int prepare;                /* `prepare: true`: the gate prepares the warm base
				       (configure, build): run once on the base tree, whose
				       result every candidate's tree starts from; such gates
				       come before the other gates that run a command */
	/* policy: */
	sl_strvec allow_paths, forbid, build_files;
	unsigned max_files, max_lines;
	int allow_build_files;
} sl_gate_conf;

/* The jail's limits for every gate of a campaign (0 = the jail's defaults). */
typedef struct sl_jail_limits {
	unsigned mem_mb, pids, tmp_mb;
	unsigned disk_mb;           /* the size of the overlay gates write to (0 = default) */
	unsigned cpus;              /* CPU quota in CPUs (0 = the jail's default) */
	unsigned as_mb;             /* address-space limit per process (0 = none) */
	unsigned accept;            /* SL_JAIL_CG_* layers that may go unenforced */
	int writable;               /* writable_worktree: no overlay */
	int warm_base;              /* enum sl_warm_mode (`warm_base:`) */
} sl_jail_limits;

/*
 * How a candidate's tree is made (`jail: {warm_base: ...}`):
 *   auto     a warm base under an overlay where the jail can mount one, else
 *            a plain worktree per candidate (the default);
 *   overlay  the warm base and an overlay, or the campaign does not run;
 *   off      a plain worktree per candidate.
 * Either way a candidate's gates share one writable tree, in order.
 */
enum sl_warm_mode { SL_WARM_AUTO = 0, SL_WARM_OVERLAY, SL_WARM_OFF };


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
 * The warm base (README, "Warm base"): the digest naming it (base commit,
 * the preparing gates' definitions in order, the environment digest,
 * --unsafe), as 64 hex digits.
 */
void sl_gating_warm_digest(const sl_gating *g, char out[65]);
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
 * one fails.  sl_gating_policy() parses diff for the call.
 */
int sl_gating_policy_on(sl_gating *g, const sl_changed *diff, sl_gate_outcome *o, int *passed,
			sl_buf *feedback, sl_err *err);
int sl_gating_policy(sl_gating *g, const char *diff, sl_gate_outcome *o, int *passed,
		     sl_buf *feedback, sl_err *err);

/*
 * The jailed gates, in order, on the candidate's tree, stopping at the
 * first that fails.  tree_hex: the candidate's tree id.  A gate whose
 * verdict comes from the cache does not run; when a later one must run,
 * the cached ones before it run first (their results unused), so it sees
 * the tree as they leave it.  SL_ERROR when the jail itself could not run
 * a gate.  diff: the candidate's, parsed by sl_cand_diff_parse().
 */
int sl_gating_run_on(sl_gating *g, const sl_gate_tree *tree, const char *tree_hex,
		     const sl_changed *diff, const sl_target *t, sl_gate_outcome *o, int *passed,
		     sl_buf *feedback, sl_err *err);
/* The same, parsing diff for the call. */
int sl_gating_run(sl_gating *g, const sl_gate_tree *tree, const char *tree_hex, const char *diff,
		  const sl_target *t, sl_gate_outcome *o, int *passed, sl_buf *feedback,
		  sl_err *err);

/*
 * Append (copies) the base findings of every finding-gone gate, measured by
 * sl_gating_baseline(): a fix campaign's targets are the units enclosing them.
 */
void sl_gating_base_findings(const sl_gating *g, sl_findings *out);

/* The base's report of the first coverage gate (borrowed; NULL when none was measured). */
struct sl_coverage;
const struct sl_coverage *sl_gating_base_coverage(const sl_gating *g);

#endif
