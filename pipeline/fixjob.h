/*
 * fixjob.h - choosing targets from the baseline: a fix campaign's are the
 * query's units that enclose a finding the analyzer reported on the base
 * (README, "The fix job"); a testgen campaign may keep only the units its
 * coverage report shows below a threshold ("The testgen job").
 *
 * Calling sequence (run.c, kind: fix):
 *     scope the base with the campaign's query (e.g. every function);
 *     measure the gates' baseline, collect the finding-gone gates' base
 *     findings (validators/validators.h, sl_gating_base_findings);
 *     sl_fix_select(&list, &findings, &unplaced)   keep the units with findings
 *     per target: sl_fix_finding_text(&findings, t, &buf) for the prompt.
 * Findings in one unit merge into one target; a finding inside nested units
 * belongs to the innermost.
 */
#ifndef SL_FIXJOB_H
#define SL_FIXJOB_H

#include "common/buf.h"
#include "validators/validators.h"
#include "scoping/scope.h"

/*
 * Drop from list every target whose unit encloses no finding of f (the
 * list stays sorted).  *unplaced = how many findings no target encloses
 * (in a file or at a line the query does not cover).
 */
void sl_fix_select(sl_target_list *list, const sl_findings *f, size_t *unplaced);

/*
 * Append the findings inside t's unit to out, one "FILE:LINE:COL: LEVEL:
 * MESSAGE [RULE]" line each with its related locations indented under it
 * (capped at 8 KiB); nothing when there are none.
 */
void sl_fix_finding_text(const sl_findings *f, const sl_target *t, sl_buf *out);

/*
 * testgen's `coverage_below: PERCENT`: drop from list every target whose
 * unit has at least that share of its executable lines covered in cov (the
 * base's coverage report).  A unit the report does not know, or with no
 * executable line, stays.  cov NULL: nothing is dropped.
 */
/*
 * Parse a findings file of the given format (gcc, gcc-json, sarif, tap or
 * junit: failing tests, see finding_gone.h) into out.  SL_EINPUT for a
 * SARIF or JUnit file that does not parse.
 */
int sl_fix_parse_findings(sl_findings *out, const char *format, const char *text, size_t len,
			  sl_err *err);

/*
 * Read and parse the campaign's `findings` file (spec->findings_report,
 * against spec->dir) into out.  SL_EINPUT "findings: ..." when it cannot be
 * read or parsed.
 */
struct sl_spec;
int sl_fix_load_findings(sl_findings *out, const struct sl_spec *spec, sl_err *err);

struct sl_coverage;
void sl_testgen_select(sl_target_list *list, const struct sl_coverage *cov, unsigned percent);

#endif
