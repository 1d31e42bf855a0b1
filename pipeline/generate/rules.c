/*
 * rules.c - deterministic rewrites of a target's sites.
 *
 * Reads the target's sites and their captures (never the file), writes one
 * splice edit per rewritten site.  A site whose capture overlaps one this
 * call already rewrote is left alone: nested sites (f(f(x))) would give
 * overlapping splices that cannot both apply; the outer one wins and a
 * later attempt (a rerun, or the model) sees the inner one.  A rewrite that
 * leaves the capture's text as it was is no edit (the site still counts as
 * handled by that rule: later rules are not tried).
 */
#include <string.h>

#include "pipeline/generate/rules.h"
#include "common/util.h"

static const sl_capture *find_capture(const sl_site *site, const char *name, size_t len)
{
	for (size_t i = 0; i < site->ncaps; i++)
		if (strlen(site->caps[i].name) == len && !memcmp(site->caps[i].name, name, len))
			return &site->caps[i];
	return NULL;
}

int sl_rules_check_template(const char *tmpl, sl_err *err)
{
	for (const char *p = tmpl; *p; p++) {
		const char *close;

		if (p[0] != '$')
			continue;
		if (p[1] == '$') {
			p++;
			continue;
		}
		if (p[1] != '{')
			continue;
		if (!(close = strchr(p + 2, '}')))
			return sl_err_set(err, SL_EINPUT,
					  "unterminated '${' at offset %zu of the rule template",
					  (size_t)(p - tmpl));
		if (close == p + 2)
			return sl_err_set(err, SL_EINPUT,
					  "empty '${}' at offset %zu of the rule template",
					  (size_t)(p - tmpl));
		p = close;
	}
	return SL_OK;
}

/* Render tmpl for one site; 0 if it names a capture the site lacks. */
static int render(sl_buf *out, const char *tmpl, const sl_site *site)
{
	for (const char *p = tmpl; *p; p++) {
		const sl_capture *c;
		const char *close;

		if (p[0] != '$' || (p[1] != '$' && p[1] != '{')) {
			sl_buf_addch(out, *p);
			continue;
		}
		if (p[1] == '$') {
			sl_buf_addch(out, '$');
			p++;
			continue;
		}
		close = strchr(p + 2, '}');
		if (!close)
			BUG("template not checked");
		if (!(c = find_capture(site, p + 2, (size_t)(close - p - 2))))
			return 0;
		sl_buf_adds(out, c->text ? c->text : "");
		p = close;
	}
	return 1;
}

int sl_rules_apply(sl_edit_list *out, const sl_rule *rules, size_t nrules,
		   const sl_target *t, sl_err *err)
{
	sl_buf text = SL_BUF_INIT;
	size_t n0 = out->n;
	int ret;

	for (size_t r = 0; r < nrules; r++) {
		if ((ret = sl_rules_check_template(rules[r].template_text, err))) {
			sl_err_prefix(err, "rule for capture '%s': ", rules[r].capture);
			return ret;
		}
	}
	for (size_t s = 0; s < t->nsites; s++) {
		const sl_site *site = &t->sites[s];

		for (size_t r = 0; r < nrules; r++) {
			const sl_capture *c = find_capture(site, rules[r].capture,
							   strlen(rules[r].capture));
			int overlaps = 0;
			sl_edit *e;

			if (!c)
				continue;
			sl_buf_reset(&text);
			if (!render(&text, rules[r].template_text, site))
				continue;
			for (size_t k = n0; k < out->n; k++)
				if (c->start_byte < out->v[k].end && out->v[k].start < c->end_byte)
					overlaps = 1;
			if (!overlaps && strcmp(text.buf, c->text ? c->text : "")) {
				e = sl_edit_list_add(out, SL_EDIT_SPLICE, t->path,
						     c->text ? c->text : "", text.buf);
				e->start = c->start_byte;
				e->end = c->end_byte;
			}
			break;
		}
	}
	sl_buf_release(&text);
	return (int)(out->n - n0);
}
