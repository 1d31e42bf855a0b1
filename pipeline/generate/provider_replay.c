/*
 * provider_replay.c - the replay kind: replies read back from a JSON lines
 * file, and sl_replay_record, which writes that file.
 *
 * The file is read whole by sl_provider_new into an array sorted by key
 * (file order kept among equal keys); the k-th call with a key gets the
 * k-th line recorded for it, the last one again past the end.  A line
 * recorded at a session's position ("at") is found by that position first.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/caps.h"
#include "common/util.h"
#include "pipeline/generate/provider_internal.h"

static int replay_cmp(const void *a, const void *b)
{
	const replay_entry *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	if (c)
		return c;
	return x->line < y->line ? -1 : x->line > y->line;
}

static int is_hex64(const char *s)
{
	size_t i;

	for (i = 0; i < 64; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return s[i] == '\0';
}

/*
 * The replay file whole into file: a regular file of at most
 * SL_CAP_REPLAY_BYTES (a device or a FIFO named by mistake would be read
 * for ever or block).  SL_EINPUT naming the file.
 */
static int replay_read(sl_buf *file, const char *path, sl_err *err)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), ret = SL_EINPUT;

	if (fd < 0) {
		sl_err_set(err, SL_EINPUT, "replay file '%s': %s", path, strerror(errno));
		goto done;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		sl_err_set(err, SL_EINPUT, "replay file '%s' is not a regular file", path);
		goto done;
	}
	sl_buf_init(file, SL_CAP_REPLAY_BYTES);
	if (st.st_size <= (off_t)SL_CAP_REPLAY_BYTES && sl_read_fd(file, fd, err)) {
		sl_err_prefix(err, "replay file '%s': ", path);
		if (err)
			err->code = SL_EINPUT;
		goto done;
	}
	if (st.st_size > (off_t)SL_CAP_REPLAY_BYTES || file->truncated) {
		sl_err_set(err, SL_EINPUT, "replay file '%s' is larger than %u MiB", path,
			   SL_CAP_REPLAY_BYTES >> 20);
		goto done;
	}
	ret = SL_OK;
done:
	if (fd >= 0)
		close(fd);
	return ret;
}

static int replay_load(sl_provider *p, const char *path, sl_err *err)
{
	sl_buf file = SL_BUF_INIT;
	size_t alloc = 0, line = 0;
	int ret = SL_EINPUT;

	if (replay_read(&file, path, err))
		goto done;
	for (const char *s = file.buf, *end = file.buf + file.len; s < end; ) {
		const char *nl = memchr(s, '\n', (size_t)(end - s)), *le = nl ? nl : end;
		json_error_t jerr;
		json_t *root, *key, *reply, *tr;
		replay_entry *e;

		line++;
		while (s < le && (*s == ' ' || *s == '\t' || *s == '\r'))
			s++;
		if (s == le) {
			s = le + 1;
			continue;
		}
		root = json_loadb(s, (size_t)(le - s), JSON_ALLOW_NUL, &jerr);
		s = le + 1;
		if (!json_is_object(root)) {
			sl_err_set(err, SL_EINPUT, "replay file '%s' line %zu: %s", path, line,
				   root ? "not a JSON object" : jerr.text);
			json_decref(root);
			goto done;
		}
		key = json_object_get(root, "key");
		reply = json_object_get(root, "reply");
		if (!json_is_string(key) || !is_hex64(json_string_value(key)) ||
		    !json_is_string(reply)) {
			sl_err_set(err, SL_EINPUT, "replay file '%s' line %zu: %s", path, line,
				   !json_is_string(reply) ? "no \"reply\" string" :
				   "\"key\" is not 64 lowercase hex digits");
			json_decref(root);
			goto done;
		}
		SL_ALLOC_GROW(p->replay, p->nreplay + 1, alloc);
		e = &p->replay[p->nreplay++];
		memset(e, 0, sizeof(*e));
		memcpy(e->key, json_string_value(key), 65);
		e->reply_len = json_string_length(reply);
		e->reply = sl_xstrndup(json_string_value(reply), e->reply_len);
		e->tokens_in = sl_provider_json_int(root, "tokens_in");
		e->tokens_out = sl_provider_json_int(root, "tokens_out");
		tr = json_object_get(root, "truncated");
		e->truncated = json_is_true(tr);
		e->http_status = json_is_integer(json_object_get(root, "http_status")) ?
			(int)json_integer_value(json_object_get(root, "http_status")) : 0;
		e->line = line;
		if (json_is_string(json_object_get(root, "at")))
			e->at = sl_xstrdup(json_string_value(json_object_get(root, "at")));
		tr = json_object_get(root, "seen");
		if (json_is_string(tr) && is_hex64(json_string_value(tr)))
			memcpy(e->seen, json_string_value(tr), 65);
		json_decref(root);
	}
	if (p->nreplay)
		qsort(p->replay, p->nreplay, sizeof(*p->replay), replay_cmp);
	ret = SL_OK;
done:
	sl_buf_release(&file);
	return ret;
}

/*
 * Check the replay options and read the whole file into p->replay, sorted
 * by key; SL_EINPUT naming file and line.
 */
static int replay_new(sl_provider *p, const sl_provider_opts *opts, sl_err *err)
{
	p->replay_kind = opts->replay_kind;
	if (p->replay_kind && p->replay_kind != SL_PROVIDER_OPENAI &&
	    p->replay_kind != SL_PROVIDER_ANTHROPIC && p->replay_kind != SL_PROVIDER_COMMAND)
		return sl_err_set(err, SL_EINPUT, "cannot replay replies of provider kind %d",
				  p->replay_kind);
	if (!opts->replay_path || !*opts->replay_path)
		return sl_err_set(err, SL_EINPUT, "the replay provider needs a replay file");
	p->replay_path = sl_xstrdup(opts->replay_path);
	return replay_load(p, opts->replay_path, err);
}

/* Index of the first entry recorded for key, or (size_t)-1. */
size_t sl_provider_replay_find(const sl_provider *p, const char *key)
{
	size_t lo = 0, hi = p->nreplay;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (strcmp(p->replay[mid].key, key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < p->nreplay && !strcmp(p->replay[lo].key, key) ? lo : (size_t)-1;
}

size_t sl_provider_replay_find_at(const sl_provider *p, const char *at)
{
	for (size_t i = 0; i < p->nreplay; i++)
		if (p->replay[i].at && !strcmp(p->replay[i].at, at))
			return i;
	return (size_t)-1;
}

/* The next reply recorded for the key group starting at call->first (exact: that one). */
static int replay_complete(sl_provider *p, const sl_provider_call *call, sl_completion *out,
			   sl_err *err)
{
	size_t first = call->first, count, pick;
	const replay_entry *e;

	for (count = 1; first + count < p->nreplay &&
	     !strcmp(p->replay[first + count].key, p->replay[first].key); count++)
		;
	pthread_mutex_lock(&p->lock);
	if (call->exact)
		pick = 0;
	else
		pick = p->replay[first].used < count ? p->replay[first].used++ : count - 1;
	pthread_mutex_unlock(&p->lock);
	e = &p->replay[first + pick];
	sl_buf_add(&out->text, e->reply, e->reply_len);
	out->tokens_in = e->tokens_in;
	out->tokens_out = e->tokens_out;
	out->truncated = e->truncated;
	out->http_status = e->http_status;
	return SL_OK;
}

const sl_provider_ops sl_provider_replay = {
	.open = replay_new, .complete = replay_complete,
};

static pthread_mutex_t record_lock = PTHREAD_MUTEX_INITIALIZER;

int sl_replay_record(const char *path, const char *key, const sl_completion *c, sl_err *err)
{
	json_t *root = json_object();
	char *line = NULL;
	size_t len;
	int fd = -1, ret = SL_ERROR;

	if (!key || !is_hex64(key)) {
		ret = sl_err_set(err, SL_EINPUT, "cannot record a reply without a request key");
		goto done;
	}
	json_object_set_new(root, "key", json_string(key));
	json_object_set_new(root, "reply", sl_provider_json_textn(c->text.buf, c->text.len));
	json_object_set_new(root, "tokens_in", json_integer(c->tokens_in));
	json_object_set_new(root, "tokens_out", json_integer(c->tokens_out));
	if (c->truncated)
		json_object_set_new(root, "truncated", json_true());
	if (c->http_status)
		json_object_set_new(root, "http_status", json_integer(c->http_status));
	if (c->at) {
		json_object_set_new(root, "at", json_string(c->at));
		json_object_set_new(root, "seen", json_string(c->seen));
	}
	line = json_dumps(root, JSON_COMPACT);
	if (!line)
		BUG("json_dumps failed");
	len = strlen(line);
	line = sl_xrealloc(line, len + 2);
	line[len++] = '\n';
	line[len] = '\0';
	pthread_mutex_lock(&record_lock);
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0 || sl_write_all(fd, line, len)) {
		sl_err_set(err, SL_ERROR, "cannot append to replay file '%s': %s", path,
			   strerror(errno));
	} else {
		ret = SL_OK;
	}
	if (fd >= 0 && close(fd) && !ret)
		ret = sl_err_set(err, SL_ERROR, "cannot write replay file '%s': %s", path,
				 strerror(errno));
	pthread_mutex_unlock(&record_lock);
done:
	json_decref(root);
	free(line);
	return ret;
}
