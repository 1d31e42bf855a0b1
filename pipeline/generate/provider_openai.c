/*
 * provider_openai.c - the OpenAI-compatible chat-completions request body
 * and reply (provider.h, kind openai); the transport is provider_http.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/generate/provider_internal.h"

/* The tools array: one function, bash. */
static json_t *tools(void)
{
	json_t *fn = json_object(), *t = json_object();

	json_object_set_new(fn, "name", json_string(sl_tool_name));
	json_object_set_new(fn, "description", json_string(sl_tool_about));
	json_object_set_new(fn, "parameters", sl_tool_schema());
	json_object_set_new(t, "type", json_string("function"));
	json_object_set_new(t, "function", fn);
	return json_pack("[o]", t);
}

/* An assistant message that calls bash with cmd, its id call_I. */
static json_t *tool_call(size_t i, const char *cmd)
{
	json_t *m = json_object(), *call = json_object(), *fn = json_object();
	char *args = sl_provider_json_dump(sl_tool_input(cmd));
	char id[32];

	snprintf(id, sizeof(id), "call_%zu", i);
	json_object_set_new(fn, "name", json_string(sl_tool_name));
	json_object_set_new(fn, "arguments", sl_provider_json_text(args));
	free(args);
	json_object_set_new(call, "id", json_string(id));
	json_object_set_new(call, "type", json_string("function"));
	json_object_set_new(call, "function", fn);
	json_object_set_new(m, "role", json_string("assistant"));
	json_object_set_new(m, "content", json_null());
	json_object_set_new(m, "tool_calls", json_pack("[o]", call));
	return m;
}

static char *body(const sl_provider *p, const sl_chat_msg *msgs, size_t n)
{
	json_t *root = json_object(), *arr = json_array();
	size_t call = 0;
	int open = 0;

	json_object_set_new(root, "model", sl_provider_json_text(p->model));
	for (size_t i = 0; i < n; i++) {
		char *cmd = p->tools ? sl_tool_command(&msgs[i]) : NULL;
		json_t *m;

		if (cmd) {
			m = tool_call(call = i, cmd);
			open = 1;
		} else if (open && msgs[i].role && !strcmp(msgs[i].role, "user")) {
			char id[32];

			snprintf(id, sizeof(id), "call_%zu", call);
			m = json_object();
			json_object_set_new(m, "role", json_string("tool"));
			json_object_set_new(m, "tool_call_id", json_string(id));
			json_object_set_new(m, "content", sl_provider_json_text(msgs[i].content));
			open = 0;
		} else {
			m = json_object();
			json_object_set_new(m, "role", sl_provider_json_text(msgs[i].role ? msgs[i].role : "user"));
			json_object_set_new(m, "content", sl_provider_json_text(msgs[i].content));
			open = 0;
		}
		free(cmd);
		json_array_append_new(arr, m);
	}
	json_object_set_new(root, "messages", arr);
	if (p->tools)
		json_object_set_new(root, "tools", tools());
	if (p->temperature >= 0)
		json_object_set_new(root, "temperature", json_real(p->temperature));
	if (p->max_tokens > 0)
		json_object_set_new(root, "max_tokens", json_integer(p->max_tokens));
	if (p->response_format) {
		json_t *rf = json_loads(p->response_format, 0, NULL);

		if (!rf)
			BUG("response_format was validated");
		json_object_set_new(root, "response_format", rf);
	}
	return sl_provider_json_dump(root);
}

/* The first call of bash in message, into out->text; 1 if it is one, -1 if malformed. */
static int take_tool_call(sl_completion *out, json_t *message, sl_err *err)
{
	json_t *calls = json_object_get(message, "tool_calls");
	json_t *fn = json_object_get(json_array_get(calls, 0), "function");
	json_t *name = json_object_get(fn, "name"), *args = json_object_get(fn, "arguments");
	json_t *content = json_object_get(message, "content"), *input;
	int r;

	/* calls of other tools are not the session's: the content is the reply (as before) */
	if (!json_is_array(calls) || !json_array_size(calls) || !json_is_string(name) ||
	    strcmp(json_string_value(name), sl_tool_name))
		return 0;
	if (!json_is_string(args)) {
		sl_err_set(err, SL_ERROR, "the arguments of the model's tool call are not a string");
		return -1;
	}
	if (!(input = json_loads(json_string_value(args), 0, NULL))) {
		sl_err_set(err, SL_ERROR, "the arguments of the model's tool call are not JSON");
		return -1;
	}
	r = sl_tool_reply(out, json_is_string(content) ? json_string_value(content) : NULL, input,
			  err);
	json_decref(input);
	return r ? -1 : 1;
}

static int parse(sl_completion *out, const sl_buf *body, sl_err *err)
{
	json_t *root, *choices, *choice, *content, *fr;
	int ret = SL_ERROR;

	if (!(root = sl_provider_load_object(body, err)))
		return SL_ERROR;
	choices = json_object_get(root, "choices");
	if (!json_is_array(choices) || !json_array_size(choices)) {
		sl_err_set(err, SL_ERROR, "the model's reply has no choices");
		goto done;
	}
	choice = json_array_get(choices, 0);
	fr = json_object_get(choice, "finish_reason");
	sl_provider_set_finish(out, fr);
	switch (take_tool_call(out, json_object_get(choice, "message"), err)) {
	case 1:
		sl_provider_set_usage(out, root, "length", "prompt_tokens", "completion_tokens");
		ret = SL_OK;
		goto done;
	case -1:
		goto done;
	}
	content = json_object_get(json_object_get(choice, "message"), "content");
	if (!json_is_string(content)) {
		sl_err_set(err, SL_ERROR, "the model's reply has no message content%s%s%s",
			   json_is_string(fr) ? " (finish_reason '" : "",
			   json_is_string(fr) ? json_string_value(fr) : "",
			   json_is_string(fr) ? "')" : "");
		goto done;
	}
	sl_buf_add(&out->text, json_string_value(content), json_string_length(content));
	sl_provider_set_usage(out, root, "length", "prompt_tokens", "completion_tokens");
	ret = SL_OK;
done:
	json_decref(root);
	return ret;
}

static void headers(const sl_provider *p, sl_strvec *out)
{
	if (p->key)
		sl_provider_add_header(out, "Authorization: Bearer ", p->key);
}

static const sl_provider_wire wire = {
	.path = "/chat/completions", .body = body, .headers = headers, .parse = parse,
};

const sl_provider_ops sl_provider_openai = {
	.open = sl_provider_http_new, .complete = sl_provider_http_complete, .wire = &wire,
	.probe = sl_provider_http_probe,
};
