/*
 * spec.h - the campaign file: parsing (libyaml) and validation.  The
 * loader is the folder pipeline/spec/, one file per section of the file.
 *
 * A campaign is one YAML mapping (docs/sluice-campaign.5, every key).
 * sl_spec_load() reads it, checks every key and type, fills defaults, and on
 * any problem returns SL_EINPUT with a message that starts with
 * "FILE:LINE:COLUMN: " (1-based) naming the offending node: an unknown key,
 * a wrong type, a missing required field (positioned at the mapping that
 * lacks it), a bad enum value.  Positions of fields validated later by other
 * stages (the query, the language, the prompt) are kept so their errors can
 * name the line too.
 */
#ifndef SL_SPEC_H
#define SL_SPEC_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "common/util.h"
#include "pipeline/generate/edit.h"
#include "pipeline/generate/provider.h"
#include "pipeline/generate/rules.h"
#include "validators/validators.h"

/* review: grouping, templates, identity and where changes are published. */
enum sl_group_kind { SL_GROUP_TARGET = 0, SL_GROUP_FILE, SL_GROUP_DIRECTORY, SL_GROUP_BATCH };
enum sl_forge_kind { SL_FORGE_NONE = 0, SL_FORGE_GITHUB, SL_FORGE_GITLAB };

/* The longest lease a campaign file or `run --lease-ttl` may ask for: a day. */
#define SL_LEASE_TTL_MAX 86400

typedef struct sl_spec_review {
	enum sl_group_kind group;   /* default target */
	unsigned batch_files;       /* batch: at most this many files per change (default 10) */
	unsigned batch_lines;       /* batch: at most this many changed lines (default 500) */
	char *commit_message, *title, *body; /* templates ({{var}}); NULL = the defaults */
	char *author, *committer;   /* "Name <email>"; NULL = the repository's user.name/email */
	sl_strvec labels;
	int draft;
	enum sl_forge_kind forge;   /* NONE = not configured */
	char *api_url;              /* default https://api.github.com, https://gitlab.com/api/v4 */
	char *project;              /* owner/name (GitHub), id or path (GitLab) */
	char *token_env;            /* variable holding the token (required with a forge) */
	char *remote;               /* push URL; default the repository's "origin" */
	char *target_branch;        /* default the base revision's name */
	unsigned max_open;          /* at most this many open at once (default 10) */
	unsigned max_per_hour;      /* at most this many opened per hour (default 10) */
	sl_pos pos;
} sl_spec_review;

typedef struct sl_spec_rule {
	char *capture;
	char *template_text;
	char *cocci;                /* a semantic patch (resolved against the file's
				       directory), or NULL */
	sl_rule_cond *where;        /* `where:`, nwhere entries; their strings are owned */
	size_t nwhere;
	sl_pos pos;
} sl_spec_rule;

/* What a campaign is for (`kind:`); the targets and the proof differ. */
enum sl_job_kind {
	SL_JOB_MIGRATION = 0,       /* targets from the query alone (the default) */
	SL_JOB_FIX,                 /* only the query's units that enclose a finding */
	SL_JOB_TESTGEN,             /* the candidate adds a test for the unit */
};

/* fix campaigns' `fix: {target: ...}`: where a failing test's target lies. */
enum sl_fix_target {
	SL_FIX_TARGET_CODE = 0,     /* the function of the code under test it exercises */
	SL_FIX_TARGET_TEST,         /* where its failure text points (the test itself) */
};

/*
 * The model judge (a `kind: judge` entry of `gates`): after every other gate
 * passed, the campaign's provider and model (or the judge's own) read the
 * instructions, the target's unit and the candidate's diff and answer
 * accept or reject (pipeline/run/judge_model.c).  Not in spec->gates: it
 * runs no command.
 */
struct sl_spec;
typedef struct sl_spec_judge {
	char *name;                 /* the gate's name in its gate runs */
	char *instructions;         /* what the judge checks beyond the campaign's
				       instructions; NULL = nothing more */
	int include_trajectory;     /* also show the model's reply and the earlier
				       attempts' feedback */
	struct sl_spec *provider;   /* its own `provider:` (only the provider's fields
				       are set, kind not rules); NULL = the campaign's */
	sl_pos pos;
} sl_spec_judge;

/* How candidates come from the model (`generate:`). */
enum sl_generate_mode {
	SL_GENERATE_REPLY = 0,      /* "reply": one reply of edits an attempt */
	SL_GENERATE_ACT,            /* "act": a session of shell commands in the jail */
};

/* How a session's steps travel (`session: wire`): fenced text, or native tool calls. */
enum sl_session_wire { SL_WIRE_TEXT = 0, SL_WIRE_TOOLS };

/* What a session that runs out of budget does with its change (`session: on_budget`). */
enum sl_session_end { SL_SESSION_DROP = 0, SL_SESSION_GATE };

/* `generate: act` and its `session:` section (README, "Letting the model work"). */
typedef struct sl_spec_session {
	enum sl_generate_mode mode;
	unsigned steps;             /* steps per attempt; default 30 */
	int64_t max_tokens;         /* tokens in+out per attempt's session; 0 = none */
	unsigned step_timeout_s;    /* one command's wall time; default 60 */
	unsigned timeout_s;         /* the session's wall time per attempt; default 900 */
	unsigned output_bytes;      /* of a step's output shown (head + tail); default 8000 */
	enum sl_session_end on_budget; /* drop (default) or gate the change so far */
	enum sl_session_wire wire;  /* text (default) or tools (openai, anthropic) */
} sl_spec_session;

typedef struct sl_spec {
	char *path;                 /* the file as given */
	char *dir;                  /* its directory (for relative paths) */
	char *name;                 /* required; [A-Za-z0-9._-]+ */
	char *repository;           /* required, resolved against dir; NULL only when
				       the file has none and sl_spec_opts.repository
				       stood in for it */
	char *base;                 /* default "HEAD" */
	char *scratch;              /* worktree root; NULL = $TMPDIR/sluice-<uid> */

	/* targets: */
	char *language;             /* required */
	sl_pos language_pos;
	sl_strvec paths;            /* globs; empty = all files of the language */
	sl_strvec override_globs;   /* language_overrides: files matching override_globs[i] */
	sl_strvec override_langs;   /* are of language override_langs[i] */
	sl_pos *override_pos;       /* of each language, for errors */
	size_t override_pos_alloc;
	char *query;                /* required, but for kind fix (then the language's
				       functions, query_default set) */
	int query_default;          /* 1: query is sl_lang_function_query's */
	sl_pos query_pos;           /* of the query's first character in the file */
	int query_block;            /* the query was a block scalar (| or >) */
	char *capture;              /* NULL = the query's first capture */
	char *unit;                 /* "capture" (default) or "function" */
	/*
	 * What a migration's candidate must do inside its unit (`expect:` in
	 * `targets`): gone, a query that must no longer match there (NULL: the
	 * campaign's query); present, one that must match (NULL: none).
	 * expect_none: `gone: none`, no check of what is gone.
	 */
	char *expect_gone, *expect_present;
	int expect_none;
	sl_pos expect_gone_pos, expect_present_pos;

	sl_spec_rule *rules;
	size_t nrules;

	/* provider: */
	enum sl_provider_kind provider; /* default rules */
	char *base_url, *model, *api_key_env, *command;
	double temperature;         /* default -1: not sent */
	int max_tokens;             /* default 0: not sent */
	unsigned provider_timeout_s;/* default 300 */
	sl_strvec headers;          /* extra "Name: value" request headers */
	char *anthropic_version;    /* NULL = the provider's default */
	int max_retries;            /* -1 = the provider's default */
	char *replay;               /* replay: a JSON lines file or a store (resolved against dir) */
	char *response_format;      /* openai: JSON sent as "response_format" (structured output) */
	double price_in, price_out; /* per million tokens of `model`; -1 = not in the table */
	sl_pos prices_pos;

	/* execution and budgets: */
	unsigned concurrency;       /* model requests at once; default 4 */
	unsigned jobs;              /* candidates gated at once; default 0 = online cores */
	int64_t budget_tokens;      /* campaign-wide tokens in+out; 0 = none */
	double budget_cost;         /* campaign-wide cost; 0 = none */
	unsigned budget_wall_s;     /* wall time of one run; 0 = none */
	unsigned early_stop_after;  /* judge the pass rate after this many targets; 0 = off */
	double early_stop_rate;     /* stop when the pass rate is below this (0..1) */
	unsigned context_tokens;    /* budget of {{context}}; default 2000 */
	int context_file;           /* `context: file`: the default prompt shows the whole
				       file; 0 (`compact`): the unit and its context only */
	unsigned lease_ttl_s;       /* a run's leases on targets last this long unless
				       renewed; 0 = the run's default (60 s); at most
				       SL_LEASE_TTL_MAX */

	sl_jail_limits jail;         /* for every gate (0 = the jail's defaults) */
	sl_spec_session session;    /* `generate: act`: the model works in a session */

	char *instructions;         /* what the model is asked to do; may be NULL */
	char *prompt;               /* template; NULL = the default template */
	sl_pos prompt_pos;
	enum sl_edit_format edit_format; /* default node for function, class and
				       statement units, udiff otherwise */
	unsigned attempts;          /* default 3, 1..100 */

	sl_gate_conf *gates;
	size_t ngates;
	sl_spec_judge *judge;       /* the `kind: judge` entry of `gates`; NULL = none */
	int goal_fix;               /* `goal: fix`: test gates without `expect` expect fix */
	enum sl_job_kind job;       /* `kind:` */
	sl_strvec test_paths;       /* testgen: globs of the test files a candidate creates;
				       fix: the test files (protected, searched for tests) */
	char *test_template;        /* testgen: how a test looks and registers (prompt text) */
	unsigned coverage_below;    /* testgen: only units below this % line coverage; 0 = all */
	char *findings_report;      /* fix: findings from this file (against dir), not the gate */
	enum sl_report_format findings_format; /* its format: gcc, gcc-json, sarif,
				       tap, junit, automake or ctest */
	enum sl_fix_target fix_target; /* fix: `fix: {target: code|test}` */

	char *branch_prefix;        /* default "sluice/<name>" */
	sl_spec_review review;      /* how candidates become reviewable changes */
	/*
	 * What the file says that works but may not do what it means, one
	 * line each ("FILE:LINE:COL: warning: ..."), for the program to show.
	 */
	sl_strvec warnings;
} sl_spec;

/* How to load a campaign file; SL_SPEC_OPTS_INIT loads it as sl_spec_load() does. */
typedef struct sl_spec_opts {
	/*
	 * The repository given on the command line (--repo), borrowed: with it
	 * the file may leave out `repository:` (spec->repository is then NULL
	 * and the caller uses its own); without either, that is an error.
	 */
	const char *repository;
} sl_spec_opts;
#define SL_SPEC_OPTS_INIT { .repository = NULL }

/*
 * The campaign's rules as generation takes them (rules.h), pointing into
 * spec (valid while it is); caller frees the array.  NULL when it has none.
 */
sl_rule *sl_spec_rules(const sl_spec *spec);

/* Load and validate; *out is NULL on error.  opts may be NULL (the defaults). */
int sl_spec_load_ext(sl_spec **out, const char *path, const sl_spec_opts *opts, sl_err *err);
/* sl_spec_load_ext() with the defaults: `repository:` is required. */
int sl_spec_load(sl_spec **out, const char *path, sl_err *err);
void sl_spec_free(sl_spec *spec);

/*
 * A campaign file's text s quoted in a message: on one line (control
 * characters as C escapes), cut with "..." to fit buf of size bytes; returns buf.
 */
const char *sl_spec_show(char *buf, size_t size, const char *s);

/* Map an offset in spec->query to the file position (best effort). */
sl_pos sl_spec_query_pos(const sl_spec *spec, uint32_t offset);

#endif
