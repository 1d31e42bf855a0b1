/*
 * options.c - the option parser (options.h): one pass over argv against a
 * command's table, the value checks, the option list of a help text, and
 * the dump the documentation check reads.
 *
 * The messages are those of the parsers it replaced (getopt_long and two
 * hand-written loops), so that scripts see the same errors: "unknown
 * option '--x'", "unknown option '-x'", "option '--x' needs a value",
 * "option '--x' wants a number, got 'y'", "--x 'y' is a directory".
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pipeline/cli/options.h"

#define HELP_WIDTH 80
#define HELP_COLUMN 24              /* where help lines start */

static void *field(void *opts, const sl_option *o)
{
	return (char *)opts + o->offset;
}

/* The entry for a long name: exact, else a unique prefix; NULL if none or ambiguous. */
static const sl_option *find_long(const sl_option *table, const char *name, size_t len)
{
	const sl_option *found = NULL;
	int matches = 0;

	if (!len)
		return NULL;
	for (const sl_option *o = table; o->kind; o++) {
		if (!o->long_name || strncmp(o->long_name, name, len))
			continue;
		if (!o->long_name[len])
			return o;
		found = o;
		matches++;
	}
	return matches == 1 ? found : NULL;
}

static const sl_option *find_short(const sl_option *table, char c)
{
	for (const sl_option *o = table; o->kind; o++)
		if (o->short_name && o->short_name == c)
			return o;
	return NULL;
}

static int parse_number(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

/* Each name of a comma-separated list, empty ones too (the command rejects them). */
static void push_names(sl_strvec *v, const char *list)
{
	for (const char *p = list;; p++) {
		size_t len = strcspn(p, ",");

		sl_strvec_push_nodup(v, sl_xstrndup(p, len));
		p += len;
		if (!*p)
			break;
	}
}

/* Store value (the option as the user wrote it: shown) into opts. */
static int set_value(const sl_option *o, const char *shown, char *value, void *opts, sl_err *err)
{
	long n;

	if (!*value && !(o->flags & SL_OPTF_EMPTY))
		return sl_err_set(err, SL_EINPUT, "option '%s' needs a value", shown);
	switch (o->kind) {
	case SL_OPT_KIND_STRING:
		*(const char **)field(opts, o) = value;
		break;
	case SL_OPT_KIND_INT:
	case SL_OPT_KIND_UINT:
		if (o->kind == SL_OPT_KIND_INT ? parse_number(value, INT_MIN, INT_MAX, &n) :
		    parse_number(value, 0, 1000000000, &n))
			return sl_err_set(err, SL_EINPUT, "option '%s' wants a number, got '%s'",
					  shown, value);
		if (o->kind == SL_OPT_KIND_INT)
			*(int *)field(opts, o) = (int)n;
		else
			*(unsigned *)field(opts, o) = (unsigned)n;
		break;
	case SL_OPT_KIND_LIST:
		if (o->flags & SL_OPTF_COMMA)
			push_names(field(opts, o), value);
		else
			sl_strvec_push(field(opts, o), value);
		break;
	case SL_OPT_KIND_CALLBACK:
		return o->cb(opts, value, err);
	default:
		BUG("option '%s' of kind %d takes no value", o->long_name, (int)o->kind);
	}
	return SL_OK;
}

/*
 * One long option at argv[*i] ("--name" or "--name=value"); the value may
 * be the next argument, and *i then moves past it.
 */
static int parse_long(const sl_option *table, void *opts, int argc, char **argv, int *i,
		      sl_err *err)
{
	char *arg = argv[*i] + 2, *eq = strchr(arg, '=');
	const sl_option *o = find_long(table, arg, eq ? (size_t)(eq - arg) : strlen(arg));
	char shown[128];

	if (!o || (!o->argh && eq))
		return sl_err_set(err, SL_EINPUT, "unknown option '%s'", argv[*i]);
	snprintf(shown, sizeof(shown), "--%s", o->long_name);
	if (!o->argh) {
		*(int *)field(opts, o) = 1;
		return SL_OK;
	}
	if (eq)
		return set_value(o, shown, eq + 1, opts, err);
	if (*i + 1 >= argc)
		return sl_err_set(err, SL_EINPUT, "option '%s' needs a value", argv[*i]);
	return set_value(o, shown, argv[++*i], opts, err);
}

/* A group of short options at argv[*i] ("-ab", "-fVALUE", "-f VALUE"). */
static int parse_short(const sl_option *table, void *opts, int argc, char **argv, int *i,
		       sl_err *err)
{
	for (char *p = argv[*i] + 1; *p; p++) {
		const sl_option *o = find_short(table, *p);
		char shown[3] = { '-', *p, '\0' };

		if (!o)
			return sl_err_set(err, SL_EINPUT, "unknown option '-%c'", *p);
		if (!o->argh) {
			*(int *)field(opts, o) = 1;
			continue;
		}
		if (p[1])
			return set_value(o, shown, p + 1, opts, err);
		if (*i + 1 >= argc)
			return sl_err_set(err, SL_EINPUT, "option '%s' needs a value", shown);
		return set_value(o, shown, argv[++*i], opts, err);
	}
	return SL_OK;
}

/* stat() said ENOTDIR: name the file that path goes through as if a directory. */
static int not_under_dir(const sl_option *o, const char *path, sl_err *err)
{
	char *dir = sl_xstrdup(path), *slash;
	struct stat st;
	int ret;

	while ((slash = strrchr(dir, '/')) && slash != dir) {
		*slash = '\0';
		if (!stat(dir, &st))
			break;
	}
	ret = sl_err_set(err, SL_EINPUT, "--%s '%s': '%s' is not a directory", o->long_name,
			 path, dir);
	free(dir);
	return ret;
}

/*
 * A path option naming something of the wrong kind is a usage error, caught
 * before any work: DIR wants a directory, FILE anything else, whose
 * directory must exist with PARENT (a store gets its own created); no path
 * may go through a file as if it were a directory.
 */
static int check_path(const sl_option *o, const char *path, sl_err *err)
{
	struct stat st;
	char *dir, *slash;
	int ret = SL_OK;

	if (!path || !(o->flags & (SL_OPTF_FILE | SL_OPTF_DIR)))
		return SL_OK;
	if (!stat(path, &st)) {
		if ((o->flags & SL_OPTF_DIR) && !S_ISDIR(st.st_mode))
			return sl_err_set(err, SL_EINPUT, "--%s '%s' is not a directory",
					  o->long_name, path);
		if ((o->flags & SL_OPTF_FILE) && S_ISDIR(st.st_mode))
			return sl_err_set(err, SL_EINPUT, "--%s '%s' is a directory", o->long_name,
					  path);
		return SL_OK;
	}
	if (errno == ENOTDIR)
		return not_under_dir(o, path, err);
	if (!(o->flags & SL_OPTF_PARENT))
		return SL_OK;
	dir = sl_xstrdup(path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		if (stat(dir, &st) || !S_ISDIR(st.st_mode))
			ret = sl_err_set(err, SL_EINPUT, "--%s '%s': '%s' is not a directory",
					 o->long_name, path, dir);
	}
	free(dir);
	return ret;
}

int sl_opts_parse(sl_opt_args *out, const sl_option *table, void *opts, int argc, char **argv,
		  sl_err *err)
{
	int i, n = 0, ret = SL_OK;

	for (i = 1; i < argc && !ret; i++) {
		char *a = argv[i];

		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (a[0] != '-' || !a[1])
			argv[1 + n++] = a;
		else if (a[1] == '-')
			ret = parse_long(table, opts, argc, argv, &i, err);
		else
			ret = parse_short(table, opts, argc, argv, &i, err);
	}
	while (!ret && i < argc)
		argv[1 + n++] = argv[i++];
	for (const sl_option *o = table; o->kind && !ret; o++)
		if (o->kind == SL_OPT_KIND_STRING)
			ret = check_path(o, *(const char **)field(opts, o), err);
	out->v = argv + 1;
	out->n = ret ? 0 : n;
	return ret;
}

void sl_opts_release(const sl_option *table, void *opts)
{
	for (const sl_option *o = table; o->kind; o++)
		if (o->kind == SL_OPT_KIND_LIST)
			sl_strvec_release(field(opts, o));
}

int sl_opts_wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return 1;
	}
	return 0;
}

/* "-x, --name ARG" as the help's left column shows it. */
static void option_label(sl_buf *b, const sl_option *o)
{
	sl_buf_adds(b, "  ");
	if (o->short_name)
		sl_buf_addf(b, "-%c%s", o->short_name, o->long_name ? ", " : "");
	if (o->long_name)
		sl_buf_addf(b, "--%s", o->long_name);
	if (o->argh)
		sl_buf_addf(b, " %s", o->argh);
	if (o->kind == SL_OPT_KIND_LIST)
		sl_buf_adds(b, "...");
}

/* Append text to line b, words wrapped at HELP_WIDTH under column col. */
static void add_wrapped(sl_buf *b, const char *text, size_t col, size_t *linelen)
{
	for (const char *p = text; *p;) {
		size_t len;

		if (*p == ' ') {
			p++;
			continue;
		}
		len = strcspn(p, " ");
		if (*linelen > col && *linelen + 1 + len > HELP_WIDTH) {
			sl_buf_addf(b, "\n%*s", (int)col, "");
			*linelen = col;
		} else if (*linelen > col) {
			sl_buf_addch(b, ' ');
			(*linelen)++;
		}
		sl_buf_add(b, p, len);
		*linelen += len;
		p += len;
	}
}

void sl_opts_print_help(FILE *f, const sl_option *table)
{
	sl_buf b = SL_BUF_INIT, text = SL_BUF_INIT;

	for (const sl_option *o = table; o->kind; o++) {
		size_t start = b.len, linelen;

		if (o->flags & SL_OPTF_HIDDEN)
			continue;
		option_label(&b, o);
		linelen = b.len - start;
		if (linelen + 2 > HELP_COLUMN) {
			sl_buf_addch(&b, '\n');
			linelen = 0;
		}
		sl_buf_addf(&b, "%*s", (int)(HELP_COLUMN - linelen), "");
		linelen = HELP_COLUMN;
		sl_buf_reset(&text);
		sl_buf_adds(&text, o->help ? o->help : "");
		if (o->defval)
			sl_buf_addf(&text, " (default: %s)", o->defval);
		add_wrapped(&b, text.buf, HELP_COLUMN, &linelen);
		sl_buf_addch(&b, '\n');
	}
	fputs(b.buf, f);
	sl_buf_release(&text);
	sl_buf_release(&b);
}

void sl_opts_dump(FILE *f, const char *cmd, const sl_option *table)
{
	for (const sl_option *o = table; o->kind; o++) {
		if ((o->flags & SL_OPTF_HIDDEN) || !o->long_name)
			continue;
		fprintf(f, "%s --%s%s%s\n", cmd, o->long_name, o->argh ? " " : "",
			o->argh ? o->argh : "");
	}
}
