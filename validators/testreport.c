/*
 * testreport.c - JUnit XML, TAP, automake and ctest reports to per-test results.
 *
 * Reports are written by the candidate's own test code, so they are hostile
 * input: size is capped before libxml2 sees them, the parser runs with
 * XML_PARSE_NONET and without XML_PARSE_NOENT/DTDLOAD/HUGE (so libxml2's
 * default depth and text-size limits and its entity-amplification checks
 * apply), and text is read from text and CDATA nodes only: never through
 * xmlNodeGetContent or xmlGetProp, which would expand entity references.
 * Which element is which is decided by local name, so namespaced reports
 * work too.
 */
#include <ctype.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "validators/testreport.h"
#include "common/util.h"
#include "common/caps.h"

void sl_tests_init(sl_tests *t)
{
	memset(t, 0, sizeof(*t));
}

void sl_tests_release(sl_tests *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->v[i].id);
		free(t->v[i].message);
	}
	free(t->v);
	free(t->slot);
	sl_tests_init(t);
}

/*
 * The id index: open addressing over v's positions (slot = position + 1,
 * 0 = empty), at most half full, so comparing two reports of n tests costs
 * O(n) lookups instead of O(n^2) string compares.
 */
static size_t id_hash(const char *id)
{
	uint64_t h = 1469598103934665603ull;

	for (const unsigned char *p = (const unsigned char *)id; *p; p++)
		h = (h ^ *p) * 1099511628211ull;
	return (size_t)h;
}

static void index_add(sl_tests *t, size_t pos)
{
	size_t mask = t->nslot - 1, i = id_hash(t->v[pos].id) & mask;

	while (t->slot[i])
		i = (i + 1) & mask;
	t->slot[i] = pos + 1;
	t->indexed++;
}

/* Index v[0 .. n) afresh in a table of at least 2n slots. */
static void index_rebuild(sl_tests *t)
{
	size_t want = 16;

	while (want < 2 * t->n + 2)
		want *= 2;
	free(t->slot);
	t->slot = sl_xcalloc(want, sizeof(*t->slot));
	t->nslot = want;
	t->indexed = 0;
	for (size_t i = 0; i < t->n; i++)
		index_add(t, i);
}

static char *cap_message(const char *m)
{
	size_t len;

	if (!m)
		return NULL;
	len = strlen(m);
	if (len <= SL_CAP_TEST_MESSAGE)
		return sl_xstrdup(m);
	{
		sl_buf b = SL_BUF_INIT;

		sl_buf_add(&b, m, SL_CAP_TEST_MESSAGE);
		sl_buf_adds(&b, "...");
		return sl_buf_detach(&b, NULL);
	}
}

void sl_tests_add(sl_tests *t, const char *id, int result, const char *message)
{
	sl_test *x;

	if (t->n >= SL_CAP_TESTS) {
		t->dropped++;
		return;
	}
	SL_ALLOC_GROW(t->v, t->n + 1, t->alloc);
	x = &t->v[t->n++];
	x->id = sl_xstrdup(id);
	x->result = result;
	x->message = cap_message(message);
	if (!t->slot || t->indexed != t->n - 1 || 2 * t->n + 2 > t->nslot)
		index_rebuild(t);
	else
		index_add(t, t->n - 1);
}

const sl_test *sl_tests_find(const sl_tests *t, const char *id)
{
	size_t mask, i;

	if (!t->slot || t->indexed != t->n) {
		for (i = 0; i < t->n; i++)
			if (!strcmp(t->v[i].id, id))
				return &t->v[i];
		return NULL;
	}
	/* probing meets a duplicate id's entries in the order they were added */
	mask = t->nslot - 1;
	for (i = id_hash(id) & mask; t->slot[i]; i = (i + 1) & mask)
		if (!strcmp(t->v[t->slot[i] - 1].id, id))
			return &t->v[t->slot[i] - 1];
	return NULL;
}

int sl_test_failed(int result)
{
	return result == SL_TEST_FAIL || result == SL_TEST_ERROR;
}

const char *sl_test_result_name(enum sl_test_result result)
{
	switch (result) {
	case SL_TEST_PASS: return "pass";
	case SL_TEST_FAIL: return "fail";
	case SL_TEST_ERROR: return "error";
	case SL_TEST_SKIP: return "skip";
	}
	return "unknown";
}

/* --- duplicate ids --- */

typedef struct idref {
	const char *id;
	size_t idx;
} idref;

static int cmp_idref(const void *a, const void *b)
{
	const idref *x = a, *y = b;
	int c = strcmp(x->id, y->id);

	return c ? c : (x->idx > y->idx) - (x->idx < y->idx);
}

static void dedupe(sl_tests *t)
{
	idref *r;

	if (t->n < 2)
		return;
	r = sl_xcalloc(t->n, sizeof(*r));
	for (size_t i = 0; i < t->n; i++) {
		r[i].id = t->v[i].id;
		r[i].idx = i;
	}
	qsort(r, t->n, sizeof(*r), cmp_idref);
	for (size_t i = 1, k = 1; i < t->n; i++) {
		sl_buf b = SL_BUF_INIT;
		sl_test *x;

		if (strcmp(r[i].id, r[i - 1].id)) {
			k = 1;
			continue;
		}
		x = &t->v[r[i].idx];
		sl_buf_addf(&b, "%s [%zu]", x->id, ++k);
		free(x->id);
		x->id = sl_buf_detach(&b, NULL);
		r[i].id = r[i - 1].id;   /* the group's first id, never renamed */
	}
	free(r);
	index_rebuild(t);
}

/* --- JUnit --- */

/*
 * libxml2, loaded (dlopen) the first time a JUnit report is read: only a
 * test gate needs it, and with it ICU and libstdc++ (2 MB resident).
 */
static struct {
	void (*init_parser)(void);
	xmlParserCtxtPtr (*new_ctxt)(void);
	xmlDocPtr (*read_memory)(xmlParserCtxtPtr ctxt, const char *buffer, int size,
				 const char *url, const char *encoding, int options);
	xmlErrorPtr (*last_error)(void *ctx);
	xmlNodePtr (*root_element)(const xmlDoc *doc);
	void (*free_doc)(xmlDocPtr doc);
	void (*free_ctxt)(xmlParserCtxtPtr ctxt);
} xml_api;
static pthread_once_t xml_once = PTHREAD_ONCE_INIT;
static int xml_loaded;
static char xml_error[256];

static void xml_init(void)
{
	static const char *const names[] = { "libxml2.so.2", NULL };
	static const char *const syms[] = {
		"xmlInitParser", "xmlNewParserCtxt", "xmlCtxtReadMemory", "xmlCtxtGetLastError",
		"xmlDocGetRootElement", "xmlFreeDoc", "xmlFreeParserCtxt", NULL
	};
	void *const fns[] = {
		&xml_api.init_parser, &xml_api.new_ctxt, &xml_api.read_memory, &xml_api.last_error,
		&xml_api.root_element, &xml_api.free_doc, &xml_api.free_ctxt,
	};

	if (sl_dl_load(names, syms, fns, xml_error, sizeof(xml_error)))
		return;
	xml_api.init_parser();
	xml_loaded = 1;
}

/* Text of a node's direct text and CDATA children (entity references skipped). */
static void node_text(sl_buf *out, xmlNode *children, size_t cap)
{
	for (xmlNode *c = children; c && out->len < cap; c = c->next) {
		if ((c->type == XML_TEXT_NODE || c->type == XML_CDATA_SECTION_NODE) && c->content) {
			size_t len = strlen((const char *)c->content);

			if (len > cap - out->len)
				len = cap - out->len;
			sl_buf_add(out, c->content, len);
		}
	}
}

static void attr_text(sl_buf *out, xmlNode *n, const char *name)
{
	for (xmlAttr *a = n->properties; a; a = a->next)
		if (a->name && !strcmp((const char *)a->name, name)) {
			node_text(out, a->children, SL_CAP_TEST_MESSAGE);
			return;
		}
}

static int has_attr(xmlNode *n, const char *name)
{
	for (xmlAttr *a = n->properties; a; a = a->next)
		if (a->name && !strcmp((const char *)a->name, name))
			return 1;
	return 0;
}

static int is_elem(xmlNode *n, const char *name)
{
	return n->type == XML_ELEMENT_NODE && n->name && !strcmp((const char *)n->name, name);
}

static void trim(sl_buf *b)
{
	size_t i = 0;

	sl_buf_rtrim(b);
	while (i < b->len && isspace((unsigned char)b->buf[i]))
		i++;
	if (i) {
		memmove(b->buf, b->buf + i, b->len - i);
		sl_buf_setlen(b, b->len - i);
	}
}

/*
 * A testcase's file and line attributes (gtest, pytest, PHPUnit) place its
 * failure: "FILE:LINE: " leads a message that names no FILE:LINE of its
 * own, "(test at FILE:LINE)" ends one that does.
 */
static void junit_place(sl_buf *msg, xmlNode *tc)
{
	sl_buf file = SL_BUF_INIT, line = SL_BUF_INIT, at = SL_BUF_INIT;
	const char *p = msg->buf;
	char *loc = NULL;

	attr_text(&file, tc, "file");
	attr_text(&line, tc, "line");
	trim(&file);
	trim(&line);
	if (!file.len || strpbrk(file.buf, " \t\r\n:") ||
	    strspn(line.buf, "0123456789") != line.len || line.len > 9)
		goto done;
	sl_buf_addf(&at, line.len ? "%s:%s" : "%s", file.buf, line.buf);
	sl_text_next_location(&p, &loc);
	if (!loc) {
		sl_buf_addf(&at, ": %s", msg->buf);
		sl_buf_reset(msg);
		sl_buf_add(msg, at.buf, at.len);
		sl_buf_rtrim(msg);
	} else {
		if (msg->len + at.len + 12 > SL_CAP_TEST_MESSAGE)
			sl_buf_setlen(msg, SL_CAP_TEST_MESSAGE > at.len + 12 ?
				      SL_CAP_TEST_MESSAGE - at.len - 12 : 0);
		sl_buf_addf(msg, "\n(test at %s)", at.buf);
	}
done:
	free(loc);
	sl_buf_release(&file);
	sl_buf_release(&line);
	sl_buf_release(&at);
}

static void junit_case(sl_tests *out, xmlNode *tc, const char *suite)
{
	sl_buf cls = SL_BUF_INIT, name = SL_BUF_INIT, id = SL_BUF_INIT, msg = SL_BUF_INIT;
	int result = SL_TEST_PASS;

	attr_text(&cls, tc, "classname");
	attr_text(&name, tc, "name");
	if (!has_attr(tc, "classname") && suite && *suite)
		sl_buf_adds(&cls, suite);
	if (cls.len && strcmp(cls.buf, name.buf))
		sl_buf_addf(&id, "%s.%s", cls.buf, name.buf);
	else
		sl_buf_adds(&id, name.buf);
	for (xmlNode *c = tc->children; c; c = c->next) {
		int r = is_elem(c, "failure") ? SL_TEST_FAIL : is_elem(c, "error") ? SL_TEST_ERROR :
			is_elem(c, "skipped") ? SL_TEST_SKIP : 0;
		sl_buf text = SL_BUF_INIT;

		/* A skip marker wins (node writes a todo as skipped + failure); else the first failure or error. */
		if (!r || result == SL_TEST_SKIP || (result != SL_TEST_PASS && r != SL_TEST_SKIP))
			continue;
		result = r;
		sl_buf_reset(&msg);
		attr_text(&msg, c, "message");
		node_text(&text, c->children, SL_CAP_TEST_MESSAGE);
		trim(&text);
		if (text.len && strcmp(text.buf, msg.buf))
			sl_buf_addf(&msg, "%s%s", msg.len ? "\n" : "", text.buf);
		sl_buf_release(&text);
	}
	if (result == SL_TEST_PASS) {
		/* CTest writes status="disabled"/"notrun", gtest result="skipped". */
		sl_buf st = SL_BUF_INIT;

		attr_text(&st, tc, "status");
		attr_text(&st, tc, "result");
		if (strstr(st.buf, "disabled") || strstr(st.buf, "notrun") || strstr(st.buf, "skipped"))
			result = SL_TEST_SKIP;
		sl_buf_release(&st);
	}
	if (sl_test_failed(result) && !msg.len) {
		/* No message (CTest): the test's own output says what went wrong. */
		for (xmlNode *c = tc->children; c && msg.len < SL_CAP_TEST_MESSAGE; c = c->next)
			if (is_elem(c, "system-err") || is_elem(c, "system-out"))
				node_text(&msg, c->children, SL_CAP_TEST_MESSAGE);
		trim(&msg);
	}
	if (sl_test_failed(result))
		junit_place(&msg, tc);
	sl_tests_add(out, id.buf, result, msg.len ? msg.buf : NULL);
	sl_buf_release(&cls);
	sl_buf_release(&name);
	sl_buf_release(&id);
	sl_buf_release(&msg);
}

static void junit_walk(sl_tests *out, xmlNode *n, const char *suite, int depth)
{
	if (depth > 64)
		return;
	for (; n; n = n->next) {
		if (is_elem(n, "testcase")) {
			junit_case(out, n, suite);
		} else if (is_elem(n, "testsuite") || is_elem(n, "testsuites")) {
			sl_buf name = SL_BUF_INIT;

			attr_text(&name, n, "name");
			junit_walk(out, n->children, name.len ? name.buf : suite, depth + 1);
			sl_buf_release(&name);
		}
	}
}

int sl_tests_parse_junit(sl_tests *out, const char *xml, size_t len, sl_err *err)
{
	xmlParserCtxt *ctxt = NULL;
	xmlDoc *doc = NULL;
	xmlNode *root;
	int ret = 0;

	if (len > SL_CAP_TEST_XML) {
		ret = sl_err_set(err, SL_EINPUT, "junit report is %zu bytes, over the %u limit",
				 len, SL_CAP_TEST_XML);
		goto done;
	}
	pthread_once(&xml_once, xml_init);
	if (!xml_loaded)
		return sl_err_set(err, SL_ERROR, "cannot load libxml2 to read a junit report: %s",
				  xml_error);
	if (!(ctxt = xml_api.new_ctxt()))
		BUG("xmlNewParserCtxt failed");
	doc = xml_api.read_memory(ctxt, xml, (int)len, "report.xml", NULL,
				  XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	if (!doc || !ctxt->wellFormed) {
		const xmlError *e = xml_api.last_error(ctxt);
		sl_buf m = SL_BUF_INIT;

		sl_buf_adds(&m, e && e->message ? e->message : "not well-formed");
		sl_buf_rtrim(&m);
		ret = sl_err_set(err, SL_EINPUT, "junit report: %s (line %d)", m.buf, e ? e->line : 0);
		sl_buf_release(&m);
		goto done;
	}
	root = xml_api.root_element(doc);
	if (!root || !(is_elem(root, "testsuites") || is_elem(root, "testsuite"))) {
		ret = sl_err_set(err, SL_EINPUT, "junit report: root element is not <testsuites> or <testsuite>");
		goto done;
	}
	junit_walk(out, root, NULL, 0);
	dedupe(out);
done:
	if (doc)
		xml_api.free_doc(doc);
	if (ctxt)
		xml_api.free_ctxt(ctxt);
	return ret;
}

/* --- TAP --- */

static int word_ci(const char *s, const char *end, const char *w)
{
	size_t n = strlen(w);

	return (size_t)(end - s) >= n && !strncasecmp(s, w, n);
}

typedef struct tap_state {
	sl_tests *out;
	size_t last_fail;           /* index + 1 of the last "not ok", 0 if none */
	int in_yaml;                /* inside a YAML block ... */
	int yaml_attach;            /* ... that belongs to the "not ok" just before it */
	int after_fail;             /* the previous line was a "not ok" */
	unsigned *nums;             /* the number of each test reported */
	size_t nnums, nums_alloc;
	unsigned plan;
	int have_plan;
} tap_state;

static void tap_attach(tap_state *st, const char *s, const char *end)
{
	sl_test *t;
	sl_buf b = SL_BUF_INIT;

	if (!st->last_fail)
		return;
	t = &st->out->v[st->last_fail - 1];
	sl_buf_adds(&b, t->message ? t->message : "");
	if (b.len < SL_CAP_TEST_MESSAGE) {
		if (b.len)
			sl_buf_addch(&b, '\n');
		sl_buf_add(&b, s, (size_t)(end - s) > SL_CAP_TEST_MESSAGE ? SL_CAP_TEST_MESSAGE : (size_t)(end - s));
	}
	free(t->message);
	t->message = cap_message(b.buf);
	sl_buf_release(&b);
}

static void tap_test(tap_state *st, const char *p, const char *end, int ok)
{
	unsigned long num = 0;
	const char *desc, *hash = NULL;
	sl_buf id = SL_BUF_INIT, directive = SL_BUF_INIT;
	int result = ok ? SL_TEST_PASS : SL_TEST_FAIL;

	while (p < end && *p == ' ')
		p++;
	while (p < end && isdigit((unsigned char)*p) && num < 100000000ul)
		num = num * 10 + (unsigned long)(*p++ - '0');
	while (p < end && *p == ' ')
		p++;
	if (p < end && *p == '-')
		p++;
	while (p < end && *p == ' ')
		p++;
	desc = p;
	for (const char *q = p; q < end; q++) {
		if (*q == '\\' && q + 1 < end) {
			q++;
			continue;
		}
		if (*q == '#') {
			hash = q;
			break;
		}
	}
	for (const char *q = desc; q < (hash ? hash : end); q++) {
		if (*q == '\\' && q + 1 < end && (q[1] == '#' || q[1] == '\\'))
			q++;
		sl_buf_addch(&id, *q);
	}
	sl_buf_rtrim(&id);
	if (hash) {
		const char *d = hash + 1;

		while (d < end && *d == ' ')
			d++;
		if (word_ci(d, end, "skip"))
			result = SL_TEST_SKIP;
		else if (word_ci(d, end, "todo") && !ok)
			result = SL_TEST_SKIP;
		sl_buf_add(&directive, hash, (size_t)(end - hash));
	}
	if (!num)    /* unnumbered: the next in sequence */
		num = st->nnums + 1;
	if (!id.len)
		sl_buf_addf(&id, "test %lu", num);
	SL_ALLOC_GROW(st->nums, st->nnums + 1, st->nums_alloc);
	st->nums[st->nnums++] = (unsigned)num;
	sl_tests_add(st->out, id.buf, result, directive.len ? directive.buf : NULL);
	st->last_fail = result == SL_TEST_FAIL && st->out->n ? st->out->n : 0;
	st->in_yaml = 0;
	sl_buf_release(&id);
	sl_buf_release(&directive);
}

void sl_tests_parse_tap(sl_tests *out, const char *text, size_t len)
{
	const char *p = text, *stop = text + len;
	tap_state st = { out, 0, 0, 0, 0, NULL, 0, 0, 0, 0 };
	sl_buf msg = SL_BUF_INIT;
	unsigned char *seen = NULL;

	while (p < stop) {
		const char *eol = memchr(p, '\n', (size_t)(stop - p));
		const char *next = eol ? eol + 1 : stop;
		const char *end = eol ? eol : stop;

		if (end > p && end[-1] == '\r')
			end--;
		if (p < end && (*p == ' ' || *p == '\t')) {
			const char *q = p;

			while (q < end && (*q == ' ' || *q == '\t'))
				q++;
			if (!st.in_yaml && end - q == 3 && !memcmp(q, "---", 3)) {
				st.in_yaml = 1;
				st.yaml_attach = st.after_fail;
			} else if (st.in_yaml && end - q == 3 && !memcmp(q, "...", 3)) {
				st.in_yaml = 0;
			} else if (st.in_yaml && st.yaml_attach && !word_ci(q, end, "duration_ms:") &&
				   !word_ci(q, end, "type:")) {
				tap_attach(&st, q, end);
			}
			st.after_fail = 0;
			p = next;
			continue;
		}
		st.after_fail = 0;
		if (word_ci(p, end, "ok") && (end - p == 2 || p[2] == ' ')) {
			tap_test(&st, p + 2, end, 1);
		} else if (word_ci(p, end, "not ok") && (end - p == 6 || p[6] == ' ')) {
			tap_test(&st, p + 6, end, 0);
			st.after_fail = 1;
		} else if (p < end && *p == '#') {
			const char *q = p + 1;

			while (q < end && *q == ' ')
				q++;
			if (q < end && !word_ci(q, end, "subtest"))
				tap_attach(&st, q, end);
		} else if (word_ci(p, end, "Bail out!")) {
			sl_buf_reset(&msg);
			sl_buf_add(&msg, p, (size_t)(end - p));
			sl_tests_add(out, "bail out", SL_TEST_FAIL, msg.buf);
			out->bailed_out = 1;
			st.last_fail = 0;
			break;
		} else if (!st.have_plan && word_ci(p, end, "1..")) {
			const char *q = p + 3;
			unsigned long n = 0;

			while (q < end && isdigit((unsigned char)*q) && n <= SL_CAP_TESTS)
				n = n * 10 + (unsigned long)(*q++ - '0');
			st.last_fail = 0;
			if (n <= SL_CAP_TESTS) {
				st.have_plan = 1;
				st.plan = (unsigned)n;
			}
		}
		p = next;
	}
	/* Tests the plan promised that never reported (the run died): failures. */
	if (st.have_plan && st.plan) {
		seen = sl_xcalloc(st.plan, 1);
		for (size_t i = 0; i < st.nnums; i++)
			if (st.nums[i] && st.nums[i] <= st.plan)
				seen[st.nums[i] - 1] = 1;
		for (unsigned i = 0; i < st.plan && !out->bailed_out; i++) {
			sl_buf name = SL_BUF_INIT;

			if (seen[i])
				continue;
			sl_buf_reset(&msg);
			sl_buf_addf(&msg, "not run (plan 1..%u)", st.plan);
			sl_buf_addf(&name, "test %u", i + 1);
			sl_tests_add(out, name.buf, SL_TEST_FAIL, msg.buf);
			sl_buf_release(&name);
		}
	}
	free(seen);
	free(st.nums);
	sl_buf_release(&msg);
	dedupe(out);
}

/*
 * Merge the repeats of an id into its first appearance: the first failing
 * result wins (a .trs file of a TAP-driven test has one line per case).
 */
static void keep_first(sl_tests *t)
{
	idref *r;
	unsigned char *drop;
	size_t k = 0, first = 0;

	if (t->n < 2)
		return;
	r = sl_xcalloc(t->n, sizeof(*r));
	drop = sl_xcalloc(t->n, 1);
	for (size_t i = 0; i < t->n; i++) {
		r[i].id = t->v[i].id;
		r[i].idx = i;
	}
	qsort(r, t->n, sizeof(*r), cmp_idref);
	for (size_t i = 1; i < t->n; i++) {
		sl_test *keep = &t->v[r[first].idx], *x = &t->v[r[i].idx];

		if (strcmp(r[i].id, r[first].id)) {
			first = i;
			continue;
		}
		drop[r[i].idx] = 1;
		if (sl_test_failed(x->result) && !sl_test_failed(keep->result)) {
			char *m = keep->message;

			keep->result = x->result;
			keep->message = x->message;
			x->message = m;
		}
	}
	free(r);
	for (size_t i = 0; i < t->n; i++) {
		if (drop[i]) {
			free(t->v[i].id);
			free(t->v[i].message);
		} else {
			t->v[k++] = t->v[i];
		}
	}
	t->n = k;
	free(drop);
	index_rebuild(t);
}

/* One line without its CR and without ANSI colour sequences (ESC [ ... letter). */
static void clean_line(sl_buf *out, const char *p, const char *end)
{
	sl_buf_reset(out);
	if (end > p && end[-1] == '\r')
		end--;
	while (p < end) {
		if (*p == '\033' && p + 1 < end && p[1] == '[') {
			p += 2;
			while (p < end && !isalpha((unsigned char)*p))
				p++;
			p += p < end;
			continue;
		}
		sl_buf_addch(out, *p++);
	}
}

/*
 * A failed test's output that a report prints after it (a test-suite.log
 * section, ctest --output-on-failure) joins its message, so a failure's
 * FILE:LINE reaches the fix job.  body is emptied.
 */
static void attach_output(sl_tests *out, long idx, sl_buf *body)
{
	sl_test *x = idx >= 0 && (size_t)idx < out->n ? &out->v[idx] : NULL;

	trim(body);
	if (x && body->len && sl_test_failed(x->result)) {
		sl_buf m = SL_BUF_INIT;

		sl_buf_addf(&m, "%s%s%s", x->message ? x->message : "", x->message ? "\n" : "",
			    body->buf);
		free(x->message);
		x->message = cap_message(m.buf);
		sl_buf_release(&m);
	}
	sl_buf_reset(body);
}

/* A line of the section text, while the body is under the message cap. */
static void body_line(sl_buf *body, const sl_buf *line)
{
	if (body->len <= SL_CAP_TEST_MESSAGE)
		sl_buf_addf(body, "%s\n", line->buf);
}

/* --- automake --- */

static const struct {
	const char *word;
	int result;
	const char *message;
} am_results[] = {
	{ "PASS", SL_TEST_PASS, NULL },
	{ "XFAIL", SL_TEST_PASS, "expected failure" },
	{ "SKIP", SL_TEST_SKIP, NULL },
	{ "FAIL", SL_TEST_FAIL, NULL },
	{ "XPASS", SL_TEST_FAIL, "unexpected pass" },
	{ "ERROR", SL_TEST_ERROR, NULL },
};

/* The result word at s (followed by ':'), or -1. */
static int am_result(const char *s, size_t *len)
{
	for (size_t i = 0; i < sizeof(am_results) / sizeof(am_results[0]); i++) {
		size_t l = strlen(am_results[i].word);

		if (!strncmp(s, am_results[i].word, l) && s[l] == ':') {
			*len = l;
			return (int)i;
		}
	}
	return -1;
}

/* 1 if the line at p (up to stop) is a test-suite.log section's underline "====". */
static int am_underline(const char *p, const char *stop)
{
	const char *s = p;

	while (p < stop && *p == '=')
		p++;
	return p - s >= 3 && (p == stop || *p == '\n' || *p == '\r');
}

void sl_tests_parse_automake(sl_tests *out, const char *text, size_t len, const char *trs_name)
{
	const char *p = text, *stop = text + len;
	sl_buf line = SL_BUF_INIT, id = SL_BUF_INIT, body = SL_BUF_INIT;
	long section = -1;          /* the test whose test-suite.log section is being read */

	while (p < stop) {
		const char *eol = memchr(p, '\n', (size_t)(stop - p));
		const char *next = eol ? eol + 1 : stop;
		const char *trs, *name, *word;
		char w[16];
		size_t wl, nl;
		int r;

		clean_line(&line, p, eol ? eol : stop);
		p = next;
		sl_buf_reset(&id);
		/* "NAME.trs::test-result: X" (grep -H) or a lone .trs file's ":test-result: X" */
		if ((trs = strstr(line.buf, ":test-result: ")) && (trs == line.buf ?
		    trs_name != NULL : trs - line.buf > 5 && !memcmp(trs - 5, ".trs:", 5))) {
			word = trs + strlen(":test-result: ");
			if (trs == line.buf)
				sl_buf_adds(&id, trs_name);
			else
				sl_buf_add(&id, line.buf, (size_t)(trs - 5 - line.buf));
			wl = strcspn(word, " \t");
			if (wl >= sizeof(w) - 1)
				continue;
			memcpy(w, word, wl);
			w[wl] = ':';
			w[wl + 1] = '\0';
			if ((r = am_result(w, &wl)) < 0)
				continue;
		} else {
			if ((r = am_result(line.buf, &wl)) < 0 || line.buf[wl + 1] != ' ') {
				if (section >= 0)
					body_line(&body, &line);
				continue;
			}
			name = line.buf + wl + 2;
			while (*name == ' ')
				name++;
			nl = strlen(name);
			while (nl && (name[nl - 1] == ' ' || name[nl - 1] == '\t'))
				nl--;
			if (!nl)
				continue;
			sl_buf_add(&id, name, nl);
			attach_output(out, section, &body);
			section = -1;
			/* "FAIL: t/x" over "=========": test-suite.log's section of that test */
			if (am_underline(p, stop)) {
				section = (long)out->n;
				p = memchr(p, '\n', (size_t)(stop - p));
				p = p ? p + 1 : stop;
			}
		}
		if (id.len)
			sl_tests_add(out, id.buf, am_results[r].result, am_results[r].message);
	}
	attach_output(out, section, &body);
	sl_buf_release(&line);
	sl_buf_release(&id);
	sl_buf_release(&body);
	keep_first(out);
}

/* --- ctest --- */

/* "***Failed  0.01 sec": the result of a ctest status after the dots. */
static int ctest_result(const char *status, const char **message)
{
	*message = NULL;
	if (!strncmp(status, "Passed", 6))
		return SL_TEST_PASS;
	if (!strncmp(status, "***Not Run (Disabled)", 21) || !strncmp(status, "***Skipped", 10))
		return SL_TEST_SKIP;
	if (!strncmp(status, "***Failed", 9))
		return SL_TEST_FAIL;
	*message = status + 3;
	return SL_TEST_ERROR;       /* ***Timeout, ***Exception: ..., ***Not Run */
}

/* "Exception: SegFault  0.00 sec" without its time. */
static size_t status_len(const char *m)
{
	size_t l = strlen(m);

	if (l >= 4 && !strcmp(m + l - 4, " sec"))
		l -= 4;
	while (l && (isdigit((unsigned char)m[l - 1]) || m[l - 1] == '.' || m[l - 1] == ' '))
		l--;
	return l;
}

/*
 * After "WORD" and its padding: ctest right-aligns its numbers to the
 * widest ("Start  4:", "Test  #4:", "\t 11 - NAME"), so one space or many.
 */
static const char *after_padded(const char *s, const char *word)
{
	size_t l = strlen(word);

	if (strncmp(s, word, l) || s[l] != ' ')
		return NULL;
	s += l;
	while (*s == ' ')
		s++;
	return s;
}

/* The number after "Test  #" in a result line ("12/12 Test #12: NAME ..."), or NULL. */
static const char *ctest_test_no(const char *l)
{
	for (const char *t = strstr(l, "Test "); t; t = strstr(t + 1, "Test ")) {
		const char *h = after_padded(t, "Test");

		if (*h == '#' && isdigit((unsigned char)h[1]))
			return h + 1;
	}
	return NULL;
}

/* 1 for ctest's lines that end a failed test's output: "Start N:", the summary. */
static int ctest_boundary(const char *l)
{
	const char *s;

	while (*l == ' ')
		l++;
	if ((s = after_padded(l, "Start")) && isdigit((unsigned char)*s))
		return 1;
	while (isdigit((unsigned char)*l))
		l++;
	return !strncmp(l, "% tests passed", 14) || ctest_test_no(l) ||
		!strncmp(l, "Total Test time", 15) || !strncmp(l, "The following tests", 19);
}

/* The summary block a line opens: 1 "FAILED:", 2 "did not run:", else 0. */
static int ctest_summary_head(const char *l)
{
	if (!strcmp(l, "The following tests FAILED:"))
		return 1;
	return !strcmp(l, "The following tests did not run:") ? 2 : 0;
}

/*
 * A line of a summary block, "\t 11 - NAME (STATUS)": the test, failed
 * ("Failed"), an error with its status (SEGFAULT, Timeout, Not Run...) or,
 * in the "did not run" block, skipped.  0 when the line is not one, which
 * ends the block.  Adds only what the result lines may have lost (output
 * cut by `| tail`); a test both places name is one test (keep_first).
 */
static int ctest_summary_line(sl_tests *out, sl_buf *line, int block)
{
	char *l = line->buf, *name, *open;
	size_t n;

	while (*l == ' ' || *l == '\t')
		l++;
	if (!isdigit((unsigned char)*l))
		return 0;
	while (isdigit((unsigned char)*l))
		l++;
	if (strncmp(l, " - ", 3))
		return 0;
	name = l + 3;
	n = strlen(name);
	open = NULL;
	for (char *o = strstr(name, " ("); o; o = strstr(o + 1, " ("))
		open = o;
	if (!open || open == name || name[n - 1] != ')' || open + 3 >= name + n)
		return 0;
	name[n - 1] = '\0';
	*open = '\0';
	if (block == 2)
		sl_tests_add(out, name, SL_TEST_SKIP, NULL);
	else if (!strcmp(open + 2, "Failed"))
		sl_tests_add(out, name, SL_TEST_FAIL, NULL);
	else
		sl_tests_add(out, name, SL_TEST_ERROR, open + 2);
	return 1;
}

int sl_tests_parse_ctest(sl_tests *out, const char *text, size_t len, sl_err *err)
{
	const char *p = text, *stop = text + len;
	sl_buf line = SL_BUF_INIT, msg = SL_BUF_INIT, body = SL_BUF_INIT;
	long open = -1;             /* a failed test whose output (--output-on-failure) follows */
	int block = 0;              /* in a summary block: ctest_summary_head's number */

	while (p < stop && isspace((unsigned char)*p))
		p++;
	if (p < stop && *p == '<')
		return sl_tests_parse_junit(out, text, len, err);
	while (p < stop) {
		const char *eol = memchr(p, '\n', (size_t)(stop - p));
		const char *next = eol ? eol + 1 : stop;
		const char *t, *name, *status, *m, *e;
		int r;

		clean_line(&line, p, eol ? eol : stop);
		p = next;
		if (block && ctest_summary_line(out, &line, block))
			continue;
		if ((block = ctest_summary_head(line.buf)) || ctest_boundary(line.buf)) {
			attach_output(out, open, &body);
			open = -1;
		} else if (open >= 0) {
			body_line(&body, &line);
		}
		/* [N/M ]Test  #K: NAME ....   Passed    0.01 sec */
		if (!(t = ctest_test_no(line.buf)))
			continue;
		while (isdigit((unsigned char)*t))
			t++;
		if (*t++ != ':' || *t++ != ' ')
			continue;
		name = t;
		if (!(status = strstr(name, "***")) && !(status = strstr(name, " Passed")))
			continue;
		status += *status == ' ';
		if (*status == '*' && !isalpha((unsigned char)status[3]))
			continue;
		e = status;
		while (e > name && (e[-1] == ' ' || e[-1] == '.'))
			e--;
		if (e == name)
			continue;
		r = ctest_result(status, &m);
		sl_buf_reset(&msg);
		if (m)
			sl_buf_add(&msg, m, status_len(m));
		*(char *)e = '\0';
		if (sl_test_failed(r))
			open = (long)out->n;
		sl_tests_add(out, name, r, msg.len ? msg.buf : NULL);
	}
	attach_output(out, open, &body);
	sl_buf_release(&line);
	sl_buf_release(&msg);
	sl_buf_release(&body);
	keep_first(out);
	return SL_OK;
}

/* --- comparisons and feedback --- */

size_t sl_tests_regressions(const sl_tests *base, const sl_tests *cand, sl_tests *out)
{
	size_t n = 0;

	for (size_t i = 0; i < base->n; i++) {
		const sl_test *b = &base->v[i], *c;

		if (b->result != SL_TEST_PASS)
			continue;
		c = sl_tests_find(cand, b->id);
		if (c && c->result == SL_TEST_PASS)
			continue;
		if (c)
			sl_tests_add(out, c->id, c->result, c->message);
		else
			sl_tests_add(out, b->id, SL_TEST_FAIL, "missing from the report");
		n++;
	}
	return n;
}

size_t sl_tests_flaky(const sl_tests *run_a, const sl_tests *run_b, sl_tests *out)
{
	size_t n = 0;

	for (size_t i = 0; i < run_a->n; i++) {
		const sl_test *a = &run_a->v[i];
		const sl_test *b = sl_tests_find(run_b, a->id);

		if (!b)
			continue;
		if (a->result == SL_TEST_PASS && sl_test_failed(b->result))
			sl_tests_add(out, b->id, b->result, b->message);
		else if (b->result == SL_TEST_PASS && sl_test_failed(a->result))
			sl_tests_add(out, a->id, a->result, a->message);
		else
			continue;
		n++;
	}
	return n;
}

void sl_tests_summary(const sl_tests *t, sl_buf *out, size_t cap)
{
	size_t count[5] = { 0 }, start = out->len, shown = 0, failing;

	if (!cap)
		cap = SL_CAP_TEST_SUMMARY;
	for (size_t i = 0; i < t->n; i++)
		if (t->v[i].result >= SL_TEST_PASS && t->v[i].result <= SL_TEST_SKIP)
			count[t->v[i].result]++;
	failing = count[SL_TEST_FAIL] + count[SL_TEST_ERROR];
	sl_buf_addf(out, "%zu tests: %zu passed, %zu failed, %zu errors, %zu skipped%s\n",
		    t->n, count[SL_TEST_PASS], count[SL_TEST_FAIL], count[SL_TEST_ERROR],
		    count[SL_TEST_SKIP], t->bailed_out ? " (bailed out)" : "");
	for (size_t i = 0; i < t->n; i++) {
		const sl_test *x = &t->v[i];
		size_t before = out->len;

		if (!sl_test_failed(x->result))
			continue;
		sl_buf_addf(out, "%s: %s\n", sl_test_result_name(x->result), x->id);
		for (const char *m = x->message; m && *m;) {
			const char *nl = strchr(m, '\n');
			size_t l = nl ? (size_t)(nl - m) : strlen(m);

			sl_buf_addf(out, "    %.*s\n", (int)l, m);
			m += l + (nl != NULL);
		}
		if (out->len - start > cap) {
			sl_buf_setlen(out, before);
			sl_buf_addf(out, "... %zu more failing test%s\n", failing - shown,
				    failing - shown == 1 ? "" : "s");
			break;
		}
		shown++;
	}
	if (t->dropped)
		sl_buf_addf(out, "... %zu tests over the limit not parsed\n", t->dropped);
}
