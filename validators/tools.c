/*
 * tools.c - the programs a gate command runs, resolved on the jail's PATH
 * (tools.h).  Reads the command text and stats the programs found; writes
 * nothing.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "validators/jail.h"
#include "validators/tools.h"

/* Words that start no program: the shell's own, and those before the program. */
static const char *const builtins[] = {
	":", ".", "[", "alias", "break", "cd", "continue", "echo", "eval", "exit",
	"export", "false", "getopts", "hash", "kill", "local", "printf", "pwd", "read",
	"readonly", "return", "set", "shift", "source", "test", "trap", "true", "type",
	"ulimit", "umask", "unalias", "unset", "wait", NULL
};
static const char *const prefixes[] = {
	"!", "{", "if", "then", "else", "elif", "do", "while", "until", "time", "exec",
	"command", "env", "nice", "nohup", NULL
};
/* Words after which the rest of the simple command names no program. */
static const char *const ends[] = {
	"}", "fi", "done", "esac", "for", "case", "in", "function", "select", NULL
};

static int in_list(const char *const *list, const char *w)
{
	for (; *list; list++)
		if (!strcmp(*list, w))
			return 1;
	return 0;
}

/* NAME=value: an assignment before the program. */
static int is_assignment(const char *w)
{
	const char *eq = strchr(w, '=');

	if (!eq || eq == w || (!(w[0] >= 'A' && w[0] <= 'Z') && !(w[0] >= 'a' && w[0] <= 'z') &&
			       w[0] != '_'))
		return 0;
	for (const char *c = w; c < eq; c++)
		if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_", *c))
			return 0;
	return 1;
}

static void push_once(sl_strvec *words, const char *w)
{
	for (size_t i = 0; i < words->n; i++)
		if (!strcmp(words->v[i], w))
			return;
	sl_strvec_push(words, w);
}

/*
 * One word at *pp (quotes removed) into w; *expands set when the shell
 * would expand it.  Returns 0 at a separator or the end (not consumed but
 * for blanks).
 */
static int next_word(const char **pp, sl_buf *w, int *expands, int *redirect)
{
	const char *p = *pp;
	char quote = 0;

	sl_buf_reset(w);
	*expands = *redirect = 0;
	while (*p == ' ' || *p == '\t')
		p++;
	*pp = p;
	if (!*p || strchr(";|&()\n", *p) || (*p == '#'))
		return 0;
	for (; *p; p++) {
		if (quote) {
			if (*p == quote)
				quote = 0;
			else
				sl_buf_addch(w, *p);
			*expands |= quote == '"' && (*p == '$' || *p == '`');
			continue;
		}
		if (*p == '\\' && p[1]) {
			sl_buf_addch(w, *++p);
			continue;
		}
		if (*p == '\'' || *p == '"') {
			quote = *p;
			continue;
		}
		/* `2>&1` and `&>`: a redirection, not a separator */
		if ((*p == '>' || *p == '<')) {
			*redirect = 1;
			if (p[1] == '&')
				sl_buf_addch(w, *p++);
		} else if (strchr(" \t;|&()\n", *p)) {
			break;
		}
		*expands |= strchr("$`*?[~", *p) != NULL;
		sl_buf_addch(w, *p);
	}
	*pp = p;
	return 1;
}

void sl_tools_of_command(sl_strvec *words, const char *command)
{
	const char *p = command;
	sl_buf w = SL_BUF_INIT;

	while (*p) {
		int first = 1, expands, redirect, operand = 0;

		while (next_word(&p, &w, &expands, &redirect)) {
			if (!first)
				continue;
			if (operand) {          /* the file of a redirection */
				operand = 0;
				continue;
			}
			if (redirect) {
				/* `>out cmd`, `2>&1 cmd`, or `> out cmd`: an operator alone takes the next word */
				operand = w.buf[strspn(w.buf, "0123456789<>&")] == '\0' &&
					strchr("<>", w.buf[w.len - 1]);
				continue;
			}
			if (is_assignment(w.buf) || in_list(prefixes, w.buf))
				continue;
			first = 0;
			if (in_list(ends, w.buf) || in_list(builtins, w.buf) || expands || !w.len ||
			    (strchr(w.buf, '/') && w.buf[0] != '/'))
				continue;
			push_once(words, w.buf);
		}
		/* a comment runs to its line's end; anything else separates */
		if (*p == '#')
			p += strcspn(p, "\n");
		else if (*p)
			p++;
	}
	sl_buf_release(&w);
}

/* The path where the jail's PATH finds word, into path; 0 if none. */
static int resolve(const char *word, sl_buf *path, struct stat *st)
{
	const char *dirs = SL_JAIL_PATH;

	if (word[0] == '/') {
		sl_buf_reset(path);
		sl_buf_adds(path, word);
		return !stat(path->buf, st) && S_ISREG(st->st_mode);
	}
	while (*dirs) {
		size_t n = strcspn(dirs, ":");

		sl_buf_reset(path);
		sl_buf_addf(path, "%.*s/%s", (int)n, dirs, word);
		if (!stat(path->buf, st) && S_ISREG(st->st_mode) && (st->st_mode & 0111))
			return 1;
		dirs += n + (dirs[n] == ':');
	}
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void sl_tools_describe(sl_buf *out, sl_strvec *words)
{
	sl_buf path = SL_BUF_INIT;

	if (words->n)
		qsort(words->v, words->n, sizeof(*words->v), cmp_str);
	for (size_t i = 0; i < words->n; i++) {
		struct stat st;
		char *real;

		if (!resolve(words->v[i], &path, &st)) {
			sl_buf_addf(out, "tool %s -\n", words->v[i]);
			continue;
		}
		real = realpath(path.buf, NULL);
		sl_buf_addf(out, "tool %s %s %s %lld %lld.%09ld\n", words->v[i], path.buf,
			    real ? real : path.buf, (long long)st.st_size,
			    (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
		free(real);
	}
	sl_buf_release(&path);
}
