/*
 * gating.h - judging a candidate: the campaign's gates, each by its kind,
 * against a baseline measured once on the base commit.
 *
 * Kinds (spec.h, enum sl_gate_kind):
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
#ifndef SL_GATING_H
#define SL_GATING_H

#include <git2.h>

#include "common/buf.h"
#include "common/err.h"
#include "validators/findings.h"
#include "scoping/scope.h"
#include "pipeline/spec.h"
#include "storage/store.h"

typedef struct sl_gating sl_gating;

/* The gate runs of one candidate, in order; records own their strings. */
typedef struct sl_gate_outcome {
	sl_gate_run_rec *v;
	size_t n, alloc;
} sl_gate_outcome;

void sl_gate_outcome_release(sl_gate_outcome *o);

/* unsafe: run gates even where the jail lacks user, mount, pid or network namespaces. */
int sl_gating_open(sl_gating **out, const sl_spec *spec, sl_store *st, int64_t campaign_id,
		   const git_oid *base, int unsafe, sl_err *err);
void sl_gating_free(sl_gating *g);

/*
 * Measure (or load) the baseline.  Uses the branch PREFIX/base-<id> for its
 * worktree under scratch and deletes it afterwards.  progress: print a line.
 */
int sl_gating_baseline(sl_gating *g, git_repository *repo, const char *scratch,
		       const char *branch_prefix, int progress, sl_err *err);

/*
 * Measure (or load) the baseline of every gate like sl_gating_baseline(),
 * without stopping at a gate that cannot judge, and render it into out
 * (text, or one JSON object with json): each gate's expectation, verdict
 * and exit status on the base, why it cannot judge, and for test gates each
 * base test with its result and what the campaign makes of it (must pass,
 * must fix, not blamed, flaky: excluded, skipped).  SL_EBASE (out filled)
 * when some gate cannot judge.
 */
int sl_gating_describe(sl_gating *g, git_repository *repo, const char *scratch,
		       const char *branch_prefix, int progress, int json, sl_buf *out,
		       sl_err *err);

/* Policy gates on the diff.  *passed = 0 and feedback filled when one fails. */
int sl_gating_policy(sl_gating *g, const char *diff, sl_gate_outcome *o, int *passed,
		     sl_buf *feedback, sl_err *err);

/*
 * The jailed gates, in order, on the candidate checked out at workdir,
 * stopping at the first that fails.  tree_hex: the candidate's tree id.
 * SL_ERROR when the jail itself could not run a gate.
 */
int sl_gating_run(sl_gating *g, const char *workdir, const char *tree_hex, const char *diff,
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
