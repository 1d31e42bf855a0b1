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

#include "pipeline/cli/cmd.h"
#include "common/util.h"

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
	  "  --stats          files seen, skipped by the prefilter, parsed (in part: C and\n"
	  "                   C++ top-level items, or statements of functions, that may\n"
	  "                   hold a match; again: a syntax error outside a statement\n"
	  "                   made the function or the file parse whole), parse errors,\n"
	  "                   cache hits, and files where a literal of the query appears\n"
	  "                   without an AST match (e.g. inside C macro bodies)\n"
	  "  --context N|PATH:LINE [--budget TOKENS]\n"
	  "                   print what a prompt would carry about that target\n"
	  "  --threads N      parse with N threads (default: one per core)\n"
	  "  --no-prefilter   parse every file whole (the result changes only where a\n"
	  "                   syntax error's recovery crosses items or statements)\n"
	  "  --cache STORE    keep parse results by blob in STORE (a sluice store)\n"
	  "units: capture, statement, function, class, file\n" },
	{ "run", cmd_run, "run a campaign: generate, apply, gate, record, propose",
	  "usage: sluice run CAMPAIGN.yaml [--repo PATH] [--store PATH] [--json] [--record FILE]\n"
	  "                  [--unsafe] [--lease-ttl SECONDS]\n"
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
	  "  --lease-ttl SECONDS  how long this run's claims on targets last unless\n"
	  "                renewed (every third of it); after a crash, other runs take\n"
	  "                the targets over once it has passed (default: the campaign's\n"
	  "                lease_ttl, else 60)\n"
	  "Every gate runs on the base first; one that cannot judge there (a default\n"
	  "gate failing, a fix gate passing, a test report with no test, exit 126 or\n"
	  "127) stops the campaign before anything is generated.\n"
	  "Exit status: 0 if some target passed every gate, 1 if none did or a gate\n"
	  "cannot judge on the base.\n" },
	{ "baseline", cmd_baseline, "run the gates on the base: what a campaign will blame",
	  "usage: sluice baseline CAMPAIGN.yaml [--repo PATH] [--store PATH] [--json] [--unsafe]\n"
	  "\n"
	  "Run every gate on the base commit (or read the baseline a run stored) and\n"
	  "print, per gate, its expectation, its verdict and exit status on the base,\n"
	  "why it cannot judge if so, and each test of a test gate with its result\n"
	  "and what the campaign makes of it: must pass, must fix, not blamed,\n"
	  "flaky: excluded, skipped.  Nothing is generated.\n"
	  "Exit status: 0 if every gate can judge, 1 if one cannot (the reason is\n"
	  "printed as `sluice run` would print it).\n" },
	{ "status", cmd_status, "print a campaign's funnel and its proposed candidates",
	  "usage: sluice status [NAME] [--store PATH] [--json]\n"
	  "\n"
	  "The funnel, the outcomes (acceptance rate, landed unchanged, median time\n"
	  "to decision, tokens and cost per accepted change, by rule vs model,\n"
	  "provider, model and edit format) and the proposed candidates.  --json\n"
	  "adds every target (target_list) and candidate (candidate_list).\n"
	  "NAME may be left out when the store holds one campaign.\n" },
	{ "targets", cmd_targets, "list a campaign's targets with their states and reasons",
	  "usage: sluice targets [NAME] [--state S]... [--store PATH] [--json]\n"
	  "\n"
	  "One line per target: id, state, PATH:LINE, attempts, its latest candidate\n"
	  "and the reason it failed or was skipped.  --state (repeatable, or S,T)\n"
	  "keeps targets in these states: pending, proposed, failed, skipped,\n"
	  "accepted, rejected, budget.  --json: one object per line.\n" },
	{ "show", cmd_show, "show a candidate: gates and diff",
	  "usage: sluice show ID [--store PATH] [--json] [--attempts]\n"
	  "   or: sluice show [NAME] PATH:LINE [--store PATH] [--json] [--attempts]\n"
	  "\n"
	  "PATH:LINE shows the target whose lines hold LINE: its latest candidate,\n"
	  "or, when it has none, its state, attempts and reason.\n"
	  "  --attempts    also every attempt at the candidate's target: source,\n"
	  "                outcome, tokens, cost, latency, HTTP status, retries,\n"
	  "                the request and the reply\n" },
	{ "accept", cmd_accept, "record that a reviewer accepted a candidate",
	  "usage: sluice accept ID [--reason TEXT] [--store PATH]\n" },
	{ "reject", cmd_reject, "record that a reviewer rejected a candidate",
	  "usage: sluice reject ID --reason TEXT [--store PATH]\n" },
	{ "export", cmd_export, "write the proposed candidates as a patch series and a report",
	  "usage: sluice export [NAME | CAMPAIGN.yaml] --out DIR [--store PATH]\n"
	  "\n"
	  "Writes DIR/series.mbox (apply with `git am DIR/series.mbox` on the base),\n"
	  "DIR/report.md, DIR/report.html (self-contained: funnel chart, changes with\n"
	  "gates, logs, attempts, cost and coloured diffs, rejections with reasons)\n"
	  "and DIR/junit.xml (gate verdicts).  Rejected candidates are left out of\n"
	  "the series.  Given the campaign file, also DIR/changes/NNNN-KEY.patch:\n"
	  "each change as the review section groups them, one git am-able patch.\n" },
	{ "publish", cmd_publish, "push reviewable changes and open pull/merge requests, paced",
	  "usage: sluice publish CAMPAIGN.yaml [--store PATH] [--repo PATH]\n"
	  "\n"
	  "Group the proposed, not rejected candidates as the campaign's review\n"
	  "section says (group: target, file, directory or batch), commit each\n"
	  "change on the base with the templated message, push it (forced) as\n"
	  "PREFIX/review/KEY to review.remote (default: origin), and open its pull\n"
	  "request (GitHub) or merge request (GitLab) with the templated title and\n"
	  "body, labels and draft flag.  A change already open is updated (branch\n"
	  "and body) only when it moved; nothing is opened twice.  At most\n"
	  "review.max_open are open and review.max_per_hour opened per hour; the\n"
	  "rest wait for a later publish.  The token is read from the variable\n"
	  "review.token_env names and never stored or printed.\n" },
	{ "sync", cmd_sync, "read the outcomes of published requests into the store",
	  "usage: sluice sync CAMPAIGN.yaml [--store PATH] [--repo PATH]\n"
	  "\n"
	  "For each request recorded as open: merged records an accept (and whether\n"
	  "it landed unchanged at the paths it touched), closed without merge a\n"
	  "reject with the last comment as the reason; review comments are counted.\n" },
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
	{ "retry", cmd_retry, "send failed, budget-stopped, rejected or chosen targets back",
	  "usage: sluice retry [NAME] [--store PATH] [--state LIST]... [PATH:LINE]...\n"
	  "\n"
	  "Send targets back to `pending` with a fresh set of attempts: those in the\n"
	  "states of LIST (comma-separated: failed, budget, rejected, skipped, and\n"
	  "stale: judged under another definition of the campaign than the last\n"
	  "run's) and those whose lines hold PATH:LINE (any state but accepted; a\n"
	  "proposed one is marked rejected first).  Their earlier attempts stay\n"
	  "recorded and go to the model as the conversation so far; a reviewer's\n"
	  "rejection reason goes as feedback.  The next `sluice run` works on them.\n"
	  "Prints \"sent back N targets\".\n" },
	{ "help", cmd_help, "show help for sluice or a command",
	  "usage: sluice help [COMMAND]\n" },
	{ "version", cmd_version, "print the version",
	  "usage: sluice version\n" },
	{ NULL, NULL, NULL, NULL },
};

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
		"exit status: 0 success, 1 nothing passed the gates (or a gate cannot judge\n"
		"on the base), 2 bad usage or input, 3 internal error\n");
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
	/*
	 * Packs are mapped 256 KiB at a time, at most 1 MiB at once: scoping
	 * reads every source blob of a pack front to back, and the whole pack
	 * would otherwise stay mapped and resident (issue 13: memory no higher
	 * than ast-grep's; 4 MiB at once cost 4 MB on git and curl's pack and
	 * saved no time).  libcurl is loaded when HTTP is first sent
	 * (sl_curl in pipeline/http/http.c).
	 */
	git_libgit2_opts(GIT_OPT_SET_MWINDOW_SIZE, (size_t)1 << 18);
	git_libgit2_opts(GIT_OPT_SET_MWINDOW_MAPPED_LIMIT, (size_t)1 << 20);
	ret = c->fn(argc - 1, argv + 1);
	fflush(stdout);
	if (ferror(stdout)) {
		fprintf(stderr, "sluice: cannot write output\n");
		ret = SL_EXIT_INTERNAL;
	}
	git_libgit2_shutdown();
	exit(ret);
}
