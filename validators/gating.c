/*
 * gating.c - the gates of a campaign, judged against the base (validators.h).
 *
 * Reads: the campaign's gates, the store (baselines, verdict cache), report
 * files beneath a worktree.  Writes: baselines and cache entries in the
 * store; runs commands only through the jail (validators/gate.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "common/beneath.h"
#include "validators/coverage.h"
#include "validators/diff_lines.h"
#include "validators/feedback.h"
#include "validators/finding_gone.h"
#include "validators/findings.h"
#include "validators/gate.h"
#include "validators/jail.h"
#include "validators/mutate.h"
#include "storage/gate_store.h"
#include "storage/lease.h"
#include "validators/validators.h"
#include "validators/policy.h"
#include "common/sha256.h"
#include "validators/testreport.h"
#include "validators/tools.h"
#include "common/util.h"
#include "common/caps.h"

#define SLUICE_GATING_VERSION "sluice-gating-3"

/* What the base said for one gate. */
typedef struct gate_state {
	const sl_gate_conf *def;
	char def_digest[65];
	char env_digest[65];        /* the environment its verdicts depend on (env_text) */
	int base_failed;            /* run 1 on the base did not pass */
	int cannot_judge;           /* allow_skip and the base failed: candidates get skip */
	int measured;               /* the base fields below are set */
	sl_verdict base_verdict;
	int base_exit;
	char *base_error;           /* why the gate cannot judge (describe), or NULL */
	sl_findings base_findings;
	sl_tests base_tests, flaky;
	int base_tests_ok;          /* the base produced a parseable report */
	sl_coverage base_cov;
	sl_judging judging;         /* the files of the tests it must see fixed */
} gate_state;

struct sl_gating {
	const sl_gate_conf *gates;
	sl_jail_limits jail;
	sl_store *st;
	int64_t campaign_id;
	git_oid base;
	char base_hex[GIT_OID_HEXSZ + 1];
	char env_digest[65];        /* every gate's environment (env_text) */
	gate_state *gs;
	size_t n;
	int unsafe;                 /* --unsafe: gates may run without the minimum jail */
	char *shared;               /* the baseline file shared across stores, or NULL */
	char *fence_owner;          /* the baseline lease's holder and epoch, or NULL */
	int64_t fence_epoch;
	sl_gate_watch_fn watch;     /* who watches the gates run, or NULL */
	void *watch_ctx;
};

void sl_gating_watch(sl_gating *g, sl_gate_watch_fn fn, void *ctx)
{
	g->watch = fn;
	g->watch_ctx = ctx;
}

/* Tell the watcher: a gate starts (rec NULL) or ended. */
static void watch(const sl_gating *g, const char *gate, const char *where,
		  const sl_gate_run_rec *rec)
{
	if (g->watch)
		g->watch(g->watch_ctx, gate, where, rec);
}

/* Tell the watcher a gate on the base ended: its verdict and time only. */
static void watch_base_end(const sl_gating *g, const char *gate, const char *where,
			   const sl_gate_result *r)
{
	sl_gate_run_rec rec = { 0 };

	rec.gate = (char *)gate;
	rec.verdict = r->verdict;
	rec.exit_status = r->exit_status;
	rec.duration_ms = r->duration_ms;
	watch(g, gate, where, &rec);
}

void sl_gate_outcome_release(sl_gate_outcome *o)
{
	sl_gate_run_list_free(o->v, o->n);
	o->v = NULL;
	o->n = o->alloc = 0;
}

static sl_gate_run_rec *outcome_add(sl_gate_outcome *o, const char *gate)
{
	sl_gate_run_rec *r;

	SL_ALLOC_GROW(o->v, o->n + 1, o->alloc);
	r = &o->v[o->n++];
	memset(r, 0, sizeof(*r));
	r->gate = sl_xstrdup(gate);
	r->exit_status = -1;
	return r;
}

static void set_rec(sl_gate_run_rec *r, sl_verdict verdict, const char *output, const char *note)
{
	free(r->output_tail);
	free(r->note);
	r->verdict = verdict;
	r->output_tail = sl_xstrdup(output ? output : "");
	r->note = sl_xstrdup_or_null(note);
}

static const char *const report_format_names[SL_REPORT_NFORMATS] = {
	[SL_REPORT_GCC] = "gcc", [SL_REPORT_GCC_JSON] = "gcc-json", [SL_REPORT_SARIF] = "sarif",
	[SL_REPORT_JUNIT] = "junit", [SL_REPORT_TAP] = "tap", [SL_REPORT_AUTOMAKE] = "automake",
	[SL_REPORT_CTEST] = "ctest", [SL_REPORT_LCOV] = "lcov", [SL_REPORT_GCOV] = "gcov",
	[SL_REPORT_GCOV_JSON] = "gcov-json",
};

static const char *const fail_on_names[SL_FAIL_ON_N] = {
	[SL_FAIL_ON_WARNING] = "warning", [SL_FAIL_ON_ERROR] = "error",
};

/* The index of name in a table with holes, or 0 (the table's "none"). */
static int name_index(const char *const *names, int n, const char *name)
{
	for (int i = 1; name && i < n; i++)
		if (names[i] && !strcmp(names[i], name))
			return i;
	return 0;
}

const char *sl_report_format_name(int format)
{
	return format > 0 && format < SL_REPORT_NFORMATS ? report_format_names[format] : NULL;
}

int sl_report_format_parse(const char *name)
{
	return name_index(report_format_names, SL_REPORT_NFORMATS, name);
}

int sl_report_format_is_tests(int format)
{
	return format == SL_REPORT_JUNIT || format == SL_REPORT_TAP ||
		format == SL_REPORT_AUTOMAKE || format == SL_REPORT_CTEST;
}

const char *sl_fail_on_name(int fail_on)
{
	return fail_on > 0 && fail_on < SL_FAIL_ON_N ? fail_on_names[fail_on] : NULL;
}

int sl_fail_on_parse(const char *name)
{
	return name_index(fail_on_names, SL_FAIL_ON_N, name);
}

static void digest_def(const sl_gate_conf *d, char out[65])
{
	sl_buf b = SL_BUF_INIT;

	sl_buf_addf(&b, "%s\n%d\n%s\n%u\n%s\n%s\n%u\n%s\n%u\nexpect %d\nallow_skip %d\nloopback %d\n",
		    d->name, d->kind, d->command ? d->command : "", d->timeout_s,
		    d->format ? sl_report_format_name(d->format) : "", d->report ? d->report : "",
		    d->radius, d->fail_on ? sl_fail_on_name(d->fail_on) : "", d->reruns, d->expect, d->allow_skip, d->loopback);
	for (size_t i = 0; i < d->must_fix.n; i++)
		sl_buf_addf(&b, "must_fix %s\n", d->must_fix.v[i]);
	for (size_t i = 0; i < d->allow_test_changes.n; i++)
		sl_buf_addf(&b, "allow_test_changes %s\n", d->allow_test_changes.v[i]);
	/* `make | tail` is another command with pipefail: measured on the base again */
	if (sl_gate_pipefail())
		sl_buf_adds(&b, "pipefail\n");
	sl_sha256_hex(out, b.buf, b.len);
	sl_buf_release(&b);
}

/*
 * What a verdict depends on besides the tree and the gate's definition
 * (README, "Warm base"), one fact a line: sluice's gating version, the
 * jail's settings, the kernel, and the programs the gates run as the jail
 * finds them (validators/tools.h): the jail's shell, the build tools make
 * and cc run, and the programs the commands of the gates chosen name:
 * gate `only` (0 and up), else every preparing gate (prepare_only), else
 * every gate.
 */
static void env_text(const sl_gating *g, int prepare_only, long only, sl_buf *out)
{
	const sl_jail_limits *jail = &g->jail;
	sl_strvec words = SL_STRVEC_INIT;
	struct utsname u;

	sl_buf_adds(out, "sluice " SLUICE_GATING_VERSION "\n");
	sl_buf_addf(out, "jail mem_mb %u pids %u tmp_mb %u disk_mb %u cpus %u as_mb %u "
		    "accept %u writable %d\n", jail->mem_mb, jail->pids, jail->tmp_mb,
		    jail->disk_mb, jail->cpus, jail->as_mb, jail->accept, jail->writable);
	if (!uname(&u))
		sl_buf_addf(out, "kernel %s %s %s\n", u.sysname, u.release, u.machine);
	sl_tools_of_command(&words, sl_gate_pipefail() ? "/bin/bash" : "/bin/sh");
	sl_tools_of_command(&words, "make; cc; c++; as; ld");
	for (size_t i = 0; i < g->n; i++)
		if (g->gates[i].command && (only < 0 || (size_t)only == i) &&
		    (!prepare_only || g->gates[i].prepare))
			sl_tools_of_command(&words, g->gates[i].command);
	sl_tools_describe(out, &words);
	sl_strvec_release(&words);
}

/* The lists of what the base said for gate s, empty. */
static void state_init(gate_state *s)
{
	sl_findings_init(&s->base_findings);
	sl_tests_init(&s->base_tests);
	sl_tests_init(&s->flaky);
	sl_coverage_init(&s->base_cov);
	sl_judging_init(&s->judging);
}

static void state_release(gate_state *s)
{
	sl_findings_release(&s->base_findings);
	sl_tests_release(&s->base_tests);
	sl_tests_release(&s->flaky);
	sl_coverage_release(&s->base_cov);
	sl_judging_release(&s->judging);
	free(s->base_error);
	s->base_error = NULL;
}

int sl_gating_open(sl_gating **out, const sl_gate_conf *gates, size_t ngates,
		   const sl_jail_limits *jail, sl_store *st, int64_t campaign_id,
		   const git_oid *base, int unsafe, sl_err *err)
{
	sl_gating *g;
	sl_buf env = SL_BUF_INIT;

	*out = NULL;
	/* every gate runs in a jail: without its minimum none runs, unless --unsafe */
	if (ngates && !unsafe && sl_jail_minimum(err))
		return SL_EBASE;
	g = sl_xcalloc(1, sizeof(*g));
	g->unsafe = unsafe;
	g->gates = gates;
	g->jail = *jail;
	g->st = st;
	g->campaign_id = campaign_id;
	git_oid_cpy(&g->base, base);
	git_oid_tostr(g->base_hex, sizeof(g->base_hex), base);
	g->n = ngates;
	env_text(g, 0, -1, &env);
	sl_sha256_hex(g->env_digest, env.buf, env.len);
	g->gs = sl_xcalloc(g->n ? g->n : 1, sizeof(*g->gs));
	for (size_t i = 0; i < g->n; i++) {
		gate_state *s = &g->gs[i];

		s->def = &gates[i];
		digest_def(s->def, s->def_digest);
		sl_buf_reset(&env);
		env_text(g, 0, (long)i, &env);
		sl_sha256_hex(s->env_digest, env.buf, env.len);
		state_init(s);
	}
	sl_buf_release(&env);
	*out = g;
	return SL_OK;
}

void sl_gating_free(sl_gating *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->n; i++)
		state_release(&g->gs[i]);
	free(g->gs);
	free(g->shared);
	free(g->fence_owner);
	free(g);
}

/* Parse what a run of gate d produced (its report, else its output). */
static const char *source_text(const sl_gate_conf *d, const char *output, const char *report)
{
	return d->report ? (report ? report : NULL) : output;
}

static void parse_findings(const sl_gate_conf *d, const char *text, sl_findings *out)
{
	sl_err e = SL_ERR_INIT;

	if (!text)
		return;
	if (d->format == SL_REPORT_SARIF)
		sl_findings_parse_sarif(out, text, strlen(text), &e);
	else if (d->format == SL_REPORT_GCC_JSON)
		sl_findings_parse_gcc_json(out, text, strlen(text));
	else
		sl_findings_parse_gcc(out, text, strlen(text));
	sl_findings_filter_level(out, d->fail_on == SL_FAIL_ON_ERROR ?
				 SL_LEVEL_ERROR : SL_LEVEL_WARNING);
}

static int parse_tests(const sl_gate_conf *d, const char *text, sl_tests *out)
{
	sl_err e = SL_ERR_INIT;

	if (!text)
		return SL_ENOTFOUND;
	if (d->format == SL_REPORT_JUNIT)
		return sl_tests_parse_junit(out, text, strlen(text), &e);
	if (d->format == SL_REPORT_CTEST)
		return sl_tests_parse_ctest(out, text, strlen(text), &e);
	if (d->format == SL_REPORT_AUTOMAKE) {
		size_t n = d->report ? strlen(d->report) : 0;
		char *trs = n > 4 && !strcmp(d->report + n - 4, ".trs") ?
			sl_xstrndup(d->report, n - 4) : NULL;

		sl_tests_parse_automake(out, text, strlen(text), trs);
		free(trs);
		return SL_OK;
	}
	sl_tests_parse_tap(out, text, strlen(text));
	return SL_OK;
}

static int must_fix(const sl_gate_conf *d, const char *id)
{
	for (size_t i = 0; i < d->must_fix.n; i++)
		if (!strcmp(d->must_fix.v[i], id))
			return 1;
	return 0;
}

/* The must-fix tests of a test gate: their files are not the candidate's to change. */
static void judging_of_tests(gate_state *s)
{
	const sl_gate_conf *d = s->def;

	for (size_t i = 0; i < s->base_tests.n; i++) {
		const sl_test *t = &s->base_tests.v[i];

		if (must_fix(d, t->id) || (d->expect == SL_EXPECT_FIX && sl_test_failed(t->result) &&
					   !sl_tests_find(&s->flaky, t->id)))
			sl_judging_add(&s->judging, t->id, t->message);
	}
	for (size_t i = 0; i < d->must_fix.n; i++)
		sl_judging_add(&s->judging, d->must_fix.v[i], NULL);
}

/* 1 when gate s must see test id, failing on the base, fixed (sl_judging). */
static int judges(const gate_state *s, const char *id)
{
	const sl_gate_conf *d = s->def;
	const sl_test *t;

	if (!s->measured)
		return 0;
	if (d->kind == SL_GATE_FINDING_GONE && sl_report_format_is_tests(d->format)) {
		for (size_t k = 0; k < s->base_findings.n; k++)
			if (!strncmp(s->base_findings.v[k].rule, "test:", 5) &&
			    !strcmp(s->base_findings.v[k].rule + 5, id))
				return 1;
		return 0;
	}
	if (d->kind != SL_GATE_TEST)
		return 0;
	t = sl_tests_find(&s->base_tests, id);
	return must_fix(d, id) || (d->expect == SL_EXPECT_FIX && t && sl_test_failed(t->result) &&
				   !sl_tests_find(&s->flaky, id));
}

void sl_gating_judging_tests(const sl_gating *g, sl_tests *out)
{
	for (size_t i = 0; i < g->n; i++) {
		const gate_state *s = &g->gs[i];
		const sl_findings *f = &s->base_findings;

		for (size_t k = 0; k < f->n; k++)
			if (!strncmp(f->v[k].rule, "test:", 5) && judges(s, f->v[k].rule + 5) &&
			    !sl_tests_find(out, f->v[k].rule + 5))
				sl_tests_add(out, f->v[k].rule + 5, SL_TEST_FAIL, f->v[k].message);
		for (size_t k = 0; k < s->base_tests.n; k++) {
			const sl_test *t = &s->base_tests.v[k];

			if (judges(s, t->id) && !sl_tests_find(out, t->id))
				sl_tests_add(out, t->id, t->result, t->message);
		}
	}
}

void sl_gating_protect(sl_gating *g, const char *id, const char *path)
{
	for (size_t i = 0; i < g->n; i++)
		if (judges(&g->gs[i], id))
			sl_judging_add_file(&g->gs[i].judging, path, id);
}

void sl_gating_place_tests(sl_gating *g, const sl_findings *f)
{
	for (size_t i = 0; i < g->n; i++) {
		sl_findings *b = &g->gs[i].base_findings;

		if (g->gs[i].def->kind != SL_GATE_FINDING_GONE)
			continue;
		for (size_t k = 0; k < b->n; k++)
			for (size_t j = 0; j < f->n; j++) {
				if (strncmp(b->v[k].rule, "test:", 5) || strcmp(b->v[k].rule, f->v[j].rule))
					continue;
				free(b->v[k].file);
				b->v[k].file = sl_xstrdup(f->v[j].file);
				b->v[k].line = f->v[j].line;
				b->v[k].col = f->v[j].col;
				break;
			}
	}
}

/* 126 and 127: the shell could not find or execute the command. */
static int config_exit(int status)
{
	return status == 126 || status == 127;
}

/* Untrusted text for a terminal: printable ASCII kept, anything else '?'. */
static void add_printable(sl_buf *out, const char *p, const char *end)
{
	for (; p < end; p++)
		sl_buf_addch(out, *p >= 0x20 && *p < 0x7f ? *p : '?');
}

/* The last non-empty line of untrusted output, printable ASCII only, capped. */
static void tail_line(sl_buf *out, const char *text)
{
	const char *end = text + strlen(text), *start;

	while (end > text && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' '))
		end--;
	start = end;
	while (start > text && start[-1] != '\n')
		start--;
	if (end - start > 200)
		start = end - 200;
	add_printable(out, start, end);
	if (start == end)
		sl_buf_adds(out, "(no output)");
}

/*
 * Why a gate failed, from untrusted output, for a one-line message: the
 * first line that names an error (error, Error, ERROR, fatal, failed) and,
 * when that is not the last line, the last ("... (last line: ...)"); else
 * the last line (tail_line).
 */
static void cause_line(sl_buf *out, const char *text)
{
	static const char *const words[] = { "error", "Error", "ERROR", "fatal", "failed", NULL };
	const char *p = text, *hit = NULL, *end = NULL;
	sl_buf last = SL_BUF_INIT;

	while (*p && !hit) {
		const char *nl = strchr(p, '\n');
		const char *e = nl ? nl : p + strlen(p);

		for (size_t i = 0; words[i] && !hit; i++) {
			const char *w = memmem(p, (size_t)(e - p), words[i], strlen(words[i]));

			if (w) {
				hit = p;
				end = e;
			}
		}
		p = nl ? nl + 1 : e;
	}
	tail_line(&last, text);
	/* the last line itself: nothing but blanks after it */
	if (hit && end[strspn(end, "\r\n ")] == '\0')
		hit = NULL;
	while (hit && end > hit && (end[-1] == '\r' || end[-1] == ' '))
		end--;
	if (hit) {
		add_printable(out, hit, end - hit > 200 ? hit + 200 : end);
		sl_buf_addf(out, " (last line: %s)", last.buf);
	} else {
		sl_buf_add(out, last.buf, last.len);
	}
	sl_buf_release(&last);
}

/*
 * Whether gate s can judge, from its first run on the base (README, "Gate
 * expectations"); SL_EBASE with one line naming the gate when it cannot.
 */
static int check_base(gate_state *s, const sl_baseline_rec *run, int tests_ok, sl_err *err)
{
	const sl_gate_conf *d = s->def;
	int per_test = d->kind == SL_GATE_TEST && d->format;
	sl_buf tail = SL_BUF_INIT, why = SL_BUF_INIT;
	size_t failing = 0;
	int ret = SL_OK;

	cause_line(&tail, run->output ? run->output : "");
	if (run->exit_status >= 0)
		sl_buf_addf(&why, "exit %d", (int)run->exit_status);
	else
		sl_buf_adds(&why, sl_verdict_name(run->verdict));
	if (config_exit((int)run->exit_status)) {
		ret = sl_err_set(err, SL_EBASE, "gate '%s' fails on the base commit (%s): %s",
				 d->name, why.buf, tail.buf);
		goto done;
	}
	if (d->kind == SL_GATE_FINDING_GONE && !s->base_findings.n) {
		ret = sl_err_set(err, SL_EBASE, "gate '%s' reports no finding on the base commit "
				 "(%s): %s", d->name, why.buf, tail.buf);
		goto done;
	}
	if (d->kind == SL_GATE_STATIC || d->kind == SL_GATE_COVERAGE ||
	    d->kind == SL_GATE_POLICY || d->kind == SL_GATE_FINDING_GONE)
		goto done;
	if (d->kind == SL_GATE_MUTANTS && s->base_failed) {
		ret = sl_err_set(err, SL_EBASE, "gate '%s' fails on the base commit (%s): %s",
				 d->name, why.buf, tail.buf);
		goto done;
	}
	for (size_t i = 0; per_test && i < s->base_tests.n; i++)
		failing += sl_test_failed(s->base_tests.v[i].result) &&
			!sl_tests_find(&s->flaky, s->base_tests.v[i].id);
	if (per_test && (!tests_ok || !s->base_tests.n)) {
		if (d->allow_skip) {
			s->cannot_judge = 1;
			goto done;
		}
		if (d->report && !run->report)
			/* a mistyped path: say which file was looked for */
			ret = sl_err_set(err, SL_EBASE, "gate '%s' reports no tests on the base "
					 "commit: its report '%s' was not found (%s): %s", d->name,
					 d->report, why.buf, tail.buf);
		else
			ret = sl_err_set(err, SL_EBASE, "gate '%s' reports no tests on the base "
					 "commit (%s): %s", d->name, why.buf, tail.buf);
	} else if (per_test && d->expect == SL_EXPECT_FIX && !failing) {
		ret = sl_err_set(err, SL_EBASE, "gate '%s' expects a fix, but no test fails on "
				 "the base commit", d->name);
	} else if (!per_test && d->expect == SL_EXPECT_FIX && !s->base_failed) {
		ret = sl_err_set(err, SL_EBASE, "gate '%s' expects a fix, but passes on the base "
				 "commit", d->name);
	} else if (!per_test && d->expect == SL_EXPECT_PASS && s->base_failed) {
		if (d->allow_skip)
			s->cannot_judge = 1;
		else
			ret = sl_err_set(err, SL_EBASE, "gate '%s' fails on the base commit (%s): %s",
					 d->name, why.buf, tail.buf);
	}
done:
	sl_buf_release(&tail);
	sl_buf_release(&why);
	return ret;
}

static int parse_coverage(const sl_gate_conf *d, const char *text, const char *path,
			  sl_coverage *out)
{
	sl_err e = SL_ERR_INIT;

	if (!text)
		return SL_ENOTFOUND;
	if (d->format == SL_REPORT_LCOV)
		return sl_coverage_parse_lcov(out, text, strlen(text), &e);
	if (d->format == SL_REPORT_GCOV_JSON)
		return sl_coverage_parse_gcov_json(out, text, strlen(text), &e);
	return sl_coverage_parse_gcov(out, text, strlen(text), path, &e);
}

/* The jail's layers as recorded with a verdict; "unsafe: " when the minimum was missing. */
static char *jail_text(const sl_gating *g, unsigned layers)
{
	sl_buf b = SL_BUF_INIT;

	if ((layers & SL_JAIL_MINIMUM) != SL_JAIL_MINIMUM)
		sl_buf_adds(&b, "unsafe: ");
	sl_jail_layers_format(&b, layers);
	return sl_buf_detach(&b, NULL);
}

/*
 * One run of a jailed gate on tree: through its layer, else writing its
 * directory.  *report_out is NULL when there is no readable report.
 */
static int run_once(const sl_gating *g, const sl_gate_conf *d, const sl_gate_tree *tree,
		    sl_gate_result *r, char **report_out, sl_err *err)
{
	const sl_jail_limits *j = &g->jail;
	sl_gate_def def = {
		.name = d->name, .command = d->command, .timeout_s = d->timeout_s,
		.loopback = d->loopback, .unsafe = g->unsafe, .report = d->report,
		.mem_mb = j->mem_mb, .pids_max = j->pids, .tmp_mb = j->tmp_mb,
		.cpu_milli = j->cpus * 1000, .as_mb = j->as_mb,
		.accept = j->accept, .writable_worktree = !tree->layer,
		.layer = tree->layer, .layer_cap_mb = tree->layer_cap_mb,
	};

	*report_out = NULL;
	sl_gate_run(r, &def, tree->dir);
	if (r->verdict == SL_VERDICT_ERROR)
		return sl_err_set(err, SL_ERROR, "gate '%s' could not run: %s", d->name, r->error);
	if (r->has_report)
		*report_out = sl_xstrdup(r->report.buf);
	return SL_OK;
}

void sl_gating_fence_baseline(sl_gating *g, const char *owner, int64_t epoch)
{
	free(g->fence_owner);
	g->fence_owner = owner ? sl_xstrdup(owner) : NULL;
	g->fence_epoch = epoch;
}

/* Store one baseline row (rec), or forget every one (rec NULL). */
static int store_baseline(sl_gating *g, const sl_baseline_rec *rec, sl_err *err)
{
	if (!rec)
		return sl_store_baseline_clear(g->st, g->campaign_id, err);
	return sl_store_baseline_add(g->st, g->campaign_id, rec, err);
}

/*
 * Write one baseline row, or forget them all (rec NULL), fenced: SL_ELEASE
 * (nothing written) once the baseline lease is lost.
 */
static int add_baseline(sl_gating *g, const sl_baseline_rec *rec, sl_err *err)
{
	int ret;

	if (!g->fence_owner)
		return store_baseline(g, rec, err);
	if (sl_store_begin(g->st, err))
		return SL_ERROR;
	if ((ret = sl_lease_baseline_check(g->st, g->campaign_id, g->fence_owner,
					   g->fence_epoch, err)) ||
	    (ret = store_baseline(g, rec, err))) {
		sl_store_rollback(g->st);
		return ret;
	}
	return sl_store_commit(g->st, err);
}

/* Runs on the base a gate's baseline takes: test gates with a format run twice (flaky tests). */
static size_t base_runs(const sl_gate_conf *d)
{
	return d->kind == SL_GATE_TEST && d->format ? 2 : 1;
}

/* What the base said for gate s is forgotten: it is loaded or measured again. */
static void state_reset(gate_state *s)
{
	state_release(s);
	s->base_failed = s->cannot_judge = s->measured = s->base_tests_ok = 0;
	s->base_verdict = SL_VERDICT_PASS;
	s->base_exit = 0;
	state_init(s);
}

/* Gate s's runs 1 to base_runs() on tree, one after another, each stored. */
static int run_on_base(sl_gating *g, gate_state *s, sl_base_checkout_fn checkout, void *ctx,
		       sl_gate_tree *tree, sl_notice_fn progress, void *progress_ctx, sl_err *err)
{
	const sl_gate_conf *d = s->def;
	int ret = SL_OK;

	for (int64_t run = 1; run <= (int64_t)base_runs(d) && !ret; run++) {
		sl_gate_result r;
		sl_baseline_rec rec = { 0 };
		char *report = NULL;

		if (!tree->dir && (ret = checkout(ctx, tree, err)))
			break;
		if (progress) {
			sl_buf line = SL_BUF_INIT;

			sl_buf_addf(&line, "baseline: gate '%s' on the base (run %lld)", d->name,
				    (long long)run);
			progress(progress_ctx, line.buf);
			sl_buf_release(&line);
		}
		sl_gate_result_init(&r);
		watch(g, d->name, "baseline", NULL);
		ret = run_once(g, d, tree, &r, &report, err);
		if (!ret)
			watch_base_end(g, d->name, "baseline", &r);
		/* a gate killed because the run is stopping says nothing about the
		   base: keep no baseline, the next run measures it again */
		if (!ret && sl_jail_stopping())
			ret = sl_err_set(err, SL_ERROR, "gate '%s' on the base: the run was stopped",
					 d->name);
		if (!ret) {
			rec.gate = (char *)d->name;
			rec.run = run;
			rec.verdict = r.verdict;
			rec.exit_status = r.exit_status;
			rec.output = r.output.buf;
			rec.report = report;
			rec.digest = s->def_digest;
			ret = add_baseline(g, &rec, err);
		}
		sl_gate_result_release(&r);
		free(report);
	}
	return ret;
}

/*
 * Gate s's stored baseline read into its state and checked (check_base:
 * SL_EBASE when it cannot judge); *whole 0 (SL_OK) when the store lacks
 * some of its runs under its definition.
 */
static int load_gate(sl_gating *g, gate_state *s, int *whole, sl_err *err)
{
	const sl_gate_conf *d = s->def;
	sl_baseline_rec *runs = NULL;
	size_t nruns = 0;
	int ret;

	*whole = 0;
	if ((ret = sl_store_baseline_get(g->st, g->campaign_id, d->name, s->def_digest, &runs,
					 &nruns, err)) || nruns < base_runs(d))
		goto done;
	*whole = 1;
	s->base_failed = runs[0].verdict != SL_VERDICT_PASS;
	s->measured = 1;
	s->base_exit = (int)runs[0].exit_status;
	s->base_verdict = runs[0].verdict;
	switch ((enum sl_gate_kind)d->kind) {
	case SL_GATE_FINDING_GONE:
		/* reading a test report: its findings are failing tests */
		if (sl_report_format_is_tests(d->format)) {
			sl_tests t;

			sl_tests_init(&t);
			if (!parse_tests(d, source_text(d, runs[0].output, runs[0].report), &t))
				sl_findings_from_tests(&t, &s->base_findings);
			/* every failing test is a finding to fix */
			for (size_t k = 0; k < t.n; k++)
				if (sl_test_failed(t.v[k].result))
					sl_judging_add(&s->judging, t.v[k].id, t.v[k].message);
			sl_tests_release(&t);
			break;
		}
		__attribute__((fallthrough));
	case SL_GATE_STATIC:
		parse_findings(d, source_text(d, runs[0].output, runs[0].report), &s->base_findings);
		break;
	case SL_GATE_TEST:
		if (!d->format)
			break;
		s->base_tests_ok = !parse_tests(d, source_text(d, runs[0].output, runs[0].report),
						&s->base_tests);
		if (s->base_tests_ok && nruns > 1) {
			sl_tests second;

			sl_tests_init(&second);
			if (!parse_tests(d, source_text(d, runs[1].output, runs[1].report), &second))
				sl_tests_flaky(&s->base_tests, &second, &s->flaky);
			sl_tests_release(&second);
		}
		judging_of_tests(s);
		break;
	case SL_GATE_COVERAGE:
		parse_coverage(d, runs[0].report, NULL, &s->base_cov);
		break;
	case SL_GATE_CUSTOM:
	case SL_GATE_BUILD:
	case SL_GATE_POLICY:
	case SL_GATE_MUTANTS:
		break;          /* the verdict and exit status are the whole baseline */
	}
	ret = check_base(s, &runs[0], s->base_tests_ok, err);
done:
	sl_baseline_list_free(runs, nruns);
	return ret;
}

/*
 * The stored baseline, if it can be used as it is: *whole 1 when every
 * gate on the base has all its runs stored and can judge.  Otherwise, when
 * the store held some of it, *why names the first gate that keeps it from
 * being used.
 */
static int load_all(sl_gating *g, int *whole, sl_buf *why, sl_err *err)
{
	const char *first = NULL, *what = NULL;
	int any = 0, ret = SL_OK;

	sl_buf_reset(why);
	for (size_t i = 0; i < g->n; i++)
		state_reset(&g->gs[i]);
	for (size_t i = 0; i < g->n && !ret; i++) {
		gate_state *s = &g->gs[i];
		int stored;

		if (s->def->kind == SL_GATE_POLICY)
			continue;
		if ((ret = load_gate(g, s, &stored, err)) == SL_EBASE) {
			sl_err_clear(err);
			ret = SL_OK;
			what = first ? what : "could not judge it last time";
			first = first ? first : s->def->name;
		} else if (!ret && !stored && !first) {
			first = s->def->name;
			what = "has no stored run as defined now";
		}
		any |= stored;
	}
	*whole = !first;
	if (first && any)
		sl_buf_addf(why, "gate '%s' %s", first, what);
	return ret;
}

/*
 * Every gate on the base again, in order on one tree (a gate's run depends
 * on the outputs of those before it: a configure's Makefile, a build's
 * objects), the store's earlier runs forgotten first, so that the store
 * never holds runs measured out of order.  Stops at the first gate that
 * cannot judge, unless all (describing every gate: its reason is kept).
 */
static int measure_again(sl_gating *g, sl_base_checkout_fn checkout, void *ctx,
			 sl_notice_fn progress, void *progress_ctx, int all, sl_err *err)
{
	sl_gate_tree tree = { .dir = NULL };
	int whole, ret;

	for (size_t i = 0; i < g->n; i++)
		state_reset(&g->gs[i]);
	if ((ret = add_baseline(g, NULL, err)))
		return ret;
	for (size_t i = 0; i < g->n && !ret; i++) {
		gate_state *s = &g->gs[i];

		if (s->def->kind == SL_GATE_POLICY)
			continue;
		if ((ret = run_on_base(g, s, checkout, ctx, &tree, progress, progress_ctx, err)))
			break;
		if ((ret = load_gate(g, s, &whole, err)) == SL_EBASE && all) {
			s->base_error = sl_xstrdup(err->msg);
			sl_err_clear(err);
			ret = SL_OK;
		} else if (!ret && !whole) {
			ret = sl_err_set(err, SL_ERROR, "gate '%s': its base runs were not stored",
					 s->def->name);
		}
	}
	return ret;
}

/*
 * The shared baseline file: {"gates": {NAME: [{run, verdict, exit_status,
 * output, report}, ...]}}, one whole measurement that judges.  Imported
 * (*imported 1) only when it holds every gate on the base, in place of all
 * the store held: a store never mixes two measurements.
 */
static int import_shared(sl_gating *g, int *imported, sl_err *err)
{
	json_t *root = NULL, *gates, *list, *e;
	size_t i, k;
	int ret = SL_OK;

	*imported = 0;
	if (!(root = json_load_file(g->shared, 0, NULL)) ||
	    !json_is_object(gates = json_object_get(root, "gates")))
		goto done;
	for (i = 0; i < g->n; i++) {
		const sl_gate_conf *d = g->gs[i].def;

		list = json_object_get(gates, d->name);
		if (d->kind == SL_GATE_POLICY)
			continue;
		if (!json_is_array(list) || json_array_size(list) < base_runs(d))
			goto done;      /* not ours, or damaged: measure it */
		json_array_foreach(list, k, e)
			if (!json_is_string(json_object_get(e, "verdict")) ||
			    sl_verdict_parse(json_string_value(json_object_get(e, "verdict"))) < 0 ||
			    !json_is_string(json_object_get(e, "output")))
				goto done;
	}
	if ((ret = add_baseline(g, NULL, err)))
		goto done;
	for (i = 0; i < g->n && !ret; i++) {
		const sl_gate_conf *d = g->gs[i].def;

		if (d->kind == SL_GATE_POLICY)
			continue;
		list = json_object_get(gates, d->name);
		json_array_foreach(list, k, e) {
			sl_baseline_rec rec = { 0 };
			int v = sl_verdict_parse(json_string_value(json_object_get(e, "verdict")));

			rec.gate = (char *)d->name;
			rec.run = (int64_t)k + 1;
			rec.verdict = (sl_verdict)v;
			rec.exit_status = json_integer_value(json_object_get(e, "exit_status"));
			rec.output = (char *)json_string_value(json_object_get(e, "output"));
			rec.report = (char *)json_string_value(json_object_get(e, "report"));
			rec.digest = g->gs[i].def_digest;
			if ((ret = add_baseline(g, &rec, err)))
				break;
		}
	}
	*imported = !ret;
done:
	json_decref(root);
	return ret;
}

/* Write what the store holds for every gate to the shared file (best effort). */
static void export_shared(sl_gating *g)
{
	json_t *root = json_object(), *gates = json_object();
	sl_err err = SL_ERR_INIT;
	sl_buf tmp = SL_BUF_INIT;

	for (size_t i = 0; i < g->n; i++) {
		sl_baseline_rec *runs = NULL;
		size_t nruns = 0;
		json_t *list;

		if (g->gs[i].def->kind == SL_GATE_POLICY)
			continue;
		if (sl_store_baseline_get(g->st, g->campaign_id, g->gs[i].def->name,
					  g->gs[i].def_digest, &runs, &nruns, &err))
			goto done;
		list = json_array();
		for (size_t k = 0; k < nruns; k++)
			json_array_append_new(list, json_pack("{s:s,s:I,s:s,s:s?}",
					      "verdict", sl_verdict_name(runs[k].verdict),
					      "exit_status", (json_int_t)runs[k].exit_status,
					      "output", runs[k].output ? runs[k].output : "",
					      "report", runs[k].report));
		json_object_set_new(gates, g->gs[i].def->name, list);
		sl_baseline_list_free(runs, nruns);
	}
	json_object_set_new(root, "gates", gates);
	/* another store may be writing it too: whole files only */
	sl_buf_addf(&tmp, "%s.%ld", g->shared, (long)getpid());
	if (!json_dump_file(root, tmp.buf, JSON_COMPACT) && rename(tmp.buf, g->shared))
		unlink(tmp.buf);
done:
	sl_buf_release(&tmp);
	json_decref(root);
}

/* Every gate on the base judges (none stopped the measurement, none cannot judge). */
static int base_judges(const sl_gating *g)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->gs[i].def->kind != SL_GATE_POLICY &&
		    (!g->gs[i].measured || g->gs[i].base_error))
			return 0;
	return 1;
}

/*
 * The baseline (README, "Gate expectations"): the store's when whole and
 * judging, else the shared file's, else every gate measured again in order
 * (measure_again); a measurement that judges is shared.  Run again after
 * a lost lease, it starts over from what the store holds then.
 */
static int measure_all(sl_gating *g, sl_base_checkout_fn checkout, void *ctx,
		       sl_notice_fn progress, void *progress_ctx, int all, sl_err *err)
{
	sl_buf why = SL_BUF_INIT;
	int whole = 0, imported = 0, ret;

	if ((ret = load_all(g, &whole, &why, err)) || whole)
		goto done;
	if (g->shared && ((ret = import_shared(g, &imported, err)) ||
			  (imported && (ret = load_all(g, &whole, &why, err))) || whole))
		goto done;
	if (progress && why.len) {
		sl_buf line = SL_BUF_INIT;

		sl_buf_addf(&line, "baseline: every gate runs on the base again, in order: %s",
			    why.buf);
		progress(progress_ctx, line.buf);
		sl_buf_release(&line);
	}
	ret = measure_again(g, checkout, ctx, progress, progress_ctx, all, err);
	if (g->shared && !ret && base_judges(g))
		export_shared(g);
done:
	sl_buf_release(&why);
	return ret;
}

void sl_gating_share_baselines(sl_gating *g, const char *dir)
{
	sl_buf b = SL_BUF_INIT;
	char digest[65];

	/* a base run depends on every gate before it too: all of them, in order */
	sl_buf_addf(&b, "baseline 2\nbase %s\nenv %s\nunsafe %d\n", g->base_hex, g->env_digest,
		    g->unsafe);
	for (size_t i = 0; i < g->n; i++)
		sl_buf_addf(&b, "gate %s\n", g->gs[i].def_digest);
	sl_sha256_hex(digest, b.buf, b.len);
	sl_buf_reset(&b);
	sl_buf_addf(&b, "baseline-%.16s.json", digest);
	free(g->shared);
	g->shared = sl_path_join(dir, b.buf);
	sl_buf_release(&b);
}

int sl_gating_baseline(sl_gating *g, sl_base_checkout_fn checkout, void *ctx,
		       sl_notice_fn progress, void *progress_ctx, sl_err *err)
{
	return measure_all(g, checkout, ctx, progress, progress_ctx, 0, err);
}

static const char *const kind_names[] = {
	[SL_GATE_CUSTOM] = "custom", [SL_GATE_BUILD] = "build", [SL_GATE_POLICY] = "policy",
	[SL_GATE_STATIC] = "static", [SL_GATE_TEST] = "test", [SL_GATE_COVERAGE] = "coverage",
	[SL_GATE_FINDING_GONE] = "finding-gone", [SL_GATE_MUTANTS] = "mutants",
};

/* What the campaign makes of base test t of gate s. */
static const char *blame_of(const gate_state *s, const sl_test *t)
{
	if (sl_tests_find(&s->flaky, t->id))
		return "flaky: excluded";
	if (must_fix(s->def, t->id) || (s->def->expect == SL_EXPECT_FIX && sl_test_failed(t->result)))
		return "must fix";
	if (t->result == SL_TEST_PASS)
		return "must pass";
	return sl_test_failed(t->result) ? "not blamed" : "skipped";
}

static void describe_text(const sl_gating *g, sl_buf *out)
{
	sl_buf_addf(out, "base %s\n", g->base_hex);
	for (size_t i = 0; i < g->n; i++) {
		const gate_state *s = &g->gs[i];
		const sl_gate_conf *d = s->def;

		sl_buf_addf(out, "gate %s (%s%s%s, expect %s%s): ", d->name, kind_names[d->kind],
			    d->format ? ", " : "", d->format ? sl_report_format_name(d->format) : "",
			    d->expect == SL_EXPECT_FIX ? "fix" : "pass",
			    d->allow_skip ? ", allow_skip" : "");
		if (!s->measured) {
			sl_buf_adds(out, "not run on the base (judges the diff)\n");
			continue;
		}
		sl_buf_addf(out, "%s on the base", sl_verdict_name(s->base_verdict));
		if (s->base_exit >= 0)
			sl_buf_addf(out, " (exit %d)", s->base_exit);
		if (d->kind == SL_GATE_TEST && d->format)
			sl_buf_addf(out, ", %zu tests", s->base_tests.n);
		if (d->kind == SL_GATE_FINDING_GONE)
			sl_buf_addf(out, ", %zu findings: the targets, each must be gone",
				    s->base_findings.n);
		sl_buf_addf(out, "%s\n", s->base_error ? "" : s->cannot_judge ?
			    "; cannot judge: candidates get skip" : "");
		if (s->base_error)
			sl_buf_addf(out, "  cannot judge: %s\n", s->base_error);
		for (size_t k = 0; d->kind == SL_GATE_TEST && k < s->base_tests.n; k++) {
			const sl_test *t = &s->base_tests.v[k];

			sl_buf_addf(out, "  %-5s ", sl_test_result_name(t->result));
			add_printable(out, t->id, t->id + strlen(t->id));
			sl_buf_addf(out, "  (%s)\n", blame_of(s, t));
		}
	}
}

static void describe_json(const sl_gating *g, sl_buf *out)
{
	json_t *o = json_object(), *ga = json_array();
	char *text;

	json_object_set_new(o, "base", json_string(g->base_hex));
	for (size_t i = 0; i < g->n; i++) {
		const gate_state *s = &g->gs[i];
		const sl_gate_conf *d = s->def;
		json_t *x = json_object(), *ta = json_array();

		json_object_set_new(x, "gate", json_string(d->name));
		json_object_set_new(x, "kind", json_string(kind_names[d->kind]));
		json_object_set_new(x, "format", d->format ?
				    json_string(sl_report_format_name(d->format)) : json_null());
		json_object_set_new(x, "expect", json_string(d->expect == SL_EXPECT_FIX ? "fix" :
							     "pass"));
		json_object_set_new(x, "allow_skip", json_boolean(d->allow_skip));
		json_object_set_new(x, "verdict", s->measured ?
				    json_string(sl_verdict_name(s->base_verdict)) :
				    json_null());
		json_object_set_new(x, "exit_status", json_integer(s->measured ? s->base_exit : -1));
		json_object_set_new(x, "judges", json_boolean(!s->base_error && !s->cannot_judge));
		json_object_set_new(x, "error", s->base_error ? json_string(s->base_error) :
				    json_null());
		for (size_t k = 0; d->kind == SL_GATE_TEST && k < s->base_tests.n; k++) {
			const sl_test *t = &s->base_tests.v[k];

			json_array_append_new(ta, json_pack("{s:s,s:s,s:s}", "id", t->id, "result",
							    sl_test_result_name(t->result), "blame",
							    blame_of(s, t)));
		}
		json_object_set_new(x, "tests", ta);
		json_array_append_new(ga, x);
	}
	json_object_set_new(o, "gates", ga);
	text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	sl_buf_adds(out, text ? text : "null");
	sl_buf_addch(out, '\n');
	free(text);
	json_decref(o);
}

int sl_gating_describe(sl_gating *g, sl_base_checkout_fn checkout, void *ctx,
		       sl_notice_fn progress, void *progress_ctx, int json, sl_buf *out,
		       sl_err *err)
{
	int ret;

	if ((ret = measure_all(g, checkout, ctx, progress, progress_ctx, 1, err)))
		return ret;
	if (json)
		describe_json(g, out);
	else
		describe_text(g, out);
	for (size_t i = 0; i < g->n; i++)
		if (g->gs[i].base_error)
			return sl_err_set(err, SL_EBASE, "%s", g->gs[i].base_error);
	return SL_OK;
}

sl_changed *sl_cand_diff_parse(const char *diff)
{
	sl_changed *ch = sl_xmalloc(sizeof(*ch));

	/* a diff that does not parse is kept as far as it goes: the policy gate says so */
	sl_changed_init(ch);
	sl_changed_parse(ch, diff, strlen(diff), NULL, NULL, NULL);
	return ch;
}

void sl_cand_diff_free(sl_changed *ch)
{
	if (!ch)
		return;
	sl_changed_release(ch);
	free(ch);
}

int sl_gating_policy_on(sl_gating *g, const sl_changed *diff, sl_gate_outcome *o, int *passed,
			sl_buf *feedback, sl_err *err)
{
	*passed = 1;
	for (size_t i = 0; i < g->n && *passed; i++) {
		const sl_gate_conf *d = g->gs[i].def;
		sl_policy_opts po = SL_POLICY_OPTS_INIT;
		sl_policy_result pr;
		sl_gate_run_rec *rec;
		sl_buf text = SL_BUF_INIT;
		int64_t t0 = sl_now_ms();

		if (d->kind != SL_GATE_POLICY)
			continue;
		po.allow_paths = d->allow_paths.n ? (const char *const *)d->allow_paths.v : NULL;
		po.max_files = d->max_files;
		po.max_lines = d->max_lines;
		po.forbid = d->forbid.n ? (const char *const *)d->forbid.v : NULL;
		po.allow_build_files = d->allow_build_files;
		po.build_files = d->build_files.n ? (const char *const *)d->build_files.v : NULL;
		sl_policy_result_init(&pr);
		if (sl_policy_check(&pr, &po, diff, err)) {
			sl_policy_result_release(&pr);
			return SL_ERROR;
		}
		rec = outcome_add(o, d->name);
		sl_policy_result_text(&pr, &text);
		set_rec(rec, pr.pass ? SL_VERDICT_PASS : SL_VERDICT_FAIL, text.buf, NULL);
		rec->exit_status = pr.pass ? 0 : 1;
		rec->duration_ms = sl_now_ms() - t0;
		rec->output_bytes = (int64_t)text.len;
		if (!pr.pass) {
			*passed = 0;
			sl_buf_addf(feedback, "The candidate broke the campaign's policy '%s':\n%s",
				    d->name, text.buf);
		}
		sl_buf_release(&text);
		sl_policy_result_release(&pr);
	}
	return SL_OK;
}

/* 1 when a finding-gone gate of g reading tests makes test id a target to fix. */
static int fixed_elsewhere(const sl_gating *g, const char *id)
{
	for (size_t i = 0; i < g->n; i++) {
		const gate_state *f = &g->gs[i];

		if (f->def->kind != SL_GATE_FINDING_GONE || !sl_report_format_is_tests(f->def->format))
			continue;
		for (size_t k = 0; k < f->base_findings.n; k++)
			if (!strncmp(f->base_findings.v[k].rule, "test:", 5) &&
			    !strcmp(f->base_findings.v[k].rule + 5, id))
				return 1;
	}
	return 0;
}

/*
 * The tests failing on the base that per-test gate s blames on no
 * candidate, because it names no must_fix and does not expect a fix, and
 * no finding-gone gate of g targets them (flaky ones aside): how many,
 * their ids appended to out (may be NULL; capped, printable only).
 */
static size_t unblamed_ids(const sl_gating *g, const gate_state *s, sl_buf *out)
{
	const sl_gate_conf *d = s->def;
	size_t n = 0, start = out ? out->len : 0;
	int capped = 0;

	if (d->kind != SL_GATE_TEST || !d->format || d->must_fix.n || d->expect == SL_EXPECT_FIX ||
	    s->cannot_judge)
		return 0;
	for (size_t i = 0; i < s->base_tests.n; i++) {
		const sl_test *t = &s->base_tests.v[i];

		if (!sl_test_failed(t->result) || sl_tests_find(&s->flaky, t->id) ||
		    fixed_elsewhere(g, t->id))
			continue;
		if (out && !capped && out->len - start + strlen(t->id) > SL_CAP_GATE_NOTE / 2) {
			sl_buf_adds(out, ", ...");
			capped = 1;
		} else if (out && !capped) {
			sl_buf_adds(out, n ? ", " : "");
			add_printable(out, t->id, t->id + strlen(t->id));
		}
		n++;
	}
	return n;
}

void sl_gating_unblamed(const sl_gating *g, sl_buf *out)
{
	for (size_t i = 0; i < g->n; i++) {
		const gate_state *s = &g->gs[i];
		size_t n = unblamed_ids(g, s, NULL);

		if (!n)
			continue;
		sl_buf_addf(out, "gate '%s': %zu test%s failing on the base %s not blamed, a "
			    "candidate passes without fixing %s: ", s->def->name, n,
			    n == 1 ? "" : "s", n == 1 ? "is" : "are", n == 1 ? "it" : "them");
		unblamed_ids(g, s, out);
		sl_buf_addf(out, " (name %s in the gate's must_fix, or set goal: fix)\n",
			    n == 1 ? "it" : "them");
	}
}

/*
 * Append "LABEL: a, b, c" to a note (capped; ids came from the candidate's
 * report, so printable only) and the tests to the feedback.
 */
static void blame(sl_buf *note, sl_buf *fb, const char *label, const char *fb_label,
		  const sl_tests *t)
{
	if (!t->n)
		return;
	sl_buf_addf(note, "%s%s: ", note->len ? "; " : "", label);
	for (size_t i = 0; i < t->n; i++) {
		if (note->len + strlen(t->v[i].id) > SL_CAP_GATE_NOTE) {
			sl_buf_addf(note, "... (%zu more)", t->n - i);
			break;
		}
		sl_buf_adds(note, i ? ", " : "");
		add_printable(note, t->v[i].id, t->v[i].id + strlen(t->v[i].id));
	}
	sl_buf_addf(fb, "%s\n", fb_label);
	sl_tests_summary(t, fb, 4096);
}

/*
 * A test gate with a report, test by test: the base's passing tests must
 * pass, no base test may vanish, a new test must not fail, must-fix tests
 * (and with expect: fix every non-flaky base failure) must pass.
 */
static void judge_tests(const sl_gating *g, gate_state *s, const sl_gate_result *r,
			const char *report, const sl_changed *changed, sl_gate_run_rec *rec,
			sl_buf *fb)
{
	const sl_gate_conf *d = s->def;
	sl_tests cand, reg, broken, gone, unfixed;
	sl_buf note = SL_BUF_INIT;

	sl_tests_init(&cand);
	sl_tests_init(&reg);
	sl_tests_init(&broken);
	sl_tests_init(&gone);
	sl_tests_init(&unfixed);
	if (s->cannot_judge) {
		set_rec(rec, SL_VERDICT_SKIP, r->output.buf, "no tests on the base: allowed to skip");
		goto done;
	}
	if (parse_tests(d, source_text(d, r->output.buf, report), &cand)) {
		sl_buf_adds(&note, "no test report");
		if (d->report && !report)
			sl_buf_addf(&note, ": '%s' was not found", d->report);
		set_rec(rec, SL_VERDICT_FAIL, r->output.buf, note.buf);
		sl_feedback_build(fb, d->name, "fail", r->output.buf, changed, NULL);
		goto done;
	}
	if (!cand.n) {
		set_rec(rec, SL_VERDICT_FAIL, r->output.buf, "no tests parsed");
		sl_buf_addf(fb, "The gate '%s' failed: its report names no test at all.\n",
			    d->name);
		sl_feedback_build(fb, d->name, "fail", r->output.buf, changed, NULL);
		goto done;
	}
	for (size_t i = 0; i < s->base_tests.n; i++)
		if (!sl_tests_find(&cand, s->base_tests.v[i].id))
			sl_tests_add(&gone, s->base_tests.v[i].id, SL_TEST_FAIL,
				     "ran on the base, missing now");
	/* broken: passed on the base and not now (never the base's flaky ones),
	   or new and failing (a generated test must pass) */
	sl_tests_regressions(&s->base_tests, &cand, &reg);
	for (size_t i = 0; i < reg.n; i++)
		if (!sl_tests_find(&s->flaky, reg.v[i].id) && !sl_tests_find(&gone, reg.v[i].id))
			sl_tests_add(&broken, reg.v[i].id, reg.v[i].result, reg.v[i].message);
	/* ids are unique within a report, and broken holds only base tests so far */
	for (size_t i = 0; i < cand.n; i++)
		if (sl_test_failed(cand.v[i].result) &&
		    !sl_tests_find(&s->base_tests, cand.v[i].id) && !must_fix(d, cand.v[i].id))
			sl_tests_add(&broken, cand.v[i].id, cand.v[i].result, cand.v[i].message);
	for (size_t i = 0; i < d->must_fix.n; i++) {
		const sl_test *m = sl_tests_find(&cand, d->must_fix.v[i]);

		if (!m || m->result != SL_TEST_PASS)
			sl_tests_add(&unfixed, d->must_fix.v[i], m ? m->result : SL_TEST_FAIL,
				     m ? m->message : "must-fix test did not run");
	}
	for (size_t i = 0; d->expect == SL_EXPECT_FIX && i < s->base_tests.n; i++) {
		const sl_test *b = &s->base_tests.v[i], *m;

		if (!sl_test_failed(b->result) || sl_tests_find(&s->flaky, b->id) ||
		    sl_tests_find(&unfixed, b->id) || sl_tests_find(&gone, b->id))
			continue;
		if ((m = sl_tests_find(&cand, b->id)) && m->result != SL_TEST_PASS)
			sl_tests_add(&unfixed, m->id, m->result, m->message);
	}
	if (gone.n || broken.n || unfixed.n) {
		sl_buf_addf(fb, "The gate '%s' failed.\n", d->name);
		blame(&note, fb, "broken", "These tests passed before and do not now (or are "
		      "new and fail):", &broken);
		blame(&note, fb, "still failing", "These tests must be fixed and still do not "
		      "pass:", &unfixed);
		blame(&note, fb, "vanished", "These tests ran on the base and are missing now:",
		      &gone);
		set_rec(rec, SL_VERDICT_FAIL, r->output.buf, note.buf);
	} else {
		for (size_t i = 0; i < s->flaky.n; i++)
			sl_buf_addf(&note, "%s%s", i ? ", " : "flaky on the base, excluded: ",
				    s->flaky.v[i].id);
		if (unblamed_ids(g, s, NULL)) {
			sl_buf_addf(&note, "%snot blamed (failing on the base; must_fix or goal: fix "
				    "would blame them): ", note.len ? "; " : "");
			unblamed_ids(g, s, &note);
		}
		set_rec(rec, SL_VERDICT_PASS, r->output.buf, note.len ? note.buf : NULL);
	}
done:
	sl_buf_release(&note);
	sl_tests_release(&cand);
	sl_tests_release(&reg);
	sl_tests_release(&broken);
	sl_tests_release(&gone);
	sl_tests_release(&unfixed);
}

/* A fix's proof: the findings of its target are gone (finding_gone.h). */
static void judge_gone(gate_state *s, const sl_gate_result *r, const char *report,
		       const sl_changed *changed, const sl_target *t, sl_gate_run_rec *rec,
		       sl_buf *fb)
{
	const sl_gate_conf *d = s->def;
	sl_findings cand;
	sl_buf note = SL_BUF_INIT;

	sl_findings_init(&cand);
	if (!sl_report_format_is_tests(d->format))
		parse_findings(d, source_text(d, r->output.buf, report), &cand);
	if (d->report && !report) {
		set_rec(rec, SL_VERDICT_FAIL, r->output.buf, "no report");
		sl_buf_addf(fb, "The gate '%s' wrote no report '%s'.\n", d->name, d->report);
	} else if (!t) {
		set_rec(rec, SL_VERDICT_FAIL, r->output.buf, "no target to judge");
	} else {
		sl_unit_ref u = { t->path, t->start_line, t->end_line };
		sl_tests tests;
		int ok;

		sl_tests_init(&tests);
		if (sl_report_format_is_tests(d->format)) {
			parse_tests(d, source_text(d, r->output.buf, report), &tests);
			ok = sl_tests_fixed_judge(&s->base_findings, &tests, &u, &note, fb);
		} else {
			ok = sl_finding_gone_judge(&s->base_findings, &cand, changed, &u,
						   d->radius, &note, fb);
		}
		sl_tests_release(&tests);
		if (ok) {
			set_rec(rec, SL_VERDICT_PASS, r->output.buf, "the target's findings are gone");
		} else {
			/* names and rules came from the analyzer: printable only */
			sl_buf safe = SL_BUF_INIT;

			add_printable(&safe, note.buf, note.buf + note.len);
			set_rec(rec, SL_VERDICT_FAIL, r->output.buf, safe.buf);
			sl_buf_release(&safe);
		}
	}
	sl_buf_release(&note);
	sl_findings_release(&cand);
}

/* Judge one run of gate s on a candidate; fills verdict, note and feedback. */
static void judge(const sl_gating *g, gate_state *s, const sl_gate_result *r,
		  const char *report, const sl_changed *changed, const sl_target *t,
		  sl_gate_run_rec *rec, sl_buf *fb)
{
	const sl_gate_conf *d = s->def;
	const char *verdict = sl_verdict_name(r->verdict);
	sl_buf why = SL_BUF_INIT;

	if (r->verdict == SL_VERDICT_TIMEOUT) {
		set_rec(rec, SL_VERDICT_TIMEOUT, r->output.buf, NULL);
		sl_feedback_build(fb, d->name, "timeout", r->output.buf, changed, NULL);
		return;
	}
	if (config_exit(r->exit_status)) {
		/* not the candidate's verdict: the gate's command is missing */
		set_rec(rec, SL_VERDICT_ERROR, r->output.buf, r->exit_status == 127 ?
			"configuration error: command not found (exit 127)" :
			"configuration error: command not executable (exit 126)");
		sl_buf_addf(fb, "The gate '%s' could not run its command (exit %d).\n", d->name,
			    r->exit_status);
		return;
	}
	switch ((enum sl_gate_kind)d->kind) {
	case SL_GATE_POLICY:
	case SL_GATE_MUTANTS:
		break;          /* judged before anything runs, and by run_mutants */
	case SL_GATE_STATIC: {
		sl_findings cand, fresh;

		sl_findings_init(&cand);
		sl_findings_init(&fresh);
		parse_findings(d, source_text(d, r->output.buf, report), &cand);
		if (d->report && !report) {
			set_rec(rec, SL_VERDICT_FAIL, r->output.buf, "no report");
			sl_buf_addf(fb, "The gate '%s' wrote no report '%s'.\n", d->name, d->report);
		} else if (sl_findings_new_near(&s->base_findings, &cand, changed, d->radius, &fresh)) {
			sl_findings_text(&fresh, &why, 4096);
			set_rec(rec, SL_VERDICT_FAIL, r->output.buf, "new findings near the change");
			sl_buf_addf(fb, "The gate '%s' found new problems on or near the lines you "
				    "changed:\n%s", d->name, why.buf);
		} else {
			set_rec(rec, SL_VERDICT_PASS, r->output.buf, NULL);
		}
		sl_findings_release(&cand);
		sl_findings_release(&fresh);
		break;
	}
	case SL_GATE_FINDING_GONE:
		judge_gone(s, r, report, changed, t, rec, fb);
		break;
	case SL_GATE_TEST:
		if (d->format) {
			judge_tests(g, s, r, report, changed, rec, fb);
			break;
		}
		/* a test gate without a format judges by exit status */
		__attribute__((fallthrough));
	case SL_GATE_BUILD:
	case SL_GATE_CUSTOM:
		if (r->verdict == SL_VERDICT_PASS) {
			set_rec(rec, SL_VERDICT_PASS, r->output.buf, NULL);
		} else if (s->cannot_judge) {
			set_rec(rec, SL_VERDICT_SKIP, r->output.buf,
				"fails on the base too: allowed to skip");
		} else {
			set_rec(rec, r->verdict, r->output.buf, d->expect == SL_EXPECT_FIX ?
				"still fails: the campaign expects a fix" : NULL);
			sl_feedback_build(fb, d->name, verdict, r->output.buf, changed, NULL);
		}
		break;
	case SL_GATE_COVERAGE: {
		sl_coverage cand;

		sl_coverage_init(&cand);
		if (parse_coverage(d, report, t ? t->path : NULL, &cand)) {
			set_rec(rec, SL_VERDICT_FAIL, r->output.buf, "no coverage report");
			sl_buf_addf(fb, "The gate '%s' produced no readable coverage report '%s'.\n",
				    d->name, d->report);
		} else if (t && sl_coverage_raised(&s->base_cov, &cand, t->path, t->start_line,
						   t->end_line, &why)) {
			set_rec(rec, SL_VERDICT_PASS, r->output.buf, why.buf);
		} else {
			set_rec(rec, SL_VERDICT_FAIL, r->output.buf, why.len ? why.buf : "coverage not raised");
			sl_buf_addf(fb, "The gate '%s' failed: the change does not raise the coverage "
				    "of %s:%u-%u (%s).\n", d->name, t ? t->path : "?",
				    t ? t->start_line : 0, t ? t->end_line : 0, why.buf);
		}
		sl_coverage_release(&cand);
		break;
	}
	}
	sl_buf_release(&why);
}

/* Replace rel beneath root by text (never through a link), or rename it to rel + suffix. */
static int put_beneath(const char *root, const char *rel, const char *text, size_t len,
		       const char *hide_suffix, const char *unhide_suffix, sl_err *err)
{
	const char *slash = strrchr(rel, '/'), *base = slash ? slash + 1 : rel;
	char *dir = slash ? sl_xstrndup(rel, (size_t)(slash - rel)) : sl_xstrdup("");
	sl_buf from = SL_BUF_INIT, to = SL_BUF_INIT;
	struct stat st;
	int dfd = sl_opendir_beneath(root, dir, err), fd = -1, ret = SL_ERROR;

	if (dfd < 0) {
		ret = dfd;
		goto done;
	}
	if (hide_suffix || unhide_suffix) {
		sl_buf_addf(&from, "%s%s", base, unhide_suffix ? unhide_suffix : "");
		sl_buf_addf(&to, "%s%s", base, hide_suffix ? hide_suffix : "");
		if (renameat(dfd, from.buf, dfd, to.buf)) {
			sl_err_set(err, SL_ERROR, "cannot rename '%s': %s", rel, strerror(errno));
			goto done;
		}
		ret = SL_OK;
		goto done;
	}
	/* never blocks on a FIFO the tests planted; only a regular file is written */
	fd = openat(dfd, base, O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0 && (fstat(fd, &st) || !S_ISREG(st.st_mode))) {
		sl_err_set(err, SL_EREFUSED, "refusing to write '%s': not a regular file", rel);
		goto done;
	}
	if (fd < 0 || ftruncate(fd, 0) || sl_write_all(fd, text, len)) {
		sl_err_set(err, SL_ERROR, "cannot write '%s': %s", rel, strerror(errno));
		goto done;
	}
	ret = SL_OK;
done:
	if (fd >= 0)
		close(fd);
	if (dfd >= 0)
		close(dfd);
	free(dir);
	sl_buf_release(&from);
	sl_buf_release(&to);
	return ret;
}

#define MAX_MUTANTS 25
#define HIDDEN ".sluice-hidden"

/* A test file the candidate created or extended, and how to take it back out. */
typedef struct test_change {
	const char *path;           /* borrowed from the sl_changed */
	int created;
	sl_buf now, before;         /* extended: the candidate's text and the base's */
} test_change;

static void test_changes_free(test_change *tc, size_t n)
{
	for (size_t i = 0; tc && i < n; i++) {
		sl_buf_release(&tc[i].now);
		sl_buf_release(&tc[i].before);
	}
	free(tc);
}

/*
 * The candidate's test changes (in a testgen campaign every file of the diff
 * is a test file).  0, or 1 with why set when they cannot be taken back out.
 */
static int test_changes(const sl_changed *c, const char *workdir, test_change **out,
			sl_buf *why)
{
	test_change *tc = sl_xcalloc(c->nfiles ? c->nfiles : 1, sizeof(*tc));
	sl_err e = SL_ERR_INIT;

	*out = tc;
	for (size_t i = 0; i < c->nfiles; i++) {
		const sl_changed_file *f = &c->files[i];

		tc[i].path = f->path;
		tc[i].created = f->created;
		sl_buf_init(&tc[i].now, 0);
		sl_buf_init(&tc[i].before, 0);
		if (f->deleted || f->renamed || f->binary) {
			sl_buf_addf(why, "deletes, renames or writes binary test file %s", f->path);
			return 1;
		}
		if (f->created)
			continue;
		if (sl_read_beneath(&tc[i].now, workdir, f->path, 0, &e) ||
		    sl_diff_old_text(c->diff, f->path, tc[i].now.buf, tc[i].now.len, &tc[i].before)) {
			sl_buf_addf(why, "cannot rebuild the base text of %s", f->path);
			return 1;
		}
	}
	return 0;
}

/* Take the candidate's test changes out (the existing suite), or put them back. */
static int swap_tests(const char *workdir, test_change *tc, size_t n, int out, sl_err *err)
{
	int ret = SL_OK;

	for (size_t i = 0; i < n && !ret; i++) {
		const sl_buf *text = out ? &tc[i].before : &tc[i].now;

		ret = tc[i].created ?
			put_beneath(workdir, tc[i].path, NULL, 0, out ? HIDDEN : NULL,
				    out ? NULL : HIDDEN, err) :
			put_beneath(workdir, tc[i].path, text->buf, text->len, NULL, NULL, err);
	}
	return ret;
}

/*
 * The mutants gate's runs: on workdir as it is now, each within timeout_s
 * (the gate's own for the unmutated run, then the mutants' bound), their
 * durations added to rec.
 */
typedef struct mutant_runs {
	const sl_gating *g;
	const sl_gate_conf *d;
	const char *workdir;
	unsigned timeout_s;
	sl_gate_run_rec *rec;
} mutant_runs;

#define MUTANT_FLOOR_S 5    /* added to the bound: a mutant rebuilds what it changed */

/* A mutant's run may take factor times the unmutated run plus the floor, never past the gate's timeout. */
static unsigned mutant_bound(const sl_gate_conf *d, int64_t unmutated_ms)
{
	uint64_t factor = d->mutant_timeout_factor ? d->mutant_timeout_factor : 10;
	uint64_t cap = d->timeout_s ? d->timeout_s : 600;
	uint64_t s = ((uint64_t)(unmutated_ms > 0 ? unmutated_ms : 0) * factor + 999) / 1000 +
		     MUTANT_FLOOR_S;

	return (unsigned)(s < cap ? s : cap);
}

/* Run the gate once; *verdict is pass, fail or timeout (a timeout kills nothing). */
static int run_mutant(const mutant_runs *mr, sl_verdict *verdict, sl_err *err)
{
	sl_gate_conf bounded = *mr->d;      /* borrows d's strings */
	sl_gate_tree tree = { .dir = mr->workdir };
	sl_gate_result r;
	char *report = NULL;
	int ret;

	bounded.timeout_s = mr->timeout_s;
	sl_gate_result_init(&r);
	ret = run_once(mr->g, &bounded, &tree, &r, &report, err);
	if (!ret) {
		if (config_exit(r.exit_status))
			ret = sl_err_set(err, SL_ERROR, "gate '%s' cannot run its command (exit %d)",
					 mr->d->name, r.exit_status);
		*verdict = r.verdict;
		mr->rec->duration_ms += r.duration_ms;
		mr->rec->jail_ms += r.setup_ms;
		free(mr->rec->jail);
		mr->rec->jail = jail_text(mr->g, r.layers);
	}
	free(report);
	sl_gate_result_release(&r);
	return ret;
}

/* What the mutants did: killed by the new test alone, by both, or timed out. */
typedef struct mutant_tally {
	size_t kill, both, timed_out;
	sl_buf kills, timeouts;     /* the mutants' descriptions, "; "-separated */
} mutant_tally;

/* The gate's verdict and note from the tally; fb says what to do when it fails. */
static void mutants_verdict(const mutant_runs *mr, const sl_target *t, size_t n,
			    const mutant_tally *tl, sl_buf *fb)
{
	sl_buf note = SL_BUF_INIT;

	sl_buf_addf(&note, "kills %zu of %zu mutants the existing tests miss (%zu killed by "
		    "both, %zu survive)", tl->kill, n, tl->both,
		    n - tl->kill - tl->both - tl->timed_out);
	if (tl->timed_out) {
		sl_buf_addf(&note, ", %zu timed out after %u s (", tl->timed_out, mr->timeout_s);
		add_printable(&note, tl->timeouts.buf, tl->timeouts.buf + tl->timeouts.len);
		sl_buf_adds(&note, ")");
	}
	if (tl->kill) {
		sl_buf_adds(&note, ": ");
		add_printable(&note, tl->kills.buf, tl->kills.buf + tl->kills.len);
		set_rec(mr->rec, SL_VERDICT_PASS, NULL, note.buf);
	} else {
		set_rec(mr->rec, SL_VERDICT_FAIL, NULL, note.buf);
		sl_buf_addf(fb, "The gate '%s' failed: the new test %s.", mr->d->name,
			    n ? "fails on no mutant of the function that the existing tests let "
			    "live" : "has no mutant to kill");
		if (tl->timed_out)
			sl_buf_addf(fb, "  %zu mutant%s made the tests run past %u s; a time-out "
				    "is not a failure.", tl->timed_out, tl->timed_out > 1 ? "s" : "",
				    mr->timeout_s);
		sl_buf_addf(fb, "  Assert on what %s computes, so that a wrong result fails "
			    "it.\n", t->path);
	}
	sl_buf_release(&note);
}

/*
 * testgen's strongest proof (README, "The testgen job"): mutants of the
 * target function, each built and run in the jail with the candidate's new
 * test files and without them; the candidate passes when at least one
 * mutant fails with them and does not fail without them.  A mutant the
 * tests do not finish on within the bound (mutant_bound()) is timed out,
 * never killed: a test that only calls a function "kills" its endless loop.
 */
static int run_mutants(const sl_gating *g, const sl_gate_conf *d, const char *workdir,
		       const sl_changed *changed, const sl_target *t, sl_gate_run_rec *rec,
		       sl_buf *fb, sl_err *err)
{
	sl_buf file = SL_BUF_INIT, why = SL_BUF_INIT;
	test_change *tc = NULL;
	sl_mutants m = SL_MUTANTS_INIT;
	sl_err ferr = SL_ERR_INIT;  /* a file the gate writes was tampered with: a verdict */
	mutant_runs mr = { g, d, workdir, d->timeout_s, rec };
	mutant_tally tl = { 0, 0, 0, SL_BUF_INIT, SL_BUF_INIT };
	sl_verdict v = SL_VERDICT_PASS;
	int64_t before_ms = 0;     /* rec's duration before the unmutated run */
	int ret = SL_OK, dirty = 0, broken = 0, unmutated_ok = 0;

	if (!t) {
		set_rec(rec, SL_VERDICT_FAIL, NULL, "no target to judge");
		goto done;
	}
	if (sl_read_beneath(&file, workdir, t->path, 0, err)) {
		/* the candidate removed it or put a link there */
		set_rec(rec, SL_VERDICT_FAIL, NULL, "cannot read the code under test");
		sl_err_clear(err);
		goto done;
	}
	if (t->end_byte > file.len ||
	    memcmp(file.buf + t->start_byte, t->unit_text, t->end_byte - t->start_byte)) {
		set_rec(rec, SL_VERDICT_FAIL, NULL, "changes the code under test");
		sl_buf_addf(fb, "The gate '%s' failed: the change edits %s:%u-%u; a generated "
			    "test must leave the code under test alone.\n", d->name, t->path,
			    t->start_line, t->end_line);
		goto done;
	}
	if (!changed->nfiles) {
		set_rec(rec, SL_VERDICT_FAIL, NULL, "no test added");
		sl_buf_addf(fb, "The gate '%s' failed: the change adds no test.\n", d->name);
		goto done;
	}
	if (test_changes(changed, workdir, &tc, &why)) {
		set_rec(rec, SL_VERDICT_FAIL, NULL, why.buf);
		sl_buf_addf(fb, "The gate '%s' failed: the change %s.\n", d->name, why.buf);
		goto done;
	}
	/* written again, so that the unmutated run rebuilds what every mutant will */
	dirty = 1;
	if (put_beneath(workdir, t->path, file.buf, file.len, NULL, NULL, &ferr)) {
		broken = 1;
		goto restore;
	}
	before_ms = rec->duration_ms;
	if ((ret = run_mutant(&mr, &v, err)) || v != SL_VERDICT_PASS)
		goto restore;
	unmutated_ok = 1;
	mr.timeout_s = mutant_bound(d, rec->duration_ms - before_ms);
	sl_mutants_make(&m, file.buf, file.len, t->start_byte, t->end_byte, MAX_MUTANTS);
	for (size_t i = 0; i < m.n && !ret && !broken; i++) {
		sl_verdict old = SL_VERDICT_PASS;

		if (put_beneath(workdir, t->path, m.v[i].text, m.v[i].len, NULL, NULL, &ferr)) {
			broken = 1;
			break;
		}
		if ((ret = run_mutant(&mr, &v, err)) || v == SL_VERDICT_PASS)
			continue;
		if (v == SL_VERDICT_TIMEOUT) {
			sl_buf_addf(&tl.timeouts, "%s%s", tl.timed_out++ ? "; " : "", m.v[i].what);
			continue;
		}
		if (swap_tests(workdir, tc, changed->nfiles, 1, &ferr))
			broken = 1;
		else
			ret = run_mutant(&mr, &old, err);
		if (swap_tests(workdir, tc, changed->nfiles, 0, &ferr))
			broken = 1;
		if (broken || ret)
			break;
		/* the existing suite hanging on it did not kill it either */
		if (old == SL_VERDICT_FAIL)
			tl.both++;
		else
			sl_buf_addf(&tl.kills, "%s%s", tl.kill++ ? "; " : "", m.v[i].what);
	}
restore:
	if (dirty && put_beneath(workdir, t->path, file.buf, file.len, NULL, NULL, &ferr))
		broken = 1;
	if (ret)
		goto done;
	if (broken) {
		sl_buf_adds(&why, "the worktree changed under the gate: ");
		add_printable(&why, ferr.msg, ferr.msg + strlen(ferr.msg));
		set_rec(rec, SL_VERDICT_FAIL, NULL, why.buf);
		sl_buf_addf(fb, "The gate '%s' failed: %s.\n", d->name, why.buf);
		goto done;
	}
	if (!unmutated_ok) {
		set_rec(rec, SL_VERDICT_FAIL, NULL, v == SL_VERDICT_TIMEOUT ?
			"the tests time out without a mutant" : "the tests fail without a mutant");
		sl_buf_addf(fb, "The gate '%s' failed: the tests %s on the unmutated code.\n",
			    d->name, v == SL_VERDICT_TIMEOUT ? "time out" : "fail");
		goto done;
	}
	mutants_verdict(&mr, t, m.n, &tl, fb);
done:
	if (ret)
		set_rec(rec, SL_VERDICT_ERROR, NULL, err->msg);
	test_changes_free(tc, changed->nfiles);
	sl_mutants_release(&m);
	sl_buf_release(&file);
	sl_buf_release(&why);
	sl_buf_release(&tl.kills);
	sl_buf_release(&tl.timeouts);
	return ret;
}

/* A skip lets a candidate through only where the campaign says so in words. */
static int verdict_ok(const sl_gate_conf *d, sl_verdict verdict)
{
	return verdict == SL_VERDICT_PASS || (d->allow_skip && verdict == SL_VERDICT_SKIP);
}

static void cache_key(const sl_gating *g, const gate_state *s, const char *tree_hex,
		      const sl_target *t, char out[65])
{
	sl_buf b = SL_BUF_INIT;

	sl_buf_addf(&b, "tree %s\nbase %s\ngate %s\nenv %s\nunsafe %d\n", tree_hex,
		    g->base_hex, s->def_digest, s->env_digest, g->unsafe);
	/* these verdicts are about one target */
	if ((s->def->kind == SL_GATE_FINDING_GONE || s->def->kind == SL_GATE_MUTANTS ||
	     s->def->kind == SL_GATE_COVERAGE) && t)
		sl_buf_addf(&b, "target %s:%u-%u\n", t->path, t->start_line, t->end_line);
	/* a time-out stopped being a kill: no verdict from before that is reused */
	if (s->def->kind == SL_GATE_MUTANTS)
		sl_buf_addf(&b, "mutants timed out apart, factor %u\n",
			    s->def->mutant_timeout_factor);
	sl_sha256_hex(out, b.buf, b.len);
	sl_buf_release(&b);
}

/*
 * A fix may not change the tests that judge it (finding_gone.h, sl_judging):
 * 1 with gate s failed in rec, before it runs, when the diff does.
 */
static int protects_tests(const gate_state *s, const sl_changed *diff, sl_gate_run_rec *rec,
			  sl_buf *fb)
{
	const sl_gate_conf *d = s->def;
	sl_buf note = SL_BUF_INIT;
	int hit;

	if (!s->judging.where.n)
		return 0;
	hit = sl_judging_changed(&s->judging, d->allow_test_changes.n ?
				 (const char *const *)d->allow_test_changes.v : NULL, diff, &note);
	if (hit) {
		/* nothing ran: the exit status stays -1 */
		set_rec(rec, SL_VERDICT_FAIL, "", note.buf);
		sl_buf_addf(fb, "The gate '%s' failed: the change %s.  Fix the code under test; "
			    "the test's expectation is what the fix must meet.\n", d->name,
			    note.buf);
	}
	sl_buf_release(&note);
	return hit;
}

/*
 * Gates first..upto-1 whose verdicts came from the cache (cached[i]) did not
 * run on this tree: run them now, results unused, so that gate upto sees
 * what they leave behind.
 */
static int replay_cached(const sl_gating *g, const sl_gate_tree *tree, unsigned char *cached,
			 size_t upto, sl_err *err)
{
	int ret = SL_OK;

	for (size_t i = 0; i < upto && !ret; i++) {
		sl_gate_result r;
		char *report = NULL;

		if (!cached[i])
			continue;
		cached[i] = 0;
		sl_gate_result_init(&r);
		ret = run_once(g, g->gs[i].def, tree, &r, &report, err);
		sl_gate_result_release(&r);
		free(report);
	}
	return ret;
}

/*
 * What a preparing gate reads when it has no `inputs:` (README, "Warm
 * base"): autotools', CMake's and Meson's own files.
 */
static const char *const default_inputs[] = { "configure.ac", "configure.in", "configure",
	"Makefile.am", "*.m4", "CMakeLists.txt", "*.cmake", "meson.build", "meson_options.txt",
	"meson.options", NULL };

/* The first file of diff that is one of d's inputs (borrowed), or NULL. */
static const char *changed_input(const sl_gate_conf *d, const sl_changed *diff)
{
	const char *const *inputs = d->has_inputs ? (const char *const *)d->inputs.v :
		default_inputs;

	for (size_t i = 0; i < diff->nfiles; i++) {
		const sl_changed_file *f = &diff->files[i];

		if (sl_policy_glob_any(inputs, f->path) ||
		    (f->old_path && sl_policy_glob_any(inputs, f->old_path)))
			return f->path;
	}
	return NULL;
}

/*
 * Whether preparing gate i keeps what the warm base's preparation left
 * (sl_gating_run_on): 1, or 0 with why it runs in *why; rerun names the
 * preparing gate before it that ran again (whose outputs it reads), or NULL.
 */
static int prepare_reused(const sl_gating *g, size_t i, const sl_gate_tree *tree,
			  const sl_changed *diff, const char *rerun, sl_buf *why)
{
	const gate_state *s = &g->gs[i];
	const sl_gate_conf *d = s->def;
	const char *input;
	size_t j;

	sl_buf_reset(why);
	if (!d->prepare || !tree->prepared)
		return 0;
	/* without `inputs:` the last preparing gate is the build: it always runs */
	for (j = i + 1; !d->has_inputs && j < g->n && !g->gs[j].def->prepare; j++)
		;
	if (!d->has_inputs && j == g->n)
		return 0;
	/* and some gate that does not prepare judges what the reused outputs build */
	for (j = i + 1; j < g->n; j++)
		if (g->gs[j].def->kind != SL_GATE_POLICY && !g->gs[j].def->prepare)
			break;
	if (j == g->n || !s->measured || s->base_failed || d->expect != SL_EXPECT_PASS ||
	    (d->kind != SL_GATE_BUILD && d->kind != SL_GATE_CUSTOM))
		return 0;
	if (rerun)
		sl_buf_addf(why, "re-run: gate '%s' ran again", rerun);
	else if (!diff || diff->error)
		sl_buf_adds(why, "re-run: the diff did not parse");
	else if ((input = changed_input(d, diff)))
		sl_buf_addf(why, "re-run: %s changed", input);
	return !why->len;
}

int sl_gating_run_on(sl_gating *g, const sl_gate_tree *tree, const char *tree_hex,
		     const sl_changed *diff, const sl_target *t, sl_gate_outcome *o, int *passed,
		     sl_buf *feedback, sl_err *err)
{
	const char *workdir = tree->dir;
	unsigned char *cached = sl_xcalloc(g->n ? g->n : 1, 1);
	const char *rerun = NULL;           /* the preparing gate that ran again */
	sl_buf why = SL_BUF_INIT;
	int ret = SL_OK;

	*passed = 1;
	for (size_t i = 0; i < g->n && *passed && !ret; i++) {
		gate_state *s = &g->gs[i];
		const sl_gate_conf *d = s->def;
		sl_gate_run_rec *rec, hit;
		char key[65], *cached_fb = NULL;
		unsigned runs = d->kind == SL_GATE_TEST || d->kind == SL_GATE_CUSTOM ? d->reruns : 1;
		sl_buf fb = SL_BUF_INIT;

		if (d->kind == SL_GATE_POLICY)
			continue;
		rec = outcome_add(o, d->name);
		if (prepare_reused(g, i, tree, diff, rerun, &why)) {
			/* the base's verdict: counted as cached, never as passed */
			set_rec(rec, SL_VERDICT_PASS, "", "prepare: reused (no input changed)");
			rec->exit_status = s->base_exit;
			rec->cached = 1;
			continue;
		}
		if (d->prepare && !rerun)
			rerun = d->name;
		cache_key(g, s, tree_hex, t, key);
		if (!sl_store_cache_get(g->st, key, &hit, &cached_fb, NULL)) {
			set_rec(rec, hit.verdict, hit.output_tail, "cached verdict");
			rec->jail = hit.jail;
			hit.jail = NULL;
			rec->exit_status = hit.exit_status;
			rec->duration_ms = hit.duration_ms;
			rec->output_bytes = hit.output_bytes;
			rec->cached = 1;
			cached[i] = 1;
			if (!verdict_ok(d, hit.verdict)) {
				*passed = 0;
				sl_buf_adds(feedback, cached_fb ? cached_fb : "");
			}
			free(hit.output_tail);
			free(cached_fb);
			watch(g, d->name, "candidate", rec);
			continue;
		}
		watch(g, d->name, "candidate", NULL);
		if (protects_tests(s, diff, rec, &fb)) {
			runs = 0;
			goto judged;
		}
		if ((ret = replay_cached(g, tree, cached, i, err))) {
			sl_buf_release(&fb);
			break;
		}
		if (d->kind == SL_GATE_MUTANTS && tree->layer)
			BUG("a mutants gate on an overlay");    /* sl_gating_writes_tree() */
		if (d->kind == SL_GATE_MUTANTS) {
			ret = run_mutants(g, d, workdir, diff, t, rec, &fb, err);
			runs = 0;
		}
		for (unsigned k = 0; k < runs; k++) {
			sl_gate_result r;
			char *report = NULL;

			sl_gate_result_init(&r);
			if ((ret = run_once(g, d, tree, &r, &report, err))) {
				sl_gate_result_release(&r);
				break;
			}
			sl_buf_reset(&fb);
			judge(g, s, &r, report, diff, t, rec, &fb);
			free(rec->jail);
			rec->jail = jail_text(g, r.layers);
			rec->exit_status = r.exit_status;
			rec->duration_ms += r.duration_ms;
			rec->jail_ms += r.setup_ms;
			rec->output_bytes = (int64_t)r.output_total;
			if (runs > 1 && !verdict_ok(d, rec->verdict) && rec->verdict != SL_VERDICT_ERROR) {
				char note[64];

				snprintf(note, sizeof(note), "failed on run %u of %u", k + 1, runs);
				free(rec->note);
				rec->note = sl_xstrdup(note);
			}
			sl_gate_result_release(&r);
			free(report);
			if (!verdict_ok(d, rec->verdict))
				break;
		}
judged:
		if (!ret && why.len && !rec->note)
			rec->note = sl_xstrdup(why.buf);
		if (!ret) {
			watch(g, d->name, "candidate", rec);
			if (!verdict_ok(d, rec->verdict)) {
				*passed = 0;
				sl_buf_add(feedback, fb.buf, fb.len);
			}
			/* a failed cache write only costs a rerun later; a gate killed
			   because the run is stopping gave no verdict to keep */
			if (!sl_jail_stopping() && !sl_store_begin(g->st, NULL)) {
				if (sl_store_cache_put(g->st, key, rec, fb.len ? fb.buf : NULL, NULL))
					sl_store_rollback(g->st);
				else
					sl_store_commit(g->st, NULL);
			}
		}
		sl_buf_release(&fb);
	}
	sl_buf_release(&why);
	free(cached);
	return ret;
}

void sl_gating_warm_key(const sl_gating *g, sl_buf *out)
{
	sl_buf_addf(out, "base %s\nunsafe %d\n", g->base_hex, g->unsafe);
	env_text(g, 1, -1, out);
	for (size_t i = 0; i < g->n; i++)
		if (g->gs[i].def->prepare)
			sl_buf_addf(out, "gate %s %s\n", g->gs[i].def->name, g->gs[i].def_digest);
}

/* A key line's subject: "tool WORD" and "gate NAME" by their second word, others by their first. */
static size_t key_subject(const char *line)
{
	size_t n = strcspn(line, " \n");

	if ((n == 4 && (!strncmp(line, "tool", 4) || !strncmp(line, "gate", 4))) && line[n] == ' ')
		n += 1 + strcspn(line + n + 1, " \n");
	return n;
}

/* The line of key whose subject is the n bytes at subj, or NULL. */
static const char *key_find(const char *key, const char *subj, size_t n)
{
	for (const char *l = key; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] == '\n'))
		if (key_subject(l) == n && !strncmp(l, subj, n))
			return l;
	return NULL;
}

/* The n-th (from 0) space-separated field of line, into f. */
static void key_field(const char *line, int n, sl_buf *f)
{
	sl_buf_reset(f);
	while (n-- > 0 && *line && *line != '\n')
		line += strcspn(line, " \n") + (line[strcspn(line, " \n")] == ' ');
	sl_buf_add(f, line, strcspn(line, " \n"));
}

/* Why line old (NULL: none) became line cur (NULL: none), in words. */
static void key_change(sl_buf *why, const char *old, const char *cur)
{
	const char *l = cur ? cur : old;
	sl_buf a = SL_BUF_INIT, b = SL_BUF_INIT, name = SL_BUF_INIT;

	key_field(l, 1, &name);
	if (!strncmp(l, "tool ", 5)) {
		key_field(cur ? cur : old, 2, &b);
		if (old)
			key_field(old, 2, &a);
		if (!old || !cur)
			sl_buf_addf(why, cur ? "the gates run %s now" : "the gates no longer run %s",
				    strcmp(b.buf, "-") ? b.buf : name.buf);
		else if (!strcmp(b.buf, "-"))
			sl_buf_addf(why, "%s is gone", a.buf);
		else if (!strcmp(a.buf, "-"))
			sl_buf_addf(why, "%s appeared", b.buf);
		else
			sl_buf_addf(why, "%s changed", b.buf);
	} else if (!strncmp(l, "gate ", 5)) {
		sl_buf_addf(why, !old ? "the gate '%s' prepares now" : !cur ?
			    "the gate '%s' no longer prepares" : "the gate '%s' changed", name.buf);
	} else if (!strncmp(l, "base ", 5)) {
		sl_buf_adds(why, "the base commit changed");
	} else if (!strncmp(l, "kernel ", 7)) {
		sl_buf_adds(why, "the kernel changed");
	} else if (!strncmp(l, "jail ", 5)) {
		sl_buf_adds(why, "the jail's settings changed");
	} else if (!strncmp(l, "unsafe ", 7)) {
		sl_buf_adds(why, "--unsafe changed");
	} else {
		sl_buf_adds(why, "sluice's gating changed");
	}
	sl_buf_release(&a);
	sl_buf_release(&b);
	sl_buf_release(&name);
}

void sl_gating_warm_why(const char *old_key, const char *key, sl_buf *why)
{
	size_t n = 0;

	for (int pass = 0; pass < 2; pass++) {
		/* pass 0: each line of key not in old_key; pass 1: each subject gone */
		const char *from = pass ? old_key : key, *to = pass ? key : old_key;

		for (const char *l = from; *l; l += strcspn(l, "\n") + (l[strcspn(l, "\n")] == '\n')) {
			size_t len = strcspn(l, "\n"), subj = key_subject(l);
			const char *o = key_find(to, l, subj);

			if (!len || (o && (pass || (strcspn(o, "\n") == len && !strncmp(o, l, len)))))
				continue;
			if (n++ < 3) {
				if (n > 1)
					sl_buf_adds(why, ", ");
				key_change(why, pass ? l : o, pass ? NULL : l);
			}
		}
	}
	if (n > 3)
		sl_buf_addf(why, " and %zu more", n - 3);
}

int sl_gating_has_prepare(const sl_gating *g)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->gs[i].def->prepare)
			return 1;
	return 0;
}

int sl_gating_writes_tree(const sl_gating *g)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->gs[i].def->kind == SL_GATE_MUTANTS)
			return 1;
	return 0;
}

int sl_gating_prepare(sl_gating *g, const char *dir, sl_notice_fn progress, void *progress_ctx,
		      int64_t *ms_out, sl_err *err)
{
	/* without preparing gates the jail still takes the tree over once */
	static const sl_gate_conf give = { .name = "prepare", .command = "true", .timeout_s = 60 };
	sl_gate_tree tree = { .dir = dir };
	int64_t start = sl_now_ms();
	int ret = SL_OK, any = 0;

	for (size_t i = 0; i <= g->n && !ret; i++) {
		const sl_gate_conf *d = i < g->n ? g->gs[i].def : any ? NULL : &give;
		sl_gate_result r;
		char *report = NULL;

		if (!d || (i < g->n && !d->prepare))
			continue;
		any = 1;
		if (progress && d != &give) {
			sl_buf line = SL_BUF_INIT;

			sl_buf_addf(&line, "warm base: gate '%s' prepares the base tree", d->name);
			progress(progress_ctx, line.buf);
			sl_buf_release(&line);
		}
		sl_gate_result_init(&r);
		if (d != &give)
			watch(g, d->name, "prepare", NULL);
		ret = run_once(g, d, &tree, &r, &report, err);
		if (!ret && d != &give)
			watch_base_end(g, d->name, "prepare", &r);
		sl_gate_result_release(&r);
		free(report);
	}
	if (ms_out)
		*ms_out = sl_now_ms() - start;
	return ret;
}

void sl_gating_base_findings(const sl_gating *g, sl_findings *out)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->gs[i].def->kind == SL_GATE_FINDING_GONE && g->gs[i].measured)
			for (size_t j = 0; j < g->gs[i].base_findings.n; j++)
				sl_findings_add_copy(out, &g->gs[i].base_findings.v[j]);
}

const struct sl_coverage *sl_gating_base_coverage(const sl_gating *g)
{
	for (size_t i = 0; i < g->n; i++)
		if (g->gs[i].def->kind == SL_GATE_COVERAGE && g->gs[i].measured)
			return &g->gs[i].base_cov;
	return NULL;
}
