/*
 * session.c - the campaign file's `generate` key and `session` section:
 * whether the model answers once with edits (`reply`) or works in a
 * session of shell commands in the jail (`act`), and that session's
 * budgets (README, "Letting the model work").
 */
#include <limits.h>
#include <string.h>

#include "common/caps.h"
#include "pipeline/spec/spec_internal.h"

/* A session's commands run over the warm base: a jailed gate prepares it. */
static int check_act(struct loader *ld, const struct node *generate, const sl_spec *spec)
{
	int jailed = 0;

	for (size_t i = 0; i < spec->ngates; i++)
		jailed |= spec->gates[i].kind != SL_GATE_POLICY;
	if (!jailed)
		return spec_fail(ld, generate->start, "'generate: act' needs a gate that runs in "
				 "the jail: the session works over the warm base the gates use");
	if (spec->jail.warm_base == SL_WARM_OFF || spec->jail.writable)
		return spec_fail(ld, generate->start, "'generate: act' needs the warm base: "
				 "not with 'warm_base: off' or 'writable_worktree' in 'jail'");
	return 0;
}

int spec_load_session(struct loader *ld, const struct node *generate, const struct node *map,
		      sl_spec *spec)
{
	static const char *const modes[] = { "reply", "act", NULL };
	static const int mode_ix[] = { SL_GENERATE_REPLY, SL_GENERATE_ACT };
	static const char *const ends[] = { "drop", "gate", NULL };
	static const int end_ix[] = { SL_SESSION_DROP, SL_SESSION_GATE };
	static const char *const wires[] = { "text", "tools", NULL };
	static const int wire_ix[] = { SL_WIRE_TEXT, SL_WIRE_TOOLS };
	static const char *const session_keys[] = { "steps", "max_tokens", "step_timeout",
		"timeout", "output_bytes", "on_budget", "wire", NULL };
	enum { K_STEPS, K_TOKENS, K_STEP_TIMEOUT, K_TIMEOUT, K_OUTPUT, K_ON_BUDGET, K_WIRE };
	const struct node *v[SL_CAP_SPEC_KEYS];
	sl_spec_session *s = &spec->session;
	int mode = 0, end = 0, wire = 0;
	long long n;

	s->steps = 30;
	s->step_timeout_s = 60;
	s->timeout_s = 900;
	s->output_bytes = 8000;
	if (spec_get_enum(ld, generate, "generate", NULL, modes, mode_ix, &mode))
		return SL_EINPUT;
	s->mode = (enum sl_generate_mode)mode;
	if (s->mode == SL_GENERATE_ACT && check_act(ld, generate, spec))
		return SL_EINPUT;
	if (!map)
		return 0;
	if (s->mode != SL_GENERATE_ACT)
		return spec_fail(ld, map->start, "'session' belongs to 'generate: act'");
	if (spec_want_type(ld, map, N_MAP, "session", NULL) ||
	    spec_map_fields(ld, map, "session", session_keys, v) ||
	    spec_get_uint(ld, v[K_STEPS], "steps", "session", 1, 1000, &s->steps) ||
	    spec_get_uint(ld, v[K_STEP_TIMEOUT], "step_timeout", "session", 1, 86400,
			  &s->step_timeout_s) ||
	    spec_get_uint(ld, v[K_TIMEOUT], "timeout", "session", 1, 7 * 86400, &s->timeout_s) ||
	    spec_get_uint(ld, v[K_OUTPUT], "output_bytes", "session", 200, 1 << 20,
			  &s->output_bytes) ||
	    spec_get_enum(ld, v[K_ON_BUDGET], "on_budget", "session", ends, end_ix, &end) ||
	    spec_get_enum(ld, v[K_WIRE], "wire", "session", wires, wire_ix, &wire))
		return SL_EINPUT;
	s->on_budget = (enum sl_session_end)end;
	s->wire = (enum sl_session_wire)wire;
	if (s->wire == SL_WIRE_TOOLS && spec->provider != SL_PROVIDER_OPENAI &&
	    spec->provider != SL_PROVIDER_ANTHROPIC && spec->provider != SL_PROVIDER_REPLAY)
		return spec_fail(ld, v[K_WIRE]->start, "'wire: tools' needs an openai or "
				 "anthropic provider (the command provider reads text)");
	if (v[K_TOKENS]) {
		if (spec_get_int(ld, v[K_TOKENS], "max_tokens", "session", 1, LLONG_MAX, &n))
			return SL_EINPUT;
		s->max_tokens = n;
	}
	return 0;
}
