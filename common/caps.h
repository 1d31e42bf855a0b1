/*
 * caps.h - every bound sluice puts on input it does not trust, in one
 * place: what a model, a gate, a forge, a repository or a campaign file
 * may hand it.  Input past a cap is cut (and said so) or refused with an
 * error that names the cap; never trusted to be small.
 *
 * Changing a value here changes behaviour users see (what is cut, what is
 * refused): the tests under tests/t assert several of them.  Sizes are in
 * bytes unless the name says otherwise.
 */
#ifndef SL_CAPS_H
#define SL_CAPS_H

/* ---- the campaign file and queries (the user's, but parsed defensively) -- */

#define SL_CAP_SPEC_BYTES (1u << 20)       /* the campaign file */
#define SL_CAP_SPEC_DEPTH 32               /* YAML nesting in the campaign file */
#define SL_CAP_SPEC_KEYS 32                /* keys of one mapping in the campaign file */
#define SL_CAP_SPEC_NAME 100               /* a campaign's name: a folder and a branch
					    * component (and twice that for branch_prefix) */
#define SL_CAP_QUERY_FILE_BYTES (1u << 20) /* a query read from a file (scope --query-file) */
#define SL_CAP_QUERY_DEPTH 256             /* groups nested in a tree-sitter query */
#define SL_CAP_QUERY_COMPILE_MS 10000      /* CPU time compiling a query (in a child
					      process; CPU, not wall time: a loaded
					      machine must not refuse a good query) */
#define SL_CAP_QUERY_COMPILE_WALL_MS 300000 /* that child's wall time, a backstop */
#define SL_CAP_QUERY_COMPILE_MEM_MB 1024   /* memory of that child process */
#define SL_CAP_QUERY_MATCHES 10000         /* partial matches in progress, per file */
#define SL_CAP_QUERY_FILE_MS 10000         /* running a query on one file */
#define SL_CAP_POLICY_RE_BYTES 4096        /* a policy gate's regular expression */
#define SL_CAP_POLICY_RE_COST 20000        /* atoms a regular expression may expand to */
#define SL_CAP_POLICY_RE_DEPTH 64          /* parentheses nested in it */

/* ---- the repository ---------------------------------------------------- */

#define SL_CAP_SOURCE_BYTES (8u << 20)     /* a file scoped or read for context;
					    * larger ones are skipped */
#define SL_CAP_BENEATH_BYTES (16u << 20)   /* a file read from a worktree
					    * (sl_read_beneath without a cap) */
#define SL_CONTEXT_MAX_FILES 256           /* files parsed for one target's context */
#define SL_CAP_CONTEXT_NAMES 256           /* names collected from a unit for its context */

/* ---- the model ----------------------------------------------------------- */

#define SL_CAP_REPLY_BYTES (1u << 20)      /* a reply's text; the rest is dropped */
#define SL_CAP_MODEL_BODY_BYTES (8u << 20) /* an HTTP response of a model endpoint:
					    * larger fails the request */
#define SL_CAP_REPLAY_BYTES (256u << 20) /* a replay file (provider kind replay) */
#define SL_CAP_COMMAND_STDERR 8192         /* the tail of a provider command's stderr kept */
#define SL_CAP_ERROR_SNIPPET 300           /* server text quoted in an error message */
#define SL_CAP_USAGE_TOKENS 10000000       /* tokens one reply may claim in its usage
					    * (the largest contexts are ~2M); more is
					    * rejected as absurd */
#define SL_CAP_REPLY_NUMBER 100000000UL   /* a line number or count in a model's diff
					    * grows no further (so stays below 10^9) */
#define SL_CAP_EDIT_BYTES (256u << 10)     /* the new text of one edit (default of
					    * sl_apply_opts.max_edit_bytes) */
#define SL_CAP_EDITS_TOTAL_BYTES (1u << 20) /* the new text of all edits of a reply */
#define SL_CAP_EDITED_FILE_BYTES (8u << 20) /* a file as the edits leave it */

/* ---- gates ---------------------------------------------------------------- */

#define SL_CAP_GATE_OUTPUT (64u * 1024)    /* a gate's output kept (its tail) */
#define SL_CAP_GATE_REPORT (32u << 20)     /* a report file a gate leaves (JUnit, SARIF...) */
#define SL_CAP_JAIL_COLLECT (16u << 20)    /* files collected from a jail, by default */
#define SL_CAP_SYNTAX_BYTES (8u << 20)     /* a file the syntax gate parses */
#define SL_CAP_SYNTAX_LISTED 10            /* syntax errors listed in a verdict */
#define SL_CAP_FINDINGS 10000u             /* findings read from one report */
#define SL_CAP_FINDING_LINE (64u * 1024)   /* one line of compiler output scanned */
#define SL_CAP_FINDING_MESSAGE 1024u       /* a finding's message */
#define SL_CAP_FINDING_NOTES 2048u         /* the notes attached to a finding */
#define SL_CAP_FINDING_JSON_NOTES 64       /* notes read from one JSON finding */
#define SL_CAP_TESTS 100000u               /* test cases read from one report */
#define SL_CAP_TEST_XML (32u << 20)        /* a JUnit XML report */
#define SL_CAP_TEST_MESSAGE 1024u          /* a test case's failure message */
#define SL_CAP_TEST_SUMMARY 4096u          /* the summary of a test report */
#define SL_CAP_COVERAGE_FILES 10000u       /* files in a coverage report */
#define SL_CAP_COVERAGE_LINES 1000000u     /* lines in a coverage report */
#define SL_CAP_LINE_NUMBER 0x7fffffffu     /* a line number in a diff or coverage report */
#define SL_CAP_DIFF_FILES 100000u          /* files one diff may name */
#define SL_CAP_POLICY_VIOLATIONS 100       /* violations a policy gate lists */
#define SL_CAP_GATE_NOTE 1024              /* the note of a verdict (finding ids listed) */
#define SL_FEEDBACK_CAP 4096u              /* the feedback one attempt gives the next */
#define SL_CAP_FINDINGS_FILE (64u << 20)   /* the findings report a fix campaign reads */

/* ---- the forge -------------------------------------------------------------- */

#define SL_CAP_FORGE_BODY (8u << 20)       /* a forge API response */
#define SL_FORGE_MAX_PAGES 100             /* pages of one list followed */
#define SL_CAP_REJECT_REASON 2000          /* a reviewer's comment kept as the reason */

/* ---- reports -------------------------------------------------------------- */

#define SL_CAP_REPORT_LOG_LINES 30         /* lines of a gate's output in the HTML report */

#endif
