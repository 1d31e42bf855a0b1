/*
 * provider_openai.c - the OpenAI-compatible chat-completions request body
 * and reply (provider.h, kind openai); the transport is provider_http.c.
 */
#include <string.h>

#include "pipeline/generate/provider_internal.h"

static char *body(const sl_provider *p, const sl_chat_msg *msgs, size_t n)
{
	json_t *root = json_object(), *arr = json_array();

	json_object_set_new(root, "model", sl_provider_json_text(p->model));
	for (size_t i = 0; i < n; i++) {
		json_t *m = json_object();

		json_object_set_new(m, "role", sl_provider_json_text(msgs[i].role ? msgs[i].role : "user"));
		json_object_set_new(m, "content", sl_provider_json_text(msgs[i].content));
		json_array_append_new(arr, m);
	}
	json_object_set_new(root, "messages", arr);
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
