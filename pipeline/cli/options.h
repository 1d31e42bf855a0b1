/*
 * options.h - the one option parser of the command line, table-driven in
 * the manner of git's parse-options.
 *
 * Each command describes its options in a static table of sl_option beside
 * its code; an entry names the option (long name, optional short letter),
 * its argument and help line, the default the help shows, and where the
 * value goes: an offset into the command's own options struct, which the
 * dispatcher (main.c) allocates zeroed, fills with sl_opts_parse() and
 * hands to the command.  Because the tables are static, the help, the
 * usage printed with an error and `sluice help --dump-options` (which
 * tests/t/t0003-options-docs.sh compares with the man page and README) all
 * come from them without running the command.
 *
 *     struct run_args { const char *repo; int json; };
 *     static const sl_option run_options[] = {
 *             SL_OPT_STRING("repo", 0, "PATH", "use this repository", NULL,
 *                           struct run_args, repo),
 *             SL_OPT_BOOL("json", 0, "print JSON", struct run_args, json),
 *             SL_OPT_END(),
 *     };
 *
 * The forms read: --name=VALUE, --name VALUE (the next argument, whatever it
 * is), a unique prefix of a long name, -x, -xVALUE, -x VALUE, grouped short
 * flags (-ab), and `--`, after which every argument is positional; a lone
 * `-` is positional.  Options and positional arguments may be mixed (GNU
 * getopt's permutation).  --help and -h are handled before parsing by
 * the dispatcher (sl_opts_wants_help()).
 */
#ifndef SL_OPTIONS_H
#define SL_OPTIONS_H

#include <stddef.h>
#include <stdio.h>

#include "common/err.h"
#include "common/util.h"

enum sl_opt_kind {
	SL_OPT_KIND_END = 0,
	SL_OPT_KIND_BOOL,           /* int: set to 1 */
	SL_OPT_KIND_STRING,         /* const char *: borrowed from argv */
	SL_OPT_KIND_INT,            /* int, decimal */
	SL_OPT_KIND_UINT,           /* unsigned, decimal, 0..1000000000 */
	SL_OPT_KIND_LIST,           /* sl_strvec: one entry per use (owned) */
	SL_OPT_KIND_CALLBACK,       /* cb(opts, value, err) */
};

enum {
	SL_OPTF_EMPTY = 1 << 0,     /* an empty value is taken (else "needs a value") */
	SL_OPTF_COMMA = 1 << 1,     /* LIST: each comma-separated name an entry */
	SL_OPTF_FILE = 1 << 2,      /* STRING: if it exists, not a directory */
	SL_OPTF_DIR = 1 << 3,       /* STRING: if it exists, a directory */
	SL_OPTF_PARENT = 1 << 4,    /* STRING with FILE: if missing, its directory exists */
	SL_OPTF_HIDDEN = 1 << 5,    /* parsed, but not in the help or the documentation */
};

/*
 * A callback gets the command's options struct and the value (pointing into
 * argv: it may be cut in place and kept); it returns 0, or an error code
 * with the message in err (printed as a usage error).
 */
typedef int (*sl_opt_cb)(void *opts, char *value, sl_err *err);

typedef struct sl_option {
	enum sl_opt_kind kind;
	const char *long_name;
	char short_name;            /* 0 for none */
	const char *argh;           /* the value's name in the help; NULL: takes none */
	const char *help;           /* one line; the help wraps it */
	const char *defval;         /* shown as "(default: ...)", or NULL */
	size_t offset;              /* where the value goes in the options struct */
	unsigned flags;             /* SL_OPTF_* */
	sl_opt_cb cb;
} sl_option;

/*
 * offsetof(type, field), refused at compile time unless field has type t
 * (a compound literal of pointer type initialised with its address).
 */
#define SL_OPT_OFF(type, field, t) \
	(offsetof(type, field) + 0 * sizeof((t *){ &((type *)0)->field }))

#define SL_OPT_BOOL_F(l, s, h, type, field, f) \
	{ SL_OPT_KIND_BOOL, (l), (s), NULL, (h), NULL, SL_OPT_OFF(type, field, int), (f), NULL }
#define SL_OPT_BOOL(l, s, h, type, field) SL_OPT_BOOL_F(l, s, h, type, field, 0)
#define SL_OPT_STRING_F(l, s, a, h, d, type, field, f) \
	{ SL_OPT_KIND_STRING, (l), (s), (a), (h), (d), SL_OPT_OFF(type, field, const char *), \
	  (f), NULL }
#define SL_OPT_STRING(l, s, a, h, d, type, field) SL_OPT_STRING_F(l, s, a, h, d, type, field, 0)
#define SL_OPT_INT(l, s, a, h, d, type, field) \
	{ SL_OPT_KIND_INT, (l), (s), (a), (h), (d), SL_OPT_OFF(type, field, int), 0, NULL }
#define SL_OPT_UINT(l, s, a, h, d, type, field) \
	{ SL_OPT_KIND_UINT, (l), (s), (a), (h), (d), SL_OPT_OFF(type, field, unsigned), 0, NULL }
#define SL_OPT_LIST_F(l, s, a, h, type, field, f) \
	{ SL_OPT_KIND_LIST, (l), (s), (a), (h), NULL, SL_OPT_OFF(type, field, sl_strvec), (f), \
	  NULL }
#define SL_OPT_LIST(l, s, a, h, type, field) SL_OPT_LIST_F(l, s, a, h, type, field, 0)
#define SL_OPT_CALLBACK_F(l, s, a, h, d, fn, f) \
	{ SL_OPT_KIND_CALLBACK, (l), (s), (a), (h), (d), 0, (f), (fn) }
#define SL_OPT_CALLBACK(l, s, a, h, d, fn) SL_OPT_CALLBACK_F(l, s, a, h, d, fn, 0)
#define SL_OPT_END() { SL_OPT_KIND_END, NULL, 0, NULL, NULL, NULL, 0, 0, NULL }

/* The positional arguments left after parsing: borrowed from argv. */
typedef struct sl_opt_args {
	char **v;
	int n;
} sl_opt_args;

/*
 * Parse argv[1..argc-1] (argv[0] is the command's name) against table into
 * the struct opts points at (zeroed by the caller).  The positional
 * arguments are moved, in order, to the front of argv + 1 and out points
 * at them.  Returns 0, or SL_EINPUT with the message in err ("unknown
 * option '--x'", "option '--x' needs a value", ...): the caller prints it
 * with the usage.  After the options, FILE/DIR values are checked in table
 * order.  Release opts with sl_opts_release, also on failure.
 */
int sl_opts_parse(sl_opt_args *out, const sl_option *table, void *opts, int argc, char **argv,
		  sl_err *err);

/* Free what parsing allocated in opts (the LIST vectors). */
void sl_opts_release(const sl_option *table, void *opts);

/* 1 if --help or -h comes before any `--` in argv[1..argc-1]. */
int sl_opts_wants_help(int argc, char **argv);

/*
 * The option list of a help text: one entry per option not hidden, the
 * help line wrapped to 80 columns under its column, its default after it.
 */
void sl_opts_print_help(FILE *f, const sl_option *table);

/* "CMD --name ARG" (or "CMD --name"), one line per option not hidden. */
void sl_opts_dump(FILE *f, const char *cmd, const sl_option *table);

#endif
