/*
 * budget.c - the campaign file's 'budget' section: tokens, cost and wall
 * time of a campaign, and the early stop on a low pass rate.  A cost budget
 * needs the model's price ('prices' in 'provider', read before).
 */
#include <limits.h>
#include <string.h>

#include "common/caps.h"
#include "pipeline/spec/spec_internal.h"

int spec_load_budget(struct loader *ld, const struct node *map, sl_spec *spec)
{
	static const char *const budget_keys[] = { "max_tokens", "max_cost", "max_wall_time",
		"early_stop_after", "early_stop_below", NULL };
	enum { K_TOKENS, K_COST, K_WALL, K_AFTER, K_BELOW };
	const struct node *v[SL_CAP_SPEC_KEYS];
	long long n;
	char sbuf[80];

	if (spec_want_type(ld, map, N_MAP, "budget", NULL) ||
	    spec_map_fields(ld, map, "budget", budget_keys, v) ||
	    spec_get_num(ld, v[K_COST], "max_cost", "budget", 0, 1e12, &spec->budget_cost) ||
	    spec_get_num(ld, v[K_BELOW], "early_stop_below", "budget", 0, 1, &spec->early_stop_rate))
		return SL_EINPUT;
	if (v[K_TOKENS]) {
		if (spec_get_int(ld, v[K_TOKENS], "max_tokens", "budget", 1, LLONG_MAX, &n))
			return SL_EINPUT;
		spec->budget_tokens = n;
	}
	if (v[K_WALL]) {
		if (spec_get_int(ld, v[K_WALL], "max_wall_time", "budget", 1, INT_MAX, &n))
			return SL_EINPUT;
		spec->budget_wall_s = (unsigned)n;
	}
	if (v[K_AFTER]) {
		if (spec_get_int(ld, v[K_AFTER], "early_stop_after", "budget", 1, INT_MAX, &n))
			return SL_EINPUT;
		spec->early_stop_after = (unsigned)n;
	}
	if (!!v[K_AFTER] != !!v[K_BELOW])
		return spec_fail(ld, map->start,
				 "'early_stop_after' and 'early_stop_below' go together");
	if (spec->budget_cost > 0 && spec->price_in < 0)
		return spec_fail(ld, v[K_COST]->start, "'max_cost' needs a price for model '%s' in "
				 "'prices' of 'provider'", spec->model ?
				 spec_show(sbuf, sizeof(sbuf), spec->model, strlen(spec->model)) :
				 "(none)");
	return 0;
}
