/*
 * stub.h - start tests/helper/stub-model for one unit test and talk to its
 * directory.  The binary is $STUB_MODEL, else build/tests/helper/stub-model
 * (tests run from the top of the checkout).
 *
 *     stub s;
 *     if (!stub_start(&s)) return;          (the test has failed already)
 *     stub_put(&s, "reply-1.json", "...");  or stub_fixture(&s, "reply-1.json", "openai-ok.json")
 *     ... requests to s.base_url ...
 *     char *req = stub_get(&s, "request-1.json");   (caller frees; "" if absent)
 *     stub_stop(&s);                         (kills it, removes its directory)
 *
 * Each stub has its own directory, so request numbers start at 1 per test.
 * A stub that does not start fails the running test: a test that needs the
 * server never passes without it.  The wait for its port is bounded in
 * count (a minute of 10 ms naps) and ends early if the server exits.
 */
#ifndef SL_TEST_STUB_H
#define SL_TEST_STUB_H

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/util.h"
#include "unit.h"

typedef struct stub {
	char dir[PATH_MAX];
	char base_url[128];
	int port;
	pid_t pid;
} stub;

static inline void stub_nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static inline void stub_put(stub *s, const char *name, const char *text)
{
	char *p = sl_path_join(s->dir, name);
	sl_err err = SL_ERR_INIT;

	if (sl_write_file(p, text, strlen(text), &err))
		fprintf(stderr, "%s\n", err.msg);
	free(p);
}

static inline char *stub_get(stub *s, const char *name)
{
	char *p = sl_path_join(s->dir, name);
	sl_buf b = SL_BUF_INIT;

	sl_read_file(&b, p, 0, NULL);
	free(p);
	return sl_buf_detach(&b, NULL);
}

static inline int stub_has(stub *s, const char *name)
{
	char *p = sl_path_join(s->dir, name);
	int ok = !access(p, F_OK);

	free(p);
	return ok;
}

/* Copy tests/fixtures/provider/FIXTURE to the stub's NAME. */
static inline void stub_fixture(stub *s, const char *name, const char *fixture)
{
	sl_buf b = SL_BUF_INIT, path = SL_BUF_INIT;
	sl_err err = SL_ERR_INIT;

	sl_buf_addf(&path, "tests/fixtures/provider/%s", fixture);
	if (sl_read_file(&b, path.buf, 0, &err))
		fprintf(stderr, "%s\n", err.msg);
	stub_put(s, name, b.buf);
	sl_buf_release(&b);
	sl_buf_release(&path);
}

static inline int stub_start(stub *s)
{
	const char *bin = sl_getenv_or("STUB_MODEL", "build/tests/helper/stub-model");
	char *port_file, *port = NULL;
	int ok = 0;

	memset(s, 0, sizeof(*s));
	s->pid = -1;
	snprintf(s->dir, sizeof(s->dir), "%s/sluice-test-stub-XXXXXX",
		 sl_getenv_or("TMPDIR", "/tmp"));
	if (!mkdtemp(s->dir)) {
		perror("mkdtemp");
		unit_cur_failed = 1;
		return 0;
	}
	port_file = sl_path_join(s->dir, "port");
	s->pid = fork();
	if (s->pid == 0) {
		execl(bin, bin, "--dir", s->dir, "--port-file", port_file, "--max-seconds", "120",
		      (char *)NULL);
		fprintf(stderr, "cannot run %s: %s\n", bin, strerror(errno));
		_exit(127);
	}
	for (int i = 0; s->pid > 0 && i < 6000; i++) {
		int st;

		free(port);
		port = stub_get(s, "port");
		if (*port && strchr(port, '\n')) {
			ok = 1;
			break;
		}
		if (waitpid(s->pid, &st, WNOHANG) == s->pid) {
			s->pid = -1;
			break;
		}
		stub_nap_ms(10);
	}
	if (ok) {
		s->port = atoi(port);
		snprintf(s->base_url, sizeof(s->base_url), "http://127.0.0.1:%d/v1/", s->port);
	} else {
		fprintf(stderr, "stub-model did not start (%s)\n", bin);
		unit_cur_failed = 1;
	}
	free(port);
	free(port_file);
	return ok;
}

static inline void stub_stop(stub *s)
{
	if (s->pid > 0) {
		kill(s->pid, SIGTERM);
		waitpid(s->pid, NULL, 0);
		s->pid = -1;
	}
	if (*s->dir)
		sl_rm_rf(s->dir, NULL);
	*s->dir = '\0';
}

#endif
