/*
 * main.c - the sluice command: a table of git-style subcommands.
 *
 * `sluice <command> [options]`; `sluice help [command]` and
 * `sluice <command> --help` print usage.  Each command lives in a cmd_*.c
 * file and returns an exit status; this is the only place that exits.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <git2.h>
#include <curl/curl.h>

#include "cmd.h"
#include "util.h"

#define VERSION "0.1.0"

static int cmd_help(int argc, char **argv);
static int cmd_version(int argc, char **argv);

static const sl_command commands[] = {
	{ "scope", cmd_scope, "list the targets a query finds (a campaign's, or ad hoc)",
	  "usage: sluice scope CAMPAIGN.yaml [--repo PATH] [options]\n"
	  "   or: sluice scope --repo PATH --lang LANG (--query Q | --query-file F)\n"
	  "                    [--rev REV] [--unit U] [--capture C] [--path GLOB]...\n"
	  "                    [--lang-override GLOB=LANG]... [options]\n"
	  "\n"
	  "Scope the base revision and print one line per target:\n"
	  "  PATH:LINE:COL: UNIT (N sites)\n"
	  "options:\n"
	  "  --json           one JSON object per line: path, start_line, start_col,\n"
	  "                   end_line, end_col, start_byte, end_byte, unit, language,\n"
	  "                   sites, blob\n"
	  "  --stats          files seen, skipped by the prefilter, parsed, parse errors,\n"
	  "                   cache hits, and files where a literal of the query appears\n"
	  "                   without an AST match (e.g. inside C macro bodies)\n"
	  "  --context N|PATH:LINE [--budget TOKENS]\n"
	  "                   print what a prompt would carry about that target\n"
	  "  --threads N      parse with N threads (default: one per core)\n"
	  "  --no-prefilter   parse every file (the result must not change)\n"
	  "  --cache STORE    keep parse results by blob in STORE (a sluice store)\n"
	  "units: capture, statement, function, class, file\n" },
	{ "run", cmd_run, "run a campaign: generate, apply, gate, record, propose",
	  "usage: sluice run CAMPAIGN.yaml [--repo PATH] [--store PATH] [--json] [--record FILE]\n"
	  "                  [--unsafe]\n"
	  "\n"
	  "Scope, then take every pending target through rules or the model, apply,\n"
	  "and run the gates in the jail; record everything in the store.  A second\n"
	  "run resumes where the first stopped.  Prints the funnel at the end.\n"
	  "  --repo PATH   use this repository instead of the campaign's\n"
	  "  --store PATH  the store file (default $SLUICE_STORE, else\n"
	  "                $XDG_DATA_HOME/sluice/sluice.db)\n"
	  "  --json        print the funnel as JSON\n"
	  "  --unsafe      run gates even where the jail lacks user, mount, pid or\n"
	  "                network namespaces (see `sluice doctor`); recorded with\n"
	  "                every verdict\n"
	  "  --record FILE append every model reply to FILE (JSON lines) for a later\n"
	  "                `provider: {kind: replay, replay: FILE}`\n"
	  "Exit status: 0 if some target passed every gate, 1 if none did.\n" },
	{ "status", cmd_status, "print a campaign's funnel and its proposed candidates",
	  "usage: sluice status [NAME] [--store PATH] [--json]\n"
	  "\n"
	  "NAME may be left out when the store holds one campaign.\n" },
	{ "show", cmd_show, "show a candidate: gates and diff",
	  "usage: sluice show ID [--store PATH] [--json] [--attempts]\n"
	  "\n"
	  "  --attempts    also every attempt at the candidate's target: source,\n"
	  "                outcome, tokens, cost, latency, HTTP status, retries,\n"
	  "                the request and the reply\n" },
	{ "accept", cmd_accept, "record that a reviewer accepted a candidate",
	  "usage: sluice accept ID [--reason TEXT] [--store PATH]\n" },
	{ "reject", cmd_reject, "record that a reviewer rejected a candidate",
	  "usage: sluice reject ID --reason TEXT [--store PATH]\n" },
	{ "export", cmd_export, "write the proposed candidates as a patch series and a report",
	  "usage: sluice export [NAME] --out DIR [--store PATH]\n"
	  "\n"
	  "Writes DIR/series.mbox (apply with `git am DIR/series.mbox` on the base)\n"
	  "and DIR/report.md.  Rejected candidates are left out.\n" },
	{ "doctor", cmd_doctor, "show which layers of the jail work on this machine",
	  "usage: sluice doctor [--json]\n"
	  "\n"
	  "Probe each layer of the jail (namespaces, private root, overlay, seccomp,\n"
	  "Landlock, cgroups, rlimits) as the current user and print what works.\n"
	  "Exit status: 0 if user, mount, pid and network namespaces work (the\n"
	  "minimum for gates), 1 if not.\n" },
	{ "gc", cmd_gc, "remove scratch worktrees left by crashed runs",
	  "usage: sluice gc [--scratch DIR] [--repo PATH] [--store PATH]\n"
	  "\n"
	  "Remove the linked worktrees under the scratch root (default: each of\n"
	  "$TMPDIR, /dev/shm and /tmp /sluice-UID, and each stored campaign's scratch\n"
	  "root) of --repo, or\n"
	  "of every campaign's repository in the store, and leftover checkouts of\n"
	  "runs that are gone.  Worktrees of a run still in progress are kept.\n" },
	{ "help", cmd_help, "show help for sluice or a command",
	  "usage: sluice help [COMMAND]\n" },
	{ "version", cmd_version, "print the version",
	  "usage: sluice version\n" },
	{ NULL, NULL, NULL, NULL },
};

const sl_command *sl_commands(void)
{
	return commands;
}

const sl_command *sl_command_find(const char *name)
{
	for (const sl_command *c = commands; c->name; c++)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

static void overview(FILE *fp)
{
	fprintf(fp, "usage: sluice <command> [options]\n\n"
		"sluice runs code-change campaigns through validation gates.\n\ncommands:\n");
	for (const sl_command *c = commands; c->name; c++)
		fprintf(fp, "  %-8s %s\n", c->name, c->summary);
	fprintf(fp, "\n'sluice help COMMAND' or 'sluice COMMAND --help' for a command's options.\n"
		"exit status: 0 success, 1 nothing passed the gates, 2 bad usage or input,\n"
		"3 internal error\n");
}

static int cmd_help(int argc, char **argv)
{
	if (argc < 2) {
		overview(stdout);
		return SL_EXIT_OK;
	}
	if (argc > 2)
		return sl_cmd_usage("help", "expected at most one command");
	if (!sl_command_find(argv[1])) {
		fprintf(stderr, "sluice: unknown command '%s'\n", argv[1]);
		return SL_EXIT_USAGE;
	}
	return sl_cmd_help(argv[1]);
}

static int cmd_version(int argc, char **argv)
{
	if (argc > 1)
		return sl_cmd_usage("version", "expected no arguments");
	printf("sluice %s (libgit2 %d.%d.%d)\n", VERSION, LIBGIT2_VER_MAJOR, LIBGIT2_VER_MINOR,
	       LIBGIT2_VER_REVISION);
	return SL_EXIT_OK;
}

int main(int argc, char **argv)
{
	const sl_command *c;
	int ret;

	if (argc < 2) {
		overview(stderr);
		return SL_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		overview(stdout);
		return SL_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version"))
		return cmd_version(argc - 1, argv + 1);
	if (!(c = sl_command_find(argv[1]))) {
		fprintf(stderr, "sluice: '%s' is not a sluice command; see 'sluice help'\n", argv[1]);
		exit(SL_EXIT_USAGE);
	}
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			exit(sl_cmd_help(c->name));
	}
	git_libgit2_init();
	/* Host-side git never reads the user's global or system configuration. */
	git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, GIT_CONFIG_LEVEL_GLOBAL, "");
	git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, GIT_CONFIG_LEVEL_XDG, "");
	git_libgit2_opts(GIT_OPT_SET_SEARCH_PATH, GIT_CONFIG_LEVEL_SYSTEM, "");
	/*
	 * The repository's objects are trusted as git trusts them: reading a
	 * blob does not hash it again, and objects sluice writes (built from
	 * objects it just read or wrote) are not checked for their references.
	 */
	git_libgit2_opts(GIT_OPT_ENABLE_STRICT_HASH_VERIFICATION, 0);
	git_libgit2_opts(GIT_OPT_ENABLE_STRICT_OBJECT_CREATION, 0);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	ret = c->fn(argc - 1, argv + 1);
	fflush(stdout);
	if (ferror(stdout)) {
		fprintf(stderr, "sluice: cannot write output\n");
		ret = SL_EXIT_INTERNAL;
	}
	curl_global_cleanup();
	git_libgit2_shutdown();
	exit(ret);
}
