/*
 * gates.c - the campaign file's 'gates' section: each entry's keys read,
 * then checked against its kind (what runs a command, what reads a report,
 * what belongs to policy gates) and against the gates before it (names,
 * preparing gates first).  A command whose pipeline would hide a failure
 * (no bash here for pipefail) is a warning in spec->warnings.  The one
 * `kind: judge` entry, the model judge, goes to spec->judge instead: it
 * runs no command and comes after every other gate.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "common/caps.h"
#include "pipeline/spec/spec_internal.h"

/* "a, b or c": the names of formats (ending with SL_REPORT_NONE) for a message. */
static void format_list(char *buf, size_t size, const int *formats)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; formats[i] && used < size; i++)
		used += (size_t)snprintf(buf + used, size - used, "%s%s",
					 !i ? "" : formats[i + 1] ? ", " : " or ",
					 sl_report_format_name(formats[i]));
}

/* A gate's `format:` word, one of the formats its kind reads, into *out. */
static int gate_format(struct loader *ld, const struct node *v, const char *word,
		       enum sl_gate_kind kind, const char *kind_name, enum sl_report_format *out)
{
	/* the formats each kind reads, in the order the message names them */
	static const int formats[][8] = {
		[SL_GATE_STATIC] = { SL_REPORT_GCC, SL_REPORT_GCC_JSON, SL_REPORT_SARIF },
		[SL_GATE_TEST] = { SL_REPORT_JUNIT, SL_REPORT_TAP, SL_REPORT_AUTOMAKE,
			SL_REPORT_CTEST },
		[SL_GATE_COVERAGE] = { SL_REPORT_LCOV, SL_REPORT_GCOV, SL_REPORT_GCOV_JSON },
		[SL_GATE_FINDING_GONE] = { SL_REPORT_GCC, SL_REPORT_GCC_JSON, SL_REPORT_SARIF,
			SL_REPORT_TAP, SL_REPORT_JUNIT, SL_REPORT_AUTOMAKE, SL_REPORT_CTEST },
		[SL_GATE_MUTANTS] = { SL_REPORT_NONE },
	};
	int f = sl_report_format_parse(word);
	char list[160];

	for (size_t j = 0; f && formats[kind][j]; j++)
		if (formats[kind][j] == f) {
			*out = (enum sl_report_format)f;
			return 0;
		}
	format_list(list, sizeof(list), formats[kind]);
	return spec_fail(ld, v->start, "'format' of a %s gate must be %s", kind_name,
			 list[0] ? list : "left out (this kind reads no report)");
}

/* A gate's keys, in the order of the enum that indexes them. */
static const char *const gates_keys[] = { "name", "command", "timeout", "kind", "format",
	"report", "radius", "fail_on", "reruns", "must_fix", "allow_paths", "forbid",
	"build_files", "max_files", "max_lines", "allow_build_files", "loopback", "expect",
	"allow_skip", "prepare", "mutant_timeout_factor", "allow_test_changes", "inputs", NULL };
enum { G_NAME, G_COMMAND, G_TIMEOUT, G_KIND, G_FORMAT, G_REPORT, G_RADIUS, G_FAIL_ON,
	G_RERUNS, G_MUST_FIX, G_ALLOW_PATHS, G_FORBID, G_BUILD_FILES, G_MAX_FILES,
	G_MAX_LINES, G_ALLOW_BUILD, G_LOOPBACK, G_EXPECT, G_ALLOW_SKIP, G_PREPARE,
	G_MUTANT_TIMEOUT_FACTOR, G_ALLOW_TEST_CHANGES, G_INPUTS };
static const char *const gate_kinds[] = { "custom", "build", "policy", "static", "test",
	"coverage", "finding-gone", "mutants", NULL };

/* One entry of 'gates' as read: its node, its values by key, its words. */
struct gate_item {
	const struct node *item;
	const struct node *v[SL_CAP_SPEC_KEYS];
	const char *format, *fail_on;
};

/* Read an entry's keys into g (defaults first); the name is required. */
static int read_gate(struct loader *ld, struct gate_item *it, sl_gate_conf *g)
{
	static const char *const expects[] = { "pass", "fix", NULL };
	static const int expect_ix[] = { SL_EXPECT_PASS, SL_EXPECT_FIX };
	static const int kind_ix[] = { SL_GATE_CUSTOM, SL_GATE_BUILD, SL_GATE_POLICY,
		SL_GATE_STATIC, SL_GATE_TEST, SL_GATE_COVERAGE, SL_GATE_FINDING_GONE,
		SL_GATE_MUTANTS };
	const struct node **v = it->v;
	int kind = g->kind, expect = g->expect;

	g->pos.line = (uint32_t)(it->item->start.line + 1);
	g->pos.col = (uint32_t)(it->item->start.column + 1);
	g->timeout_s = 600;
	g->radius = 3;
	g->reruns = 1;
	g->mutant_timeout_factor = 10;
	if (spec_map_fields(ld, it->item, "gates", gates_keys, v) ||
	    spec_get_str(ld, v[G_NAME], "name", "gates", 1, &g->name) ||
	    spec_get_enum(ld, v[G_KIND], "kind", "gates", gate_kinds, kind_ix, &kind) ||
	    spec_get_str(ld, v[G_COMMAND], "command", "gates", 1, &g->command) ||
	    spec_get_word(ld, v[G_FORMAT], "format", "gates", 1, &it->format) ||
	    spec_get_str(ld, v[G_REPORT], "report", "gates", 1, &g->report) ||
	    spec_get_word(ld, v[G_FAIL_ON], "fail_on", "gates", 1, &it->fail_on) ||
	    spec_get_strings(ld, v[G_MUST_FIX], "must_fix", "gates", &g->must_fix) ||
	    spec_get_strings(ld, v[G_ALLOW_PATHS], "allow_paths", "gates", &g->allow_paths) ||
	    spec_get_strings(ld, v[G_ALLOW_TEST_CHANGES], "allow_test_changes", "gates",
			     &g->allow_test_changes) ||
	    spec_get_strings(ld, v[G_INPUTS], "inputs", "gates", &g->inputs) ||
	    spec_get_strings(ld, v[G_FORBID], "forbid", "gates", &g->forbid) ||
	    spec_get_strings(ld, v[G_BUILD_FILES], "build_files", "gates", &g->build_files) ||
	    spec_get_bool(ld, v[G_ALLOW_BUILD], "allow_build_files", "gates",
			  &g->allow_build_files) ||
	    spec_get_bool(ld, v[G_LOOPBACK], "loopback", "gates", &g->loopback) ||
	    spec_get_enum(ld, v[G_EXPECT], "expect", "gates", expects, expect_ix, &expect) ||
	    spec_get_bool(ld, v[G_ALLOW_SKIP], "allow_skip", "gates", &g->allow_skip) ||
	    spec_get_bool(ld, v[G_PREPARE], "prepare", "gates", &g->prepare) ||
	    spec_need(ld, it->item, v[G_NAME], "name", "gates"))
		return SL_EINPUT;
	g->kind = (enum sl_gate_kind)kind;
	g->expect = (enum sl_gate_expect)expect;
	g->has_inputs = v[G_INPUTS] != NULL;
	return 0;
}

/*
 * Gate i's expect, allow_skip, prepare, command and loopback against its
 * kind (a fix campaign's test gates expect a fix); preparing gates come first.
 */
static int check_gate_running(struct loader *ld, const struct gate_item *it, sl_spec *spec,
			      size_t i)
{
	const struct node *const *v = it->v;
	sl_gate_conf *g = &spec->gates[i];

	if (!v[G_EXPECT] && spec->goal_fix && g->kind == SL_GATE_TEST)
		g->expect = SL_EXPECT_FIX;
	if (v[G_EXPECT] && g->kind != SL_GATE_BUILD && g->kind != SL_GATE_CUSTOM &&
	    g->kind != SL_GATE_TEST)
		return spec_fail(ld, v[G_EXPECT]->start,
				 "'expect' belongs to build, custom and test gates");
	if (v[G_ALLOW_SKIP] && g->kind == SL_GATE_POLICY)
		return spec_fail(ld, v[G_ALLOW_SKIP]->start,
				 "'allow_skip' belongs to gates that run a command");
	if (v[G_PREPARE] && g->kind == SL_GATE_POLICY)
		return spec_fail(ld, v[G_PREPARE]->start,
				 "'prepare' belongs to gates that run a command");
	if (v[G_INPUTS] && !g->prepare)
		return spec_fail(ld, v[G_INPUTS]->start,
				 "'inputs' belongs to preparing gates (prepare: true)");
	/* the warm base is what the leading gates leave behind */
	for (size_t j = 0; g->prepare && j < i; j++)
		if (spec->gates[j].kind != SL_GATE_POLICY && !spec->gates[j].prepare)
			return spec_fail(ld, v[G_PREPARE]->start, "'prepare' after gate "
					 "'%s', which does not prepare: preparing gates come "
					 "first", spec->gates[j].name);
	if (g->kind != SL_GATE_POLICY && spec_need(ld, it->item, v[G_COMMAND], "command", "gates"))
		return SL_EINPUT;
	if (g->kind == SL_GATE_POLICY && v[G_COMMAND])
		return spec_fail(ld, v[G_COMMAND]->start, "a policy gate runs no command");
	if (g->kind == SL_GATE_POLICY && v[G_LOOPBACK])
		return spec_fail(ld, v[G_LOOPBACK]->start,
				 "'loopback' belongs to gates that run a command");
	return 0;
}

/*
 * Without pipefail (sl_gate_pipefail) `make | tail` is tail's status: the
 * gate's command is kept, with a warning where it is in the file.
 */
static void warn_gate_pipe(struct loader *ld, const struct gate_item *it, sl_spec *spec,
			   const sl_gate_conf *g)
{
	const struct node *v = it->v[G_COMMAND];
	sl_buf w = SL_BUF_INIT;

	if (!v || !g->command || sl_gate_pipefail() || !sl_gate_command_pipes(g->command))
		return;
	sl_buf_addf(&w, "%s:%zu:%zu: warning: gate '%s': its command's status is the last "
		    "stage of its pipeline, so a failure before a '|' passes (no /bin/bash here "
		    "to run it with pipefail)", ld->path, v->start.line + 1, v->start.column + 1,
		    g->name);
	sl_strvec_push(&spec->warnings, w.buf);
	sl_buf_release(&w);
}

/* Gate i's name: valid, and unlike the names of the gates before it. */
static int check_gate_name(struct loader *ld, const struct gate_item *it, const sl_spec *spec,
			   size_t i)
{
	const sl_gate_conf *g = &spec->gates[i];
	char sbuf[80];

	if (!spec_valid_name(g->name))
		return spec_fail(ld, it->v[G_NAME]->start,
				 "invalid gate name '%s': use only A-Z, a-z, 0-9, '.', '_' and '-'",
				 spec_show(sbuf, sizeof(sbuf), g->name, strlen(g->name)));
	for (size_t j = 0; j < i; j++)
		if (!strcmp(spec->gates[j].name, g->name))
			return spec_fail(ld, it->v[G_NAME]->start, "duplicate gate name '%s'", g->name);
	if (spec->judge && !strcmp(spec->judge->name, g->name))
		return spec_fail(ld, it->v[G_NAME]->start, "duplicate gate name '%s'", g->name);
	return 0;
}

/*
 * The numeric keys; a testgen campaign's test gates rerun 5 times unless
 * told, and only a mutants gate bounds its mutants' runs.
 */
static int read_gate_numbers(struct loader *ld, const struct gate_item *it, sl_gate_conf *g,
			     const sl_spec *spec)
{
	const struct node *const *v = it->v;

	if (spec_get_uint(ld, v[G_TIMEOUT], "timeout", "gates", 1, INT_MAX, &g->timeout_s) ||
	    spec_get_uint(ld, v[G_RADIUS], "radius", "gates", 0, 10000, &g->radius) ||
	    spec_get_uint(ld, v[G_RERUNS], "reruns", "gates", 1, 100, &g->reruns))
		return SL_EINPUT;
	if (spec_get_uint(ld, v[G_MUTANT_TIMEOUT_FACTOR], "mutant_timeout_factor", "gates", 1,
			  1000, &g->mutant_timeout_factor))
		return SL_EINPUT;
	if (v[G_MUTANT_TIMEOUT_FACTOR] && g->kind != SL_GATE_MUTANTS)
		return spec_fail(ld, v[G_MUTANT_TIMEOUT_FACTOR]->start,
				 "'mutant_timeout_factor' belongs to mutants gates");
	if (!v[G_RERUNS] && spec->job == SL_JOB_TESTGEN && g->kind == SL_GATE_TEST)
		g->reruns = 5;      /* a generated test must not be flaky */
	if (spec_get_uint(ld, v[G_MAX_FILES], "max_files", "gates", 1, INT_MAX, &g->max_files) ||
	    spec_get_uint(ld, v[G_MAX_LINES], "max_lines", "gates", 1, INT_MAX, &g->max_lines))
		return SL_EINPUT;
	return 0;
}

/* format, report, fail_on and must_fix: what the gate reads and how it judges it. */
static int check_gate_report(struct loader *ld, const struct gate_item *it, sl_gate_conf *g)
{
	const struct node *const *v = it->v;

	if (it->format && gate_format(ld, v[G_FORMAT], it->format, g->kind,
				      gate_kinds[g->kind], &g->format))
		return SL_EINPUT;
	if ((g->kind == SL_GATE_STATIC || g->kind == SL_GATE_COVERAGE ||
	     g->kind == SL_GATE_FINDING_GONE) && !g->format)
		return spec_need(ld, it->item, NULL, "format", "gates");
	if (g->kind == SL_GATE_COVERAGE && !g->report)
		return spec_need(ld, it->item, NULL, "report", "gates");
	if (it->fail_on && !(g->fail_on = sl_fail_on_parse(it->fail_on)))
		return spec_fail(ld, v[G_FAIL_ON]->start, "'fail_on' must be warning or error");
	if (g->report && (g->report[0] == '/' || strstr(g->report, "..")))
		return spec_fail(ld, v[G_REPORT]->start,
				 "'report' must be a path inside the worktree, without '..'");
	if ((g->must_fix.n || v[G_RERUNS]) && g->kind != SL_GATE_TEST && g->kind != SL_GATE_CUSTOM)
		return spec_fail(ld, it->item->start, "'must_fix' and 'reruns' belong to test gates");
	/* without a report nothing would ever read the names */
	if (v[G_MUST_FIX] && (g->kind != SL_GATE_TEST || !g->format))
		return spec_fail(ld, v[G_MUST_FIX]->start, "'must_fix' needs a test gate with a "
				 "'format' (junit, tap, automake or ctest)");
	/* only tests a gate must see fixed are protected */
	if (v[G_ALLOW_TEST_CHANGES] && ((g->kind != SL_GATE_TEST &&
					 g->kind != SL_GATE_FINDING_GONE) ||
					!sl_report_format_is_tests(g->format)))
		return spec_fail(ld, v[G_ALLOW_TEST_CHANGES]->start, "'allow_test_changes' "
				 "needs a test or finding-gone gate with a test 'format' (junit, "
				 "tap, automake or ctest)");
	return 0;
}

/* The policy keys: only on policy gates, and their patterns must compile. */
static int check_gate_policy(struct loader *ld, const struct gate_item *it,
			     const sl_gate_conf *g)
{
	const struct node *const *v = it->v;
	sl_policy_opts po = SL_POLICY_OPTS_INIT;
	sl_err perr = SL_ERR_INIT;

	if (g->kind != SL_GATE_POLICY &&
	    (g->allow_paths.n || g->forbid.n || g->build_files.n || g->max_files ||
	     g->max_lines || v[G_ALLOW_BUILD]))
		return spec_fail(ld, it->item->start, "'allow_paths', 'forbid', 'build_files', "
				 "'max_files', 'max_lines' and 'allow_build_files' belong to "
				 "policy gates");
	if (g->kind != SL_GATE_POLICY)
		return 0;
	po.forbid = g->forbid.n ? (const char *const *)g->forbid.v : NULL;
	if (sl_policy_validate(&po, &perr))
		return spec_fail(ld, v[G_FORBID] ? v[G_FORBID]->start : it->item->start,
				 "%s", perr.msg);
	return 0;
}

/* 1 if the entry says `kind: judge`. */
static int is_judge(const struct node *item)
{
	for (size_t k = 0; k + 1 < item->nkid; k += 2)
		if (item->kid[k]->type == N_SCALAR && !strcmp(item->kid[k]->text, "kind") &&
		    item->kid[k + 1]->type == N_SCALAR && !strcmp(item->kid[k + 1]->text, "judge"))
			return 1;
	return 0;
}

/*
 * The judge's own `provider:`, read as the campaign's is (same keys, same
 * checks) into a spec of its own that holds only those fields.
 */
static int read_judge_provider(struct loader *ld, const struct node *map, sl_spec *spec,
			       sl_spec_judge *j)
{
	sl_spec *p = j->provider = sl_xcalloc(1, sizeof(*p));

	p->dir = sl_xstrdup(spec->dir);
	p->provider = SL_PROVIDER_RULES;
	p->temperature = -1;
	p->provider_timeout_s = 300;
	p->max_retries = -1;
	p->price_in = p->price_out = -1;
	if (spec_load_provider(ld, map, p))
		return SL_EINPUT;
	if (p->provider == SL_PROVIDER_RULES)
		return spec_fail(ld, map->start, "the judge's 'provider' must ask a model "
				 "(openai, anthropic, command or replay), not rules");
	return 0;
}

/* The model judge's entry: name, kind, instructions, include_trajectory, provider; one a campaign. */
static int read_judge(struct loader *ld, const struct node *item, sl_spec *spec)
{
	static const char *const judge_keys[] = { "name", "kind", "instructions",
		"include_trajectory", "provider", NULL };
	const struct node *v[SL_CAP_SPEC_KEYS] = { NULL };
	sl_spec_judge *j;
	char sbuf[80];

	if (spec->judge)
		return spec_fail(ld, item->start, "a second gate of kind judge: a campaign has "
				 "at most one");
	j = spec->judge = sl_xcalloc(1, sizeof(*j));
	j->pos.line = (uint32_t)(item->start.line + 1);
	j->pos.col = (uint32_t)(item->start.column + 1);
	if (spec_map_fields(ld, item, "gates (kind judge)", judge_keys, v) ||
	    spec_get_str(ld, v[0], "name", "gates", 1, &j->name) ||
	    spec_get_str(ld, v[2], "instructions", "gates", 1, &j->instructions) ||
	    spec_get_bool(ld, v[3], "include_trajectory", "gates", &j->include_trajectory) ||
	    (v[4] && read_judge_provider(ld, v[4], spec, j)) ||
	    spec_need(ld, item, v[0], "name", "gates"))
		return SL_EINPUT;
	if (!spec_valid_name(j->name))
		return spec_fail(ld, v[0]->start,
				 "invalid gate name '%s': use only A-Z, a-z, 0-9, '.', '_' and '-'",
				 spec_show(sbuf, sizeof(sbuf), j->name, strlen(j->name)));
	for (size_t i = 0; i < spec->ngates; i++)
		if (!strcmp(spec->gates[i].name, j->name))
			return spec_fail(ld, v[0]->start, "duplicate gate name '%s'", j->name);
	return 0;
}

/* 'gates': each entry read, then checked against its kind and the gates before it. */
int spec_load_gates(struct loader *ld, const struct node *seq, sl_spec *spec)
{
	if (spec_want_type(ld, seq, N_SEQ, "gates", NULL))
		return SL_EINPUT;
	spec->gates = sl_xcalloc(seq->nkid ? seq->nkid : 1, sizeof(*spec->gates));
	for (size_t i = 0; i < seq->nkid; i++) {
		struct gate_item it = { .item = seq->kid[i] };
		sl_gate_conf *g = &spec->gates[spec->ngates];

		if (it.item->type != N_MAP)
			return spec_fail(ld, it.item->start,
					 "expected a mapping for an entry of 'gates'");
		if (is_judge(it.item)) {
			if (read_judge(ld, it.item, spec))
				return SL_EINPUT;
			continue;
		}
		spec->ngates++;
		if (read_gate(ld, &it, g) || check_gate_running(ld, &it, spec, spec->ngates - 1) ||
		    check_gate_name(ld, &it, spec, spec->ngates - 1) || read_gate_numbers(ld, &it, g, spec) ||
		    check_gate_report(ld, &it, g) || check_gate_policy(ld, &it, g))
			return SL_EINPUT;
		warn_gate_pipe(ld, &it, spec, g);
	}
	return 0;
}

int spec_has_gate_kind(const sl_spec *spec, enum sl_gate_kind kind)
{
	for (size_t i = 0; i < spec->ngates; i++)
		if (spec->gates[i].kind == kind)
			return 1;
	return 0;
}
