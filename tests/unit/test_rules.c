/*
 * test_rules.c - deterministic rewrites (pipeline/rules.h) on targets built
 * by hand from scoping/scope.h's structs.
 */
#include <stdlib.h>
#include <string.h>

#include "pipeline/generate/rules.h"
#include "common/util.h"
#include "unit.h"

/*
 * The file the sites point into:
 *   0         1         2         3         4
 *   0123456789012345678901234567890123456789012345
 *   strcpy(buf, name); strcpy(dst, src); x = 1;
 */
static const char *src = "strcpy(buf, name); strcpy(dst, src); x = 1;";

static sl_capture cap(const char *name, uint32_t start, uint32_t end)
{
	sl_capture c;

	c.name = (char *)name;
	c.start_byte = start;
	c.end_byte = end;
	c.text = sl_xstrndup(src + start, end - start);
	return c;
}

/* A call site: @call over the whole call, @fn the name, @dst and @src the arguments. */
static void call_site(sl_site *s, uint32_t start, int with_src)
{
	const char *p = src + start, *comma = strchr(p, ','), *close = strchr(p, ')');
	uint32_t c = (uint32_t)(comma - src), e = (uint32_t)(close - src);

	memset(s, 0, sizeof(*s));
	s->start_byte = start;
	s->end_byte = e + 1;
	s->caps = calloc(4, sizeof(sl_capture));
	s->caps[s->ncaps++] = cap("call", start, e + 1);
	s->caps[s->ncaps++] = cap("fn", start, start + 6);
	s->caps[s->ncaps++] = cap("dst", start + 7, c);
	if (with_src)
		s->caps[s->ncaps++] = cap("src", c + 2, e);
}

static void target_init(sl_target *t, int second_has_src)
{
	memset(t, 0, sizeof(*t));
	t->path = "src/copy.c";
	t->lang = "c";
	t->unit = "capture";
	t->end_byte = (uint32_t)strlen(src);
	t->sites = calloc(2, sizeof(sl_site));
	t->nsites = 2;
	call_site(&t->sites[0], 0, 1);
	call_site(&t->sites[1], 19, second_has_src);
}

static void target_release(sl_target *t)
{
	for (size_t i = 0; i < t->nsites; i++) {
		for (size_t j = 0; j < t->sites[i].ncaps; j++)
			free(t->sites[i].caps[j].text);
		free(t->sites[i].caps);
	}
	free(t->sites);
}

static void test_rewrite_each_site(void)
{
	sl_target t;
	sl_rule rules[] = { { .capture = "call", .template_text = "strlcpy(${dst}, ${src}, sizeof(${dst}))" } };
	sl_edit_list l = SL_EDIT_LIST_INIT;
	sl_err err = SL_ERR_INIT;

	target_init(&t, 1);
	CHECK_INT(sl_rules_apply(&l, rules, 1, &t, &err), 2);
	CHECK_INT(l.n, 2);
	CHECK_INT(l.v[0].kind, SL_EDIT_SPLICE);
	CHECK_STR(l.v[0].path, "src/copy.c");
	CHECK_INT(l.v[0].start, 0);
	CHECK_INT(l.v[0].end, 17);
	CHECK_STR(l.v[0].old_text, "strcpy(buf, name)");
	CHECK_STR(l.v[0].new_text, "strlcpy(buf, name, sizeof(buf))");
	CHECK_INT(l.v[1].start, 19);
	CHECK_INT(l.v[1].end, 35);
	CHECK_STR(l.v[1].old_text, "strcpy(dst, src)");
	CHECK_STR(l.v[1].new_text, "strlcpy(dst, src, sizeof(dst))");
	sl_edit_list_release(&l);
	target_release(&t);
}

static void test_other_capture_and_dollar(void)
{
	sl_target t;
	sl_rule rules[] = { { .capture = "fn", .template_text = "$${x}_$$${fn}$" } };
	sl_edit_list l = SL_EDIT_LIST_INIT;
	sl_err err = SL_ERR_INIT;

	target_init(&t, 1);
	CHECK_INT(sl_rules_apply(&l, rules, 1, &t, &err), 2);
	/* the splice covers the named capture, not the site */
	CHECK_INT(l.v[0].start, 0);
	CHECK_INT(l.v[0].end, 6);
	CHECK_STR(l.v[0].old_text, "strcpy");
	CHECK_STR(l.v[0].new_text, "${x}_$strcpy$");
	sl_edit_list_release(&l);
	target_release(&t);
}

static void test_missing_capture_falls_through(void)
{
	sl_target t;
	sl_rule rules[] = {
		{ .capture = "call", .template_text = "copy3(${dst}, ${src})" },     /* needs @src */
		{ .capture = "call", .template_text = "copy1(${dst})" },
		{ .capture = "nothere", .template_text = "never" },
	};
	sl_edit_list l = SL_EDIT_LIST_INIT;
	sl_err err = SL_ERR_INIT;

	target_init(&t, 0);     /* the second site has no @src */
	CHECK_INT(sl_rules_apply(&l, rules, 3, &t, &err), 2);
	CHECK_STR(l.v[0].new_text, "copy3(buf, name)");
	CHECK_STR(l.v[1].new_text, "copy1(dst)");
	sl_edit_list_release(&l);
	target_release(&t);
}

static void test_no_rule_applies(void)
{
	sl_target t;
	sl_rule rules[] = { { .capture = "call", .template_text = "f(${nothere})" },
			    { .capture = "other", .template_text = "x" } };
	sl_edit_list l = SL_EDIT_LIST_INIT;
	sl_err err = SL_ERR_INIT;

	target_init(&t, 1);
	CHECK_INT(sl_rules_apply(&l, rules, 2, &t, &err), 0);
	CHECK_INT(l.n, 0);
	CHECK_INT(sl_rules_apply(&l, rules, 0, &t, &err), 0);
	CHECK_INT(err.code, 0);
	target_release(&t);
}

static void test_noop_and_overlap(void)
{
	sl_target t;
	sl_rule same[] = { { .capture = "call", .template_text = "${fn}(${dst}, ${src})" } };
	sl_rule outer_inner[] = { { .capture = "call", .template_text = "X" },
				  { .capture = "dst", .template_text = "Y" } };
	sl_edit_list l = SL_EDIT_LIST_INIT;
	sl_err err = SL_ERR_INIT;

	target_init(&t, 1);
	/* a rewrite that changes nothing is no edit */
	CHECK_INT(sl_rules_apply(&l, same, 1, &t, &err), 0);
	/* the same site twice: the second overlaps the first */
	for (size_t j = 0; j < t.sites[1].ncaps; j++)
		free(t.sites[1].caps[j].text);
	free(t.sites[1].caps);
	t.sites[1] = t.sites[0];
	t.nsites = 2;
	CHECK_INT(sl_rules_apply(&l, outer_inner, 2, &t, &err), 1);
	CHECK_STR(l.v[0].new_text, "X");
	/* edits already in the list (another call) do not block this call */
	CHECK_INT(sl_rules_apply(&l, outer_inner, 2, &t, &err), 1);
	CHECK_INT(l.n, 2);
	t.nsites = 1;            /* site 1 shared site 0's captures */
	sl_edit_list_release(&l);
	target_release(&t);
}

static void test_template_check(void)
{
	sl_target t;
	sl_rule bad[] = { { .capture = "call", .template_text = "f(${dst)" } };
	sl_edit_list l = SL_EDIT_LIST_INIT;
	sl_err err = SL_ERR_INIT;

	CHECK_INT(sl_rules_check_template("a ${b} $$ $x ${c}", &err), 0);
	CHECK_INT(sl_rules_check_template("abc ${x", &err), SL_EINPUT);
	CHECK_STR(err.msg, "unterminated '${' at offset 4 of the rule template");
	sl_err_clear(&err);
	CHECK_INT(sl_rules_check_template("${}", &err), SL_EINPUT);
	CHECK(strstr(err.msg, "empty '${}'") != NULL);
	sl_err_clear(&err);

	target_init(&t, 1);
	CHECK_INT(sl_rules_apply(&l, bad, 1, &t, &err), SL_EINPUT);
	CHECK_STR(err.msg, "rule for capture 'call': unterminated '${' at offset 2 of the rule template");
	CHECK_INT(l.n, 0);
	target_release(&t);
}

/* ${...x}: the rest of the list from @dst, from the unit's syntax tree. */
static void test_sequence_capture(void)
{
	sl_target t;
	sl_rule rules[] = { { .capture = "call", .template_text = "copy(${...dst}) ${...none}." } };
	sl_rule_site rs[2];
	sl_edit_list l = SL_EDIT_LIST_INIT;
	sl_err err = SL_ERR_INIT;

	target_init(&t, 1);
	t.unit_text = (char *)src;
	CHECK_INT(sl_rules_apply_ext(&l, rules, 1, &t, rs, &err), 2);
	CHECK_STR(l.v[0].new_text, "copy(buf, name) .");
	CHECK_STR(l.v[1].new_text, "copy(dst, src) .");
	CHECK_INT(rs[0].rule, 0);
	CHECK_INT(rs[1].edit, 1);
	sl_edit_list_release(&l);
	/* without the unit's text: the span of the occurrences */
	t.unit_text = NULL;
	CHECK_INT(sl_rules_apply(&l, rules, 1, &t, &err), 2);
	CHECK_STR(l.v[0].new_text, "copy(buf) .");
	sl_edit_list_release(&l);
	CHECK_INT(sl_rules_check_template("${...}", &err), SL_EINPUT);
	target_release(&t);
}

/* where: a regex decides per site; the next rule catches the rest. */
static void test_where_match(void)
{
	sl_target t;
	sl_rule_cond only_buf[] = { { "dst", SL_COND_MATCH, 0, "^buf$" } };
	sl_rule_cond not_buf[] = { { "dst", SL_COND_MATCH, 1, "^buf$" } };
	sl_rule rules[] = {
		{ .capture = "call", .template_text = "A", .where = only_buf, .nwhere = 1 },
		{ .capture = "call", .template_text = "B", .where = not_buf, .nwhere = 1 },
	};
	sl_rule_cond bad[] = { { "dst", SL_COND_MATCH, 0, "(" } };
	sl_rule broken = { .capture = "call", .template_text = "A", .where = bad, .nwhere = 1 };
	sl_rule_site rs[2];
	sl_edit_list l = SL_EDIT_LIST_INIT;
	sl_strvec needs = SL_STRVEC_INIT;
	sl_err err = SL_ERR_INIT;

	target_init(&t, 1);
	CHECK_INT(sl_rules_apply_ext(&l, rules, 2, &t, rs, &err), 2);
	CHECK_STR(l.v[0].new_text, "A");
	CHECK_STR(l.v[1].new_text, "B");
	CHECK_INT(rs[0].rule, 0);
	CHECK_INT(rs[1].rule, 1);
	sl_edit_list_release(&l);
	CHECK_INT(sl_rules_apply(&l, &broken, 1, &t, &err), SL_EINPUT);
	CHECK(strstr(err.msg, "bad regex '('") != NULL);
	sl_rule_needs(&needs, &rules[0]);
	CHECK_INT(needs.n, 2);
	sl_strvec_release(&needs);
	target_release(&t);
}

int main(void)
{
	RUN(test_rewrite_each_site);
	RUN(test_sequence_capture);
	RUN(test_where_match);
	RUN(test_other_capture_and_dollar);
	RUN(test_missing_capture_falls_through);
	RUN(test_no_rule_applies);
	RUN(test_noop_and_overlap);
	RUN(test_template_check);
	return unit_done();
}
