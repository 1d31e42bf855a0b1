/*
 * edit.h - edits, and parsing model replies into them.
 *
 * An edit says how to change one file of the base commit.  Three kinds:
 *   SL_EDIT_SPLICE   replace bytes [start, end) of the file; old_text is what
 *                    must be there (rules and node replacement produce these);
 *   SL_EDIT_REPLACE  replace the one occurrence of old_text by new_text
 *                    (search/replace blocks; old_text "" with new_file=1
 *                    creates a file);
 *   SL_EDIT_HUNK     a unified-diff hunk: old_text is its preimage lines,
 *                    new_text its postimage lines, old_line the line its
 *                    header names (a hint; apply locates the preimage).
 *
 * sl_reply_parse() reads a model reply in the campaign's edit format and is
 * tolerant of what models wrap around edits: prose before and after, code
 * fences (```diff, ```c, ~~~), CRLF line ends, "a/" and "b/" prefixes,
 * missing "diff --git" lines, wrong hunk counts (recounted from the lines)
 * and a missing final newline.  When nothing usable is found it returns
 * SL_EINPUT with a message that tells the model precisely what was wrong.
 * The exact rules (where a hunk ends, how the path of a search/replace block
 * is found) are in reply.c's opening comment; tests/fixtures/replies holds
 * examples.
 */
#ifndef SL_EDIT_H
#define SL_EDIT_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

enum sl_edit_kind {
	SL_EDIT_SPLICE = 1,
	SL_EDIT_REPLACE,
	SL_EDIT_HUNK,
};

enum sl_edit_format {
	SL_FORMAT_UDIFF = 1,          /* "udiff" */
	SL_FORMAT_SEARCH_REPLACE,     /* "search-replace" */
	SL_FORMAT_NODE,               /* "node": the complete new text of the target unit */
};

typedef struct sl_edit {
	enum sl_edit_kind kind;
	char *path;                 /* repository-relative, as written (prefixes stripped) */
	uint32_t start, end;        /* SPLICE: byte range in the base file */
	char *old_text;             /* what must be found (never NULL; "" for a new file) */
	char *new_text;             /* what replaces it (never NULL) */
	uint32_t old_line;          /* HUNK: 1-based line from the header, 0 if none */
	int new_file;               /* the edit creates the file */
	int delete_file;            /* the edit deletes the file */
} sl_edit;

typedef struct sl_edit_list {
	sl_edit *v;
	size_t n, alloc;
} sl_edit_list;
#define SL_EDIT_LIST_INIT { .v = NULL }

/*
 * Append a copy of each string argument (NULL texts become ""); the other
 * fields are zero.  Returns the new edit, valid until the next add.
 */
sl_edit *sl_edit_list_add(sl_edit_list *list, int kind, const char *path,
			  const char *old_text, const char *new_text);
void sl_edit_list_release(sl_edit_list *list);

/*
 * Parse a reply into edits appended to *out: one SL_EDIT_HUNK per hunk that
 * changes something (udiff), one SL_EDIT_REPLACE per block whose sections
 * differ (search-replace).  All or nothing: on error nothing is appended.
 */
int sl_reply_parse(sl_edit_list *out, const char *reply, size_t len, int format, sl_err *err);

/*
 * Parse a node-replacement reply (SL_FORMAT_NODE): the new text of the unit
 * at bytes [start, end) of path, whose current text is old_text.  The text is
 * the one fenced block of the reply (or the longest, if several), with the
 * unit's first-line indentation and a final newline the unit does not have
 * removed.  Appends one SL_EDIT_SPLICE.  SL_EINPUT when the reply has no
 * fenced block (prose: a format error) or the block holds no code.
 */
int sl_reply_parse_node(sl_edit_list *out, const char *reply, size_t len, const char *path,
			uint32_t start, uint32_t end, const char *old_text, sl_err *err);

#endif
