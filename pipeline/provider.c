/*
 * provider.c - model providers: an OpenAI-compatible HTTP endpoint and an
 * external command.
 *
 * openai: sl_provider_new reads the key from the environment once, keeps it
 * in the provider (wiped on free) and sends it only as an Authorization
 * header; messages that could quote a server's answer have the key masked.
 * The request body is built with jansson (text that is not valid UTF-8 is
 * repaired, as JSON requires), sent with the libcurl easy interface (one
 * handle per provider so connections are reused), and the response body is
 * read into a capped buffer, then parsed.  libcurl is initialised once per
 * process, on first use, behind a pthread_once; curl_global_cleanup is never
 * called.
 *
 * command: fork, then in the child a new process group, stdin/stdout/stderr
 * on a socket and two pipes, every other descriptor closed, and exec of
 * /bin/sh -c COMMAND with the host environment.  stdin is a socket so the
 * parent can write with MSG_NOSIGNAL: a command that exits without reading
 * cannot kill sluice with SIGPIPE.  The parent writes the flattened chat and
 * reads both outputs with poll() until they close or the deadline passes,
 * then waits for the child; at the deadline, and after every run, the whole
 * process group is killed (while the leader is an unreaped zombie, so the
 * group id cannot have been reused).
 */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "provider.h"
#include "util.h"

extern char **environ;

#define REPLY_CAP (1024 * 1024)          /* the reply text */
#define BODY_CAP (8 * 1024 * 1024)       /* an HTTP response body */
#define STDERR_KEEP 8192                 /* tail of a command's stderr */
#define ERR_SNIPPET 300                  /* server text quoted in an error */

struct sl_provider {
	int kind;
	unsigned timeout_s;
	/* openai */
	char *url;                  /* base_url + "/chat/completions" */
	char *model;
	char *key;                  /* NULL: no Authorization header */
	double temperature;
	int max_tokens;
	CURL *curl;
	/* command */
	char *command;
};

void sl_completion_init(sl_completion *c)
{
	sl_buf_init(&c->text, REPLY_CAP);
	c->tokens_in = c->tokens_out = -1;
	c->http_status = 0;
	c->latency_ms = 0;
}

void sl_completion_release(sl_completion *c)
{
	sl_buf_release(&c->text);
	sl_completion_init(c);
}

int sl_provider_kind_parse(const char *name)
{
	if (!name)
		return 0;
	if (!strcmp(name, "rules"))
		return SL_PROVIDER_RULES;
	if (!strcmp(name, "openai"))
		return SL_PROVIDER_OPENAI;
	if (!strcmp(name, "command"))
		return SL_PROVIDER_COMMAND;
	return 0;
}

const char *sl_provider_kind_name(int kind)
{
	switch (kind) {
	case SL_PROVIDER_RULES:
		return "rules";
	case SL_PROVIDER_OPENAI:
		return "openai";
	case SL_PROVIDER_COMMAND:
		return "command";
	}
	return "unknown";
}

void sl_provider_flatten_chat(sl_buf *out, const sl_chat_msg *msgs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *c = msgs[i].content ? msgs[i].content : "";
		size_t len = strlen(c);

		if (i)
			sl_buf_addch(out, '\n');
		sl_buf_adds(out, "### ");
		for (const char *r = msgs[i].role ? msgs[i].role : "user"; *r; r++)
			sl_buf_addch(out, *r >= 'a' && *r <= 'z' ? *r - 'a' + 'A' : *r);
		sl_buf_addch(out, '\n');
		sl_buf_add(out, c, len);
		if (!len || c[len - 1] != '\n')
			sl_buf_addch(out, '\n');
	}
}

/* ---- openai ---------------------------------------------------------- */

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc;

static void curl_init(void)
{
	curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

static void wipe(char *s)
{
	if (s)
		explicit_bzero(s, strlen(s));
}

/* Replace every occurrence of key in b by "***" (keys shorter than 4 are left). */
static void mask_key(sl_buf *b, const char *key)
{
	size_t kl = key ? strlen(key) : 0;
	char *p;

	if (kl < 4)
		return;
	while ((p = strstr(b->buf, key))) {
		memcpy(p, "***", 3);
		memmove(p + 3, p + kl, b->len - (size_t)(p - b->buf) - kl + 1);
		b->len -= kl - 3;
	}
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if invalid. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	size_t len;
	unsigned cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xC2 && s[0] <= 0xDF) {
		len = 2;
		cp = s[0] & 0x1F;
	} else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
		len = 3;
		cp = s[0] & 0x0F;
	} else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
		len = 4;
		cp = s[0] & 0x07;
	} else {
		return 0;
	}
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3F);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)))
		return 0;
	return len;
}

/* A JSON string of s, with invalid UTF-8 bytes replaced by U+FFFD. */
static json_t *json_text(const char *s)
{
	const unsigned char *u = (const unsigned char *)(s ? s : "");
	size_t n = strlen((const char *)u);
	sl_buf b = SL_BUF_INIT;
	json_t *j;

	for (size_t i = 0; i < n; ) {
		size_t l = utf8_seq(u + i, n - i);

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

static char *build_request(const sl_provider *p, const sl_chat_msg *msgs, size_t n)
{
	json_t *root = json_object(), *arr = json_array();
	char *body;

	json_object_set_new(root, "model", json_text(p->model));
	for (size_t i = 0; i < n; i++) {
		json_t *m = json_object();

		json_object_set_new(m, "role", json_text(msgs[i].role ? msgs[i].role : "user"));
		json_object_set_new(m, "content", json_text(msgs[i].content));
		json_array_append_new(arr, m);
	}
	json_object_set_new(root, "messages", arr);       /* steals arr */
	if (p->temperature >= 0)
		json_object_set_new(root, "temperature", json_real(p->temperature));
	if (p->max_tokens > 0)
		json_object_set_new(root, "max_tokens", json_integer(p->max_tokens));
	body = json_dumps(root, JSON_COMPACT | JSON_REAL_PRECISION(12));
	json_decref(root);
	if (!body)
		BUG("json_dumps failed");
	return body;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *userp)
{
	sl_buf *b = userp;
	size_t n = size * nmemb;

	if (sl_buf_add(b, data, n))
		return 0;      /* over the cap: abort the transfer */
	return n;
}

/* One line of server text for an error message: no control characters, capped. */
static void add_snippet(sl_buf *out, const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len && i < ERR_SNIPPET; i++) {
		unsigned char c = (unsigned char)s[i];

		sl_buf_addch(out, c < 0x20 || c == 0x7F ? ' ' : c);
	}
	if (i < len)
		sl_buf_adds(out, "...");
}

static void http_error_message(sl_buf *msg, long status, const sl_buf *body)
{
	json_t *root = json_loadb(body->buf, body->len, 0, NULL), *e, *m = NULL;

	sl_buf_addf(msg, "HTTP %ld: ", status);
	if (json_is_object(root)) {
		e = json_object_get(root, "error");
		if (json_is_object(e))
			m = json_object_get(e, "message");
		else if (json_is_string(e))
			m = e;
		if (!json_is_string(m))
			m = json_object_get(root, "message");
		if (!json_is_string(m))
			m = json_object_get(root, "detail");
	}
	if (json_is_string(m))
		add_snippet(msg, json_string_value(m), json_string_length(m));
	else if (body->len)
		add_snippet(msg, body->buf, body->len);
	else
		sl_buf_adds(msg, "(empty body)");
	json_decref(root);
}

static int64_t json_int_or(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);

	return json_is_integer(v) ? (int64_t)json_integer_value(v) : -1;
}

static int parse_response(sl_completion *out, const sl_buf *body, sl_err *err)
{
	json_error_t jerr;
	json_t *root = json_loadb(body->buf, body->len, 0, &jerr);
	json_t *choices, *msg, *content, *usage;
	int ret = SL_ERROR;

	if (!json_is_object(root)) {
		sl_err_set(err, SL_ERROR, "the model endpoint returned %s: %s",
			   root ? "JSON that is not an object" : "invalid JSON",
			   root ? "" : jerr.text);
		goto done;
	}
	choices = json_object_get(root, "choices");
	if (!json_is_array(choices) || !json_array_size(choices)) {
		sl_err_set(err, SL_ERROR, "the model's reply has no choices");
		goto done;
	}
	msg = json_object_get(json_array_get(choices, 0), "message");
	content = json_object_get(msg, "content");
	if (!json_is_string(content)) {
		json_t *fr = json_object_get(json_array_get(choices, 0), "finish_reason");

		sl_err_set(err, SL_ERROR, "the model's reply has no message content%s%s%s",
			   json_is_string(fr) ? " (finish_reason '" : "",
			   json_is_string(fr) ? json_string_value(fr) : "",
			   json_is_string(fr) ? "')" : "");
		goto done;
	}
	sl_buf_add(&out->text, json_string_value(content), json_string_length(content));
	usage = json_object_get(root, "usage");
	out->tokens_in = json_int_or(usage, "prompt_tokens");
	out->tokens_out = json_int_or(usage, "completion_tokens");
	ret = SL_OK;
done:
	json_decref(root);
	return ret;
}

static int complete_openai(sl_provider *p, const sl_chat_msg *msgs, size_t n,
			   sl_completion *out, sl_err *err)
{
	char errbuf[CURL_ERROR_SIZE] = "";
	struct curl_slist *headers = NULL;
	sl_buf body = SL_BUF_INIT, auth = SL_BUF_INIT, msg = SL_BUF_INIT;
	char *req = NULL;
	long status = 0;
	CURLcode rc;
	int ret = SL_ERROR;

	sl_buf_init(&body, BODY_CAP);
	req = build_request(p, msgs, n);
	headers = curl_slist_append(headers, "Content-Type: application/json");
	headers = curl_slist_append(headers, "Accept: application/json");
	headers = curl_slist_append(headers, "Expect:");
	if (p->key) {
		sl_buf_addf(&auth, "Authorization: Bearer %s", p->key);
		headers = curl_slist_append(headers, auth.buf);
	}
	if (!headers) {
		sl_err_set(err, SL_ERROR, "out of memory building request headers");
		goto done;
	}

	curl_easy_reset(p->curl);
	curl_easy_setopt(p->curl, CURLOPT_URL, p->url);
	curl_easy_setopt(p->curl, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(p->curl, CURLOPT_POST, 1L);
	curl_easy_setopt(p->curl, CURLOPT_POSTFIELDS, req);
	curl_easy_setopt(p->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(req));
	curl_easy_setopt(p->curl, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(p->curl, CURLOPT_USERAGENT, "sluice");
	curl_easy_setopt(p->curl, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(p->curl, CURLOPT_WRITEDATA, &body);
	curl_easy_setopt(p->curl, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(p->curl, CURLOPT_TIMEOUT, (long)p->timeout_s);
	curl_easy_setopt(p->curl, CURLOPT_CONNECTTIMEOUT, (long)(p->timeout_s < 30 ? p->timeout_s : 30));
	curl_easy_setopt(p->curl, CURLOPT_NOSIGNAL, 1L);

	rc = curl_easy_perform(p->curl);
	curl_easy_getinfo(p->curl, CURLINFO_RESPONSE_CODE, &status);
	out->http_status = (int)status;
	if (rc == CURLE_OPERATION_TIMEDOUT) {
		sl_buf_addf(&msg, "the model request to '%s' timed out after %u s", p->url, p->timeout_s);
	} else if (rc == CURLE_WRITE_ERROR && body.truncated) {
		sl_buf_addf(&msg, "the model endpoint's response is larger than %d MiB",
			    BODY_CAP / (1024 * 1024));
	} else if (rc != CURLE_OK) {
		sl_buf_addf(&msg, "cannot reach the model at '%s': %s", p->url,
			    *errbuf ? errbuf : curl_easy_strerror(rc));
	} else if (status < 200 || status > 299) {
		http_error_message(&msg, status, &body);
	} else {
		ret = parse_response(out, &body, err);
		goto done;
	}
	mask_key(&msg, p->key);
	sl_err_set(err, SL_ERROR, "%s", msg.buf);
done:
	/* do not leave the key in freed memory */
	for (struct curl_slist *h = headers; h; h = h->next)
		wipe(h->data);
	curl_slist_free_all(headers);
	curl_easy_setopt(p->curl, CURLOPT_HTTPHEADER, NULL);
	wipe(auth.buf);
	sl_buf_release(&auth);
	sl_buf_release(&body);
	sl_buf_release(&msg);
	free(req);
	return ret;
}

/* ---- command --------------------------------------------------------- */

/* Move fd out of 0..2 so the child's dup2 calls cannot clobber it. */
static int above_stdio(int fd)
{
	int nfd;

	if (fd < 0 || fd > 2)
		return fd;
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	close(fd);
	return nfd;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Keep the last STDERR_KEEP bytes of stderr. */
static void keep_tail(sl_buf *b, const char *data, size_t n)
{
	if (n >= STDERR_KEEP) {
		sl_buf_reset(b);
		sl_buf_add(b, data + n - STDERR_KEEP, STDERR_KEEP);
		return;
	}
	if (b->len + n > STDERR_KEEP) {
		size_t drop = b->len + n - STDERR_KEEP;

		memmove(b->buf, b->buf + drop, b->len - drop);
		sl_buf_setlen(b, b->len - drop);
	}
	sl_buf_add(b, data, n);
}

static void last_line(sl_buf *out, sl_buf *text)
{
	const char *nl;

	sl_buf_rtrim(text);
	nl = strrchr(text->buf, '\n');
	nl = nl ? nl + 1 : text->buf;
	add_snippet(out, nl, strlen(nl));
}

static int complete_command(sl_provider *p, const sl_chat_msg *msgs, size_t n,
			    sl_completion *out, sl_err *err)
{
	int sv[2] = { -1, -1 }, po[2] = { -1, -1 }, pe[2] = { -1, -1 };
	int ret = SL_ERROR, status = 0, timed_out = 0, killed = 0;
	char *argv[] = { "/bin/sh", "-c", p->command, NULL };
	sl_buf input = SL_BUF_INIT, errtail = SL_BUF_INIT, msg = SL_BUF_INIT;
	int64_t deadline = sl_now_ms() + (int64_t)p->timeout_s * 1000;
	size_t woff = 0;
	pid_t pid = -1;
	char chunk[65536];

	sl_provider_flatten_chat(&input, msgs, n);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) ||
	    pipe2(po, O_CLOEXEC) || pipe2(pe, O_CLOEXEC)) {
		sl_err_set(err, SL_ERROR, "cannot create pipes for the command: %s", strerror(errno));
		goto done;
	}
	sv[1] = above_stdio(sv[1]);
	po[1] = above_stdio(po[1]);
	pe[1] = above_stdio(pe[1]);
	if (sv[1] < 0 || po[1] < 0 || pe[1] < 0) {
		sl_err_set(err, SL_ERROR, "cannot create pipes for the command: %s", strerror(errno));
		goto done;
	}

	pid = fork();
	if (pid < 0) {
		sl_err_set(err, SL_ERROR, "cannot run the command: fork: %s", strerror(errno));
		goto done;
	}
	if (!pid) {
		/* the child: async-signal-safe calls only */
		struct sigaction sa;
		sigset_t none;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = SIG_DFL;
		sigaction(SIGPIPE, &sa, NULL);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		setpgid(0, 0);
		if (dup2(sv[1], 0) < 0 || dup2(po[1], 1) < 0 || dup2(pe[1], 2) < 0)
			_exit(127);
		close_range(3, ~0U, 0);
		execve("/bin/sh", argv, environ);
		_exit(127);
	}
	setpgid(pid, pid);       /* also here: no window where the group does not exist */
	close_fd(&sv[1]);
	close_fd(&po[1]);
	close_fd(&pe[1]);
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	fcntl(po[0], F_SETFL, O_NONBLOCK);
	fcntl(pe[0], F_SETFL, O_NONBLOCK);
	if (!input.len)
		close_fd(&sv[0]);

	while (po[0] >= 0 || pe[0] >= 0) {
		struct pollfd fds[3];
		int nf = 0, r;
		int64_t left = deadline - sl_now_ms();

		if (left <= 0) {
			timed_out = 1;
			break;
		}
		if (sv[0] >= 0)
			fds[nf++] = (struct pollfd){ sv[0], POLLOUT, 0 };
		if (po[0] >= 0)
			fds[nf++] = (struct pollfd){ po[0], POLLIN, 0 };
		if (pe[0] >= 0)
			fds[nf++] = (struct pollfd){ pe[0], POLLIN, 0 };
		r = poll(fds, (nfds_t)nf, left > 1000 ? 1000 : (int)left);
		if (r < 0 && errno != EINTR) {
			sl_err_set(err, SL_ERROR, "poll failed: %s", strerror(errno));
			killpg(pid, SIGKILL);
			killed = 1;
			break;
		}
		for (int i = 0; r > 0 && i < nf; i++) {
			int fd = fds[i].fd;
			ssize_t k;

			if (!fds[i].revents)
				continue;
			if (fd == sv[0]) {
				k = send(fd, input.buf + woff, input.len - woff,
					 MSG_NOSIGNAL | MSG_DONTWAIT);
				if (k > 0)
					woff += (size_t)k;
				/* EPIPE and friends: the command stopped reading */
				if (woff == input.len || (k < 0 && errno != EAGAIN && errno != EINTR) ||
				    (fds[i].revents & (POLLERR | POLLHUP)))
					close_fd(&sv[0]);
				continue;
			}
			k = read(fd, chunk, sizeof(chunk));
			if (k < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			if (k <= 0) {
				close_fd(fd == po[0] ? &po[0] : &pe[0]);
				continue;
			}
			if (fd == po[0])
				sl_buf_add(&out->text, chunk, (size_t)k);   /* past the cap: drained */
			else
				keep_tail(&errtail, chunk, (size_t)k);
		}
	}
	if (timed_out && !killed) {
		killpg(pid, SIGKILL);
		killed = 1;
	}

	/* wait for the exit without reaping, so the group id stays ours */
	for (long nap = 1; ; nap = nap < 20 ? nap * 2 : 20) {
		siginfo_t si;
		int rc;

		memset(&si, 0, sizeof(si));
		rc = waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT);
		if (!rc && si.si_pid == pid)
			break;
		if (rc && errno == ECHILD) {
			sl_err_set(err, SL_ERROR, "lost the command's process %ld", (long)pid);
			pid = -1;
			goto done;
		}
		if (!killed && sl_now_ms() >= deadline) {
			killpg(pid, SIGKILL);
			killed = timed_out = 1;
		}
		sleep_ms(nap);
	}
	killpg(pid, SIGKILL);      /* stragglers: background children of the command */
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	pid = -1;

	out->http_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (timed_out) {
		sl_err_set(err, SL_ERROR, "the command timed out after %u s and was killed",
			   p->timeout_s);
		goto done;
	}
	if (WIFSIGNALED(status))
		sl_buf_addf(&msg, "the command was killed by signal %d", WTERMSIG(status));
	else if (WEXITSTATUS(status))
		sl_buf_addf(&msg, "the command exited with status %d", WEXITSTATUS(status));
	if (msg.len) {
		if (errtail.len) {
			sl_buf_adds(&msg, ": ");
			last_line(&msg, &errtail);
		}
		sl_err_set(err, SL_ERROR, "%s", msg.buf);
		goto done;
	}
	ret = SL_OK;
done:
	if (pid > 0) {
		killpg(pid, SIGKILL);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	close_fd(&sv[0]);
	close_fd(&sv[1]);
	close_fd(&po[0]);
	close_fd(&po[1]);
	close_fd(&pe[0]);
	close_fd(&pe[1]);
	sl_buf_release(&input);
	sl_buf_release(&errtail);
	sl_buf_release(&msg);
	return ret;
}

/* ---- lifecycle ------------------------------------------------------- */

int sl_provider_new(sl_provider **out, const sl_provider_opts *opts, sl_err *err)
{
	sl_provider *p = NULL;
	int ret = SL_EINPUT;

	*out = NULL;
	if (!opts || opts->version != SL_PROVIDER_OPTS_VERSION)
		return sl_err_set(err, SL_EINPUT, "unsupported provider options version");
	p = sl_xcalloc(1, sizeof(*p));
	p->kind = opts->kind;
	p->timeout_s = opts->timeout_s ? opts->timeout_s : 300;
	switch (opts->kind) {
	case SL_PROVIDER_OPENAI: {
		const char *key = NULL;
		size_t bl;

		if (!opts->base_url || !*opts->base_url) {
			sl_err_set(err, SL_EINPUT, "the openai provider needs a base_url");
			goto done;
		}
		if (strncmp(opts->base_url, "http://", 7) && strncmp(opts->base_url, "https://", 8)) {
			sl_err_set(err, SL_EINPUT, "base_url '%s' is not an http:// or https:// URL",
				   opts->base_url);
			goto done;
		}
		if (!opts->model || !*opts->model) {
			sl_err_set(err, SL_EINPUT, "the openai provider needs a model");
			goto done;
		}
		if (opts->api_key_env && *opts->api_key_env) {
			key = getenv(opts->api_key_env);
			if (!key || !*key) {
				sl_err_set(err, SL_EINPUT, "environment variable '%s' is %s",
					   opts->api_key_env, key ? "empty" : "not set");
				goto done;
			}
			p->key = sl_xstrdup(key);
		}
		bl = strlen(opts->base_url);
		while (bl && opts->base_url[bl - 1] == '/')
			bl--;
		{
			sl_buf url = SL_BUF_INIT;

			sl_buf_add(&url, opts->base_url, bl);
			sl_buf_adds(&url, "/chat/completions");
			p->url = sl_buf_detach(&url, NULL);
		}
		p->model = sl_xstrdup(opts->model);
		p->temperature = opts->temperature;
		p->max_tokens = opts->max_tokens;
		pthread_once(&curl_once, curl_init);
		if (curl_init_rc != CURLE_OK) {
			sl_err_set(err, SL_ERROR, "cannot initialise libcurl: %s",
				   curl_easy_strerror(curl_init_rc));
			ret = SL_ERROR;
			goto done;
		}
		if (!(p->curl = curl_easy_init())) {
			sl_err_set(err, SL_ERROR, "cannot create a libcurl handle");
			ret = SL_ERROR;
			goto done;
		}
		break;
	}
	case SL_PROVIDER_COMMAND:
		if (!opts->command || !*opts->command) {
			sl_err_set(err, SL_EINPUT, "the command provider needs a command");
			goto done;
		}
		p->command = sl_xstrdup(opts->command);
		break;
	case SL_PROVIDER_RULES:
		sl_err_set(err, SL_EINPUT, "the rules provider does not call a model");
		goto done;
	default:
		sl_err_set(err, SL_EINPUT, "unknown provider kind %d", opts->kind);
		goto done;
	}
	*out = p;
	p = NULL;
	ret = SL_OK;
done:
	sl_provider_free(p);
	return ret;
}

int sl_provider_complete(sl_provider *p, const sl_chat_msg *msgs, size_t n,
			 sl_completion *out, sl_err *err)
{
	int64_t t0 = sl_now_ms();
	int ret;

	sl_buf_reset(&out->text);
	out->tokens_in = out->tokens_out = -1;
	out->http_status = 0;
	if (p->kind == SL_PROVIDER_OPENAI)
		ret = complete_openai(p, msgs, n, out, err);
	else
		ret = complete_command(p, msgs, n, out, err);
	out->latency_ms = sl_now_ms() - t0;
	return ret;
}

void sl_provider_free(sl_provider *p)
{
	if (!p)
		return;
	if (p->curl)
		curl_easy_cleanup(p->curl);
	wipe(p->key);
	free(p->key);
	free(p->url);
	free(p->model);
	free(p->command);
	free(p);
}
