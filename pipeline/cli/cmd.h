/*
 * cmd.h - the command-line commands (one sl_command each, dispatched by
 * the table in main.c) and the little they share (cmd_common.c).
 *
 * A command gets its parsed options and positional arguments and returns
 * the process exit status: 0 success, 1 the campaign ran but nothing passed its
 * gates (or a rejected verdict where a command asks for one), 2 bad usage
 * or bad input, 3 internal error.  Only main() exits.
 */
#ifndef SL_CMD_H
#define SL_CMD_H

#include <stdio.h>

#include <git2.h>

#include "common/err.h"
#include "common/util.h"
#include "pipeline/cli/options.h"
#include "pipeline/spec.h"
#include "storage/store.h"

enum {
	SL_EXIT_OK = 0,
	SL_EXIT_NOTHING = 1,
	SL_EXIT_USAGE = 2,
	SL_EXIT_INTERNAL = 3,
};

/*
 * A command: its name, its help (usage lines, a description, the option
 * table, closing notes) and its function, defined beside its code in its
 * cmd_*.c file.  The dispatcher allocates a zeroed struct of opts_size,
 * parses the options into it (options.h), prints a usage error (exit 2) or
 * the help itself, and calls fn with the struct and the positional
 * arguments; it releases the struct after.
 */
typedef struct sl_command {
	const char *name;
	const char *summary;        /* one line for `sluice help` */
	const char *usage;          /* "usage: sluice NAME ...\n" (and "   or: ...\n" lines) */
	const char *about;          /* what it does, before the options; or NULL */
	const sl_option *options;   /* ended by SL_OPT_END() */
	const char *notes;          /* after the options (exit status...), or NULL */
	size_t opts_size;           /* the struct the table's offsets point into */
	int (*fn)(const struct sl_command *self, void *opts, const sl_opt_args *args);
} sl_command;

/* The commands, each in its cmd_*.c file (a small family shares one). */
extern const sl_command cmd_scope, cmd_preview, cmd_run, cmd_baseline, cmd_status,
	cmd_targets, cmd_show, cmd_accept, cmd_reject, cmd_export, cmd_serve, cmd_publish,
	cmd_sync, cmd_doctor, cmd_gc, cmd_retry, cmd_help, cmd_version, cmd_shard_plan,
	cmd_merge;

/* The table main.c dispatches from, ended by NULL; `sluice help` lists it. */
extern const sl_command *const sl_commands[];

/* The table's entry for name, or NULL. */
const sl_command *sl_command_find(const char *name);

/* The list of commands `sluice help` prints (on stderr for `sluice` alone). */
void sl_cmd_overview(FILE *f);

/* Print "sluice: MSG" and map the error code to an exit status. */
int sl_cmd_fail(const sl_err *err);
/*
 * Print text to f with control characters and escape sequences shown, not
 * sent (term.h): every print of what a gate, a model or a repository wrote.
 */
void sl_cmd_print(FILE *f, const char *text, int json);
/* Print "sluice CMD: MSG" and the command's help on stderr; returns 2. */
int sl_cmd_usage(const sl_command *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Print the command's help (generated from its table) on f. */
void sl_cmd_help(FILE *f, const sl_command *c);

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

/*
 * Print a campaign's funnel (and, as text, its proposed candidates) on to
 * (stdout; stderr when run writes its events to stdout), as status and run
 * show it; *proposed is how many passed.
 */
int sl_cmd_print_status(FILE *to, sl_store *st, const sl_campaign_rec *camp, int json,
			int64_t *proposed, sl_err *err);

/*
 * A shard's store (cmd_shard.c): which shard it holds and how far it got,
 * appended to out as a line, or as "shard" to the JSON object in out; nothing
 * for a store that is no shard.
 */
int sl_cmd_shard_status(sl_buf *out, int json, sl_store *st, const sl_campaign_rec *camp,
			sl_err *err);
/* Write camp's proposed branches as a git bundle to file (repo_path NULL: the campaign's). */
int sl_cmd_write_bundle(sl_store *st, const sl_campaign_rec *camp, const char *repo_path,
			const char *file, sl_err *err);

/*
 * The options several commands take, with one help line each: TYPE is the
 * command's options struct, which names the field repo, store or json.
 */
#define CMD_OPT_STORE(type) \
	SL_OPT_STRING_F("store", 0, "PATH", "the store file", \
			"$SLUICE_STORE, else $XDG_DATA_HOME/sluice/sluice.db", type, store, \
			SL_OPTF_FILE)
#define CMD_OPT_REPO(type, help) SL_OPT_STRING("repo", 0, "PATH", help, NULL, type, repo)
#define CMD_OPT_JSON(type, help) SL_OPT_BOOL("json", 0, help, type, json)

/* Parse a positive decimal id; 0 on error. */
long long sl_cmd_parse_id(const char *s);

#endif
