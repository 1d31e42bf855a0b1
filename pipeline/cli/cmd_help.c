/*
 * cmd_help.c - `sluice help` (the list of commands, or one command's help,
 * generated from its table) and `sluice version`.
 *
 * `sluice help --dump-options` (hidden) prints every command's options,
 * "COMMAND --NAME ARG" a line, for tests/t/t0003-options-docs.sh, which
 * checks the man page, README and each command's usage lines against them.
 */
#include <stdio.h>
#include <git2.h>

#include "pipeline/cli/cmd.h"

#define VERSION "0.1.0"

void sl_cmd_overview(FILE *fp)
{
	fprintf(fp, "usage: sluice <command> [options]\n\n"
		"sluice runs code-change campaigns through validation gates.\n\ncommands:\n");
	for (const sl_command *const *c = sl_commands; *c; c++)
		fprintf(fp, "  %-10s %s\n", (*c)->name, (*c)->summary);
	fprintf(fp, "\n'sluice help COMMAND' or 'sluice COMMAND --help' for a command's options.\n"
		"exit status: 0 success, 1 nothing passed the gates (or a gate cannot judge\n"
		"on the base), 2 bad usage or input, 3 internal error\n");
}

struct help_opts {
	int dump;
};

static int help_main(const sl_command *self, void *opts, const sl_opt_args *args)
{
	const struct help_opts *o = opts;
	const sl_command *c;

	if (o->dump) {
		for (const sl_command *const *cc = sl_commands; *cc; cc++)
			sl_opts_dump(stdout, (*cc)->name, (*cc)->options);
		return SL_EXIT_OK;
	}
	if (!args->n) {
		sl_cmd_overview(stdout);
		return SL_EXIT_OK;
	}
	if (args->n > 1)
		return sl_cmd_usage(self, "expected at most one command");
	if (!(c = sl_command_find(args->v[0]))) {
		fprintf(stderr, "sluice: unknown command '%s'\n", args->v[0]);
		return SL_EXIT_USAGE;
	}
	sl_cmd_help(stdout, c);
	return SL_EXIT_OK;
}

static const sl_option help_options[] = {
	SL_OPT_BOOL_F("dump-options", 0, "print every command's options, one a line",
		      struct help_opts, dump, SL_OPTF_HIDDEN),
	SL_OPT_END(),
};

const sl_command cmd_help = {
	.name = "help",
	.summary = "show help for sluice or a command",
	.usage = "usage: sluice help [COMMAND]\n",
	.options = help_options,
	.opts_size = sizeof(struct help_opts),
	.fn = help_main,
};

static int version_main(const sl_command *self, void *opts, const sl_opt_args *args)
{
	if (args->n)
		return sl_cmd_usage(self, "expected no arguments");
	printf("sluice %s (libgit2 %d.%d.%d)\n", VERSION, LIBGIT2_VER_MAJOR, LIBGIT2_VER_MINOR,
	       LIBGIT2_VER_REVISION);
	return SL_EXIT_OK;
}

static const sl_option version_options[] = {
	SL_OPT_END(),
};

const sl_command cmd_version = {
	.name = "version",
	.summary = "print the version",
	.usage = "usage: sluice version\n",
	.options = version_options,
	.fn = version_main,
};
