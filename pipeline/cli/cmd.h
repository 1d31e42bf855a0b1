/*
 * cmd.h - the command-line commands (one function each, dispatched by the
 * table in main.c) and the little they share.
 *
 * A command gets argc/argv starting at its own name and returns the
 * process exit status: 0 success, 1 the campaign ran but nothing passed its
 * gates (or a rejected verdict where a command asks for one), 2 bad usage
 * or bad input, 3 internal error.  Only main() exits.
 */
#ifndef SL_CMD_H
#define SL_CMD_H

#include <stdio.h>

#include <git2.h>

#include "common/err.h"
#include "common/util.h"
#include "pipeline/spec.h"
#include "storage/store.h"

enum {
	SL_EXIT_OK = 0,
	SL_EXIT_NOTHING = 1,
	SL_EXIT_USAGE = 2,
	SL_EXIT_INTERNAL = 3,
};

typedef struct sl_command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
	const char *usage;          /* the full --help text */
} sl_command;

int cmd_scope(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_baseline(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_accept(int argc, char **argv);
int cmd_reject(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_gc(int argc, char **argv);
int cmd_targets(int argc, char **argv);
int cmd_publish(int argc, char **argv);
int cmd_sync(int argc, char **argv);
int cmd_retry(int argc, char **argv);

/* The table's entry for name (for usage and help), or NULL. */
const sl_command *sl_command_find(const char *name);

/* Print "sluice: MSG" and map the error code to an exit status. */
int sl_cmd_fail(const sl_err *err);
/*
 * Print text to f with control characters and escape sequences shown, not
 * sent (term.h): every print of what a gate, a model or a repository wrote.
 */
void sl_cmd_print(FILE *f, const char *text, int json);
/* Print a usage error and the command's usage; returns 2. */
int sl_cmd_usage(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Print the command's help on stdout; returns 0. */
int sl_cmd_help(const char *cmd);

/*
 * Open the store (must exist) and pick a campaign: by name, or the only one
 * in the store.  On success *st and *camp are filled (caller frees/releases).
 */
int sl_cmd_open_campaign(sl_store **st, sl_campaign_rec *camp, const char *store_path,
			 const char *name, sl_err *err);

/* Open the repository at path (no search upwards); "repository 'PATH': ..." on failure. */
int sl_cmd_open_repo(git_repository **out, const char *path, sl_err *err);

/* What the review commands (export, publish, sync) work on; all owned. */
typedef struct cmd_review_ctx {
	sl_spec *spec;              /* NULL when the campaign was named, not given by its file */
	sl_store *st;
	sl_campaign_rec camp;
	git_repository *repo;
} cmd_review_ctx;

/*
 * Load the campaign file spec_path (if not NULL), open the store and the
 * campaign the file names (else the one named name, else the only one), and
 * its repository (repo_path, else the one the campaign recorded).  Release x
 * with sl_cmd_review_release, also on failure.
 */
int sl_cmd_open_review(cmd_review_ctx *x, const char *store_path, const char *spec_path,
		       const char *name, const char *repo_path, sl_err *err);
void sl_cmd_review_release(cmd_review_ctx *x);

/* Options common to the commands; each command says which it takes. */
typedef struct cmd_opts {
	const char *repo, *store, *reason, *out;
	int json;
	int attempts;               /* --attempts */
	const char *record;         /* --record FILE */
	int unsafe;                 /* --unsafe */
	sl_strvec states;           /* --state, repeatable, each a comma-separated list */
	unsigned lease_ttl;         /* --lease-ttl SECONDS (1..SL_LEASE_TTL_MAX); 0 = unset */
	char **args;                /* positional arguments (borrowed from argv) */
	int nargs;
} cmd_opts;

/*
 * Parse --repo --store --json --reason --out --attempts; `allowed` lists the
 * letters a command accepts: r(epo) s(tore) j(son) R(eason) o(ut) a(ttempts)
 * w (--record) U (--unsafe) S (--state) L (--lease-ttl).  Returns 0, or the
 * exit status of a usage error (already printed).  The command checks the
 * state names; o->states is owned: sl_cmd_opts_release frees it.
 */
int sl_cmd_parse_opts(cmd_opts *o, int argc, char **argv, const char *allowed);
void sl_cmd_opts_release(cmd_opts *o);

/* Parse a positive decimal id; 0 on error. */
long long sl_cmd_parse_id(const char *s);

#endif
