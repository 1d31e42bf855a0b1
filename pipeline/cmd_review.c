/*
 * cmd_review.c - `sluice targets`: every target of a campaign with its
 * state, attempts, latest candidate and reason, filtered by state.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "report.h"
#include "util.h"

/*
 * Take every --state S (or --state=S, or S,T) out of argv into *states;
 * what is left goes to the shared option parser.  Returns 0 or a usage
 * exit status.
 */
static int take_states(int *argc, char **argv, sl_strvec *states)
{
	int n = 1, i;

	for (i = 1; i < *argc && strcmp(argv[i], "--"); i++) {
		const char *v;
		char *list, *p;
		int bad = 0;

		if (!strcmp(argv[i], "--state")) {
			if (i + 1 >= *argc)
				return sl_cmd_usage("targets", "option '--state' needs a value");
			v = argv[++i];
		} else if (!strncmp(argv[i], "--state=", 8)) {
			v = argv[i] + 8;
		} else {
			argv[n++] = argv[i];
			continue;
		}
		list = sl_xstrdup(v);
		for (p = list; p && !bad; ) {
			char *comma = strchr(p, ',');

			if (comma)
				*comma = '\0';
			if (!(bad = !sl_report_target_state_valid(p)))
				sl_strvec_push(states, p);
			else
				sl_cmd_usage("targets", "unknown state '%s'", p);
			p = comma ? comma + 1 : NULL;
		}
		free(list);
		if (bad)
			return SL_EXIT_USAGE;
	}
	while (i < *argc)
		argv[n++] = argv[i++];
	argv[n] = NULL;
	*argc = n;
	return 0;
}

int cmd_targets(int argc, char **argv)
{
	cmd_opts o;
	sl_strvec states = SL_STRVEC_INIT;
	sl_store *st = NULL;
	sl_campaign_rec camp = { 0 };
	sl_buf out = SL_BUF_INIT;
	sl_err err = SL_ERR_INIT;
	size_t count = 0;
	int ret;

	if ((ret = take_states(&argc, argv, &states)) ||
	    (ret = sl_cmd_parse_opts(&o, argc, argv, "sj")))
		goto done;
	if (o.nargs > 1) {
		ret = sl_cmd_usage("targets", "expected at most one campaign name");
		goto done;
	}
	if (sl_cmd_open_campaign(&st, &camp, o.store, o.nargs ? o.args[0] : NULL, &err) ||
	    sl_report_targets(&out, st, camp.id, (const char *const *)states.v, states.n, o.json,
			      &count, &err)) {
		ret = sl_cmd_fail(&err);
		goto done;
	}
	fputs(out.buf, stdout);
	ret = SL_EXIT_OK;
done:
	sl_buf_release(&out);
	sl_campaign_rec_release(&camp);
	sl_store_free(st);
	sl_strvec_release(&states);
	return ret;
}
