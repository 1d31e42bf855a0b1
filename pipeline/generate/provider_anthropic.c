/*
 * provider_anthropic.c - the Anthropic Messages request body and reply
 * (provider.h, kind anthropic); the transport is provider_http.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/generate/provider_internal.h"

/* One content block: the call of bash (cmd) as tool_use, or its result. */
static json_t *tool_block(size_t call, const char *cmd, const char *result)
{
	json_t *b = json_object();
	char id[32];

	snprintf(id, sizeof(id), "toolu_%zu", call);
	if (cmd) {
		json_object_set_new(b, "type", json_string("tool_use"));
		json_object_set_new(b, "id", json_string(id));
		json_object_set_new(b, "name", json_string(sl_tool_name));
		json_object_set_new(b, "input", sl_tool_input(cmd));
	} else {
		json_object_set_new(b, "type", json_string("tool_result"));
		json_object_set_new(b, "tool_use_id", json_string(id));
		json_object_set_new(b, "content", sl_provider_json_text(result));
	}
	return json_pack("[o]", b);
}

static char *body(const sl_provider *p, const sl_chat_msg *msgs, size_t n)
{
	json_t *root = json_object(), *arr = json_array();
	sl_buf system = SL_BUF_INIT;
	int nsys = 0, open = 0;
	size_t call = 0;

	json_object_set_new(root, "model", sl_provider_json_text(p->model));
	json_object_set_new(root, "max_tokens", json_integer(p->max_tokens > 0 ? p->max_tokens : 4096));
	for (size_t i = 0; i < n; i++) {
		const char *role = msgs[i].role ? msgs[i].role : "user";
		char *cmd = NULL;
		json_t *m;

		if (!strcmp(role, "system")) {
			if (nsys++)
				sl_buf_adds(&system, "\n\n");
			sl_buf_adds(&system, msgs[i].content ? msgs[i].content : "");
			continue;
		}
		m = json_object();
		json_object_set_new(m, "role", sl_provider_json_text(role));
		if (p->tools && (cmd = sl_tool_command(&msgs[i]))) {
			json_object_set_new(m, "content", tool_block(call = i, cmd, NULL));
			open = 1;
		} else if (open && !strcmp(role, "user")) {
			json_object_set_new(m, "content", tool_block(call, NULL, msgs[i].content));
			open = 0;
		} else {
			json_object_set_new(m, "content", sl_provider_json_text(msgs[i].content));
			open = 0;
		}
		free(cmd);
		cmd = NULL;
		json_array_append_new(arr, m);
	}
	if (nsys)
		json_object_set_new(root, "system", sl_provider_json_textn(system.buf, system.len));
	json_object_set_new(root, "messages", arr);
	if (p->tools) {
		json_t *t = json_object();

		json_object_set_new(t, "name", json_string(sl_tool_name));
		json_object_set_new(t, "description", json_string(sl_tool_about));
		json_object_set_new(t, "input_schema", sl_tool_schema());
		json_object_set_new(root, "tools", json_pack("[o]", t));
	}
	if (p->temperature >= 0)
		json_object_set_new(root, "temperature", json_real(p->temperature));
	sl_buf_release(&system);
	return sl_provider_json_dump(root);
}

static int parse(sl_completion *out, const sl_buf *body, sl_err *err)
{
	json_t *root, *content, *block, *call = NULL;
	sl_buf prose = SL_BUF_INIT;
	size_t i;
	int ret = SL_ERROR, ntext = 0;

	if (!(root = sl_provider_load_object(body, err)))
		return SL_ERROR;
	sl_provider_set_finish(out, json_object_get(root, "stop_reason"));
	content = json_object_get(root, "content");
	if (!json_is_array(content)) {
		sl_err_set(err, SL_ERROR, "the model's reply has no content");
		goto done;
	}
	json_array_foreach(content, i, block) {
		json_t *type = json_object_get(block, "type"), *text = json_object_get(block, "text");

		if (json_is_string(type) && !strcmp(json_string_value(type), "text") &&
		    json_is_string(text)) {
			sl_buf_add(&prose, json_string_value(text), json_string_length(text));
			ntext++;
		} else if (!call && json_is_string(type) &&
			   !strcmp(json_string_value(type), "tool_use") &&
			   json_is_string(json_object_get(block, "name")) &&
			   !strcmp(json_string_value(json_object_get(block, "name")),
				   sl_tool_name)) {
			/* the session's tool; calls of others are not replies (as before) */
			call = block;
		}
	}
	if (call) {
		if (sl_tool_reply(out, prose.buf, json_object_get(call, "input"), err))
			goto done;
		ntext++;
	} else {
		sl_buf_add(&out->text, prose.buf, prose.len);
	}
	if (!ntext) {
		sl_err_set(err, SL_ERROR, "the model's reply has no text content%s%s%s",
			   *out->finish_reason ? " (stop_reason '" : "", out->finish_reason,
			   *out->finish_reason ? "')" : "");
		goto done;
	}
	sl_provider_set_usage(out, root, "max_tokens", "input_tokens", "output_tokens");
	ret = SL_OK;
done:
	sl_buf_release(&prose);
	json_decref(root);
	return ret;
}

static void headers(const sl_provider *p, sl_strvec *out)
{
	sl_provider_add_header(out, "anthropic-version: ", p->anthropic_version);
	if (p->key)
		sl_provider_add_header(out, "x-api-key: ", p->key);
}

static const sl_provider_wire wire = {
	.path = "/messages", .body = body, .headers = headers, .parse = parse,
};

const sl_provider_ops sl_provider_anthropic = {
	.open = sl_provider_http_new, .complete = sl_provider_http_complete, .wire = &wire,
	.probe = sl_provider_http_probe,
};
