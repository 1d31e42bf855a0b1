/*
 * jail-run - the jail (validators/jail.h) for the shell tests.
 *
 *   jail-run [--timeout MS] [--tmp-mb N] [--cap BYTES] [--env NAME=VALUE]...
 *            [--mem-mb N] [--pids N] [--disk-mb N] [--collect PATH]...
 *            [--collect-to DIR] [--allow-inet 1] [--unsafe 1] [--layers FILE]
 *            [--cpus-milli N] [--as-mb N] [--accept memory,cpu] [--writable 1]
 *            WORKDIR COMMAND
 *       Runs COMMAND in the jail on WORKDIR, copies its captured output to
 *       stdout and exits with its status: the exit code, 128+N when killed
 *       by signal N, 124 on timeout, 125 (message on stderr) when the jail
 *       could not be set up.  Collected files are written to DIR/<n> (n the
 *       position of the --collect), or DIR/<n>.err holding the errno name;
 *       --layers writes the layers the run had, comma-separated, and
 *       "oom" on a second line when the memory limit struck, and
 *       "cpu_ms N" (CPU time of the whole jail) on the last line.
 *       With SLUICE_TEST_NO_LANDLOCK=1 in the environment the jail runs
 *       without its Landlock layer (opts.no_landlock): the threat tests
 *       run that way too, to show that every other layer holds alone.
 *
 *   jail-run --listen PORTFILE SECONDS
 *       A loopback TCP listener for network tests: binds 127.0.0.1:0, writes
 *       the port to PORTFILE, accepts one connection, prints what the peer
 *       sent (until EOF, at most 1 s and 4 KiB) and exits 0; prints
 *       "no connection" and exits 1 if none came within SECONDS.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "validators/jail.h"
#include "common/util.h"

static int usage(void)
{
	fprintf(stderr, "usage: jail-run [--timeout MS] [--tmp-mb N] [--cap BYTES] "
		"[--env NAME=VALUE]... [--mem-mb N] [--pids N] [--disk-mb N]\n"
		"                [--collect PATH]... [--collect-to DIR] [--allow-inet 1]"
		" [--unsafe 1] [--layers FILE]\n"
		"                [--cpus-milli N] [--as-mb N] [--accept memory,cpu] [--writable 1]"
		" WORKDIR COMMAND\n"
		"       jail-run --listen PORTFILE SECONDS\n");
	return 2;
}

static int listen_once(const char *portfile, int seconds)
{
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	struct pollfd pfd;
	char buf[4096], port[16];
	size_t got = 0;
	int s, c;
	int64_t end;

	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s < 0 || bind(s, (struct sockaddr *)&sa, sizeof(sa)) || listen(s, 8) ||
	    getsockname(s, (struct sockaddr *)&sa, &sl)) {
		perror("jail-run: listen");
		return 2;
	}
	snprintf(port, sizeof(port), "%u\n", (unsigned)ntohs(sa.sin_port));
	if (sl_write_file(portfile, port, strlen(port), NULL)) {
		fprintf(stderr, "jail-run: cannot write '%s'\n", portfile);
		return 2;
	}
	pfd.fd = s;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, seconds * 1000) <= 0) {
		printf("no connection\n");
		return 1;
	}
	c = accept(s, NULL, NULL);
	if (c < 0) {
		perror("jail-run: accept");
		return 2;
	}
	end = sl_now_ms() + 1000;
	while (got < sizeof(buf) && sl_now_ms() < end) {
		ssize_t n;

		pfd.fd = c;
		if (poll(&pfd, 1, (int)(end - sl_now_ms())) <= 0)
			break;
		n = read(c, buf + got, sizeof(buf) - got);
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	fwrite(buf, 1, got, stdout);
	close(c);
	close(s);
	return 0;
}

static void save_results(const sl_jail_result *r, const char *dir, const char *layers_file)
{
	char path[4096];

	for (size_t k = 0; k < r->nfiles; k++) {
		const sl_jail_file *f = &r->files[k];

		if (f->err) {
			const char *name = strerrorname_np(f->err);

			snprintf(path, sizeof(path), "%s/%zu.err", dir, k);
			sl_write_file(path, name, strlen(name), NULL);
		} else {
			snprintf(path, sizeof(path), "%s/%zu", dir, k);
			sl_write_file(path, f->data.buf, f->data.len, NULL);
		}
	}
	if (layers_file) {
		sl_buf b = SL_BUF_INIT;

		sl_jail_layers_format(&b, r->layers);
		sl_buf_addf(&b, "\n%scpu_ms %lld\n", r->oom ? "oom\n" : "", (long long)r->cpu_ms);
		sl_write_file(layers_file, b.buf, b.len, NULL);
		sl_buf_release(&b);
	}
}

int main(int argc, char **argv)
{
	sl_jail_opts opts = SL_JAIL_OPTS_INIT;
	sl_jail_result r;
	sl_err err = SL_ERR_INIT;
	sl_strvec env = SL_STRVEC_INIT, collect = SL_STRVEC_INIT;
	const char *collect_to = ".", *layers_file = NULL;
	int i = 1, code;

	if (argc == 4 && !strcmp(argv[1], "--listen"))
		return listen_once(argv[2], atoi(argv[3]));
	for (; i + 1 < argc && !strncmp(argv[i], "--", 2); i += 2) {
		if (!strcmp(argv[i], "--timeout"))
			opts.timeout_ms = (unsigned)strtoul(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--tmp-mb"))
			opts.tmp_mb = (unsigned)strtoul(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--cap"))
			opts.output_cap = strtoul(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--env"))
			sl_strvec_push(&env, argv[i + 1]);
		else if (!strcmp(argv[i], "--mem-mb"))
			opts.mem_mb = (unsigned)strtoul(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--pids"))
			opts.pids_max = (unsigned)strtoul(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--disk-mb"))
			opts.disk_mb = (unsigned)strtoul(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--collect"))
			sl_strvec_push(&collect, argv[i + 1]);
		else if (!strcmp(argv[i], "--collect-to"))
			collect_to = argv[i + 1];
		else if (!strcmp(argv[i], "--allow-inet"))
			opts.allow_inet = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--unsafe"))
			opts.unsafe = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--layers"))
			layers_file = argv[i + 1];
		else if (!strcmp(argv[i], "--cpus-milli"))
			opts.cpu_milli = (unsigned)strtoul(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--as-mb"))
			opts.as_mb = (unsigned)strtoul(argv[i + 1], NULL, 10);
		else if (!strcmp(argv[i], "--writable"))
			opts.writable_workdir = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--accept"))
			opts.accept = (strstr(argv[i + 1], "memory") ? SL_JAIL_CG_MEMORY : 0) |
				(strstr(argv[i + 1], "cpu") ? SL_JAIL_CG_CPU : 0);
		else
			return usage();
	}
	if (argc - i != 2)
		return usage();
	opts.no_landlock = getenv("SLUICE_TEST_NO_LANDLOCK") &&
		!strcmp(getenv("SLUICE_TEST_NO_LANDLOCK"), "1");
	opts.workdir = argv[i];
	opts.command = argv[i + 1];
	opts.env = (const char *const *)env.v;
	opts.collect = (const char *const *)collect.v;

	sl_jail_result_init(&r);
	if (sl_jail_run(&r, &opts, &err)) {
		fprintf(stderr, "jail-run: %s\n", err.msg);
		code = 125;
	} else {
		fwrite(r.output.buf, 1, r.output.len, stdout);
		save_results(&r, collect_to, layers_file);
		if (r.timed_out)
			code = 124;
		else if (r.exited)
			code = r.exit_status;
		else
			code = 128 + r.term_signal;
	}
	sl_jail_result_release(&r);
	sl_strvec_release(&env);
	sl_strvec_release(&collect);
	return code;
}
