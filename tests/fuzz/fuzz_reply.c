/*
 * fuzz_reply.c - the model reply parsers (pipeline/reply.c, reply_node.c):
 * every input is read as a unified diff, as search/replace blocks and as a
 * node replacement of a fixed unit.  All or nothing: a refused reply adds
 * no edit.
 */
#include "pipeline/generate/edit.h"
#include "fuzz.h"

int sl_fuzz_reply(const uint8_t *data, size_t size);

int sl_fuzz_reply(const uint8_t *data, size_t size)
{
	static const char old_text[] = "int f(void)\n{\n\treturn old_api(1);\n}";
	static const int formats[] = { SL_FORMAT_UDIFF, SL_FORMAT_SEARCH_REPLACE };
	sl_edit_list edits = SL_EDIT_LIST_INIT;
	sl_err err = SL_ERR_INIT;

	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		sl_err_clear(&err);
		if (sl_reply_parse(&edits, (const char *)data, size, formats[i], &err))
			FUZZ_CHECK(edits.n == 0);
		for (size_t j = 0; j < edits.n; j++)
			FUZZ_CHECK(edits.v[j].path != NULL);
		sl_edit_list_release(&edits);
	}
	sl_err_clear(&err);
	if (!sl_reply_parse_node(&edits, (const char *)data, size, "src/a.c", 10,
				 10 + sizeof(old_text) - 1, old_text, &err))
		FUZZ_CHECK(edits.n == 1);
	else
		FUZZ_CHECK(edits.n == 0);
	sl_edit_list_release(&edits);
	return 0;
}
SL_FUZZ_MAIN(sl_fuzz_reply)
