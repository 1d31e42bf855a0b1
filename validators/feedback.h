/*
 * feedback.h - what a model is told about a gate its candidate failed.
 *
 * Not a raw log tail: compiler diagnostics (gcc/clang format, findings.h)
 * on or within 3 lines of an edited line come first, then other errors
 * (an edit to a header breaks its callers), then failing tests with their
 * messages (testreport.h); only when none of that parses does it fall
 * back to the last lines of the output.  The whole text is capped at
 * SL_FEEDBACK_CAP bytes, cut at line ends.
 *
 * Calling sequence, after any failing gate (build, static, test,
 * custom; policy has its own sl_policy_result_text):
 *
 *     sl_buf fb = SL_BUF_INIT;
 *     sl_feedback_build(&fb, gate->name, sl_verdict_name(res.verdict),
 *                       res.output.buf, &changed, tests_or_NULL);
 *     ... fb.buf goes into the next prompt and the attempt's row ...
 *     sl_buf_release(&fb);
 *
 * All arguments are borrowed for the call; changed and tests may be NULL.
 */
#ifndef SL_FEEDBACK_H
#define SL_FEEDBACK_H

#include "common/buf.h"
#include "validators/diff_lines.h"
#include "validators/testreport.h"
#include "common/caps.h"

#define SL_FEEDBACK_RADIUS 3u

/* Append the feedback text to out (which it never grows by more than the cap). */
void sl_feedback_build(sl_buf *out, const char *gate, const char *verdict, const char *output,
		       const sl_changed *changed, const sl_tests *tests_or_null);

#endif
