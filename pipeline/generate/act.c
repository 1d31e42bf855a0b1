/*
 * act.c - a session's wire form in plain text (act.h): the system message,
 * one fenced command a reply or the submit word, and the observation shown
 * back (the step's output head and tail, kept by the session's jail).
 */
#include <stdlib.h>
#include <string.h>

#include "pipeline/generate/act.h"
#include "common/term.h"
#include "common/util.h"

static const char *const kind_names[] = {
	[SL_ACT_COMMAND] = "command", [SL_ACT_SUBMIT] = "submit", [SL_ACT_FORMAT] = "format",
	[SL_ACT_BUDGET] = "budget",
};

const char *sl_act_kind_name(enum sl_act_kind k)
{
	return (unsigned)k < sizeof(kind_names) / sizeof(kind_names[0]) ? kind_names[k] : NULL;
}

enum sl_act_kind sl_act_kind_parse(const char *name)
{
	for (size_t i = 1; name && i < sizeof(kind_names) / sizeof(kind_names[0]); i++)
		if (!strcmp(kind_names[i], name))
			return (enum sl_act_kind)i;
	return 0;
}

const char *sl_act_system(int tools)
{
	if (tools)
		return "You are a careful software engineer working in a shell, in a checkout of "
		       "the repository (your working directory; the project is already built "
		       "there). Use the bash tool, one command a call: each runs in a fresh "
		       "process (no shell state carries over; files you write do), without "
		       "network, and you see its exit status and output (cut when long). Read "
		       "the code (cat, grep, sed -n), edit it (sed -i, a heredoc), build and run "
		       "the tests. When the change is done, call the tool with the command "
		       "submit. Your change is then checked; if a check fails you are told why "
		       "and may go on.";
	return "You are a careful software engineer working in a shell, in a checkout of the "
	       "repository (your working directory; the project is already built there). "
	       "Each reply holds exactly one shell command in one fenced block:\n"
	       "```sh\ncommand\n```\n"
	       "It runs in a fresh process (no shell state carries over; files you write do), "
	       "without network, and you see its exit status and output (cut when long). "
	       "Read the code (cat, grep, sed -n), edit it (sed -i, a heredoc), build and run "
	       "the tests. When the change is done, reply with a block holding only:\n"
	       "```sh\nsubmit\n```\n"
	       "Your change is then checked; if a check fails you are told why and may go on.";
}

static int shell_info(const char *p, size_t n)
{
	static const char *const ok[] = { "", "sh", "bash", "shell", "console" };

	while (n && (p[n - 1] == ' ' || p[n - 1] == '\t' || p[n - 1] == '\r'))
		n--;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (strlen(ok[i]) == n && !strncmp(ok[i], p, n))
			return 1;
	return 0;
}

/* The next fence line at or after *pos: its start; NULL when none. */
static const char *next_fence(const char *s, const char **info, size_t *ninfo)
{
	for (const char *line = s; *line; ) {
		const char *eol = strchr(line, '\n');
		size_t len = eol ? (size_t)(eol - line) : strlen(line);
		const char *p = line;

		while (p < line + len && (*p == ' ' || *p == '\t'))
			p++;
		if (p + 3 <= line + len && !strncmp(p, "```", 3)) {
			*info = p + 3;
			*ninfo = len - (size_t)(p + 3 - line);
			return line;
		}
		if (!eol)
			break;
		line = eol + 1;
	}
	return NULL;
}

enum sl_act_kind sl_act_parse(char **command_out, const char *reply, sl_err *err)
{
	const char *open, *close, *info, *body, *end;
	size_t ninfo, found = 0;
	sl_buf cmd = SL_BUF_INIT;
	const char *s = reply;

	*command_out = NULL;
	while ((open = next_fence(s, &info, &ninfo))) {
		const char *eol = strchr(open, '\n');
		int sh = shell_info(info, ninfo);

		if (!eol) {
			sl_err_set(err, SL_EINPUT, "the fenced block is not closed");
			goto fail;
		}
		body = eol + 1;
		if (!(close = next_fence(body, &info, &ninfo))) {
			sl_err_set(err, SL_EINPUT, "the fenced block is not closed with ```");
			goto fail;
		}
		end = close;
		if (sh && found++ == 0)
			sl_buf_add(&cmd, body, (size_t)(end - body));
		eol = strchr(close, '\n');
		s = eol ? eol + 1 : close + strlen(close);
	}
	if (found != 1) {
		sl_err_set(err, SL_EINPUT, found ? "send one command a reply: this reply has %zu "
			   "```sh blocks" : "no ```sh block: send one shell command in a fenced "
			   "block, or a block holding only submit", found);
		goto fail;
	}
	sl_buf_rtrim(&cmd);
	{
		const char *p = cmd.buf;

		while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
			p++;
		if (!*p) {
			sl_err_set(err, SL_EINPUT, "the ```sh block is empty");
			goto fail;
		}
		if (!strcmp(p, "submit")) {
			sl_buf_release(&cmd);
			*command_out = sl_xstrdup("submit");
			return SL_ACT_SUBMIT;
		}
	}
	*command_out = sl_buf_detach(&cmd, NULL);
	return SL_ACT_COMMAND;
fail:
	sl_buf_release(&cmd);
	return SL_ACT_FORMAT;
}

void sl_act_observe(sl_buf *out, int64_t *total_out, const char *raw, size_t len,
		    int status, int timed_out, unsigned timeout_s, size_t head, size_t tail)
{
	const char *nl = memchr(raw, '\n', len);
	long long total = nl ? strtoll(raw, NULL, 10) : 0;
	const char *body = nl ? nl + 1 : raw;
	size_t blen = len - (size_t)(body - raw);

	if (total < 0)
		total = 0;
	*total_out = total;
	if (timed_out || status == 124 || status == 137)
		sl_buf_addf(out, "exit status %d (the step's time ran out: %u s; the command was "
			    "killed)\n", status, timeout_s);
	else
		sl_buf_addf(out, "exit status %d\n", status);
	if (!blen) {
		sl_buf_adds(out, "(no output)\n");
		return;
	}
	if ((size_t)total <= head + tail || blen <= head) {
		sl_term_safe(out, body, blen, 0);
	} else {
		sl_term_safe(out, body, head, 0);
		sl_buf_addf(out, "\n[... %lld bytes cut: the output was %lld bytes, here are "
			    "the first %zu and the last %zu ...]\n",
			    total - (long long)(head + tail), total, head, tail);
		sl_term_safe(out, body + head, blen - head, 0);
	}
	if (out->len && out->buf[out->len - 1] != '\n')
		sl_buf_addch(out, '\n');
}
