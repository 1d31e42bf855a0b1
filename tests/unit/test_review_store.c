/*
 * test_review_store.c - outcome metrics and published-change records
 * (storage/review_store.h) against a real store file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sqlite3.h>

#include "unit.h"
#include "store_fixture.h"
#include "storage/review_store.h"
#include "storage/store.h"
#include "common/util.h"

static char dir[] = "/tmp/sluice-test-review-store-XXXXXX";

static int64_t campaign(sl_store *st)
{
	return fixture_campaign(st, "m", "name: m\nedit_format: search-replace   # comment\n");
}

/* A target with one attempt (and a passed candidate when cand), returning the candidate. */
static int64_t target(sl_store *st, int64_t camp, int n, const char *source, const char *model,
		      int64_t tin, int64_t tout, double cost, int cand)
{
	sl_target_rec t = { 0 };
	sl_attempt_rec a = { 0 };
	sl_candidate_rec c = { 0 };
	char key[32], req[128];
	int64_t tid = 0, aid = 0, cid = 0;
	int ins;

	snprintf(key, sizeof(key), "src/a.c:%d-%d", n, n + 1);
	t.campaign_id = camp;
	t.key = key;
	t.path = "src/a.c";
	t.lang = "c";
	t.blob = "abc";
	t.unit = "capture";
	t.start_line = n;
	t.end_line = n;
	t.nsites = 1;
	CHECK_INT(sl_store_target_add(st, &t, &tid, &ins, NULL), 0);
	snprintf(req, sizeof(req), "{\"model\":\"%s\",\"messages\":[]}", model ? model : "");
	a.target_id = tid;
	a.n = 1;
	a.source = (char *)source;
	a.request = model ? req : NULL;
	a.tokens_in = tin;
	a.tokens_out = tout;
	a.cost = cost;
	a.outcome = cand ? SL_A_CANDIDATE : SL_A_PARSE_ERROR;
	CHECK_INT(sl_store_attempt_add(st, &a, &aid, NULL), 0);
	if (!cand)
		return 0;
	c.attempt_id = aid;
	c.target_id = tid;
	c.diff = "diff --git a/src/a.c b/src/a.c\n";
	c.commit_oid = "1111111111111111111111111111111111111111";
	c.state = SL_C_PASSED;
	c.branch = "sluice/m/x";
	CHECK_INT(sl_store_candidate_add(st, &c, &cid, NULL), 0);
	return cid;
}

/* Backdate a candidate and its decision, through a second connection. */
static void set_times(int64_t cand, const char *created, const char *decided)
{
	sqlite3 *db = NULL;
	char sql[300], *path = sl_path_join(dir, "m.db");

	CHECK_INT(sqlite3_open(path, &db), SQLITE_OK);
	free(path);
	snprintf(sql, sizeof(sql), "UPDATE candidates SET created_at = '%s' WHERE id = %lld;"
		 "UPDATE decisions SET decided_at = '%s' WHERE candidate_id = %lld;", created,
		 (long long)cand, decided, (long long)cand);
	CHECK_INT(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
}

static void published(sl_store *st, int64_t camp, int64_t cand, int64_t number,
		      const char *state, int landed)
{
	sl_published_rec p = { 0 };

	p.candidate_id = cand;
	p.campaign_id = camp;
	p.forge = "github";
	p.project = "o/r";
	p.branch = "sluice/m/review/x";
	p.head_oid = "2222222222222222222222222222222222222222";
	p.number = number;
	p.state = sl_pr_state_parse(state);
	p.landed_unchanged = landed;
	CHECK_INT(sl_store_published_put(st, &p, NULL), 0);
}

static const sl_metric_group *group(const sl_metrics *m, const char *kind, const char *name)
{
	for (size_t i = 0; i < m->ngroups; i++)
		if (!strcmp(m->groups[i].kind, kind) && !strcmp(m->groups[i].name, name))
			return &m->groups[i];
	return NULL;
}

static void test_metrics(void)
{
	char *p = sl_path_join(dir, "m.db");
	sl_store *st = NULL;
	sl_metrics m;
	const sl_metric_group *g;
	int64_t camp, c1, c2, c3, c4;

	CHECK_INT(sl_store_open(&st, p, 1, NULL), 0);
	camp = campaign(st);
	CHECK_INT(sl_store_metrics(st, camp, &m, NULL), 0);
	CHECK(m.acceptance_rate < 0);
	CHECK(m.median_decision_hours < 0);
	CHECK(m.cost_per_accepted < 0);
	CHECK_INT(m.ngroups, 0);
	sl_metrics_release(&m);

	c1 = target(st, camp, 1, "rules", NULL, -1, -1, 0, 1);
	c2 = target(st, camp, 2, "openai", "gpt-x", 100, 50, 0.5, 1);
	target(st, camp, 3, "openai", "gpt-x", 10, 0, 0.1, 0);
	c3 = target(st, camp, 4, "anthropic", "claude-y", 20, 10, 0.2, 1);
	c4 = target(st, camp, 5, "openai", "gpt-x", 0, 0, 0, 1);
	CHECK_INT(sl_store_decide(st, c1, SL_D_ACCEPT, NULL, NULL), 0);
	CHECK_INT(sl_store_decide(st, c2, SL_D_REJECT, "style", NULL), 0);
	CHECK_INT(sl_store_decide(st, c3, SL_D_ACCEPT, NULL, NULL), 0);
	set_times(c1, "2026-01-01T00:00:00Z", "2026-01-01T01:00:00Z");
	set_times(c2, "2026-01-01T00:00:00Z", "2026-01-01T02:00:00Z");
	set_times(c3, "2026-01-01T00:00:00Z", "2026-01-02T04:00:00Z");
	published(st, camp, c1, 1, "merged", 1);
	published(st, camp, c3, 2, "merged", 0);
	published(st, camp, c4, 3, "open", -1);

	CHECK_INT(sl_store_metrics(st, camp, &m, NULL), 0);
	CHECK_INT(m.proposed, 4);
	CHECK_INT(m.decided, 3);
	CHECK_INT(m.accepted, 2);
	CHECK_INT(m.rejected, 1);
	CHECK(m.acceptance_rate > 0.666 && m.acceptance_rate < 0.667);
	CHECK_INT(m.landed_checked, 2);
	CHECK_INT(m.landed_unchanged, 1);
	CHECK(m.landed_unchanged_rate == 0.5);
	CHECK(m.median_decision_hours > 1.999 && m.median_decision_hours < 2.001);
	CHECK_INT(m.tokens, 190);
	CHECK(m.cost > 0.799 && m.cost < 0.801);
	CHECK(m.tokens_per_accepted == 95);
	CHECK(m.cost_per_accepted > 0.399 && m.cost_per_accepted < 0.401);
	CHECK((g = group(&m, "source", "rule")) && g->proposed == 1 && g->accepted == 1);
	CHECK((g = group(&m, "source", "model")) && g->proposed == 3 && g->accepted == 1 &&
	      g->rejected == 1 && g->tokens == 190);
	CHECK((g = group(&m, "provider", "openai")) && g->proposed == 2 && g->rejected == 1 &&
	      g->tokens == 160);
	CHECK((g = group(&m, "model", "gpt-x")) && g->proposed == 2);
	CHECK((g = group(&m, "model", "claude-y")) && g->accepted == 1 && g->landed_unchanged == 0);
	CHECK((g = group(&m, "model", "rules")) && g->landed_unchanged == 1);
	CHECK((g = group(&m, "edit_format", "search-replace")) && g->proposed == 3);
	CHECK_INT(m.ndays, 2);
	if (m.ndays == 2) {
		CHECK_STR(m.days[0].day, "2026-01-01");
		CHECK_INT(m.days[0].decided, 2);
		CHECK_INT(m.days[0].accepted, 1);
		CHECK_STR(m.days[1].day, "2026-01-02");
		CHECK_INT(m.days[1].accepted, 1);
	}
	sl_metrics_release(&m);
	sl_store_free(st);
	free(p);
}

static void test_published_records_and_pace(void)
{
	char *p = sl_path_join(dir, "p.db");
	sl_store *st = NULL;
	sl_published_rec got, *list = NULL;
	sl_err err = SL_ERR_INIT;
	size_t n = 0;
	int64_t camp, c1, c2, c3, open_now = -1, last_hour = -1;

	CHECK_INT(sl_store_open(&st, p, 1, NULL), 0);
	camp = campaign(st);
	c1 = target(st, camp, 1, "rules", NULL, -1, -1, 0, 1);
	c2 = target(st, camp, 2, "rules", NULL, -1, -1, 0, 1);
	c3 = target(st, camp, 3, "rules", NULL, -1, -1, 0, 1);
	CHECK_INT(sl_store_published_get(st, c1, &got, &err), SL_ENOTFOUND);
	CHECK_INT(sl_store_published_pace(st, camp, &open_now, &last_hour, NULL), 0);
	CHECK_INT(open_now, 0);
	CHECK_INT(last_hour, 0);

	/* two candidates in one request count once */
	published(st, camp, c1, 7, "open", -1);
	published(st, camp, c2, 7, "open", -1);
	published(st, camp, c3, 8, "merged", 1);
	CHECK_INT(sl_store_published_pace(st, camp, &open_now, &last_hour, NULL), 0);
	CHECK_INT(open_now, 1);
	CHECK_INT(last_hour, 2);

	CHECK_INT(sl_store_published_get(st, c3, &got, NULL), 0);
	CHECK_INT(got.number, 8);
	CHECK_INT(got.state, SL_PR_MERGED);
	CHECK_INT(got.landed_unchanged, 1);
	CHECK(got.text_sha == NULL);
	sl_published_rec_release(&got);

	/* a replace keeps opened_at and takes the new state */
	CHECK_INT(sl_store_published_get(st, c1, &got, NULL), 0);
	got.state = SL_PR_CLOSED;
	got.close_reason = sl_xstrdup("no thanks");
	got.review_comments = 4;
	CHECK_INT(sl_store_published_put(st, &got, NULL), 0);
	sl_published_rec_release(&got);
	CHECK_INT(sl_store_published_list(st, camp, SL_PR_OPEN, &list, &n, NULL), 0);
	CHECK_INT(n, 1);
	CHECK_INT(n ? list[0].candidate_id : 0, c2);
	sl_published_list_free(list, n);
	CHECK_INT(sl_store_published_list(st, camp, SL_PR_ANY, &list, &n, NULL), 0);
	CHECK_INT(n, 3);
	if (n == 3) {
		CHECK_INT(list[0].state, SL_PR_CLOSED);
		CHECK_STR(list[0].close_reason, "no thanks");
		CHECK_INT(list[0].review_comments, 4);
		CHECK_STR(list[0].opened_at, list[1].opened_at);
	}
	sl_published_list_free(list, n);
	sl_store_free(st);
	free(p);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_metrics);
	RUN(test_published_records_and_pace);
	sl_rm_rf(dir, NULL);
	return unit_done();
}
