/*
 * rules.c - deterministic rewrites of a target's sites: templates, the
 * order rules are tried in, and the checks of a rule against its query.
 *
 * Reads the target's sites, their captures and the unit's text (never the
 * file), writes one splice edit per rewritten site.  A site whose capture
 * overlaps one this call already rewrote is left alone: nested sites
 * (f(f(x))) would give overlapping splices that cannot both apply; the
 * outer one wins and a later attempt (a rerun, or the model) sees the inner
 * one.  A rewrite that leaves the capture's text as it was is no edit (the
 * site still counts as handled by that rule: later rules are not tried).
 * The conditions (`where:`) are rules_where.c's.
 */
#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "pipeline/generate/rules.h"
#include "common/util.h"

static const sl_capture *find_capture(const sl_site *site, const char *name, size_t len)
{
	for (size_t i = 0; i < site->ncaps; i++)
		if (strlen(site->caps[i].name) == len && !memcmp(site->caps[i].name, name, len))
			return &site->caps[i];
	return NULL;
}

/* "${...name}": 1 and the name past the dots. */
static int is_sequence(const char **name, size_t *len)
{
	if (*len <= 3 || strncmp(*name, "...", 3))
		return 0;
	*name += 3;
	*len -= 3;
	return 1;
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
		if (close == p + 2 || (close == p + 5 && !strncmp(p + 2, "...", 3)))
			return sl_err_set(err, SL_EINPUT,
					  "empty '%.*s' at offset %zu of the rule template",
					  (int)(close - p + 1), p, (size_t)(p - tmpl));
		p = close;
	}
	return SL_OK;
}

/*
 * ${...name}: the rest of the list from the first occurrence, else the
 * source from the first occurrence's start to the last's end, taken from
 * the unit's text (the site lies inside its unit); without the unit's
 * text, the first occurrence.  Empty when the match lacks it.
 */
static void add_sequence(sl_buf *out, struct sl_where_ctx **wc, const sl_target *t,
			 const sl_site *site, const char *name, size_t len)
{
	uint32_t rest;
	const sl_capture *first = NULL;
	uint32_t start = UINT32_MAX, end = 0;

	for (size_t i = 0; i < site->ncaps; i++) {
		const sl_capture *c = &site->caps[i];

		if (strlen(c->name) != len || memcmp(c->name, name, len))
			continue;
		if (!first)
			first = c;
		if (c->start_byte < start)
			start = c->start_byte;
		if (c->end_byte > end)
			end = c->end_byte;
	}
	if (!first)
		return;
	if (sl_where_rest_end(wc, t, first->start_byte, first->end_byte, &rest) && rest > end)
		end = rest;
	if (t->unit_text && start >= t->start_byte && end <= t->end_byte &&
	    end - t->start_byte <= strlen(t->unit_text))
		sl_buf_add(out, t->unit_text + (start - t->start_byte), end - start);
	else
		sl_buf_adds(out, first->text ? first->text : "");
}

/* Render tmpl for one site; 0 if it names a capture the site lacks. */
static int render(sl_buf *out, struct sl_where_ctx **wc, const char *tmpl, const sl_target *t,
		  const sl_site *site)
{
	for (const char *p = tmpl; *p; p++) {
		const sl_capture *c;
		const char *close, *name;
		size_t len;

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
		name = p + 2;
		len = (size_t)(close - name);
		if (is_sequence(&name, &len)) {
			add_sequence(out, wc, t, site, name, len);
		} else {
			if (!(c = find_capture(site, name, len)))
				return 0;
			sl_buf_adds(out, c->text ? c->text : "");
		}
		p = close;
	}
	return 1;
}

/* Rule r at one site: 1 it applies (text rendered), 0 not, <0 an error. */
static int rule_applies(struct sl_where_ctx **wc, sl_buf *text, const sl_rule *r,
			const sl_target *t, const sl_site *site, const sl_capture **cap,
			sl_err *err)
{
	if (r->cocci || !(*cap = find_capture(site, r->capture, strlen(r->capture))))
		return 0;
	sl_buf_reset(text);
	if (!render(text, wc, r->template_text, t, site))
		return 0;
	return r->nwhere ? sl_rule_where_holds(wc, r, t, site, err) : 1;
}

static int check_templates(const sl_rule *rules, size_t nrules, sl_err *err)
{
	int ret;

	for (size_t r = 0; r < nrules; r++) {
		if (rules[r].cocci)
			continue;
		if ((ret = sl_rules_check_template(rules[r].template_text, err))) {
			sl_err_prefix(err, "rule for capture '%s': ", rules[r].capture);
			return ret;
		}
	}
	return SL_OK;
}

/*
 * The semantic patches, in order, once per target: each site a change
 * touches is the rule's (sites[].rule and .edit: its first such change).
 */
static int apply_cocci(sl_edit_list *out, const sl_rule *rules, size_t nrules,
		       const sl_target *t, sl_rule_site *sites, sl_err *err)
{
	for (size_t s = 0; sites && s < t->nsites; s++)
		sites[s].rule = -1, sites[s].edit = -1;
	for (size_t r = 0; r < nrules; r++) {
		size_t k0 = out->n;
		int ret;

		if (!rules[r].cocci)
			continue;
		if ((ret = sl_rules_cocci(out, &rules[r], t, err)) < 0)
			return ret;
		for (size_t s = 0; sites && s < t->nsites; s++)
			for (size_t k = k0; k < out->n && sites[s].rule < 0; k++)
				if (out->v[k].start <= t->sites[s].end_byte &&
				    t->sites[s].start_byte <= out->v[k].end) {
					sites[s].rule = (int)r;
					sites[s].edit = (long)k;
				}
	}
	return SL_OK;
}

int sl_rules_apply_ext(sl_edit_list *out, const sl_rule *rules, size_t nrules,
		       const sl_target *t, sl_rule_site *sites, sl_err *err)
{
	struct sl_where_ctx *wc = NULL;
	sl_buf text = SL_BUF_INIT;
	size_t n0 = out->n;
	int ret;

	if ((ret = check_templates(rules, nrules, err)) ||
	    (ret = apply_cocci(out, rules, nrules, t, sites, err)) < 0)
		goto done;
	for (size_t s = 0; s < t->nsites; s++) {
		const sl_site *site = &t->sites[s];

		if (sites && sites[s].rule >= 0)
			continue;       /* a semantic patch changed it */
		for (size_t r = 0; r < nrules; r++) {
			const sl_capture *c;
			int overlaps = 0;
			sl_edit *e;

			if ((ret = rule_applies(&wc, &text, &rules[r], t, site, &c, err)) < 0)
				goto done;
			if (!ret)
				continue;
			for (size_t k = n0; k < out->n; k++)
				if (c->start_byte < out->v[k].end && out->v[k].start < c->end_byte)
					overlaps = 1;
			if (sites)
				sites[s].rule = (int)r;
			if (!overlaps && strcmp(text.buf, c->text ? c->text : "")) {
				if (sites)
					sites[s].edit = (long)out->n;
				e = sl_edit_list_add(out, SL_EDIT_SPLICE, t->path,
						     c->text ? c->text : "", text.buf);
				e->start = c->start_byte;
				e->end = c->end_byte;
			}
			break;
		}
	}
	ret = (int)(out->n - n0);
done:
	sl_where_ctx_free(wc);
	sl_buf_release(&text);
	return ret;
}

int sl_rules_apply(sl_edit_list *out, const sl_rule *rules, size_t nrules,
		   const sl_target *t, sl_err *err)
{
	return sl_rules_apply_ext(out, rules, nrules, t, NULL, err);
}

/* 1 if the query text defines the capture @name (name of len bytes). */
static int query_has_capture(const char *query, const char *name, size_t len)
{
	if (!len)
		return 0;
	for (const char *p = strchr(query, '@'); p; p = strchr(p + 1, '@')) {
		unsigned char next;

		/* p[1 + len] is inside the string only once the name matched */
		if (strncmp(p + 1, name, len))
			continue;
		next = (unsigned char)p[1 + len];
		if (!isalnum(next) && next != '_' && next != '-' && next != '.')
			return 1;
	}
	return 0;
}

/* Each ${name} (seq: ${...name} too) of a checked template, to fn; stops at its nonzero. */
static int each_ref(const char *tmpl, int seq, int (*fn)(const char *name, size_t len, void *arg),
		    void *arg)
{
	int ret;

	for (const char *p = tmpl; *p; p++) {
		const char *close, *name;
		size_t len;

		if (p[0] != '$')
			continue;
		if (p[1] == '$') {
			p++;
			continue;
		}
		if (p[1] != '{' || !(close = strchr(p + 2, '}')))
			continue;
		name = p + 2;
		len = (size_t)(close - name);
		if ((!is_sequence(&name, &len) || seq) && (ret = fn(name, len, arg)))
			return ret;
		p = close;
	}
	return 0;
}

struct ref_check {
	const char *query;
	sl_err *err;
};

static int ref_defined(const char *name, size_t len, void *arg)
{
	struct ref_check *rc = arg;

	if (query_has_capture(rc->query, name, len))
		return 0;
	return sl_err_set(rc->err, SL_EINPUT, "rule template uses '${%.*s}', which is not a capture "
			  "of the query", (int)len, name);
}

int sl_rule_check(const sl_rule *r, const char *language, const char *query, sl_err *err)
{
	struct ref_check rc = { query, err };
	int ret;

	if (r->cocci) {
		if (strcmp(language, "c") && strcmp(language, "cpp"))
			return sl_err_set(err, SL_EINPUT, "a Coccinelle rule needs language c or "
					  "cpp, not '%s'", language);
		if (access(r->cocci, R_OK))
			return sl_err_set(err, SL_EINPUT, "cannot read '%s': %s", r->cocci,
					  strerror(errno));
		return SL_OK;
	}

	if ((ret = sl_rules_check_template(r->template_text, err)))
		return ret;
	if (!query_has_capture(query, r->capture, strlen(r->capture)))
		return sl_err_set(err, SL_EINPUT, "rule replaces capture '%s', which the query "
				  "does not define", r->capture);
	if ((ret = each_ref(r->template_text, 1, ref_defined, &rc)))
		return ret;
	for (size_t i = 0; i < r->nwhere; i++) {
		if (!query_has_capture(query, r->where[i].capture, strlen(r->where[i].capture)))
			return sl_err_set(err, SL_EINPUT, "rule condition on capture '%s', which "
					  "the query does not define", r->where[i].capture);
		if ((ret = sl_rule_cond_check(&r->where[i], language, err)))
			return ret;
	}
	return SL_OK;
}

static void push_once(sl_strvec *v, const char *name, size_t len)
{
	for (size_t i = 0; i < v->n; i++)
		if (strlen(v->v[i]) == len && !memcmp(v->v[i], name, len))
			return;
	sl_strvec_push_nodup(v, sl_xstrndup(name, len));
}

static int need_ref(const char *name, size_t len, void *arg)
{
	push_once(arg, name, len);
	return 0;
}

void sl_rule_needs(sl_strvec *names, const sl_rule *r)
{
	if (r->cocci)
		return;
	push_once(names, r->capture, strlen(r->capture));
	each_ref(r->template_text, 0, need_ref, names);
	for (size_t i = 0; i < r->nwhere; i++)
		push_once(names, r->where[i].capture, strlen(r->where[i].capture));
}
