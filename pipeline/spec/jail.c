/*
 * jail.c - the campaign file's 'jail' section: the limits of every gate's
 * jail, the limits a machine may leave unenforced, the writable worktree
 * and how a candidate's tree is made (warm_base).
 */
#include <string.h>

#include "common/caps.h"
#include "pipeline/spec/spec_internal.h"

int spec_load_jail(struct loader *ld, const struct node *map, sl_spec *spec)
{
	static const char *const jail_keys[] = { "memory_mb", "pids", "tmp_mb", "disk_mb", "cpus",
		"address_space_mb", "unenforced", "writable_worktree", "warm_base", NULL };
	enum { K_UNENFORCED = 6, K_WRITABLE = 7, K_WARM = 8 };
	static const char *const warm_names[] = { "auto", "overlay", "off", NULL };
	static const int warm_ix[] = { SL_WARM_AUTO, SL_WARM_OVERLAY, SL_WARM_OFF };
	unsigned *fields[] = { &spec->jail.mem_mb, &spec->jail.pids, &spec->jail.tmp_mb,
			       &spec->jail.disk_mb, &spec->jail.cpus, &spec->jail.as_mb };
	const struct node *v[SL_CAP_SPEC_KEYS];
	sl_strvec words = SL_STRVEC_INIT;
	long long n;
	int warm = spec->jail.warm_base, ret = SL_EINPUT;

	if (spec_want_type(ld, map, N_MAP, "jail", NULL) ||
	    spec_map_fields(ld, map, "jail", jail_keys, v))
		return SL_EINPUT;
	for (size_t i = 0; i < K_UNENFORCED; i++) {
		if (!v[i])
			continue;
		if (spec_get_int(ld, v[i], jail_keys[i], "jail", 1, i == 4 ? 4096 : 1 << 24, &n))
			return SL_EINPUT;
		*fields[i] = (unsigned)n;
	}
	if (spec_get_bool(ld, v[K_WRITABLE], jail_keys[K_WRITABLE], "jail", &spec->jail.writable) ||
	    spec_get_enum(ld, v[K_WARM], jail_keys[K_WARM], "jail", warm_names, warm_ix,
			  &warm) ||
	    spec_get_strings(ld, v[K_UNENFORCED], jail_keys[K_UNENFORCED], "jail", &words))
		goto done;
	spec->jail.warm_base = (enum sl_warm_mode)warm;
	for (size_t i = 0; i < words.n; i++) {
		if (!strcmp(words.v[i], "memory"))
			spec->jail.accept |= SL_JAIL_CG_MEMORY;
		else if (!strcmp(words.v[i], "cpu"))
			spec->jail.accept |= SL_JAIL_CG_CPU;
		else {
			char sbuf[80];

			spec_fail(ld, v[K_UNENFORCED]->start, "unknown limit '%s' in 'unenforced' of "
				  "'jail' (memory or cpu)",
				  spec_show(sbuf, sizeof(sbuf), words.v[i], strlen(words.v[i])));
			goto done;
		}
	}
	if (spec->jail.writable && spec->jail.disk_mb) {
		spec_fail(ld, v[K_WRITABLE]->start, "'writable_worktree' and 'disk_mb' of 'jail' "
			  "exclude each other");
		goto done;
	}
	if (spec->jail.writable && spec->jail.warm_base == SL_WARM_OVERLAY) {
		spec_fail(ld, v[K_WRITABLE]->start, "'writable_worktree' and 'warm_base: overlay' of "
			  "'jail' exclude each other");
		goto done;
	}
	/* a writable worktree is the plain tree the candidate's gates share */
	if (spec->jail.writable)
		spec->jail.warm_base = SL_WARM_OFF;
	ret = 0;
done:
	sl_strvec_release(&words);
	return ret;
}
