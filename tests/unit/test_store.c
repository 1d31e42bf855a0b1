/*
 * test_store.c - the SQLite store against real files in a temp directory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sqlite3.h>

#include "unit.h"
#include "store_fixture.h"
#include "storage/store.h"
#include "storage/unplaced_store.h"
#include "common/util.h"

static char dir[] = "/tmp/sluice-test-store-XXXXXX";

static char *db_path(const char *name)
{
	return sl_path_join(dir, name);
}

static int64_t add_campaign(sl_store *st, const char *name)
{
	return fixture_campaign(st, name, "name: x\n");
}

static int64_t add_target(sl_store *st, int64_t camp, const char *key, int *inserted)
{
	int64_t id = 0;

	CHECK_INT(fixture_target(st, camp, key, &id, inserted, NULL), 0);
	return id;
}

static void test_create_and_migrate(void)
{
	char *p = db_path("a.db");
	sl_store *st = NULL;
	sl_err err = SL_ERR_INIT;

	CHECK_INT(sl_store_open(&st, p, 1, &err), 0);
	CHECK(st != NULL);
	CHECK(sl_store_schema_version(st) >= 1);
	sl_store_free(st);
	/* reopening an up-to-date file does not migrate again */
	CHECK_INT(sl_store_open(&st, p, 0, &err), 0);
	CHECK(sl_store_schema_version(st) >= 1);
	sl_store_free(st);
	free(p);
}

/* Each store has an id of its own, kept across reopening. */
static void test_store_id(void)
{
	char *pa = db_path("id-a.db"), *pb = db_path("id-b.db");
	char a[SL_STORE_ID_LEN + 1], again[SL_STORE_ID_LEN + 1], b[SL_STORE_ID_LEN + 1];
	sl_store *st = NULL;

	CHECK_INT(sl_store_open(&st, pa, 1, NULL), 0);
	CHECK_INT(sl_store_id(a, st, NULL), 0);
	sl_store_free(st);
	CHECK_INT(sl_store_open(&st, pa, 0, NULL), 0);
	CHECK_INT(sl_store_id(again, st, NULL), 0);
	sl_store_free(st);
	CHECK_INT(sl_store_open(&st, pb, 1, NULL), 0);
	CHECK_INT(sl_store_id(b, st, NULL), 0);
	sl_store_free(st);
	CHECK_INT(strlen(a), SL_STORE_ID_LEN);
	CHECK(strspn(a, "0123456789abcdef") == SL_STORE_ID_LEN);
	CHECK(!strcmp(a, again));
	CHECK(strcmp(a, b) != 0);
	free(pa);
	free(pb);
}

static void test_open_missing_without_create(void)
{
	char *p = db_path("missing.db");
	sl_store *st = NULL;
	sl_err err = SL_ERR_INIT;

	CHECK(sl_store_open(&st, p, 0, &err) != 0);
	CHECK(st == NULL);
	CHECK(strstr(err.msg, "missing.db") != NULL);
	CHECK(access(p, F_OK) != 0);
	free(p);
}

static void test_not_a_database(void)
{
	char *p = db_path("junk.db");
	sl_store *st = NULL;
	sl_err err = SL_ERR_INIT;
	FILE *fp = fopen(p, "w");

	fputs("this is not sqlite, it is a text file long enough to have a header......\n"
	      "more text more text more text more text more text more text more text\n", fp);
	fclose(fp);
	CHECK(sl_store_open(&st, p, 0, &err) != 0);
	CHECK(st == NULL);
	CHECK(err.msg[0] != '\0');
	free(p);
}

static void test_newer_schema_refused(void)
{
	char *p = db_path("newer.db");
	sqlite3 *db;
	sl_store *st = NULL;
	sl_err err = SL_ERR_INIT;

	CHECK(sqlite3_open(p, &db) == SQLITE_OK);
	CHECK(sqlite3_exec(db, "PRAGMA user_version = 999", NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(db);
	CHECK_INT(sl_store_open(&st, p, 0, &err), SL_EINPUT);
	CHECK(strstr(err.msg, "newer") != NULL);
	free(p);
}

static void test_campaign_roundtrip(void)
{
	char *p = db_path("b.db");
	sl_store *st = NULL;
	sl_campaign_rec c;
	sl_err err = SL_ERR_INIT;
	int64_t id;

	CHECK_INT(sl_store_open(&st, p, 1, NULL), 0);
	id = add_campaign(st, "one");
	CHECK_INT(sl_store_campaign_get(st, "one", &c, NULL), 0);
	CHECK_INT(c.id, id);
	CHECK_STR(c.repo_path, "/repo");
	CHECK_STR(c.branch_prefix, "sluice/x");
	sl_campaign_rec_release(&c);
	CHECK_INT(sl_store_campaign_get(st, "two", &c, &err), SL_ENOTFOUND);
	CHECK(strstr(err.msg, "two") != NULL);
	sl_store_free(st);
	free(p);
}

static void test_targets_idempotent_and_states(void)
{
	char *p = db_path("c.db");
	sl_store *st = NULL;
	sl_target_rec *v = NULL, t;
	size_t n = 0;
	int ins = -1;
	int64_t camp, a, b;

	CHECK_INT(sl_store_open(&st, p, 1, NULL), 0);
	camp = add_campaign(st, "c");
	a = add_target(st, camp, "src/a.c:1-5", &ins);
	CHECK_INT(ins, 1);
	b = add_target(st, camp, "src/a.c:1-5", &ins);
	CHECK_INT(ins, 0);
	CHECK_INT(a, b);
	add_target(st, camp, "src/a.c:9-12", &ins);
	CHECK_INT(sl_store_targets(st, camp, SL_T_PENDING, &v, &n, NULL), 0);
	CHECK_INT(n, 2);
	sl_target_list_free(v, n);
	CHECK_INT(sl_store_target_update(st, a, SL_T_FAILED, 2, "build failed", NULL), 0);
	CHECK_INT(sl_store_target_get(st, a, &t, NULL), 0);
	CHECK_STR(sl_target_state_name(t.state), "failed");
	CHECK_INT(t.attempts, 2);
	CHECK_STR(t.reason, "build failed");
	sl_target_rec_release(&t);
	CHECK_INT(sl_store_targets(st, camp, SL_T_PENDING, &v, &n, NULL), 0);
	CHECK_INT(n, 1);
	sl_target_list_free(v, n);
	/* the CHECK constraint refuses a state that is none ("?") */
	CHECK(sl_store_target_update(st, a, SL_T_NSTATES, 1, NULL, NULL) != 0);
	sl_store_free(st);
	free(p);
}

/* One name per target state, candidate state, attempt outcome and verdict, each read back. */
static void test_target_state_names(void)
{
	for (int i = 0; i < SL_T_NSTATES; i++)
		CHECK_INT(sl_target_state_parse(sl_target_state_name(i)), i);
	CHECK_STR(sl_target_state_name(SL_T_BUDGET), "budget");
	CHECK_INT(sl_target_state_parse("passed"), SL_T_ANY);
	CHECK_INT(sl_target_state_parse(NULL), SL_T_ANY);
	CHECK_STR(sl_target_state_name(SL_T_NSTATES), "?");
	for (int i = 0; i < SL_C_NSTATES; i++)
		CHECK_INT(sl_candidate_state_parse(sl_candidate_state_name(i)), i);
	CHECK_STR(sl_candidate_state_name(SL_C_ERROR), "error");
	CHECK_INT(sl_candidate_state_parse("pending"), SL_C_ANY);
	for (int i = SL_A_NONE + 1; i < SL_A_NOUTCOMES; i++)
		CHECK_INT(sl_attempt_outcome_parse(sl_attempt_outcome_name(i)), i);
	CHECK_INT(sl_attempt_outcome_parse("?"), SL_A_NONE);
	for (int i = 0; i < SL_VERDICT_N; i++)
		CHECK_INT(sl_verdict_parse(sl_verdict_name((sl_verdict)i)), i);
	CHECK_INT(sl_verdict_parse("cached"), -1);
}

static void test_rollback_discards(void)
{
	char *p = db_path("d.db");
	sl_store *st = NULL;
	sl_target_rec t;
	int64_t camp, a;

	CHECK_INT(sl_store_open(&st, p, 1, NULL), 0);
	camp = add_campaign(st, "d");
	a = add_target(st, camp, "k", NULL);
	CHECK_INT(sl_store_begin(st, NULL), 0);
	CHECK_INT(sl_store_target_update(st, a, SL_T_PROPOSED, 1, NULL, NULL), 0);
	sl_store_rollback(st);
	CHECK_INT(sl_store_target_get(st, a, &t, NULL), 0);
	CHECK_STR(sl_target_state_name(t.state), "pending");
	sl_target_rec_release(&t);
	sl_store_free(st);
	free(p);
}

/* Unplaced findings: kept per campaign in order, a second write of one adds no row. */
static void test_unplaced_kept_once(void)
{
	char *p = db_path("u.db");
	sl_store *st = NULL;
	sl_unplaced_rec a = { "gone.c", 4, "ghost", "nowhere", "not a tracked file" };
	sl_unplaced_rec b = { "calc.c", 58, "", "uninit", "ambiguous" };
	sl_unplaced_rec *v = NULL;
	size_t n = 0;
	int64_t camp, other;

	CHECK_INT(sl_store_open(&st, p, 1, NULL), 0);
	camp = add_campaign(st, "u");
	other = add_campaign(st, "v");
	CHECK_INT(sl_store_unplaced_add(st, camp, &a, NULL), 0);
	CHECK_INT(sl_store_unplaced_add(st, camp, &b, NULL), 0);
	CHECK_INT(sl_store_unplaced_add(st, camp, &a, NULL), 0);
	CHECK_INT(sl_store_unplaced_add(st, other, &b, NULL), 0);
	CHECK_INT(sl_store_unplaced(st, camp, &v, &n, NULL), 0);
	CHECK_INT(n, 2);
	if (n == 2) {
		CHECK_STR(v[0].file, "gone.c");
		CHECK_INT(v[0].line, 4);
		CHECK_STR(v[0].reason, "not a tracked file");
		CHECK_STR(v[1].file, "calc.c");
		CHECK_STR(v[1].rule, "");
	}
	sl_unplaced_list_free(v, n);
	sl_store_free(st);
	free(p);
}

static void test_attempts_candidates_gates_funnel(void)
{
	char *p = db_path("e.db");
	sl_store *st = NULL;
	sl_attempt_rec a = { 0 }, *av = NULL;
	sl_candidate_rec c = { 0 }, got;
	sl_gate_run_rec g = { 0 }, *gv = NULL;
	sl_funnel f;
	sl_err err = SL_ERR_INIT;
	size_t an = 0, gn = 0;
	int64_t camp, t1, t2, a1, a2, c1, c2;

	CHECK_INT(sl_store_open(&st, p, 1, NULL), 0);
	camp = add_campaign(st, "e");
	t1 = add_target(st, camp, "t1", NULL);
	t2 = add_target(st, camp, "t2", NULL);

	a.target_id = t1;
	a.n = 1;
	a.source = "openai";
	a.prompt = "prompt text";
	a.reply = "reply text";
	a.tokens_in = 100;
	a.tokens_out = 20;
	a.outcome = SL_A_CANDIDATE;
	CHECK_INT(sl_store_attempt_add(st, &a, &a1, NULL), 0);
	a.target_id = t2;
	a.tokens_in = 50;
	a.tokens_out = 5;
	CHECK_INT(sl_store_attempt_add(st, &a, &a2, NULL), 0);
	a.n = 2;
	a.outcome = SL_A_PARSE_ERROR;
	a.error = "no diff";
	a.tokens_in = a.tokens_out = -1;
	CHECK_INT(sl_store_attempt_add(st, &a, &a2, NULL), 0);
	/* the same attempt number twice is refused */
	CHECK(sl_store_attempt_add(st, &a, &a2, NULL) != 0);
	CHECK_INT(sl_store_attempts(st, t2, &av, &an, NULL), 0);
	CHECK_INT(an, 2);
	CHECK_STR(sl_attempt_outcome_name(av[1].outcome), "parse_error");
	CHECK_STR(av[1].error, "no diff");
	sl_attempt_list_free(av, an);

	c.attempt_id = a1;
	c.target_id = t1;
	c.diff = "diff --git a/x b/x\n";
	c.commit_oid = "1111111111111111111111111111111111111111";
	c.state = SL_C_PASSED;
	c.branch = "sluice/e/x";
	CHECK_INT(sl_store_candidate_add(st, &c, &c1, NULL), 0);
	g.candidate_id = c1;
	g.gate = "build";
	g.verdict = SL_VERDICT_PASS;
	g.duration_ms = 12;
	g.output_tail = "ok";
	CHECK_INT(sl_store_gate_run_add(st, &g, NULL), 0);
	g.gate = "test";
	CHECK_INT(sl_store_gate_run_add(st, &g, NULL), 0);

	c.attempt_id = a2 - 1;
	c.target_id = t2;
	c.state = SL_C_FAILED;
	c.branch = NULL;
	CHECK_INT(sl_store_candidate_add(st, &c, &c2, NULL), 0);
	g.candidate_id = c2;
	g.gate = "build";
	g.verdict = SL_VERDICT_FAIL;
	g.exit_status = 2;
	g.output_tail = "error: x";
	CHECK_INT(sl_store_gate_run_add(st, &g, NULL), 0);
	CHECK_INT(sl_store_target_update(st, t1, SL_T_PROPOSED, 1, NULL, NULL), 0);
	CHECK_INT(sl_store_target_update(st, t2, SL_T_FAILED, 2, "build", NULL), 0);

	CHECK_INT(sl_store_gate_runs(st, c2, &gv, &gn, NULL), 0);
	CHECK_INT(gn, 1);
	CHECK_STR(sl_verdict_name(gv[0].verdict), "fail");
	CHECK_INT(gv[0].exit_status, 2);
	sl_gate_run_list_free(gv, gn);

	CHECK_INT(sl_store_candidate_get(st, c1, &got, NULL), 0);
	CHECK_STR(got.branch, "sluice/e/x");
	CHECK_STR(got.path, "src/a.c");
	CHECK_INT(got.decision, SL_D_NONE);
	sl_candidate_rec_release(&got);

	/* a failed candidate cannot be accepted */
	CHECK_INT(sl_store_decide(st, c2, SL_D_ACCEPT, NULL, &err), SL_EINPUT);
	CHECK_INT(sl_store_decide(st, 99, SL_D_ACCEPT, NULL, NULL), SL_ENOTFOUND);
	CHECK_INT(sl_store_decide(st, c1, SL_D_REJECT, "style", NULL), 0);
	CHECK_INT(sl_store_candidate_get(st, c1, &got, NULL), 0);
	CHECK_INT(got.decision, SL_D_REJECT);
	CHECK_STR(got.decision_reason, "style");
	sl_candidate_rec_release(&got);

	CHECK_INT(sl_store_funnel(st, camp, &f, NULL), 0);
	CHECK_INT(f.targets, 2);
	CHECK_INT(f.attempts, 3);
	CHECK_INT(f.candidates, 2);
	CHECK_INT(f.parse_errors, 1);
	CHECK_INT(f.proposed, 1);      /* rejected still counts as proposed */
	CHECK_INT(f.rejected, 1);
	CHECK_INT(f.accepted, 0);
	CHECK_INT(f.failed, 1);
	CHECK_INT(f.tokens_in, 150);
	CHECK_INT(f.tokens_out, 25);
	CHECK_INT(f.ngates, 2);
	CHECK_STR(f.gates[0].gate, "build");
	CHECK_INT(f.gates[0].runs, 2);
	CHECK_INT(f.gates[0].passed, 1);
	CHECK_STR(f.gates[1].gate, "test");
	CHECK_INT(f.gates[1].runs, 1);
	sl_funnel_release(&f);
	sl_store_free(st);

	/* everything survives a reopen */
	CHECK_INT(sl_store_open(&st, p, 0, NULL), 0);
	CHECK_INT(sl_store_funnel(st, camp, &f, NULL), 0);
	CHECK_INT(f.attempts, 3);
	sl_funnel_release(&f);
	sl_store_free(st);
	free(p);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_create_and_migrate);
	RUN(test_store_id);
	RUN(test_target_state_names);
	RUN(test_open_missing_without_create);
	RUN(test_not_a_database);
	RUN(test_newer_schema_refused);
	RUN(test_campaign_roundtrip);
	RUN(test_targets_idempotent_and_states);
	RUN(test_rollback_discards);
	RUN(test_attempts_candidates_gates_funnel);
	RUN(test_unplaced_kept_once);
	sl_rm_rf(dir, NULL);
	return unit_done();
}
