/*
 * prompt.c - prompt templates, system messages and gate feedback.
 *
 * Pure text functions: they read their arguments and append to the caller's
 * buffer.  Two default templates: the compact one (the unit, then its
 * context: scoping/context.h) and the one that shows the whole file
 * (`context: file`).  The system messages are the contract between sluice and the
 * model; reply.c parses what they ask for (and tolerates more), so change
 * them together.
 */
#include <ctype.h>
#include <string.h>

#include "pipeline/generate/edit.h"
#include "pipeline/generate/prompt.h"
#include "common/util.h"

/* The parts the two default templates share. */
#define PART_UNIT \
	"The part to change, lines {{start_line}}-{{end_line}} of {{path}}:\n" \
	"```\n" \
	"{{unit}}\n" \
	"```\n" \
	"\n"
#define PART_INSTRUCTIONS \
	"Instructions:\n" \
	"{{instructions}}\n" \
	"\n" \
	"Reply with the edit in {{edit_format}} format, exactly as the system message " \
	"describes, against {{path}}"

const char sl_prompt_default_template[] =
	"Edit the file {{path}} ({{language}}).\n"
	"\n"
	PART_UNIT
	"Around it and what it uses, from this file and others (for reference, do not "
	"edit):\n"
	"```\n"
	"{{context}}\n"
	"```\n"
	"\n"
	PART_INSTRUCTIONS ".  Change only what the instructions ask for.\n";

const char sl_prompt_file_template[] =
	"Edit the file {{path}} ({{language}}).\n"
	"\n"
	"The file as it is now:\n"
	"```\n"
	"{{file}}\n"
	"```\n"
	"\n"
	PART_UNIT
	"What it uses, from this file and others (for reference, do not edit):\n"
	"```\n"
	"{{context}}\n"
	"```\n"
	"\n"
	PART_INSTRUCTIONS " as shown above.  Change only what the instructions ask for.\n";

static const char system_udiff[] =
	"You are a careful software engineer who edits source files.  Answer with a "
	"unified diff, in one ```diff fenced block.\n"
	"\n"
	"The diff must:\n"
	"- start with a line '--- a/PATH' and a line '+++ b/PATH', where PATH is the "
	"repository-relative path given in the request (the same path on both lines);\n"
	"- contain one or more hunks, each starting with a line "
	"'@@ -OLD_LINE,OLD_COUNT +NEW_LINE,NEW_COUNT @@';\n"
	"- in each hunk, begin every line with one character: ' ' (a space) for an "
	"unchanged line, '-' for a removed line, '+' for an added line;\n"
	"- copy unchanged and removed lines exactly as they are in the file, with the "
	"same indentation and spacing;\n"
	"- include at least 3 unchanged lines of context before and after each change, "
	"so each hunk matches exactly one place in the file.\n"
	"\n"
	"Edit only the file shown.  Do not reformat or rename code the instructions do "
	"not mention.  Do not show the whole file, only the diff.\n";

static const char system_search_replace[] =
	"You are a careful software engineer who edits source files.  Answer with "
	"SEARCH/REPLACE blocks.  Write each block like this, starting with the "
	"repository-relative path of the file alone on its line:\n"
	"\n"
	"path/to/file.c\n"
	"```\n"
	"<<<<<<< SEARCH\n"
	"the exact lines to replace, copied from the file\n"
	"=======\n"
	"the lines that replace them\n"
	">>>>>>> REPLACE\n"
	"```\n"
	"\n"
	"Rules:\n"
	"- the SEARCH section is copied exactly from the file, character for character, "
	"with the same indentation, and whole lines only;\n"
	"- it must match exactly one place in the file: include enough unchanged lines "
	"to make it unique, and no more than needed;\n"
	"- use several blocks for changes far apart, in file order, never overlapping;\n"
	"- to delete lines, leave the REPLACE section empty.\n"
	"\n"
	"Edit only the file shown.  Do not reformat or rename code the instructions do "
	"not mention.\n";

static const char system_node[] =
	"You are a careful software engineer who edits source files.  You are shown one "
	"part of a file (a function, class, statement or expression: the unit).  Answer "
	"with the complete new text of that unit, in one fenced code block, and nothing "
	"else in the block.\n"
	"\n"
	"Rules:\n"
	"- the block replaces the unit exactly: from its first character to its last, "
	"so give all of it, including the lines you do not change;\n"
	"- keep the indentation of the lines as they are in the file;\n"
	"- do not add code outside the unit, and do not elide anything with '...';\n"
	"- do not reformat or rename code the instructions do not mention.\n";

const char *sl_prompt_system(enum sl_edit_format edit_format)
{
	switch (edit_format) {
	case SL_FORMAT_NODE:
		return system_node;
	case SL_FORMAT_UDIFF:
		return system_udiff;
	case SL_FORMAT_SEARCH_REPLACE:
		return system_search_replace;
	}
	return NULL;
}

static const char *format_phrase(enum sl_edit_format edit_format)
{
	switch (edit_format) {
	case SL_FORMAT_UDIFF:
		return "unified diff";
	case SL_FORMAT_SEARCH_REPLACE:
		return "SEARCH/REPLACE block";
	case SL_FORMAT_NODE:
		return "complete new text of the part to change";
	}
	return "unified diff";
}

static int is_name(const char *name, size_t len, const char *want)
{
	return strlen(want) == len && !memcmp(name, want, len);
}

/* Append variable name[0..len) to out (out NULL: only check); 0 if unknown. */
static int expand(sl_buf *out, const char *name, size_t len, const sl_prompt_vars *v)
{
	const char *s = NULL;
	unsigned num = 0;
	int is_num = 0;

	if (is_name(name, len, "path"))
		s = v ? v->path : NULL;
	else if (is_name(name, len, "language"))
		s = v ? v->language : NULL;
	else if (is_name(name, len, "unit"))
		s = v ? v->unit : NULL;
	else if (is_name(name, len, "file"))
		s = v ? v->file : NULL;
	else if (is_name(name, len, "instructions"))
		s = v ? v->instructions : NULL;
	else if (is_name(name, len, "context"))
		s = v ? v->context : NULL;
	else if (is_name(name, len, "feedback"))
		s = v ? v->feedback : NULL;
	else if (is_name(name, len, "finding"))
		s = v ? v->finding : NULL;
	else if (is_name(name, len, "edit_format"))
		s = format_phrase(v ? v->edit_format : 0);
	else if (is_name(name, len, "start_line")) {
		is_num = 1;
		num = v ? v->start_line : 0;
	} else if (is_name(name, len, "end_line")) {
		is_num = 1;
		num = v ? v->end_line : 0;
	} else {
		return 0;
	}
	if (!out)
		return 1;
	if (is_num)
		sl_buf_addf(out, "%u", num);
	else if (s)
		sl_buf_adds(out, s);
	return 1;
}

static int render(sl_buf *out, const char *tmpl, const sl_prompt_vars *vars, sl_err *err)
{
	for (const char *p = tmpl; *p; p++) {
		const char *name, *close;
		size_t len;

		if (p[0] != '{' || p[1] != '{') {
			if (out)
				sl_buf_addch(out, *p);
			continue;
		}
		if (!(close = strstr(p + 2, "}}")))
			return sl_err_set(err, SL_EINPUT,
					  "unterminated '{{' at offset %zu of the prompt template",
					  (size_t)(p - tmpl));
		name = p + 2;
		len = (size_t)(close - name);
		while (len && isspace((unsigned char)*name)) {
			name++;
			len--;
		}
		while (len && isspace((unsigned char)name[len - 1]))
			len--;
		if (!expand(out, name, len, vars))
			return sl_err_set(err, SL_EINPUT, "unknown prompt variable '{{%.*s}}'",
					  (int)(len > 100 ? 100 : len), name);
		p = close + 1;
	}
	return SL_OK;
}

int sl_prompt_render(sl_buf *out, const char *tmpl, const sl_prompt_vars *vars, sl_err *err)
{
	size_t len0 = out->len;
	int ret = render(out, tmpl, vars, err);

	if (ret)
		sl_buf_setlen(out, len0);
	return ret;
}

int sl_prompt_check(const char *tmpl, sl_err *err)
{
	return render(NULL, tmpl, NULL, err);
}
