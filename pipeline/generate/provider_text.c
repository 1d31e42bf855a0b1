/*
 * provider_text.c - what the model providers' files share and need nothing
 * else of the folder for: the kinds' names, the chat flattened for a
 * command, and the small text and JSON helpers (provider_internal.h).  The
 * front (provider.c) and every kind use it; it uses none of them, so the
 * front reaches the kinds and the kinds reach these without a circle.
 */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pipeline/generate/provider_internal.h"
#include "common/term.h"
#include "common/util.h"

static const char *const kind_names[] = {
	[SL_PROVIDER_RULES] = "rules",
	[SL_PROVIDER_OPENAI] = "openai",
	[SL_PROVIDER_COMMAND] = "command",
	[SL_PROVIDER_ANTHROPIC] = "anthropic",
	[SL_PROVIDER_REPLAY] = "replay",
};

const char *sl_provider_kind_name(int kind)
{
	if (kind > 0 && (size_t)kind < sizeof(kind_names) / sizeof(kind_names[0]) &&
	    kind_names[kind])
		return kind_names[kind];
	return "unknown";
}

void sl_provider_flatten_chat(sl_buf *out, const sl_chat_msg *msgs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *c = msgs[i].content ? msgs[i].content : "";
		size_t len = strlen(c);

		if (i)
			sl_buf_addch(out, '\n');
		/* the roles as the attempt's recorded prompt writes them (run/model.c) */
		sl_buf_addf(out, "### %s\n", msgs[i].role ? msgs[i].role : "user");
		sl_buf_add(out, c, len);
		if (!len || c[len - 1] != '\n')
			sl_buf_addch(out, '\n');
	}
}

/* ---- text helpers ---------------------------------------------------- */

void sl_provider_wipe(char *s)
{
	if (s)
		explicit_bzero(s, strlen(s));
}

/* A JSON string of s[0..n), with invalid UTF-8 bytes replaced by U+FFFD. */
json_t *sl_provider_json_textn(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)(s ? s : "");
	sl_buf b = SL_BUF_INIT;
	json_t *j;

	for (size_t i = 0; i < n; ) {
		size_t l = sl_utf8_seq(u + i, n - i);

		if (l) {
			sl_buf_add(&b, u + i, l);
			i += l;
		} else {
			sl_buf_adds(&b, "\xEF\xBF\xBD");
			i++;
		}
	}
	j = json_stringn(b.buf, b.len);
	sl_buf_release(&b);
	if (!j)
		BUG("json_stringn rejected repaired text");
	return j;
}

json_t *sl_provider_json_text(const char *s)
{
	return sl_provider_json_textn(s, s ? strlen(s) : 0);
}

/* One line of server text for an error message: no control characters, capped. */
void sl_provider_add_snippet(sl_buf *out, const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len && i < SL_CAP_ERROR_SNIPPET; i++) {
		unsigned char c = (unsigned char)s[i];

		sl_buf_addch(out, c < 0x20 || c == 0x7F ? ' ' : c);
	}
	if (i < len)
		sl_buf_adds(out, "...");
}

void sl_provider_add_header(sl_strvec *out, const char *prefix, const char *value)
{
	sl_buf b = SL_BUF_INIT;

	/* one allocation: no copy of a key is left behind in freed memory */
	sl_buf_grow(&b, strlen(prefix) + strlen(value));
	sl_buf_adds(&b, prefix);
	sl_buf_adds(&b, value);
	sl_strvec_push_nodup(out, sl_buf_detach(&b, NULL));
}

/* "3 s" or "250 ms" */
void sl_provider_add_duration(sl_buf *out, unsigned ms)
{
	if (ms % 1000)
		sl_buf_addf(out, "%u ms", ms);
	else
		sl_buf_addf(out, "%u s", ms / 1000);
}

char *sl_provider_json_dump(json_t *root)
{
	char *body = json_dumps(root, JSON_COMPACT | JSON_REAL_PRECISION(12));

	json_decref(root);
	if (!body)
		BUG("json_dumps failed");
	return body;
}

int64_t sl_provider_json_int(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);

	return json_is_integer(v) ? (int64_t)json_integer_value(v) : -1;
}

void sl_provider_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}
