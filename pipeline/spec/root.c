/*
 * root.c - the campaign file's top level: name, repository, base, scratch,
 * the campaign's kind and what each kind needs (fix's findings, testgen's
 * test paths and coverage), the top-level numbers, then every section in
 * the order of its checks (the other files of this folder), then the
 * defaults of what the file left out.
 */
#include <stdio.h>
#include <string.h>

#include "common/caps.h"
#include "pipeline/generate/edit.h"
#include "pipeline/generate/provider.h"
#include "pipeline/spec/spec_internal.h"

/* fix: `findings: {report: FILE, format: F}`, the targets' source instead of the gate. */
static int load_findings(struct loader *ld, const struct node *map, sl_spec *spec)
{
	static const char *const findings_keys[] = { "report", "format", NULL };
	static const int format_ix[] = { SL_REPORT_GCC, SL_REPORT_GCC_JSON, SL_REPORT_SARIF,
		SL_REPORT_TAP, SL_REPORT_JUNIT, SL_REPORT_AUTOMAKE, SL_REPORT_CTEST };
	const char *formats[8];
	const struct node *v[SL_CAP_SPEC_KEYS];
	int format = SL_REPORT_NONE;

	for (size_t i = 0; i < 7; i++)
		formats[i] = sl_report_format_name(format_ix[i]);
	formats[7] = NULL;
	if (spec_want_type(ld, map, N_MAP, "findings", NULL) ||
	    spec_map_fields(ld, map, "findings", findings_keys, v) ||
	    spec_get_str(ld, v[0], "report", "findings", 1, &spec->findings_report) ||
	    spec_get_enum(ld, v[1], "format", "findings", formats, format_ix, &format) ||
	    spec_need(ld, map, v[0], "report", "findings") ||
	    spec_need(ld, map, v[1], "format", "findings"))
		return SL_EINPUT;
	spec->findings_format = (enum sl_report_format)format;
	return 0;
}

/* fix: `fix: {target: code|test}`, where a failing test's target lies. */
static int load_fix(struct loader *ld, const struct node *map, sl_spec *spec)
{
	static const char *const fix_keys[] = { "target", NULL };
	static const char *const targets[] = { "code", "test", NULL };
	static const int target_ix[] = { SL_FIX_TARGET_CODE, SL_FIX_TARGET_TEST };
	const struct node *v[SL_CAP_SPEC_KEYS];
	int target = SL_FIX_TARGET_CODE;

	if (spec_want_type(ld, map, N_MAP, "fix", NULL) ||
	    spec_map_fields(ld, map, "fix", fix_keys, v) ||
	    spec_get_enum(ld, v[0], "target", "fix", targets, target_ix, &target))
		return SL_EINPUT;
	spec->fix_target = (enum sl_fix_target)target;
	return 0;
}

/* The top level's keys, in the order of the enum that indexes them. */
static const char *const root_keys[] = { "name", "repository", "base", "scratch", "targets",
	"rules", "provider", "instructions", "prompt", "edit_format", "attempts",
	"gates", "review", "concurrency", "jobs", "budget", "context", "context_tokens", "jail",
	"goal", "kind", "test_paths", "test_template", "coverage_below", "findings", "lease_ttl",
	"fix", "generate", "session", NULL };
enum { R_NAME, R_REPOSITORY, R_BASE, R_SCRATCH, R_TARGETS, R_RULES, R_PROVIDER,
	R_INSTRUCTIONS, R_PROMPT, R_EDIT_FORMAT, R_ATTEMPTS, R_GATES, R_REVIEW,
	R_CONCURRENCY, R_JOBS, R_BUDGET, R_CONTEXT, R_CONTEXT_TOKENS, R_JAIL, R_GOAL, R_KIND,
	R_TEST_PATHS, R_TEST_TEMPLATE, R_COVERAGE_BELOW, R_FINDINGS, R_LEASE_TTL,
	R_FIX, R_GENERATE, R_SESSION };

/* A mapping at the top level, its keys into v; name, repository, base and scratch. */
static int read_root_identity(struct loader *ld, const struct node *root,
			      const struct node **v, sl_spec *spec)
{
	char sbuf[80];

	if (root->type == N_SCALAR && root->style == YAML_PLAIN_SCALAR_STYLE && !root->len)
		return spec_fail_at(ld, 1, 1, "empty file");
	if (root->type != N_MAP)
		return spec_fail(ld, root->start, "expected a mapping at the top level");
	if (spec_map_fields(ld, root, NULL, root_keys, v) ||
	    spec_get_str(ld, v[R_NAME], "name", NULL, 1, &spec->name) ||
	    spec_get_str(ld, v[R_REPOSITORY], "repository", NULL, 1, &spec->repository) ||
	    spec_get_str(ld, v[R_BASE], "base", NULL, 1, &spec->base) ||
	    spec_get_str(ld, v[R_SCRATCH], "scratch", NULL, 1, &spec->scratch) ||
	    spec_need(ld, root, v[R_NAME], "name", NULL) ||
	    (!ld->opts->repository &&
	     spec_need(ld, root, v[R_REPOSITORY], "repository", NULL)) ||
	    spec_need(ld, root, v[R_TARGETS], "targets", NULL))
		return SL_EINPUT;
	if (strlen(spec->name) > SL_CAP_SPEC_NAME)
		return spec_fail(ld, v[R_NAME]->start, "'name' is longer than %d characters",
				 SL_CAP_SPEC_NAME);
	if (!spec_valid_name(spec->name))
		return spec_fail(ld, v[R_NAME]->start,
				 "invalid name '%s': use only A-Z, a-z, 0-9, '.', '_' and '-'",
				 spec_show(sbuf, sizeof(sbuf), spec->name, strlen(spec->name)));
	/* A revision that looks like an option could reach a git command line. */
	if (spec->base && spec->base[0] == '-')
		return spec_fail(ld, v[R_BASE]->start, "'base' must not start with '-'");
	return 0;
}

/* The sections and keys of each stage: targets to jail, in the order they are checked. */
static int read_root_stages(struct loader *ld, const struct node *const *v, sl_spec *spec)
{
	static const char *const goals[] = { "keep", "fix", NULL };
	static const int goal_ix[] = { 0, 1 };
	static const char *const formats[] = { "udiff", "search-replace", "node", NULL };
	static const int format_ix[] = { SL_FORMAT_UDIFF, SL_FORMAT_SEARCH_REPLACE, SL_FORMAT_NODE };
	static const char *const jobs[] = { "migration", "fix", "testgen", NULL };
	static const int job_ix[] = { SL_JOB_MIGRATION, SL_JOB_FIX, SL_JOB_TESTGEN };
	static const char *const contexts[] = { "compact", "file", NULL };
	static const int context_ix[] = { 0, 1 };
	int edit_format = 0, job = SL_JOB_MIGRATION;

	if (spec_want_type(ld, v[R_TARGETS], N_MAP, "targets", NULL) ||
	    spec_load_targets(ld, v[R_TARGETS], spec) ||
	    (v[R_RULES] && spec_load_rules(ld, v[R_RULES], spec)) ||
	    (v[R_PROVIDER] && spec_load_provider(ld, v[R_PROVIDER], spec)) ||
	    spec_get_str(ld, v[R_INSTRUCTIONS], "instructions", NULL, 0, &spec->instructions) ||
	    spec_get_str(ld, v[R_PROMPT], "prompt", NULL, 0, &spec->prompt) ||
	    spec_get_enum(ld, v[R_CONTEXT], "context", NULL, contexts, context_ix,
			  &spec->context_file) ||
	    spec_get_enum(ld, v[R_EDIT_FORMAT], "edit_format", NULL, formats, format_ix,
			  &edit_format))
		return SL_EINPUT;
	spec->edit_format = (enum sl_edit_format)edit_format;
	if (v[R_PROMPT])
		spec->prompt_pos = spec_text_pos(ld, v[R_PROMPT]);
	if (spec_get_uint(ld, v[R_ATTEMPTS], "attempts", NULL, 1, 100, &spec->attempts) ||
	    spec_get_enum(ld, v[R_GOAL], "goal", NULL, goals, goal_ix, &spec->goal_fix) ||
	    spec_get_enum(ld, v[R_KIND], "kind", NULL, jobs, job_ix, &job))
		return SL_EINPUT;
	spec->job = (enum sl_job_kind)job;
	if (spec_get_strings(ld, v[R_TEST_PATHS], "test_paths", NULL, &spec->test_paths) ||
	    spec_get_str(ld, v[R_TEST_TEMPLATE], "test_template", NULL, 0, &spec->test_template) ||
	    (v[R_GATES] && spec_load_gates(ld, v[R_GATES], spec)) ||
	    (v[R_REVIEW] && spec_load_review(ld, v[R_REVIEW], spec)) ||
	    (v[R_BUDGET] && spec_load_budget(ld, v[R_BUDGET], spec)) ||
	    (v[R_JAIL] && spec_load_jail(ld, v[R_JAIL], spec)) ||
	    spec_load_session(ld, v[R_GENERATE], v[R_SESSION], spec))
		return SL_EINPUT;
	return 0;
}

/* concurrency, jobs, lease_ttl and context_tokens. */
static int read_root_numbers(struct loader *ld, const struct node *const *v, sl_spec *spec)
{
	if (spec_get_uint(ld, v[R_CONCURRENCY], "concurrency", NULL, 1, 256, &spec->concurrency) ||
	    spec_get_uint(ld, v[R_JOBS], "jobs", NULL, 1, 256, &spec->jobs) ||
	    spec_get_uint(ld, v[R_LEASE_TTL], "lease_ttl", NULL, 1, SL_LEASE_TTL_MAX,
			  &spec->lease_ttl_s) ||
	    spec_get_uint(ld, v[R_CONTEXT_TOKENS], "context_tokens", NULL, 0, 1000000,
			  &spec->context_tokens))
		return SL_EINPUT;
	return 0;
}

/* coverage_below: testgen only, with a coverage gate to read it from. */
static int read_coverage_below(struct loader *ld, const struct node *v, sl_spec *spec)
{
	if (!v)
		return 0;
	if (spec->job != SL_JOB_TESTGEN)
		return spec_fail(ld, v->start, "'coverage_below' belongs to testgen campaigns");
	if (spec_get_uint(ld, v, "coverage_below", NULL, 1, 100, &spec->coverage_below))
		return SL_EINPUT;
	if (!spec_has_gate_kind(spec, SL_GATE_COVERAGE)) {
		spec->coverage_below = 0;
		return spec_fail(ld, v->start, "'coverage_below' needs a gate "
				 "of kind coverage: its report on the base says what is covered");
	}
	return 0;
}

/* The keys that belong to one kind of campaign, and what each kind needs. */
static int check_root_job(struct loader *ld, const struct node *root,
			  const struct node *const *v, sl_spec *spec)
{
	if (read_coverage_below(ld, v[R_COVERAGE_BELOW], spec))
		return SL_EINPUT;
	if (v[R_FINDINGS] && (spec->job != SL_JOB_FIX || load_findings(ld, v[R_FINDINGS], spec)))
		return spec->job != SL_JOB_FIX ?
			spec_fail(ld, v[R_FINDINGS]->start, "'findings' belongs to fix campaigns") :
			SL_EINPUT;
	if (v[R_FIX] && (spec->job != SL_JOB_FIX || load_fix(ld, v[R_FIX], spec)))
		return spec->job != SL_JOB_FIX ?
			spec_fail(ld, v[R_FIX]->start, "'fix' belongs to fix campaigns") : SL_EINPUT;
	if (spec->job == SL_JOB_TESTGEN && !spec->test_paths.n)
		return spec_need(ld, root, NULL, "test_paths", NULL);
	if (spec->job == SL_JOB_MIGRATION && v[R_TEST_PATHS])
		return spec_fail(ld, v[R_TEST_PATHS]->start,
				 "'test_paths' belongs to testgen and fix campaigns");
	if (spec->job != SL_JOB_TESTGEN && v[R_TEST_TEMPLATE])
		return spec_fail(ld, v[R_TEST_TEMPLATE]->start,
				 "'test_template' belongs to testgen campaigns");
	if (spec->judge && !spec->judge->provider &&
	    (!spec->provider || spec->provider == SL_PROVIDER_RULES))
		return spec_fail_at(ld, spec->judge->pos.line, spec->judge->pos.col, "a gate of "
				    "kind judge asks the campaign's model: it needs a 'provider' "
				    "(openai, anthropic, command or replay), the campaign's or "
				    "its own");
	if (spec->job == SL_JOB_FIX && !spec_has_gate_kind(spec, SL_GATE_FINDING_GONE))
		return spec_fail(ld, v[R_KIND]->start, "a fix campaign needs a gate of kind "
				 "finding-gone: its findings on the base are the targets");
	return 0;
}

/* The branch prefix made from the name, when 'review' set none; it must be a valid ref. */
static int default_branch_prefix(struct loader *ld, const struct node *name, sl_spec *spec)
{
	sl_buf b = SL_BUF_INIT;
	const char *why;
	char sbuf[80];

	if (spec->branch_prefix)
		return 0;
	sl_buf_addf(&b, "sluice/%s", spec->name);
	spec->branch_prefix = sl_buf_detach(&b, NULL);
	if ((why = spec_bad_branch_prefix(spec->branch_prefix)))
		return spec_fail(ld, name->start,
				 "invalid branch prefix '%s' made from 'name': %s "
				 "(set 'branch_prefix' in 'review')",
				 spec_show(sbuf, sizeof(sbuf), spec->branch_prefix,
				 strlen(spec->branch_prefix)), why);
	return 0;
}

/* What the file left out: query, edit format, branch prefix and base. */
static int root_defaults(struct loader *ld, const struct node *root,
			 const struct node *const *v, sl_spec *spec)
{
	if (!spec->query && spec_default_query(ld, v[R_TARGETS], spec))
		return SL_EINPUT;
	if (!spec->edit_format)
		spec->edit_format = spec->unit && strcmp(spec->unit, "capture") &&
			strcmp(spec->unit, "file") ? SL_FORMAT_NODE : SL_FORMAT_UDIFF;
	if (spec->provider == SL_PROVIDER_RULES && !spec->nrules)
		return spec_fail(ld, v[R_PROVIDER] ? v[R_PROVIDER]->start : root->start,
				 "the 'rules' provider needs at least one entry in 'rules'");
	if (default_branch_prefix(ld, v[R_NAME], spec))
		return SL_EINPUT;
	if (!spec->base)
		spec->base = sl_xstrdup("HEAD");
	return 0;
}

/* The whole file: read in the order of its checks, then the defaults. */
int spec_load_root(struct loader *ld, const struct node *root, sl_spec *spec)
{
	const struct node *v[SL_CAP_SPEC_KEYS];

	if (read_root_identity(ld, root, v, spec) || read_root_stages(ld, v, spec) ||
	    read_root_numbers(ld, v, spec) || check_root_job(ld, root, v, spec) ||
	    root_defaults(ld, root, v, spec))
		return SL_EINPUT;
	return 0;
}
