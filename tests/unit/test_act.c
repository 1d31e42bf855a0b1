/*
 * test_act.c - pipeline/generate/act: one fenced command a reply, submit,
 * format errors the model can act on, and the observation's head and tail.
 */
#include <stdlib.h>
#include <string.h>

#include "pipeline/generate/act.h"
#include "unit.h"

static enum sl_act_kind parse(const char *reply, char **cmd, sl_err *err)
{
	sl_err_clear(err);
	return sl_act_parse(cmd, reply, err);
}

static void test_one_command(void)
{
	sl_err err = SL_ERR_INIT;
	char *cmd = NULL;

	CHECK_INT(parse("Let me look.\n```sh\ngrep -n x a.c\n```\nthen more", &cmd, &err),
		  SL_ACT_COMMAND);
	CHECK_STR(cmd, "grep -n x a.c");
	free(cmd);
	CHECK_INT(parse("```bash\nmake &&\n  make test\n```", &cmd, &err), SL_ACT_COMMAND);
	CHECK_STR(cmd, "make &&\n  make test");
	free(cmd);
	CHECK_INT(parse("```\nls\n```\n", &cmd, &err), SL_ACT_COMMAND);
	CHECK_STR(cmd, "ls");
	free(cmd);
	/* a block of another language around it does not count */
	CHECK_INT(parse("```c\nint x;\n```\n```sh\nls\n```\n", &cmd, &err), SL_ACT_COMMAND);
	CHECK_STR(cmd, "ls");
	free(cmd);
}

static void test_submit(void)
{
	sl_err err = SL_ERR_INIT;
	char *cmd = NULL;

	CHECK_INT(parse("Done.\n```sh\nsubmit\n```\n", &cmd, &err), SL_ACT_SUBMIT);
	CHECK_STR(cmd, "submit");
	free(cmd);
	CHECK_INT(parse("```sh\n  submit  \n```", &cmd, &err), SL_ACT_SUBMIT);
	free(cmd);
	/* a command that names submit is a command */
	CHECK_INT(parse("```sh\nsubmit now\n```", &cmd, &err), SL_ACT_COMMAND);
	free(cmd);
}

static void test_format_errors(void)
{
	sl_err err = SL_ERR_INIT;
	char *cmd = NULL;

	CHECK_INT(parse("I would grep for it.", &cmd, &err), SL_ACT_FORMAT);
	CHECK(cmd == NULL);
	CHECK(strstr(err.msg, "no ```sh block") != NULL);
	CHECK_INT(parse("```sh\nls\n```\n```sh\npwd\n```\n", &cmd, &err), SL_ACT_FORMAT);
	CHECK_STR(err.msg, "send one command a reply: this reply has 2 ```sh blocks");
	CHECK_INT(parse("```sh\nls\n", &cmd, &err), SL_ACT_FORMAT);
	CHECK(strstr(err.msg, "not closed") != NULL);
	CHECK_INT(parse("```sh\n \n```", &cmd, &err), SL_ACT_FORMAT);
	CHECK_STR(err.msg, "the ```sh block is empty");
}

static void test_observe(void)
{
	sl_buf out = SL_BUF_INIT;
	int64_t total = 0;
	const char raw[] = "5\nhello";
	const char big[] = "26\nabcdeXYZ\x1b[2J";

	sl_act_observe(&out, &total, raw, sizeof(raw) - 1, 0, 0, 60, 10, 10);
	CHECK_STR(out.buf, "exit status 0\nhello\n");
	CHECK_INT(total, 5);
	sl_buf_reset(&out);
	/* 26 bytes written, 5 of the head and 8 of the tail kept */
	sl_act_observe(&out, &total, big, sizeof(big) - 1, 3, 0, 60, 5, 8);
	CHECK_STR(out.buf, "exit status 3\nabcde\n[... 13 bytes cut: the output was 26 bytes, "
		  "here are the first 5 and the last 8 ...]\nXYZ^[[2J\n");
	sl_buf_reset(&out);
	sl_act_observe(&out, &total, "0\n", 2, 124, 1, 2, 5, 5);
	CHECK_STR(out.buf, "exit status 124 (the step's time ran out: 2 s; the command was "
		  "killed)\n(no output)\n");
	sl_buf_release(&out);
}

static void test_names(void)
{
	for (int k = SL_ACT_COMMAND; k <= SL_ACT_BUDGET; k++)
		CHECK_INT(sl_act_kind_parse(sl_act_kind_name((enum sl_act_kind)k)), k);
	CHECK_INT(sl_act_kind_parse("nope"), 0);
	CHECK(sl_act_kind_name((enum sl_act_kind)99) == NULL);
}

int main(void)
{
	RUN(test_one_command);
	RUN(test_submit);
	RUN(test_format_errors);
	RUN(test_observe);
	RUN(test_names);
	return unit_done();
}
