/*
 * test_options.c - the command line's option parser (pipeline/cli/options.c,
 * built into this test: the library does not hold the command-line
 * program): every form of an option, positional arguments around and after
 * `--`, the value checks and every error message, the help's layout and the
 * dump the documentation check reads.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline/cli/options.c"
#include "unit.h"

struct t_opts {
	int flag, verbose, count;
	unsigned threads;
	const char *name, *reason, *file, *dir, *rec, *hidden;
	sl_strvec paths, states;
	unsigned ttl;
};

static int t_ttl(void *opts, char *value, sl_err *err)
{
	if (strcmp(value, "7") && strcmp(value, "8"))
		return sl_err_set(err, SL_EINPUT, "--ttl '%s': expected 7 or 8", value);
	((struct t_opts *)opts)->ttl = (unsigned)atoi(value);
	return SL_OK;
}

static const sl_option table[] = {
	SL_OPT_BOOL("flag", 'f', "a flag", struct t_opts, flag),
	SL_OPT_BOOL("verbose", 'v', "talk", struct t_opts, verbose),
	SL_OPT_INT("count", 'c', "N", "how many", "1", struct t_opts, count),
	SL_OPT_UINT("threads", 0, "N", "threads", "one per core", struct t_opts, threads),
	SL_OPT_STRING("name", 'n', "NAME", "a name", NULL, struct t_opts, name),
	SL_OPT_STRING_F("reason", 0, "TEXT", "may be empty", NULL, struct t_opts, reason,
			SL_OPTF_EMPTY),
	SL_OPT_STRING_F("file", 0, "FILE", "not a directory", NULL, struct t_opts, file,
			SL_OPTF_FILE),
	SL_OPT_STRING_F("dir", 0, "DIR", "a directory", NULL, struct t_opts, dir, SL_OPTF_DIR),
	SL_OPT_STRING_F("record", 0, "FILE", "its directory exists", NULL, struct t_opts, rec,
			SL_OPTF_FILE | SL_OPTF_PARENT),
	SL_OPT_LIST("path", 'p', "GLOB", "repeatable", struct t_opts, paths),
	SL_OPT_LIST_F("state", 0, "S", "comma-separated", struct t_opts, states, SL_OPTF_COMMA),
	SL_OPT_CALLBACK("ttl", 0, "SECONDS", "checked by a callback", NULL, t_ttl),
	SL_OPT_STRING_F("secret", 0, "X", "hidden", NULL, struct t_opts, hidden, SL_OPTF_HIDDEN),
	SL_OPT_END(),
};

/* Parse the NULL-ended words (the command's name first) into o; 0 or the error. */
static int parse(struct t_opts *o, sl_opt_args *args, sl_err *err, char **words)
{
	int argc = 0;

	while (words[argc])
		argc++;
	memset(o, 0, sizeof(*o));
	sl_err_clear(err);
	return sl_opts_parse(args, table, o, argc, words, err);
}

#define WORDS(...) ((char *[]){ "cmd", __VA_ARGS__, NULL })

static void test_long_forms(void)
{
	struct t_opts o;
	sl_opt_args a;
	sl_err err = SL_ERR_INIT;

	CHECK_INT(parse(&o, &a, &err, WORDS("--flag", "--name=x", "--count", "-3",
					    "--threads=4")), 0);
	CHECK_INT(o.flag, 1);
	CHECK_STR(o.name, "x");
	CHECK_INT(o.count, -3);
	CHECK_INT(o.threads, 4);
	CHECK_INT(a.n, 0);
	/* the next argument is the value, whatever it looks like */
	CHECK_INT(parse(&o, &a, &err, WORDS("--name", "--flag")), 0);
	CHECK_STR(o.name, "--flag");
	CHECK_INT(o.flag, 0);
	/* a unique prefix; an exact name wins over longer ones */
	CHECK_INT(parse(&o, &a, &err, WORDS("--verb", "--th", "2")), 0);
	CHECK_INT(o.verbose, 1);
	CHECK_INT(o.threads, 2);
	/* the last use wins */
	CHECK_INT(parse(&o, &a, &err, WORDS("--name=a", "--name", "b")), 0);
	CHECK_STR(o.name, "b");
	sl_opts_release(table, &o);
}

static void test_short_forms(void)
{
	struct t_opts o;
	sl_opt_args a;
	sl_err err = SL_ERR_INIT;

	CHECK_INT(parse(&o, &a, &err, WORDS("-fv", "-nx", "-c", "5", "-p", "a", "-pb")), 0);
	CHECK_INT(o.flag, 1);
	CHECK_INT(o.verbose, 1);
	CHECK_STR(o.name, "x");
	CHECK_INT(o.count, 5);
	CHECK_INT(o.paths.n, 2);
	CHECK_STR(o.paths.v[0], "a");
	CHECK_STR(o.paths.v[1], "b");
	sl_opts_release(table, &o);
	CHECK_INT(parse(&o, &a, &err, WORDS("-fn", "y")), 0);
	CHECK_STR(o.name, "y");
	CHECK_INT(parse(&o, &a, &err, WORDS("-fxv")), SL_EINPUT);
	CHECK_STR(err.msg, "unknown option '-x'");
	CHECK_INT(parse(&o, &a, &err, WORDS("-n")), SL_EINPUT);
	CHECK_STR(err.msg, "option '-n' needs a value");
}

static void test_positional(void)
{
	struct t_opts o;
	sl_opt_args a;
	sl_err err = SL_ERR_INIT;

	/* the words outlive the checks: the positional arguments point into them */
	char **w = WORDS("one", "--flag", "-", "two", "--", "--name", "-f");

	/* mixed with options, in order; `-` is one; after `--` everything is */
	CHECK_INT(parse(&o, &a, &err, w), 0);
	CHECK_INT(o.flag, 1);
	CHECK(!o.name);
	CHECK_INT(a.n, 5);
	CHECK_STR(a.v[0], "one");
	CHECK_STR(a.v[1], "-");
	CHECK_STR(a.v[2], "two");
	CHECK_STR(a.v[3], "--name");
	CHECK_STR(a.v[4], "-f");
	CHECK_INT(parse(&o, &a, &err, WORDS("--")), 0);
	CHECK_INT(a.n, 0);
}

static void test_lists(void)
{
	struct t_opts o;
	sl_opt_args a;
	sl_err err = SL_ERR_INIT;

	CHECK_INT(parse(&o, &a, &err, WORDS("--state", "failed,budget", "--state=,x",
					    "--path", "a,b")), 0);
	CHECK_INT(o.states.n, 4);
	CHECK_STR(o.states.v[0], "failed");
	CHECK_STR(o.states.v[1], "budget");
	CHECK_STR(o.states.v[2], "");        /* the command rejects empty names */
	CHECK_STR(o.states.v[3], "x");
	CHECK_INT(o.paths.n, 1);
	CHECK_STR(o.paths.v[0], "a,b");
	sl_opts_release(table, &o);
	CHECK_INT(o.states.n, 0);
}

static void test_callback(void)
{
	struct t_opts o;
	sl_opt_args a;
	sl_err err = SL_ERR_INIT;

	CHECK_INT(parse(&o, &a, &err, WORDS("--ttl=7")), 0);
	CHECK_INT(o.ttl, 7);
	CHECK_INT(parse(&o, &a, &err, WORDS("--ttl", "9")), SL_EINPUT);
	CHECK_STR(err.msg, "--ttl '9': expected 7 or 8");
	/* an empty value never reaches the callback */
	CHECK_INT(parse(&o, &a, &err, WORDS("--ttl=")), SL_EINPUT);
	CHECK_STR(err.msg, "option '--ttl' needs a value");
}

static void test_errors(void)
{
	static const struct { char *argv[4]; const char *msg; } cases[] = {
		{ { "cmd", "--bogus" }, "unknown option '--bogus'" },
		{ { "cmd", "--bogus=1" }, "unknown option '--bogus=1'" },
		{ { "cmd", "--=1" }, "unknown option '--=1'" },
		{ { "cmd", "--ver=1" }, "unknown option '--ver=1'" },
		{ { "cmd", "--flag=1" }, "unknown option '--flag=1'" },
		{ { "cmd", "-x" }, "unknown option '-x'" },
		{ { "cmd", "--help" }, "unknown option '--help'" },
		{ { "cmd", "--name" }, "option '--name' needs a value" },
		{ { "cmd", "--nam" }, "option '--nam' needs a value" },
		{ { "cmd", "--name=" }, "option '--name' needs a value" },
		{ { "cmd", "--name", "" }, "option '--name' needs a value" },
		{ { "cmd", "--reason" }, "option '--reason' needs a value" },
		{ { "cmd", "--count", "x" }, "option '--count' wants a number, got 'x'" },
		{ { "cmd", "--count=99999999999" },
		  "option '--count' wants a number, got '99999999999'" },
		{ { "cmd", "--threads", "-1" }, "option '--threads' wants a number, got '-1'" },
		{ { "cmd", "--threads", "1000000001" },
		  "option '--threads' wants a number, got '1000000001'" },
		{ { "cmd", "--dir", "Makefile" }, "--dir 'Makefile' is not a directory" },
		{ { "cmd", "--file", "tests" }, "--file 'tests' is a directory" },
		{ { "cmd", "--record", "Makefile/x" },
		  "--record 'Makefile/x': 'Makefile' is not a directory" },
		/* an unknown option later on is named before a bad path */
		{ { "cmd", "--dir", "Makefile", "--bogus" }, "unknown option '--bogus'" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *argv[5];
		struct t_opts o;
		sl_opt_args a;
		sl_err err = SL_ERR_INIT;
		int argc = 0;

		while (argc < 4 && cases[i].argv[argc]) {
			argv[argc] = cases[i].argv[argc];
			argc++;
		}
		argv[argc] = NULL;
		CHECK_INT(parse(&o, &a, &err, argv), SL_EINPUT);
		CHECK_STR(err.msg, cases[i].msg);
		CHECK_INT(a.n, 0);
		sl_opts_release(table, &o);
	}
}

static void test_values_taken(void)
{
	struct t_opts o;
	sl_opt_args a;
	sl_err err = SL_ERR_INIT;

	/* empty where allowed; paths of the right kind or missing */
	CHECK_INT(parse(&o, &a, &err, WORDS("--reason=", "--dir", "tests", "--file", "Makefile",
					    "--record", "tests/no-such-file", "--secret", "s")), 0);
	CHECK_STR(o.reason, "");
	CHECK_STR(o.dir, "tests");
	CHECK_STR(o.file, "Makefile");
	CHECK_STR(o.rec, "tests/no-such-file");
	CHECK_STR(o.hidden, "s");
	CHECK_INT(parse(&o, &a, &err, WORDS("--dir", "no-such-dir", "--file", "nope")), 0);
}

static void test_wants_help(void)
{
	CHECK(sl_opts_wants_help(3, WORDS("x", "--help")));
	CHECK(sl_opts_wants_help(2, WORDS("-h")));
	CHECK(!sl_opts_wants_help(3, WORDS("--", "--help")));
	CHECK(!sl_opts_wants_help(2, WORDS("--helpful")));
}

/* What f wrote, read back (caller frees). */
static char *slurp(FILE *f)
{
	long n = ftell(f);
	char *s = malloc((size_t)n + 1);

	rewind(f);
	s[fread(s, 1, (size_t)n, f)] = '\0';
	fclose(f);
	return s;
}

static void test_help_and_dump(void)
{
	static const sl_option small[] = {
		SL_OPT_STRING("store", 0, "PATH", "the store file",
			      "$SLUICE_STORE, else $XDG_DATA_HOME/sluice/sluice.db",
			      struct t_opts, name),
		SL_OPT_BOOL("flag", 'f', "a flag", struct t_opts, flag),
		SL_OPT_LIST("a-rather-long-option-name", 0, "GLOB=LANG", "short",
			    struct t_opts, paths),
		SL_OPT_STRING_F("secret", 0, "X", "hidden", NULL, struct t_opts, hidden,
				SL_OPTF_HIDDEN),
		SL_OPT_END(),
	};
	FILE *f = tmpfile();
	char *s;

	sl_opts_print_help(f, small);
	s = slurp(f);
	CHECK_STR(s,
		  "  --store PATH          the store file (default: $SLUICE_STORE, else\n"
		  "                        $XDG_DATA_HOME/sluice/sluice.db)\n"
		  "  -f, --flag            a flag\n"
		  "  --a-rather-long-option-name GLOB=LANG...\n"
		  "                        short\n");
	free(s);
	f = tmpfile();
	sl_opts_dump(f, "cmd", small);
	s = slurp(f);
	CHECK_STR(s, "cmd --store PATH\ncmd --flag\ncmd --a-rather-long-option-name GLOB=LANG\n");
	free(s);
}

int main(void)
{
	RUN(test_long_forms);
	RUN(test_short_forms);
	RUN(test_positional);
	RUN(test_lists);
	RUN(test_callback);
	RUN(test_errors);
	RUN(test_values_taken);
	RUN(test_wants_help);
	RUN(test_help_and_dump);
	return unit_done();
}
