/*
 * gating.c - the gates of a campaign, judged against the base (gating.h).
 *
 * Reads: the spec's gates, the store (baselines, verdict cache), report
 * files beneath a worktree.  Writes: baselines and cache entries in the
 * store; runs commands only through the jail (validators/gate.h).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "apply.h"
#include "beneath.h"
#include "coverage.h"
#include "diff_lines.h"
#include "feedback.h"
#include "findings.h"
#include "gate.h"
#include "jail.h"
#include "gate_store.h"
#include "gating.h"
#include "policy.h"
#include "sha256.h"
#include "testreport.h"
#include "util.h"

#define SLUICE_GATING_VERSION "sluice-gating-1"

/* What the base said for one gate. */
typedef struct gate_state {
	const sl_spec_gate *def;
	char def_digest[65];
	int base_failed;            /* run 1 on the base did not pass */
	sl_findings base_findings;
	sl_tests base_tests, flaky;
	int base_tests_ok;          /* the base produced a parseable report */
	sl_coverage base_cov;
} gate_state;

struct sl_gating {
	const sl_spec *spec;
	sl_store *st;
	int64_t campaign_id;
	git_oid base;
	char base_hex[GIT_OID_HEXSZ + 1];
	char env_digest[65];
	gate_state *gs;
	size_t n;
	int unsafe;                 /* --unsafe: gates may run without the minimum jail */
};

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

static void set_rec(sl_gate_run_rec *r, const char *verdict, const char *output, const char *note)
{
	free(r->verdict);
	free(r->output_tail);
	free(r->note);
	r->verdict = sl_xstrdup(verdict);
	r->output_tail = sl_xstrdup(output ? output : "");
	r->note = sl_xstrdup_or_null(note);
}

static void digest_def(const sl_spec_gate *d, char out[65])
{
	sl_buf b = SL_BUF_INIT;

	sl_buf_addf(&b, "%s\n%d\n%s\n%u\n%s\n%s\n%u\n%s\n%u\n", d->name, d->kind,
		    d->command ? d->command : "", d->timeout_s, d->format ? d->format : "",
		    d->report ? d->report : "", d->radius, d->fail_on ? d->fail_on : "", d->reruns);
	for (size_t i = 0; i < d->must_fix.n; i++)
		sl_buf_addf(&b, "must_fix %s\n", d->must_fix.v[i]);
	sl_sha256_hex(out, b.buf, b.len);
	sl_buf_release(&b);
}

/* Version, kernel and toolchain: what else a verdict depends on. */
static void digest_env(char out[65])
{
	sl_buf b = SL_BUF_INIT;
	struct utsname u;
	const char *dirs[] = { "/usr", "/usr/bin", "/usr/lib", "/usr/include", "/etc/alternatives" };

	sl_buf_adds(&b, SLUICE_GATING_VERSION "\n");
	if (!uname(&u))
		sl_buf_addf(&b, "%s %s %s\n", u.sysname, u.release, u.machine);
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		struct stat st;

		if (!stat(dirs[i], &st))
			sl_buf_addf(&b, "%s %llu %lld.%09ld\n", dirs[i], (unsigned long long)st.st_ino,
				    (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
	}
	sl_sha256_hex(out, b.buf, b.len);
	sl_buf_release(&b);
}

int sl_gating_open(sl_gating **out, const sl_spec *spec, sl_store *st, int64_t campaign_id,
		   const git_oid *base, int unsafe, sl_err *err)
{
	sl_gating *g = sl_xcalloc(1, sizeof(*g));

	g->unsafe = unsafe;
	g->spec = spec;
	g->st = st;
	g->campaign_id = campaign_id;
	git_oid_cpy(&g->base, base);
	git_oid_tostr(g->base_hex, sizeof(g->base_hex), base);
	digest_env(g->env_digest);
	g->n = spec->ngates;
	g->gs = sl_xcalloc(g->n ? g->n : 1, sizeof(*g->gs));
	for (size_t i = 0; i < g->n; i++) {
		gate_state *s = &g->gs[i];

		s->def = &spec->gates[i];
		digest_def(s->def, s->def_digest);
		sl_findings_init(&s->base_findings);
		sl_tests_init(&s->base_tests);
		sl_tests_init(&s->flaky);
		sl_coverage_init(&s->base_cov);
	}
	*out = g;
	return SL_OK;
}

void sl_gating_free(sl_gating *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->n; i++) {
		sl_findings_release(&g->gs[i].base_findings);
		sl_tests_release(&g->gs[i].base_tests);
		sl_tests_release(&g->gs[i].flaky);
		sl_coverage_release(&g->gs[i].base_cov);
	}
	free(g->gs);
	free(g);
}

/* Parse what a run of gate d produced (its report, else its output). */
static const char *source_text(const sl_spec_gate *d, const char *output, const char *report)
{
	return d->report ? (report ? report : NULL) : output;
}

static void parse_findings(const sl_spec_gate *d, const char *text, sl_findings *out)
{
	sl_err e = SL_ERR_INIT;

	if (!text)
		return;
	if (!strcmp(d->format, "sarif"))
		sl_findings_parse_sarif(out, text, strlen(text), &e);
	else
		sl_findings_parse_gcc(out, text, strlen(text));
	sl_findings_filter_level(out, d->fail_on && !strcmp(d->fail_on, "error") ?
				 SL_LEVEL_ERROR : SL_LEVEL_WARNING);
}

static int parse_tests(const sl_spec_gate *d, const char *text, sl_tests *out)
{
	sl_err e = SL_ERR_INIT;

	if (!text)
		return SL_ENOTFOUND;
	if (!strcmp(d->format, "junit"))
		return sl_tests_parse_junit(out, text, strlen(text), &e);
	sl_tests_parse_tap(out, text, strlen(text));
	return SL_OK;
}

static int parse_coverage(const sl_spec_gate *d, const char *text, const char *path,
			  sl_coverage *out)
{
	sl_err e = SL_ERR_INIT;

	if (!text)
		return SL_ENOTFOUND;
	if (!strcmp(d->format, "lcov"))
		return sl_coverage_parse_lcov(out, text, strlen(text), &e);
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

/* One run of a jailed gate.  *report_out is NULL when there is no readable report. */
static int run_once(const sl_gating *g, const sl_spec_gate *d, const char *workdir,
		    sl_gate_result *r, char **report_out, sl_err *err)
{
	const sl_spec *spec = g->spec;
	sl_gate_def def = { d->name, d->command, d->timeout_s, d->loopback, g->unsafe,
			    d->report, spec->jail_mem_mb, spec->jail_pids, spec->jail_tmp_mb,
			    spec->jail_disk_mb };

	*report_out = NULL;
	sl_gate_run(r, &def, workdir);
	if (r->verdict == SL_VERDICT_ERROR)
		return sl_err_set(err, SL_ERROR, "gate '%s' could not run: %s", d->name, r->error);
	if (r->has_report)
		*report_out = sl_xstrdup(r->report.buf);
	return SL_OK;
}

static int baseline_of(sl_gating *g, gate_state *s, git_repository *repo, const char *scratch,
		       const char *prefix, sl_worktree **wt, char **branch, int progress,
		       sl_err *err)
{
	const sl_spec_gate *d = s->def;
	sl_baseline_rec *runs = NULL;
	size_t nruns = 0, want = d->kind == SL_GATE_TEST && d->format ? 2 : 1;
	int ret;

	if ((ret = sl_store_baseline_get(g->st, g->campaign_id, d->name, &runs, &nruns, err)))
		goto done;
	while (nruns < want) {
		sl_gate_result r;
		sl_baseline_rec rec = { 0 };
		char *report = NULL;

		if (!*wt) {
			char name[64];
			sl_buf b = SL_BUF_INIT;

			sl_buf_addf(&b, "%s/base-%.12s", prefix, g->base_hex);
			*branch = sl_buf_detach(&b, NULL);
			snprintf(name, sizeof(name), "sl-base-%ld", (long)getpid());
			if ((ret = sl_worktree_add(wt, repo, scratch, name, *branch, &g->base, err)))
				goto done;
		}
		if (progress)
			fprintf(stderr, "baseline: gate '%s' on the base (run %zu)\n", d->name,
				nruns + 1);
		sl_gate_result_init(&r);
		ret = run_once(g, d, sl_worktree_path(*wt), &r, &report, err);
		if (!ret) {
			rec.gate = (char *)d->name;
			rec.run = (int64_t)nruns + 1;
			rec.verdict = (char *)sl_verdict_name(r.verdict);
			rec.exit_status = r.exit_status;
			rec.output = r.output.buf;
			rec.report = report;
			ret = sl_store_baseline_add(g->st, g->campaign_id, &rec, err);
		}
		sl_gate_result_release(&r);
		free(report);
		if (ret)
			goto done;
		sl_baseline_list_free(runs, nruns);
		if ((ret = sl_store_baseline_get(g->st, g->campaign_id, d->name, &runs, &nruns, err)))
			goto done;
	}
	s->base_failed = strcmp(runs[0].verdict, "pass") != 0;
	switch (d->kind) {
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
		break;
	case SL_GATE_COVERAGE:
		parse_coverage(d, runs[0].report, NULL, &s->base_cov);
		break;
	}
	ret = SL_OK;
done:
	sl_baseline_list_free(runs, nruns);
	return ret;
}

int sl_gating_baseline(sl_gating *g, git_repository *repo, const char *scratch,
		       const char *branch_prefix, int progress, sl_err *err)
{
	sl_worktree *wt = NULL;
	char *branch = NULL;
	int ret = SL_OK;

	for (size_t i = 0; i < g->n && !ret; i++)
		if (g->gs[i].def->kind != SL_GATE_POLICY)
			ret = baseline_of(g, &g->gs[i], repo, scratch, branch_prefix, &wt, &branch,
					  progress, err);
	if (wt && sl_worktree_remove(wt, ret ? NULL : err) && !ret)
		ret = SL_ERROR;
	if (branch)
		sl_branch_delete(repo, branch, NULL);
	free(branch);
	return ret;
}

int sl_gating_policy(sl_gating *g, const char *diff, sl_gate_outcome *o, int *passed,
		     sl_buf *feedback, sl_err *err)
{
	*passed = 1;
	for (size_t i = 0; i < g->n && *passed; i++) {
		const sl_spec_gate *d = g->gs[i].def;
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
		if (sl_policy_check(&pr, &po, diff, strlen(diff), err)) {
			sl_policy_result_release(&pr);
			return SL_ERROR;
		}
		rec = outcome_add(o, d->name);
		sl_policy_result_text(&pr, &text);
		set_rec(rec, pr.pass ? "pass" : "fail", text.buf, NULL);
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

/* Judge one run of gate s on a candidate; fills verdict, note and feedback. */
static void judge(gate_state *s, const sl_gate_result *r, const char *report,
		  const sl_changed *changed, const sl_target *t, sl_gate_run_rec *rec,
		  sl_buf *fb)
{
	const sl_spec_gate *d = s->def;
	const char *verdict = sl_verdict_name(r->verdict);
	sl_buf why = SL_BUF_INIT;

	if (r->verdict == SL_VERDICT_TIMEOUT) {
		set_rec(rec, "timeout", r->output.buf, NULL);
		sl_feedback_build(fb, d->name, "timeout", r->output.buf, changed, NULL);
		return;
	}
	switch (d->kind) {
	case SL_GATE_STATIC: {
		sl_findings cand, fresh;

		sl_findings_init(&cand);
		sl_findings_init(&fresh);
		parse_findings(d, source_text(d, r->output.buf, report), &cand);
		if (d->report && !report) {
			set_rec(rec, "fail", r->output.buf, "no report");
			sl_buf_addf(fb, "The gate '%s' wrote no report '%s'.\n", d->name, d->report);
		} else if (sl_findings_new_near(&s->base_findings, &cand, changed, d->radius, &fresh)) {
			sl_findings_text(&fresh, &why, 4096);
			set_rec(rec, "fail", r->output.buf, "new findings near the change");
			sl_buf_addf(fb, "The gate '%s' found new problems on or near the lines you "
				    "changed:\n%s", d->name, why.buf);
		} else {
			set_rec(rec, "pass", r->output.buf, NULL);
		}
		sl_findings_release(&cand);
		sl_findings_release(&fresh);
		break;
	}
	case SL_GATE_TEST:
		if (d->format) {
			sl_tests cand, reg, bad;
			int parsed;

			sl_tests_init(&cand);
			sl_tests_init(&reg);
			sl_tests_init(&bad);
			parsed = !parse_tests(d, source_text(d, r->output.buf, report), &cand);
			if (!parsed && s->base_tests_ok) {
				set_rec(rec, "fail", r->output.buf, "no test report");
				sl_feedback_build(fb, d->name, "fail", r->output.buf, changed, NULL);
				goto tests_done;
			}
			if (!parsed) {
				/* neither the base nor the candidate gave a report: no signal */
				set_rec(rec, "skip", r->output.buf, "no test report, on the base either");
				goto tests_done;
			}
			/* blamed: tests that passed on the base and do not now (also when
			   they vanished), and tests the base did not have that fail now
			   (a generated test must pass); never the base's flaky ones */
			sl_tests_regressions(&s->base_tests, &cand, &reg);
			for (size_t i = 0; i < reg.n; i++)
				if (!sl_tests_find(&s->flaky, reg.v[i].id))
					sl_tests_add(&bad, reg.v[i].id, reg.v[i].result, reg.v[i].message);
			for (size_t i = 0; i < cand.n; i++)
				if (sl_test_failed(cand.v[i].result) &&
				    !sl_tests_find(&s->base_tests, cand.v[i].id) &&
				    !sl_tests_find(&bad, cand.v[i].id))
					sl_tests_add(&bad, cand.v[i].id, cand.v[i].result,
						     cand.v[i].message);
			for (size_t i = 0; i < d->must_fix.n; i++) {
				const sl_test *m = sl_tests_find(&cand, d->must_fix.v[i]);

				if (!m || m->result != SL_TEST_PASS)
					sl_tests_add(&bad, d->must_fix.v[i], m ? m->result : SL_TEST_FAIL,
						     m ? m->message : "must-fix test did not run");
			}
			if (bad.n) {
				set_rec(rec, "fail", r->output.buf, "tests that must pass do not");
				sl_buf_addf(fb, "The gate '%s' failed: these tests do not pass:\n",
					    d->name);
				sl_tests_summary(&bad, fb, 4096);
			} else {
				sl_buf_reset(&why);
				for (size_t i = 0; i < s->flaky.n; i++)
					sl_buf_addf(&why, "%s%s", i ? ", " : "flaky on the base, excluded: ",
						    s->flaky.v[i].id);
				set_rec(rec, "pass", r->output.buf, why.len ? why.buf : NULL);
			}
tests_done:
			sl_tests_release(&cand);
			sl_tests_release(&reg);
			sl_tests_release(&bad);
			break;
		}
		/* a test gate without a format judges by exit status */
		__attribute__((fallthrough));
	case SL_GATE_BUILD:
	case SL_GATE_CUSTOM:
		if (r->verdict == SL_VERDICT_PASS) {
			set_rec(rec, "pass", r->output.buf, NULL);
		} else if (s->base_failed) {
			set_rec(rec, "skip", r->output.buf, "fails on the base too: not blamed");
		} else {
			set_rec(rec, verdict, r->output.buf, NULL);
			sl_feedback_build(fb, d->name, verdict, r->output.buf, changed, NULL);
		}
		break;
	case SL_GATE_COVERAGE: {
		sl_coverage cand;

		sl_coverage_init(&cand);
		if (parse_coverage(d, report, t ? t->path : NULL, &cand)) {
			set_rec(rec, "fail", r->output.buf, "no coverage report");
			sl_buf_addf(fb, "The gate '%s' produced no readable coverage report '%s'.\n",
				    d->name, d->report);
		} else if (t && sl_coverage_raised(&s->base_cov, &cand, t->path, t->start_line,
						   t->end_line, &why)) {
			set_rec(rec, "pass", r->output.buf, why.buf);
		} else {
			set_rec(rec, "fail", r->output.buf, why.len ? why.buf : "coverage not raised");
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

static void cache_key(const sl_gating *g, const gate_state *s, const char *tree_hex,
		      char out[65])
{
	sl_buf b = SL_BUF_INIT;

	sl_buf_addf(&b, "tree %s\nbase %s\ngate %s\nenv %s\nunsafe %d\n", tree_hex,
		    g->base_hex, s->def_digest, g->env_digest, g->unsafe);
	sl_sha256_hex(out, b.buf, b.len);
	sl_buf_release(&b);
}

int sl_gating_run(sl_gating *g, const char *workdir, const char *tree_hex, const char *diff,
		  const sl_target *t, sl_gate_outcome *o, int *passed, sl_buf *feedback,
		  sl_err *err)
{
	sl_changed changed;
	sl_err perr = SL_ERR_INIT;
	int ret = SL_OK;

	*passed = 1;
	sl_changed_init(&changed);
	sl_changed_parse(&changed, diff, strlen(diff), NULL, NULL, &perr);
	for (size_t i = 0; i < g->n && *passed && !ret; i++) {
		gate_state *s = &g->gs[i];
		const sl_spec_gate *d = s->def;
		sl_gate_run_rec *rec, hit;
		char key[65], *cached_fb = NULL;
		unsigned runs = d->kind == SL_GATE_TEST || d->kind == SL_GATE_CUSTOM ? d->reruns : 1;
		sl_buf fb = SL_BUF_INIT;

		if (d->kind == SL_GATE_POLICY)
			continue;
		rec = outcome_add(o, d->name);
		cache_key(g, s, tree_hex, key);
		if (!sl_store_cache_get(g->st, key, &hit, &cached_fb, NULL)) {
			set_rec(rec, hit.verdict, hit.output_tail, "cached verdict");
			rec->jail = hit.jail;
			hit.jail = NULL;
			rec->exit_status = hit.exit_status;
			rec->duration_ms = hit.duration_ms;
			rec->output_bytes = hit.output_bytes;
			rec->cached = 1;
			if (strcmp(hit.verdict, "pass") && strcmp(hit.verdict, "skip")) {
				*passed = 0;
				sl_buf_adds(feedback, cached_fb ? cached_fb : "");
			}
			free(hit.verdict);
			free(hit.output_tail);
			free(cached_fb);
			continue;
		}
		for (unsigned k = 0; k < runs; k++) {
			sl_gate_result r;
			char *report = NULL;

			sl_gate_result_init(&r);
			if ((ret = run_once(g, d, workdir, &r, &report, err))) {
				sl_gate_result_release(&r);
				break;
			}
			sl_buf_reset(&fb);
			judge(s, &r, report, &changed, t, rec, &fb);
			free(rec->jail);
			rec->jail = jail_text(g, r.layers);
			rec->exit_status = r.exit_status;
			rec->duration_ms += r.duration_ms;
			rec->output_bytes = (int64_t)r.output_total;
			if (runs > 1 && strcmp(rec->verdict, "pass") && strcmp(rec->verdict, "skip")) {
				char note[64];

				snprintf(note, sizeof(note), "failed on run %u of %u", k + 1, runs);
				free(rec->note);
				rec->note = sl_xstrdup(note);
			}
			sl_gate_result_release(&r);
			free(report);
			if (strcmp(rec->verdict, "pass") && strcmp(rec->verdict, "skip"))
				break;
		}
		if (!ret) {
			if (strcmp(rec->verdict, "pass") && strcmp(rec->verdict, "skip")) {
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
	sl_changed_release(&changed);
	return ret;
}
