/*
 * stub-model.c - a canned OpenAI-compatible endpoint for tests, over real HTTP.
 *
 *     stub-model --dir DIR [--port-file FILE] [--max-seconds N]
 *
 * Binds 127.0.0.1 on an ephemeral port, writes the port number and a newline
 * to FILE (a temporary file renamed into place, so a reader never sees half
 * of it; without --port-file the port goes to stdout), then serves requests
 * one at a time, one per connection ("Connection: close").  For request N
 * (1-based) it writes
 *     DIR/request-N.headers   the request line and headers, as received
 *     DIR/request-N.json      the request body (Content-Length bodies only)
 * and answers with the newest K <= N for which DIR/reply-K.json or
 * DIR/reply-K.status exists: status from reply-K.status (default 200), body
 * from reply-K.json (default a JSON error object), after sleeping
 * reply-K.delay milliseconds if that file exists.  With no such K it answers
 * 500.  Request files are written before the answer is sent.
 *
 * It exits on SIGTERM, and by itself after --max-seconds (default 300), so a
 * test that forgets it never leaves it running.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
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

#include "util.h"

#define HEADER_CAP (64 * 1024)
#define BODY_CAP (64 * 1024 * 1024)

static const char *dir;

static int exists(const char *path)
{
	struct stat st;

	return !stat(path, &st);
}

static char *dir_file(const char *fmt, unsigned long n)
{
	sl_buf b = SL_BUF_INIT;

	sl_buf_addf(&b, "%s/", dir);
	sl_buf_addf(&b, fmt, n);
	return sl_buf_detach(&b, NULL);
}

static void send_all(int fd, const char *data, size_t len)
{
	while (len) {
		ssize_t k = send(fd, data, len, MSG_NOSIGNAL);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return;
		data += k;
		len -= (size_t)k;
	}
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
	case 429: return "Too Many Requests";
	case 500: return "Internal Server Error";
	case 503: return "Service Unavailable";
	}
	return "Status";
}

static void reply(int fd, unsigned long n)
{
	sl_buf body = SL_BUF_INIT, head = SL_BUF_INIT, tmp = SL_BUF_INIT;
	int status = 500;
	unsigned long k;

	for (k = n; k >= 1; k--) {
		char *json = dir_file("reply-%lu.json", k), *st = dir_file("reply-%lu.status", k);
		int found = exists(json) || exists(st);

		free(json);
		free(st);
		if (found)
			break;
	}
	if (k >= 1) {
		char *json = dir_file("reply-%lu.json", k), *st = dir_file("reply-%lu.status", k);
		char *delay = dir_file("reply-%lu.delay", k);

		status = 200;
		if (!sl_read_file(&tmp, st, 64, NULL))
			status = atoi(tmp.buf);
		if (status < 100 || status > 599)
			status = 500;
		sl_buf_reset(&tmp);
		if (!sl_read_file(&tmp, delay, 64, NULL)) {
			long ms = atol(tmp.buf);
			struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

			while (ms > 0 && nanosleep(&ts, &ts) && errno == EINTR)
				;
		}
		if (sl_read_file(&body, json, 0, NULL))
			sl_buf_addf(&body, "{\"error\":{\"message\":\"stub-model: no reply-%lu.json\"}}", k);
		free(json);
		free(st);
		free(delay);
	} else {
		sl_buf_addf(&body, "{\"error\":{\"message\":\"stub-model: no reply file for request %lu\"}}", n);
	}
	sl_buf_addf(&head, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
		    "Content-Length: %zu\r\nConnection: close\r\n\r\n",
		    status, reason(status), body.len);
	send_all(fd, head.buf, head.len);
	send_all(fd, body.buf, body.len);
	sl_buf_release(&body);
	sl_buf_release(&head);
	sl_buf_release(&tmp);
}

/* Read one request; 0 and the request saved, or -1 (nothing usable arrived). */
static int serve(int fd, unsigned long n)
{
	sl_buf in = SL_BUF_INIT;
	char chunk[65536], *end = NULL, *path;
	size_t hlen, clen = 0, vlen;
	const char *v;
	int ret = -1;

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
	path = dir_file("request-%lu.headers", n);
	sl_write_file(path, in.buf, hlen, NULL);
	free(path);
	path = dir_file("request-%lu.json", n);
	sl_write_file(path, in.buf + hlen, clen, NULL);
	free(path);
	reply(fd, n);
	ret = 0;
done:
	sl_buf_release(&in);
	return ret;
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
	unsigned long n = 0;
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
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 16) ||
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

	for (;;) {
		int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			perror("stub-model: accept");
			return 1;
		}
		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		if (!serve(fd, n + 1))
			n++;
		shutdown(fd, SHUT_WR);
		close(fd);
	}
}
