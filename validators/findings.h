/*
 * findings.h - static-analysis findings, and which of them a candidate added.
 *
 * Two input formats:
 *   gcc   - gcc/clang (and cppcheck --template=gcc, clang --analyze text)
 *           diagnostics: "FILE:LINE[:COL]: LEVEL: MESSAGE [FLAG]", LEVEL one
 *           of warning, error, fatal error, note, remark.  A note attaches
 *           to the diagnostic before it; "In function", "In file included
 *           from", "At top level", source excerpts and caret lines are
 *           skipped.
 *   sarif - SARIF 2.1.0: runs[].results[] with ruleId (or rule.id),
 *           level (default "warning"; "none" is a note), message.text,
 *           locations[0].physicalLocation.artifactLocation.uri (or its
 *           index into runs[].artifacts[]; a uriBaseId is resolved through
 *           runs[].originalUriBaseIds, chained up to 8 deep, and the URI
 *           percent-decoded) and region.startLine; relatedLocations
 *           and the steps of the first codeFlow become its notes.
 * Paths go through sl_report_path (diff_lines.h): "file://", the jail's
 * "/src/" and "./" are stripped, so they compare with the diff's.
 *
 * A candidate's finding "fails" when it is new compared with the base's
 * findings and on or near a changed line.  New is decided without line
 * numbers (code moves): findings are keyed by (file, rule, normalised
 * message), the message normalised by turning typographic quotes into ',
 * collapsing white space and replacing numbers that follow ':' or "line "
 * with '#'; for each key, if the candidate has c findings and the base b,
 * c - b of them are new, and those taken are the ones nearest changed lines
 * (so an old warning that merely moved is never blamed while a new copy of
 * it on an edited line is).  A file renamed by the diff is keyed by its new
 * name on both sides.
 *
 * The `static` gate in a campaign file (read by pipeline/spec/gates.c):
 *
 *     - name: warnings
 *       kind: static
 *       command: make -k CFLAGS='-Wall -Wextra' 2>&1     # or an analyzer
 *       format: gcc            # gcc (from the output) | sarif
 *       report: out/scan.sarif # sarif: read with sl_read_beneath from the worktree;
 *                              # gcc: omitted = parse the command's output
 *       radius: 3              # lines around a changed line; default 3
 *       fail_on: warning       # warning (default) | error: ignore lower levels
 *
 * Calling sequence: run the command on the base once per campaign (cache the
 * parsed base set), then per candidate:
 *
 *     sl_findings base, cand, fresh;  (each sl_findings_init)
 *     sl_findings_parse_gcc(&cand, out.buf, out.len);    or _sarif(...)
 *     sl_findings_new_near(&base, &cand, &changed, radius, &fresh);
 *     verdict = fresh.n ? FAIL : PASS;   (after dropping levels below fail_on)
 *     sl_findings_text(&fresh, &feedback, 4096);
 *
 * The gate's exit status is not the verdict for `static` (analyzers exit
 * non-zero when they find anything); the gate runner records it, and fails a
 * candidate whose declared report is missing ("no report").
 *
 * The finding types, the parsers, sl_findings_place and sl_findings_text
 * are declared in validators/validators.h (code outside validators/ reads
 * findings files too); this header adds the rest.
 */
#ifndef SL_FINDINGS_H
#define SL_FINDINGS_H

#include <stddef.h>

#include "common/buf.h"
#include "common/err.h"
#include "validators/diff_lines.h"
#include "validators/validators.h"

/* Keep only findings at min_level or above (in place). */
void sl_findings_filter_level(sl_findings *f, enum sl_finding_level min_level);

/*
 * Append to *out (copies) the findings of cand that are new compared with
 * base and within radius lines of a line the diff changed (see above).
 * Notes are never findings of their own.  Returns how many were appended.
 */
size_t sl_findings_new_near(const sl_findings *base, const sl_findings *cand,
			    const sl_changed *changed, unsigned radius, sl_findings *out);

/* "note", "warning", "error" ("unknown" for anything else). */
const char *sl_finding_level_name(enum sl_finding_level level);

#endif
