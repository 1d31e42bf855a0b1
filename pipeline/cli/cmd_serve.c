/*
 * cmd_serve.c - `sluice serve`: the read-only dashboard and /metrics over
 * one or more stores (pipeline/review/serve.h), until SIGINT or SIGTERM.
 *
 * Prints "serving http://HOST:PORT/" on stdout once the address is bound
 * (with port 0 the port chosen), server errors on stderr.  Reads the token
 * file, if given, once at the start.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "pipeline/cli/cmd.h"
#include "pipeline/review/serve.h"
#include "pipeline/run.h"
#include "common/buf.h"
#include "common/util.h"

struct serve_opts {
	sl_strvec stores;
	const char *listen, *token_file;
	int allow_remote;
	unsigned refresh_ms;
};

static void print_line(void *ctx, const char *line)
{
	(void)ctx;
	fprintf(stderr, "sluice serve: ");
	sl_cmd_print(stderr, line, 0);
	fputc('\n', stderr);
}

/* The token: the file's first line, printable ASCII with no quote, comma or semicolon. */
static int read_token(sl_buf *tok, const char *path, sl_err *err)
{
	int ret = sl_read_file(tok, path, 4096, err);

	if (ret) {
		err->code = SL_EINPUT;
		return SL_EINPUT;
	}
	sl_buf_setlen(tok, strcspn(tok->buf, "\r\n"));
	if (tok->len < 16)
		return sl_err_set(err, SL_EINPUT, "token file '%s': the token on its first line "
				  "must be at least 16 characters", path);
	for (size_t i = 0; i < tok->len; i++)
		if (tok->buf[i] <= ' ' || tok->buf[i] > '~' || strchr("\";,\\", tok->buf[i]))
			return sl_err_set(err, SL_EINPUT, "token file '%s': the token holds a "
					  "character other than printable ASCII (no space, quote, "
					  "comma, semicolon or backslash)", path);
	return SL_OK;
}

/* Wait for SIGINT or SIGTERM, blocked in every thread (the server's too). */
static void block_stop_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, set, NULL);
}

static int serve_main(const sl_command *self, void *opts, const sl_opt_args *args)
{
	struct serve_opts *o = opts;
	sl_serve_opts so = SL_SERVE_OPTS_INIT;
	sl_strvec stores = SL_STRVEC_INIT;
	sl_buf token = SL_BUF_INIT;
	sl_serve *sv = NULL;
	sl_err err = SL_ERR_INIT;
	sigset_t set;
	int ret, sig = 0;

	if (args->n)
		return sl_cmd_usage(self, "unexpected argument '%s'", args->v[0]);
	for (size_t i = 0; i < o->stores.n; i++)
		sl_strvec_push(&stores, o->stores.v[i]);
	if (!stores.n)
		sl_strvec_push_nodup(&stores, sl_default_store_path(NULL));
	so.stores = (const char *const *)stores.v;
	so.nstores = stores.n;
	if (o->listen)
		so.listen = o->listen;
	so.allow_remote = o->allow_remote;
	so.refresh_ms = (int)o->refresh_ms;
	so.log = print_line;
	if (o->token_file && read_token(&token, o->token_file, &err)) {
		ret = sl_cmd_fail(&err);
		goto done;
	}
	so.token = o->token_file ? token.buf : NULL;
	block_stop_signals(&set);
	if (sl_serve_start(&sv, &so, &err)) {
		ret = sl_cmd_fail(&err);
		goto done;
	}
	printf("serving %s\n", sl_serve_url(sv));
	fflush(stdout);
	sigwait(&set, &sig);
	ret = SL_EXIT_OK;
done:
	sl_serve_free(sv);
	sl_buf_release(&token);
	sl_strvec_release(&stores);
	return ret;
}

static const sl_option serve_options[] = {
	SL_OPT_LIST_F("store", 0, "PATH", "a store to show (repeat for several; default: "
		      "$SLUICE_STORE, else $XDG_DATA_HOME/sluice/sluice.db)", struct serve_opts,
		      stores, 0),
	SL_OPT_STRING("listen", 0, "HOST:PORT", "the numeric address to serve on (port 0: "
		      "any free port)", "127.0.0.1:8080", struct serve_opts, listen),
	SL_OPT_BOOL("allow-remote", 0, "serve on an address that is not loopback (needs "
		    "--token-file)", struct serve_opts, allow_remote),
	SL_OPT_STRING_F("token-file", 0, "FILE", "every request must carry the token on this "
			"file's first line", NULL, struct serve_opts, token_file, SL_OPTF_FILE),
	SL_OPT_UINT("refresh-ms", 0, "MS", "how often pages look for changes", "2000",
		    struct serve_opts, refresh_ms),
	SL_OPT_END(),
};

const sl_command cmd_serve = {
	.name = "serve",
	.summary = "serve a read-only dashboard and /metrics of one or more stores",
	.usage = "usage: sluice serve [--store PATH]... [--listen HOST:PORT] [--allow-remote]\n"
		"                    [--token-file FILE] [--refresh-ms MS]\n",
	.about = "Serves every campaign of the stores with its funnel, its targets (filtered\n"
		"by state, gate, file and text), each target's attempts with prompt, reply,\n"
		"diff, gate logs and decision, acceptance, landing, tokens and cost over\n"
		"time, and /metrics in the OpenMetrics text format; pages update while a run\n"
		"writes the store.  The stores are opened read-only; only GET and HEAD are\n"
		"answered.  An address that is not loopback needs --allow-remote and\n"
		"--token-file; with a token every request carries it (Authorization: Bearer\n"
		"TOKEN, or ?token=TOKEN once, which sets a cookie).  Prints the address on\n"
		"stdout and serves until SIGINT or SIGTERM.\n",
	.options = serve_options,
	.notes = "Exit status: 0 when stopped by a signal, 2 for a bad address, store or\n"
		"token file, 3 when the address cannot be bound.\n",
	.opts_size = sizeof(struct serve_opts),
	.fn = serve_main,
};
