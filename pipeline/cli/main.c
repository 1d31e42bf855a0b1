/*
 * main.c - the sluice command: the table of git-style subcommands and the
 * dispatch to them.
 *
 * `sluice <command> [options]`.  Each command is an sl_command defined in
 * its cmd_*.c file with its option table (cmd.h); this file parses the
 * options into the command's struct (options.h), prints a usage error or
 * the help, sets up libgit2, calls the command and exits with what it
 * returned: the only place that exits.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <git2.h>

#include "pipeline/cli/cmd.h"
#include "common/util.h"

const sl_command *const sl_commands[] = {
	&cmd_scope, &cmd_preview, &cmd_run, &cmd_baseline, &cmd_status, &cmd_targets, &cmd_show,
	&cmd_accept, &cmd_reject, &cmd_export, &cmd_serve, &cmd_publish, &cmd_sync, &cmd_doctor,
	&cmd_gc, &cmd_retry, &cmd_shard_plan, &cmd_merge, &cmd_help, &cmd_version, NULL,
};

const sl_command *sl_command_find(const char *name)
{
	for (const sl_command *const *c = sl_commands; *c; c++)
		if (!strcmp((*c)->name, name))
			return *c;
	return NULL;
}

/*
 * libgit2 built on mbedTLS (Debian's) parses the system's CA bundle when it
 * starts, 2.5 ms and 16% of the CPU of a cached one-file re-scope, though
 * only publish and sync ever open a connection.  For the other commands
 * this definition, which the dynamic linker binds libgit2's call to before
 * mbedTLS's own, skips that parse while libgit2 starts: the chain stays
 * empty, so a connection made anyway would fail its certificate check,
 * never pass it.  Elsewhere (libgit2 on OpenSSL, or linked statically) it
 * is never called and changes nothing.
 */
static int skip_ca_bundle;

int mbedtls_x509_crt_parse_file(void *chain, const char *path);
int mbedtls_x509_crt_parse_file(void *chain, const char *path)
{
	int (*parse)(void *, const char *);
	void *p;

	if (skip_ca_bundle)
		return 0;
	if (!(p = dlsym(RTLD_NEXT, "mbedtls_x509_crt_parse_file")))
		return -1;
	memcpy(&parse, &p, sizeof(p));  /* POSIX: a function's address as a void * */
	return parse(chain, path);
}

/* Host-side libgit2: its configuration and how it reads objects and packs. */
static void setup_libgit2(const sl_command *c)
{
	skip_ca_bundle = c != &cmd_publish && c != &cmd_sync;
	git_libgit2_init();
	skip_ca_bundle = 0;
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
}

/* Parse the options of c, run it and return its exit status. */
static int dispatch(const sl_command *c, int argc, char **argv)
{
	void *opts = sl_xcalloc(1, c->opts_size ? c->opts_size : 1);
	sl_opt_args args;
	sl_err err = SL_ERR_INIT;
	int ret;

	if (sl_opts_parse(&args, c->options, opts, argc, argv, &err)) {
		ret = sl_cmd_usage(c, "%s", err.msg);
		goto done;
	}
	setup_libgit2(c);
	ret = c->fn(c, opts, &args);
	fflush(stdout);
	if (ferror(stdout)) {
		fprintf(stderr, "sluice: cannot write output\n");
		ret = SL_EXIT_INTERNAL;
	}
	git_libgit2_shutdown();
done:
	sl_opts_release(c->options, opts);
	free(opts);
	return ret;
}

int main(int argc, char **argv)
{
	const sl_command *c;

	if (argc < 2) {
		sl_cmd_overview(stderr);
		return SL_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		sl_cmd_overview(stdout);
		return SL_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version"))
		c = &cmd_version;
	else if (!(c = sl_command_find(argv[1]))) {
		fprintf(stderr, "sluice: '%s' is not a sluice command; see 'sluice help'\n", argv[1]);
		exit(SL_EXIT_USAGE);
	}
	if (sl_opts_wants_help(argc - 1, argv + 1)) {
		sl_cmd_help(stdout, c);
		exit(SL_EXIT_OK);
	}
	exit(dispatch(c, argc - 1, argv + 1));
}
