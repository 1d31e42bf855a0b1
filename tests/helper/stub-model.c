/*
 * stub-model.c - a canned model endpoint for tests, over real HTTP, with
 * fault injection.  Speaks whatever wire format its canned bodies are in
 * (OpenAI chat completions, Anthropic messages); echo replies follow the
 * request's path (".../messages" gets the Anthropic shape).
 *
 *     stub-model --dir DIR [--port-file FILE] [--max-seconds N]
 *
 * Binds 127.0.0.1 on an ephemeral port, writes the port number and a newline
 * to FILE (a temporary file renamed into place, so a reader never sees half
 * of it; without --port-file the port goes to stdout), then serves every
 * connection in a thread of its own, one request per connection
 * ("Connection: close").  Requests are numbered 1, 2, ... in the order they
 * have arrived whole.  For request N it writes
 *     DIR/request-N.headers   the request line and headers, as received
 *     DIR/request-N.json      the request body (Content-Length bodies only)
 * then answers from the newest K <= N for which any DIR/reply-K.* file below
 * exists (so the files of K also serve every later request without files):
 *     reply-K.json     the body (default: a JSON error object)
 *     reply-K.status   the status (default 200)
 *     reply-K.headers  extra response header lines ("Retry-After: 2")
 *     reply-K.delay    milliseconds to wait before answering
 *     reply-K.tool     a shell command: the body is a successful reply that
 *                      calls the first tool the request offers with
 *                      {"command": the file's text without its final newline},
 *                      as the APIs document it: OpenAI message.tool_calls
 *                      (function name, arguments as a JSON string),
 *                      finish_reason "tool_calls"; Anthropic a content block
 *                      {type: tool_use, id, name, input}, stop_reason
 *                      "tool_use"; usage 100 in, 10 out.  A request that
 *                      offers no tool gets a 400 error body instead
 *     reply-K.echo     (any content) the body is a successful reply whose text
 *                      is "echo: " and the last message's content, tokens
 *                      in = that content's length, out = 7
 *     reply-K.fault    one of
 *                        drop      send the head with the full Content-Length
 *                                  and half the body, then close
 *                        close     close without answering
 *                        trickle MS  send the body one byte every MS ms
 *                        truncate  a complete HTTP answer whose body is the
 *                                  first half of the JSON (Content-Length says so)
 *                        garbage   a complete answer whose body is not JSON
 *                        reset     close with a TCP reset, without answering
 *                        hang      never answer; wait until the client hangs up
 *                      optionally followed by a count N: only the first N
 *                      answers from these files misbehave, later ones are normal
 * Before the numbered files, content rules: for K = 1, 2, ... while
 * DIR/match-K.contains exists, the first K whose text (without its final
 * newline) occurs in the request body answers from DIR/match-K.* files with
 * the same suffixes as above.  A model that answers the same request the
 * same way, whatever the order of requests, is made of such rules.
 * With no such K it answers 500.  Request files are written before the
 * answer is sent.  A GET (sluice's probe of {base_url}/models) is not
 * numbered: it is answered with the status in DIR/get.status (default 200)
 * and the body {"data":[]} (an error object for another status), and its
 * request line and headers are appended to DIR/get.log.
 *
 * It exits on SIGTERM, and by itself after --max-seconds (default 300), so a
 * test that forgets it never leaves it running.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"

#define HEADER_CAP (64 * 1024)
#define BODY_CAP (64 * 1024 * 1024)

static const char *dir;
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long count;

static const char *const suffixes[] = { "json", "status", "headers", "delay", "echo", "tool",
	"fault" };

static int exists(const char *path)
{
	struct stat st;

	return !stat(path, &st);
}

static char *dir_file(unsigned long n, const char *kind, const char *suffix)
{
	sl_buf b = SL_BUF_INIT;

	sl_buf_addf(&b, "%s/%s-%lu.%s", dir, kind, n, suffix);
	return sl_buf_detach(&b, NULL);
}

/* Read DIR/reply-K.SUFFIX into b; 0 if it exists. */
static const char *kind = "reply";    /* of the files answering; set per request */
static _Thread_local const char *tkind;

static int reply_file(sl_buf *b, unsigned long k, const char *suffix)
{
	char *path = dir_file(k, tkind ? tkind : kind, suffix);
	int rc;

	sl_buf_reset(b);
	rc = sl_read_file(b, path, BODY_CAP, NULL);
	free(path);
	return rc;
}

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (ms > 0 && nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static int send_all(int fd, const char *data, size_t len)
{
	while (len) {
		ssize_t k = send(fd, data, len, MSG_NOSIGNAL);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		data += k;
		len -= (size_t)k;
	}
	return 0;
}

/* The value of header `name` in the header block, or NULL (points into hdr). */
static const char *header_value(const char *hdr, const char *name, size_t *len)
{
	size_t nl = strlen(name);

	for (const char *p = strstr(hdr, "\r\n"); p && p[2]; p = strstr(p + 2, "\r\n")) {
		const char *line = p + 2, *end = strstr(line, "\r\n");

		if (!end || end == line)
			break;
		if ((size_t)(end - line) > nl && !strncasecmp(line, name, nl) && line[nl] == ':') {
			const char *v = line + nl + 1;

			while (v < end && (*v == ' ' || *v == '\t'))
				v++;
			*len = (size_t)(end - v);
			return v;
		}
	}
	return NULL;
}

static const char *reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 404: return "Not Found";
	case 408: return "Request Timeout";
	case 429: return "Too Many Requests";
	case 500: return "Internal Server Error";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 529: return "Overloaded";
	}
	return "Status";
}

/*
 * A reply calling the request's first tool with {"command": cmd}, in the
 * request's format; 0, or -1 (an error body) when the request offers none.
 */
static int tool_body(sl_buf *out, const char *req, size_t len, int anthropic, sl_buf *cmd)
{
	json_t *r = json_loadb(req, len, 0, NULL), *tool, *name, *root;
	char *s;
	int ret = -1;

	while (cmd->len && cmd->buf[cmd->len - 1] == '\n')
		cmd->buf[--cmd->len] = '\0';
	tool = json_array_get(json_object_get(r, "tools"), 0);
	name = anthropic ? json_object_get(tool, "name") :
		json_object_get(json_object_get(tool, "function"), "name");
	if (!json_is_string(name)) {
		sl_buf_adds(out, "{\"error\":{\"message\":\"stub-model: the request offers no tool\"}}");
		json_decref(r);
		return -1;
	}
	if (anthropic) {
		root = json_pack("{s:s, s:s, s:s, s:[{s:s, s:s, s:s, s:{s:s}}], s:s, s:{s:i, s:i}}",
				 "id", "msg_stub", "type", "message", "role", "assistant", "content",
				 "type", "tool_use", "id", "toolu_stub", "name",
				 json_string_value(name), "input", "command", cmd->buf, "stop_reason",
				 "tool_use", "usage", "input_tokens", 100, "output_tokens", 10);
	} else {
		json_t *args = json_pack("{s:s}", "command", cmd->buf);
		char *a = json_dumps(args, JSON_COMPACT);

		root = json_pack("{s:[{s:i, s:{s:s, s:n, s:[{s:s, s:s, s:{s:s, s:s}}]}, s:s}], "
				 "s:{s:i, s:i}}", "choices", "index", 0, "message", "role",
				 "assistant", "content", "tool_calls", "id", "call_stub", "type",
				 "function", "function", "name", json_string_value(name),
				 "arguments", a ? a : "{}", "finish_reason", "tool_calls", "usage",
				 "prompt_tokens", 100, "completion_tokens", 10);
		free(a);
		json_decref(args);
	}
	s = root ? json_dumps(root, JSON_COMPACT) : NULL;
	if (s) {
		sl_buf_adds(out, s);
		ret = 0;
	}
	free(s);
	json_decref(root);
	json_decref(r);
	return ret;
}

/* A successful reply echoing the request's last message, in the request's format. */
static void echo_body(sl_buf *out, const char *req, size_t len, int anthropic)
{
	json_t *r = json_loadb(req, len, 0, NULL), *msgs, *last, *root;
	const char *content = "";
	sl_buf text = SL_BUF_INIT;
	char *s;

	msgs = json_object_get(r, "messages");
	last = json_array_get(msgs, json_array_size(msgs) ? json_array_size(msgs) - 1 : 0);
	if (json_is_string(json_object_get(last, "content")))
		content = json_string_value(json_object_get(last, "content"));
	sl_buf_addf(&text, "echo: %s", content);
	if (anthropic)
		root = json_pack("{s:s, s:s, s:[{s:s, s:s}], s:s, s:{s:I, s:I}}",
				 "type", "message", "role", "assistant", "content", "type", "text",
				 "text", text.buf, "stop_reason", "end_turn", "usage",
				 "input_tokens", (json_int_t)strlen(content), "output_tokens",
				 (json_int_t)7);
	else
		root = json_pack("{s:[{s:i, s:{s:s, s:s}, s:s}], s:{s:I, s:I}}",
				 "choices", "index", 0, "message", "role", "assistant", "content",
				 text.buf, "finish_reason", "stop", "usage", "prompt_tokens",
				 (json_int_t)strlen(content), "completion_tokens", (json_int_t)7);
	s = root ? json_dumps(root, JSON_COMPACT) : NULL;
	sl_buf_adds(out, s ? s : "{\"error\":{\"message\":\"stub-model: cannot echo\"}}");
	free(s);
	json_decref(root);
	json_decref(r);
	sl_buf_release(&text);
}

#define MAX_RULES 1000
static unsigned long uses[2][MAX_RULES + 1];   /* answers given, by files (reply, match) */

/* The first content rule the request matches, or 0. */
static unsigned long match_rule(const char *req, size_t reqlen)
{
	sl_buf pat = SL_BUF_INIT, body = SL_BUF_INIT;
	unsigned long k, hit = 0;

	sl_buf_add(&body, req, reqlen);
	tkind = "match";
	for (k = 1; k <= MAX_RULES && !hit && !reply_file(&pat, k, "contains"); k++) {
		while (pat.len && pat.buf[pat.len - 1] == '\n')
			sl_buf_setlen(&pat, pat.len - 1);
		if (strstr(body.buf, pat.buf))
			hit = k;
	}
	tkind = NULL;
	sl_buf_release(&pat);
	sl_buf_release(&body);
	return hit;
}

/* Wait until the client hangs up (bounded: each recv times out after 10 s). */
static void hang(int fd)
{
	char c;

	for (int i = 0; i < 60; i++) {
		ssize_t k = recv(fd, &c, 1, 0);

		if (k == 0 || (k < 0 && errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK))
			return;
	}
}

static void reply(int fd, unsigned long n, const char *req, size_t reqlen, int anthropic)
{
	sl_buf body = SL_BUF_INIT, head = SL_BUF_INIT, tmp = SL_BUF_INIT, extra = SL_BUF_INIT;
	int status = 500, found = 0, cut = 0;
	long trickle = -1;
	unsigned long k, m = match_rule(req, reqlen), used = 0;

	if (m) {
		tkind = "match";
		found = 1;
		k = m;
	}
	for (k = m ? m : n; !m && k >= 1 && !found; k--) {
		for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]) && !found; i++) {
			char *path = dir_file(k, "reply", suffixes[i]);

			found = exists(path);
			free(path);
		}
		if (found)
			break;
	}
	if (found) {
		status = 200;
		if (!reply_file(&tmp, k, "status"))
			status = atoi(tmp.buf);
		if (status < 100 || status > 599)
			status = 500;
		if (!reply_file(&tmp, k, "delay"))
			nap_ms(atol(tmp.buf));
		if (!reply_file(&tmp, k, "headers")) {
			for (char *line = tmp.buf, *nl; *line; line = nl) {
				size_t ll;

				nl = strchr(line, '\n');
				nl = nl ? nl + 1 : line + strlen(line);
				ll = (size_t)(nl - line);
				while (ll && (line[ll - 1] == '\n' || line[ll - 1] == '\r'))
					ll--;
				if (ll) {
					sl_buf_add(&extra, line, ll);
					sl_buf_adds(&extra, "\r\n");
				}
			}
		}
		if (!reply_file(&tmp, k, "echo")) {
			echo_body(&body, req, reqlen, anthropic);
		} else if (!reply_file(&tmp, k, "tool")) {
			if (tool_body(&body, req, reqlen, anthropic, &tmp))
				status = 400;
		} else if (reply_file(&body, k, "json")) {
			sl_buf_reset(&body);
			sl_buf_addf(&body, "{\"error\":{\"message\":\"stub-model: no reply-%lu.json\"}}", k);
		}
		if (k <= MAX_RULES) {
			pthread_mutex_lock(&count_lock);
			used = ++uses[m ? 1 : 0][k];
			pthread_mutex_unlock(&count_lock);
		}
		if (!reply_file(&tmp, k, "fault")) {
			const char *sp = strchr(tmp.buf, ' ');
			unsigned long limit = sp && strncmp(tmp.buf, "trickle", 7) ?
				strtoul(sp + 1, NULL, 10) : 0;

			if (limit && used > limit)
				;
			else if (!strncmp(tmp.buf, "close", 5))
				goto done;
			else if (!strncmp(tmp.buf, "reset", 5)) {
				struct linger lg = { 1, 0 };

				setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
				goto done;
			} else if (!strncmp(tmp.buf, "hang", 4)) {
				hang(fd);
				goto done;
			} else if (!strncmp(tmp.buf, "truncate", 8))
				cut = 1;
			else if (!strncmp(tmp.buf, "garbage", 7)) {
				sl_buf_reset(&body);
				sl_buf_adds(&body, "<html><body>502 upstream hiccup</body></html>");
			} else if (!strncmp(tmp.buf, "drop", 4))
				trickle = -2;
			else if (!strncmp(tmp.buf, "trickle", 7))
				trickle = atol(tmp.buf + 7);
		}
		if (cut)
			sl_buf_setlen(&body, body.len / 2);
	} else {
		sl_buf_addf(&body, "{\"error\":{\"message\":\"stub-model: no reply file for request %lu\"}}", n);
	}
	sl_buf_addf(&head, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
		    "Content-Length: %zu\r\nConnection: close\r\n%s\r\n",
		    status, reason(status), body.len, extra.buf);
	if (send_all(fd, head.buf, head.len))
		goto done;
	if (trickle == -2) {
		send_all(fd, body.buf, body.len / 2);
	} else if (trickle >= 0) {
		for (size_t i = 0; i < body.len; i++) {
			if (send_all(fd, body.buf + i, 1))
				break;
			nap_ms(trickle);
		}
	} else {
		send_all(fd, body.buf, body.len);
	}
done:
	tkind = NULL;
	sl_buf_release(&body);
	sl_buf_release(&head);
	sl_buf_release(&tmp);
	sl_buf_release(&extra);
}

/* A GET: logged to DIR/get.log, answered from DIR/get.status, not numbered. */
static void answer_get(int fd, const char *head, size_t hlen)
{
	sl_buf path = SL_BUF_INIT, tmp = SL_BUF_INIT, out = SL_BUF_INIT;
	const char *body = "{\"data\":[]}";
	int status = 200;
	FILE *f;

	sl_buf_addf(&path, "%s/get.log", dir);
	pthread_mutex_lock(&count_lock);
	if ((f = fopen(path.buf, "a"))) {
		fwrite(head, 1, hlen, f);
		fclose(f);
	}
	pthread_mutex_unlock(&count_lock);
	sl_buf_reset(&path);
	sl_buf_addf(&path, "%s/get.status", dir);
	if (!sl_read_file(&tmp, path.buf, 64, NULL) && atoi(tmp.buf) >= 100 && atoi(tmp.buf) <= 599)
		status = atoi(tmp.buf);
	if (status != 200)
		body = "{\"error\":{\"message\":\"stub-model: refused\"}}";
	sl_buf_addf(&out, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
		    "Content-Length: %zu\r\nConnection: close\r\n\r\n%s", status, reason(status),
		    strlen(body), body);
	send_all(fd, out.buf, out.len);
	sl_buf_release(&path);
	sl_buf_release(&tmp);
	sl_buf_release(&out);
}

/* Read one request, number it, save it and answer it. */
static void *serve(void *arg)
{
	int fd = (int)(intptr_t)arg;
	sl_buf in = SL_BUF_INIT;
	char chunk[65536], *end = NULL, *path;
	size_t hlen, clen = 0, vlen;
	unsigned long n;
	const char *v, *sp;
	int anthropic;

	while (!(end = strstr(in.buf, "\r\n\r\n"))) {
		ssize_t k = recv(fd, chunk, sizeof(chunk), 0);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0 || in.len + (size_t)k > HEADER_CAP + sizeof(chunk))
			goto done;
		sl_buf_add(&in, chunk, (size_t)k);
	}
	hlen = (size_t)(end - in.buf) + 4;
	if ((v = header_value(in.buf, "Content-Length", &vlen)))
		clen = strtoul(v, NULL, 10);
	if (clen > BODY_CAP)
		goto done;
	if ((v = header_value(in.buf, "Expect", &vlen)) && vlen >= 12 &&
	    !strncasecmp(v, "100-continue", 12))
		send_all(fd, "HTTP/1.1 100 Continue\r\n\r\n", 25);
	while (in.len < hlen + clen) {
		ssize_t k = recv(fd, chunk, sizeof(chunk), 0);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			goto done;
		sl_buf_add(&in, chunk, (size_t)k);
	}
	if (!strncmp(in.buf, "GET ", 4)) {
		answer_get(fd, in.buf, hlen);
		goto done;
	}
	pthread_mutex_lock(&count_lock);
	n = ++count;
	pthread_mutex_unlock(&count_lock);
	path = dir_file(n, "request", "headers");
	sl_write_file(path, in.buf, hlen, NULL);
	free(path);
	path = dir_file(n, "request", "json");
	sl_write_file(path, in.buf + hlen, clen, NULL);
	free(path);
	/* the request line's path: "POST /v1/messages HTTP/1.1" */
	anthropic = 0;
	if ((sp = memchr(in.buf, ' ', hlen))) {
		const char *pe = strchrnul(sp + 1, ' ');

		anthropic = pe - (sp + 1) >= 9 && !strncmp(pe - 9, "/messages", 9);
	}
	reply(fd, n, in.buf + hlen, clen, anthropic);
done:
	sl_buf_release(&in);
	shutdown(fd, SHUT_WR);
	close(fd);
	return NULL;
}

static int usage(void)
{
	fprintf(stderr, "usage: stub-model --dir DIR [--port-file FILE] [--max-seconds N]\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *port_file = NULL;
	unsigned max_seconds = 300;
	struct sockaddr_in sa;
	socklen_t salen = sizeof(sa);
	struct timeval tv = { 10, 0 };
	pthread_attr_t attr;
	int one = 1, lfd;
	char port[32];
	sl_err err = SL_ERR_INIT;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--dir") && i + 1 < argc)
			dir = argv[++i];
		else if (!strcmp(argv[i], "--port-file") && i + 1 < argc)
			port_file = argv[++i];
		else if (!strcmp(argv[i], "--max-seconds") && i + 1 < argc)
			max_seconds = (unsigned)strtoul(argv[++i], NULL, 10);
		else
			return usage();
	}
	if (!dir)
		return usage();
	signal(SIGPIPE, SIG_IGN);
	alarm(max_seconds ? max_seconds : 300);

	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0) {
		perror("stub-model: socket");
		return 1;
	}
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = 0;
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 256) ||
	    getsockname(lfd, (struct sockaddr *)&sa, &salen)) {
		perror("stub-model: bind");
		return 1;
	}
	snprintf(port, sizeof(port), "%u\n", (unsigned)ntohs(sa.sin_port));
	if (port_file) {
		if (sl_write_file(port_file, port, strlen(port), &err)) {
			fprintf(stderr, "stub-model: %s\n", err.msg);
			return 1;
		}
	} else {
		fputs(port, stdout);
		fflush(stdout);
	}

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		pthread_t t;

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			perror("stub-model: accept");
			return 1;
		}
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		if (pthread_create(&t, &attr, serve, (void *)(intptr_t)fd)) {
			/* out of threads: answer in this one rather than drop it */
			serve((void *)(intptr_t)fd);
		}
	}
}
