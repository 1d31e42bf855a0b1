/*
 * test_prompt.c - prompt templates, system messages and gate feedback
 * (pipeline/prompt.h).
 */
#include <string.h>

#include "pipeline/generate/edit.h"
#include "pipeline/generate/prompt.h"
#include "common/util.h"
#include "unit.h"

static const sl_prompt_vars vars = {
	.path = "src/copy.c", .language = "c", .unit = "strcpy(a, b);",
	.file = "int main(void)\n{\n\tstrcpy(a, b);\n}\n", .instructions = "Use strlcpy.",
	.start_line = 3, .end_line = 4, .edit_format = SL_FORMAT_UDIFF,
};

static void test_render_all(void)
{
	sl_buf out = SL_BUF_INIT;
	sl_err err = SL_ERR_INIT;

	CHECK_INT(sl_prompt_render(&out, "{{path}}|{{ language }}|{{unit}}|{{start_line}}-"
				   "{{end_line}}|{{instructions}}|{{edit_format}}|{{  file\t}}",
				   &vars, &err), 0);
	CHECK_STR(out.buf, "src/copy.c|c|strcpy(a, b);|3-4|Use strlcpy.|unified diff|"
		  "int main(void)\n{\n\tstrcpy(a, b);\n}\n");
	sl_buf_release(&out);
}

static void test_render_appends_and_nulls(void)
{
	sl_buf out = SL_BUF_INIT;
	sl_err err = SL_ERR_INIT;
	sl_prompt_vars v = { 0 };

	sl_buf_adds(&out, "head:");
	v.edit_format = SL_FORMAT_SEARCH_REPLACE;
	CHECK_INT(sl_prompt_render(&out, "[{{instructions}}] {{edit_format}} { {x} } }}", &v, &err), 0);
	CHECK_STR(out.buf, "head:[] SEARCH/REPLACE block { {x} } }}");
	sl_buf_release(&out);
}

static void test_unknown_variable(void)
{
	sl_buf out = SL_BUF_INIT;
	sl_err err = SL_ERR_INIT;

	sl_buf_adds(&out, "keep");
	CHECK_INT(sl_prompt_render(&out, "a {{path}} {{ pth }} b", &vars, &err), SL_EINPUT);
	CHECK_STR(err.msg, "unknown prompt variable '{{pth}}'");
	CHECK_STR(out.buf, "keep");   /* nothing half-rendered is left */
	sl_err_clear(&err);
	CHECK_INT(sl_prompt_check("x {{unit}} {{bogus}}", &err), SL_EINPUT);
	CHECK_STR(err.msg, "unknown prompt variable '{{bogus}}'");
	sl_err_clear(&err);
	CHECK_INT(sl_prompt_check("x {{unit", &err), SL_EINPUT);
	CHECK_STR(err.msg, "unterminated '{{' at offset 2 of the prompt template");
	sl_err_clear(&err);
	CHECK_INT(sl_prompt_check("{{path}} {{ start_line }}", &err), 0);
	sl_buf_release(&out);
}

static void test_default_template(void)
{
	sl_buf out = SL_BUF_INIT;
	sl_err err = SL_ERR_INIT;

	CHECK_INT(sl_prompt_check(sl_prompt_default_template, &err), 0);
	CHECK_INT(sl_prompt_render(&out, sl_prompt_default_template, &vars, &err), 0);
	CHECK(strstr(out.buf, "src/copy.c (c)") != NULL);
	CHECK(strstr(out.buf, "lines 3-4 of src/copy.c") != NULL);
	CHECK(strstr(out.buf, "```\nstrcpy(a, b);\n```") != NULL);
	/* compact: the unit and its context, not the file */
	CHECK(strstr(out.buf, "\tstrcpy(a, b);\n}\n") == NULL);
	CHECK(strstr(out.buf, "Use strlcpy.") != NULL);
	CHECK(strstr(out.buf, "unified diff format") != NULL);
	CHECK(strstr(out.buf, "{{") == NULL);
	sl_buf_reset(&out);
	/* `context: file`: the whole file too */
	CHECK_INT(sl_prompt_check(sl_prompt_file_template, &err), 0);
	CHECK_INT(sl_prompt_render(&out, sl_prompt_file_template, &vars, &err), 0);
	CHECK(strstr(out.buf, "\tstrcpy(a, b);\n}\n") != NULL);
	CHECK(strstr(out.buf, "```\nstrcpy(a, b);\n```") != NULL);
	sl_buf_release(&out);
}

static void test_system_messages(void)
{
	const char *u = sl_prompt_system(SL_FORMAT_UDIFF);
	const char *s = sl_prompt_system(SL_FORMAT_SEARCH_REPLACE);

	CHECK(u && s && u != s);
	if (!u || !s)
		return;
	CHECK(strstr(u, "'--- a/PATH'") != NULL);
	CHECK(strstr(u, "'+++ b/PATH'") != NULL);
	CHECK(strstr(u, "repository-relative") != NULL);
	CHECK(strstr(u, "@@ -OLD_LINE,OLD_COUNT +NEW_LINE,NEW_COUNT @@") != NULL);
	CHECK(strstr(u, "context") != NULL);
	CHECK(strstr(u, "Edit only the file shown") != NULL);
	CHECK(strstr(s, "<<<<<<< SEARCH\n") != NULL);
	CHECK(strstr(s, "\n=======\n") != NULL);
	CHECK(strstr(s, ">>>>>>> REPLACE\n") != NULL);
	CHECK(strstr(s, "copied exactly") != NULL);
	CHECK(strstr(s, "Edit only the file shown") != NULL);
	CHECK(sl_prompt_system(0) == NULL);
}

int main(void)
{
	RUN(test_render_all);
	RUN(test_render_appends_and_nulls);
	RUN(test_unknown_variable);
	RUN(test_default_template);
	RUN(test_system_messages);
	return unit_done();
}
