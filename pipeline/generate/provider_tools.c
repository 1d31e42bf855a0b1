/*
 * provider_tools.c - the one tool of a model's session, `bash`, as the
 * HTTP kinds offer it natively (provider.h, opts.tools): its schema, the
 * command of an assistant message in the session's plain form (act.h), and
 * a tool call's command turned back into that form.  The kinds' own shapes
 * are in provider_openai.c and provider_anthropic.c.
 */
#include <string.h>

#include "pipeline/generate/act.h"
#include "pipeline/generate/provider_internal.h"

const char sl_tool_name[] = "bash";
const char sl_tool_about[] = "Run one shell command in the repository's checkout (a fresh "
	"process; files persist, shell state does not) and get its exit status and output. "
	"Run the command `submit` to hand over the change.";

json_t *sl_tool_schema(void)
{
	json_t *o = json_object(), *props = json_object(), *cmd = json_object();

	json_object_set_new(cmd, "type", json_string("string"));
	json_object_set_new(cmd, "description", json_string("the shell command, or submit"));
	json_object_set_new(props, "command", cmd);
	json_object_set_new(o, "type", json_string("object"));
	json_object_set_new(o, "properties", props);
	json_object_set_new(o, "required", json_pack("[s]", "command"));
	return o;
}

char *sl_tool_command(const sl_chat_msg *m)
{
	sl_err err = SL_ERR_INIT;
	char *cmd = NULL;

	if (!m->role || strcmp(m->role, "assistant") || !m->content)
		return NULL;
	if (sl_act_parse(&cmd, m->content, &err) == SL_ACT_FORMAT)
		return NULL;
	return cmd;
}

json_t *sl_tool_input(const char *command)
{
	return json_pack("{s:s}", "command", command);
}

int sl_tool_reply(sl_completion *out, const char *prose, json_t *input, sl_err *err)
{
	json_t *cmd = json_object_get(input, "command");

	if (!json_is_string(cmd))
		return sl_err_set(err, SL_ERROR, "the model called tool '%s' without a string "
				  "'command'", sl_tool_name);
	/* prose with a fence of its own would make two commands of one reply */
	if (prose && *prose && !strstr(prose, "```"))
		sl_buf_addf(&out->text, "%s\n", prose);
	sl_buf_adds(&out->text, "```sh\n");
	sl_buf_add(&out->text, json_string_value(cmd), json_string_length(cmd));
	sl_buf_adds(&out->text, "\n```\n");
	return SL_OK;
}
