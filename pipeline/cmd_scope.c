/*
 * cmd_scope.c - `sluice scope`: the targets a campaign's query finds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <jansson.h>

#include "cmd.h"
#include "run.h"
#include "util.h"

static void print_target_json(const sl_target *t)
{
	json_t *o = json_object();
	char *s;

	json_object_set_new(o, "path", json_string(t->path));
	json_object_set_new(o, "start_line", json_integer(t->start_line));
	json_object_set_new(o, "start_col", json_integer(t->start_col));
	json_object_set_new(o, "end_line", json_integer(t->end_line));
	json_object_set_new(o, "end_col", json_integer(t->end_col));
	json_object_set_new(o, "start_byte", json_integer(t->start_byte));
	json_object_set_new(o, "end_byte", json_integer(t->end_byte));
	json_object_set_new(o, "unit", json_string(t->unit));
	json_object_set_new(o, "language", json_string(t->lang));
	json_object_set_new(o, "sites", json_integer((json_int_t)t->nsites));
	json_object_set_new(o, "blob", json_string(t->blob));
	s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	puts(s);
	free(s);
	json_decref(o);
}

int cmd_scope(int argc, char **argv)
{
	cmd_opts o;
	sl_campaign *c = NULL;
	sl_target_list list = SL_TARGET_LIST_INIT;
	sl_err err = SL_ERR_INIT;
	int ret;

	if ((ret = sl_cmd_parse_opts(&o, argc, argv, "rj")))
		return ret;
	if (o.nargs != 1)
		return sl_cmd_usage("scope", "expected one campaign file");
	if (sl_campaign_load(&c, o.args[0], o.repo, &err) || sl_campaign_scope(&list, c, &err)) {
		ret = sl_cmd_fail(&err);
		goto done;
	}
	for (size_t i = 0; i < list.n; i++) {
		const sl_target *t = &list.v[i];

		if (o.json)
			print_target_json(t);
		else
			printf("%s:%u:%u: %s (%zu site%s)\n", t->path, t->start_line, t->start_col,
			       t->unit, t->nsites, t->nsites == 1 ? "" : "s");
	}
	ret = SL_EXIT_OK;
done:
	sl_target_list_release(&list);
	sl_campaign_free(c);
	return ret;
}

