/*
 * migrations.c - the store's schema, as numbered migrations.
 *
 * Migration N (1-based) moves PRAGMA user_version from N-1 to N.  Never edit
 * a migration that has shipped: append a new one.  store.c applies the ones
 * a file lacks, each in its own transaction.
 */
#include <stddef.h>

#include "storage/migrations.h"

static const char *const migrations[] = {
	/* 1: the walking skeleton's schema */
	"CREATE TABLE campaigns("
	"  id INTEGER PRIMARY KEY,"
	"  name TEXT NOT NULL UNIQUE,"
	"  spec_path TEXT NOT NULL,"
	"  spec_text TEXT NOT NULL,"
	"  repo_path TEXT NOT NULL,"
	"  base_rev TEXT NOT NULL,"
	"  base_oid TEXT NOT NULL,"
	"  branch_prefix TEXT NOT NULL,"
	"  created_at TEXT NOT NULL"
	") STRICT;"
	"CREATE TABLE targets("
	"  id INTEGER PRIMARY KEY,"
	"  campaign_id INTEGER NOT NULL REFERENCES campaigns(id),"
	"  key TEXT NOT NULL,"
	"  path TEXT NOT NULL,"
	"  lang TEXT NOT NULL,"
	"  blob TEXT NOT NULL,"
	"  unit TEXT NOT NULL,"
	"  start_byte INTEGER NOT NULL, end_byte INTEGER NOT NULL,"
	"  start_line INTEGER NOT NULL, start_col INTEGER NOT NULL,"
	"  end_line INTEGER NOT NULL, end_col INTEGER NOT NULL,"
	"  nsites INTEGER NOT NULL,"
	"  state TEXT NOT NULL CHECK (state IN"
	"    ('pending','proposed','failed','skipped','accepted','rejected','budget')),"
	"  attempts INTEGER NOT NULL DEFAULT 0,"
	"  reason TEXT,"
	"  updated_at TEXT NOT NULL,"
	"  UNIQUE (campaign_id, key)"
	") STRICT;"
	"CREATE TABLE attempts("
	"  id INTEGER PRIMARY KEY,"
	"  target_id INTEGER NOT NULL REFERENCES targets(id),"
	"  n INTEGER NOT NULL,"
	"  source TEXT NOT NULL,"
	"  prompt TEXT,"
	"  reply TEXT,"
	"  request TEXT,"
	"  request_key TEXT,"
	"  tokens_in INTEGER NOT NULL DEFAULT -1,"
	"  tokens_out INTEGER NOT NULL DEFAULT -1,"
	"  latency_ms INTEGER NOT NULL DEFAULT 0,"
	"  http_status INTEGER NOT NULL DEFAULT 0,"
	"  retries INTEGER NOT NULL DEFAULT 0,"
	"  format_errors INTEGER NOT NULL DEFAULT 0,"
	"  format_key TEXT,"
	"  format_reply TEXT,"
	"  cost REAL NOT NULL DEFAULT 0,"
	"  apply_report TEXT,"
	"  outcome TEXT NOT NULL CHECK (outcome IN"
	"    ('candidate','parse_error','apply_error','provider_error','no_edit',"
	"     'syntax_error')),"
	"  error TEXT,"
	"  created_at TEXT NOT NULL,"
	"  UNIQUE (target_id, n)"
	") STRICT;"
	"CREATE TABLE candidates("
	"  id INTEGER PRIMARY KEY,"
	"  attempt_id INTEGER NOT NULL UNIQUE REFERENCES attempts(id),"
	"  target_id INTEGER NOT NULL REFERENCES targets(id),"
	"  diff TEXT NOT NULL,"
	"  commit_oid TEXT NOT NULL,"
	"  branch TEXT,"
	"  state TEXT NOT NULL CHECK (state IN ('passed','failed','error')),"
	"  created_at TEXT NOT NULL"
	") STRICT;"
	"CREATE TABLE gate_runs("
	"  id INTEGER PRIMARY KEY,"
	"  candidate_id INTEGER NOT NULL REFERENCES candidates(id),"
	"  gate TEXT NOT NULL,"
	"  verdict TEXT NOT NULL CHECK (verdict IN ('pass','fail','timeout','error','skip')),"
	"  exit_status INTEGER NOT NULL,"
	"  duration_ms INTEGER NOT NULL,"
	"  output_bytes INTEGER NOT NULL,"
	"  output_tail TEXT NOT NULL,"
	"  created_at TEXT NOT NULL"
	") STRICT;"
	"CREATE TABLE decisions("
	"  id INTEGER PRIMARY KEY,"
	"  candidate_id INTEGER NOT NULL REFERENCES candidates(id),"
	"  decision TEXT NOT NULL CHECK (decision IN ('accept','reject')),"
	"  reason TEXT,"
	"  decided_at TEXT NOT NULL"
	") STRICT;"
	"CREATE INDEX attempts_by_key ON attempts(request_key);"
	"CREATE INDEX targets_by_state ON targets(campaign_id, state);"
	"CREATE INDEX attempts_by_target ON attempts(target_id);"
	"CREATE INDEX candidates_by_target ON candidates(target_id);"
	"CREATE INDEX gate_runs_by_candidate ON gate_runs(candidate_id);"
	"CREATE INDEX decisions_by_candidate ON decisions(candidate_id);",
	/* scope cache: scoping's per-file results by (query key, language, blob) */
	"CREATE TABLE scope_cache("
	"  qkey TEXT NOT NULL,"
	"  lang TEXT NOT NULL,"
	"  blob TEXT NOT NULL,"
	"  flags INTEGER NOT NULL,"
	"  data BLOB NOT NULL,"
	"  PRIMARY KEY (qkey, lang, blob)"
	") STRICT, WITHOUT ROWID;",
	/* 3: gates judged against a baseline, and a verdict cache */
	"CREATE TABLE baselines("
	"  campaign_id INTEGER NOT NULL REFERENCES campaigns(id),"
	"  gate TEXT NOT NULL,"
	"  run INTEGER NOT NULL,"
	"  verdict TEXT NOT NULL,"
	"  exit_status INTEGER NOT NULL,"
	"  output TEXT NOT NULL,"
	"  report TEXT,"
	"  created_at TEXT NOT NULL,"
	"  PRIMARY KEY (campaign_id, gate, run)"
	") STRICT;"
	"CREATE TABLE gate_cache("
	"  key TEXT PRIMARY KEY,"
	"  verdict TEXT NOT NULL,"
	"  exit_status INTEGER NOT NULL,"
	"  duration_ms INTEGER NOT NULL,"
	"  output_bytes INTEGER NOT NULL,"
	"  output_tail TEXT NOT NULL,"
	"  feedback TEXT,"
	"  jail TEXT,"
	"  created_at TEXT NOT NULL"
	") STRICT;"
	"ALTER TABLE gate_runs ADD COLUMN cached INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE gate_runs ADD COLUMN note TEXT;"
	"ALTER TABLE gate_runs ADD COLUMN jail TEXT;",
	/* 4: changes published as pull or merge requests, and what became of them */
	"CREATE TABLE published("
	"  candidate_id INTEGER PRIMARY KEY REFERENCES candidates(id),"
	"  campaign_id INTEGER NOT NULL REFERENCES campaigns(id),"
	"  forge TEXT NOT NULL CHECK (forge IN ('github','gitlab')),"
	"  project TEXT NOT NULL,"
	"  branch TEXT NOT NULL,"
	"  head_oid TEXT NOT NULL,"
	"  text_sha TEXT,"
	"  number INTEGER,"
	"  url TEXT,"
	"  state TEXT NOT NULL CHECK (state IN ('open','merged','closed')),"
	"  landed_unchanged INTEGER,"
	"  review_comments INTEGER NOT NULL DEFAULT 0,"
	"  close_reason TEXT,"
	"  opened_at TEXT NOT NULL,"
	"  updated_at TEXT NOT NULL"
	") STRICT;"
	"CREATE INDEX published_by_campaign ON published(campaign_id, state);",
	/* 5: runs that survive: a journal of replies recorded the moment they arrive,
	   each attempt's feedback (to rebuild a resumed conversation), leases on
	   targets, the digest of what judged a target, retries, and one row per
	   run (owner, budget, how it ended) */
	"CREATE TABLE replies("
	"  target_id INTEGER NOT NULL REFERENCES targets(id),"
	"  n INTEGER NOT NULL,"
	"  round INTEGER NOT NULL,"
	"  request_key TEXT,"
	"  request TEXT,"
	"  reply TEXT NOT NULL,"
	"  tokens_in INTEGER NOT NULL,"
	"  tokens_out INTEGER NOT NULL,"
	"  cost REAL NOT NULL,"
	"  http_status INTEGER NOT NULL,"
	"  latency_ms INTEGER NOT NULL,"
	"  retries INTEGER NOT NULL,"
	"  truncated INTEGER NOT NULL,"
	"  usage_note TEXT,"
	"  created_at TEXT NOT NULL,"
	"  PRIMARY KEY (target_id, n, round)"
	") STRICT;"
	"ALTER TABLE attempts ADD COLUMN feedback TEXT;"
	"ALTER TABLE attempts ADD COLUMN usage_note TEXT;"
	"ALTER TABLE targets ADD COLUMN lease_owner TEXT;"
	"ALTER TABLE targets ADD COLUMN lease_expires INTEGER;"
	"ALTER TABLE targets ADD COLUMN digest TEXT;"
	"ALTER TABLE targets ADD COLUMN attempt_base INTEGER NOT NULL DEFAULT 0;"
	"CREATE TABLE runs("
	"  id INTEGER PRIMARY KEY,"
	"  campaign_id INTEGER NOT NULL REFERENCES campaigns(id),"
	"  owner TEXT NOT NULL UNIQUE,"
	"  digest TEXT NOT NULL,"
	"  budget_tokens INTEGER NOT NULL,"
	"  budget_cost REAL NOT NULL,"
	"  started_at TEXT NOT NULL,"
	"  heartbeat INTEGER NOT NULL,"
	"  ended_at TEXT,"
	"  outcome TEXT"
	") STRICT;"
	"ALTER TABLE campaigns ADD COLUMN baseline_owner TEXT;"
	"ALTER TABLE campaigns ADD COLUMN baseline_expires INTEGER;"
	"CREATE INDEX targets_by_lease ON targets(lease_owner);",
	/* 6: a baseline holds for the gate definition that measured it (rows
	   of older stores have none: their gates are measured again) */
	"ALTER TABLE baselines ADD COLUMN def_digest TEXT;",
	/* 7: the gate-time picture (README, "Warm base"): making a candidate's tree, the jail */
	"ALTER TABLE candidates ADD COLUMN tree TEXT;"
	"ALTER TABLE candidates ADD COLUMN tree_ms INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE gate_runs ADD COLUMN jail_ms INTEGER NOT NULL DEFAULT 0;",
	/* 8: fencing: a lease's epoch grows on every claim by a new holder, and
	   each write for a target checks the writer still holds that epoch */
	"ALTER TABLE targets ADD COLUMN lease_epoch INTEGER NOT NULL DEFAULT 0;",
	/* 9: the baseline lease is fenced the same way: its epoch grows on every
	   claim by a new holder, and each baseline row written checks it */
	"ALTER TABLE campaigns ADD COLUMN baseline_epoch INTEGER NOT NULL DEFAULT 0;",
	/* 10: a fix campaign's findings that no target holds, and why (a path
	   in no tracked file, a tail several files end with, no unit) */
	"CREATE TABLE unplaced("
	"  campaign_id INTEGER NOT NULL REFERENCES campaigns(id),"
	"  file TEXT NOT NULL,"
	"  line INTEGER NOT NULL,"
	"  rule TEXT NOT NULL,"
	"  message TEXT NOT NULL,"
	"  reason TEXT NOT NULL,"
	"  UNIQUE (campaign_id, file, line, rule, message)"
	") STRICT;",
	/* 11: the store's identity, made once at random: a candidate's commit
	   names it, so a run tells its own branches from another store's */
	"CREATE TABLE store_meta("
	"  key TEXT PRIMARY KEY,"
	"  value TEXT NOT NULL"
	") STRICT;"
	"INSERT INTO store_meta VALUES ('store_id', lower(hex(randomblob(8))));",
	/* 12: tokens the provider did not report, counted from the bytes sent and
	   received (about 4 bytes a token) */
	"ALTER TABLE attempts ADD COLUMN tokens_estimated INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE replies ADD COLUMN tokens_estimated INTEGER NOT NULL DEFAULT 0;",
	/* 13: a merged store (storage/merge.h): which shard store each target
	   came from, and the signature of what it held then, so merging again
	   copies only what changed and never twice */
	"CREATE TABLE merge_origin("
	"  campaign_id INTEGER NOT NULL REFERENCES campaigns(id),"
	"  key TEXT NOT NULL,"
	"  store_id TEXT NOT NULL,"
	"  sig TEXT NOT NULL,"
	"  PRIMARY KEY (campaign_id, key)"
	") STRICT, WITHOUT ROWID;",
	/* 14: the stores (and their campaigns) merged into a campaign of this
	   one: their candidates' commits name them in the Sluice-Store trailer,
	   and gc and the branch states count those commits as this store's */
	"CREATE TABLE merged_stores("
	"  campaign_id INTEGER NOT NULL REFERENCES campaigns(id),"
	"  store_id TEXT NOT NULL,"
	"  src_campaign_id INTEGER NOT NULL,"
	"  PRIMARY KEY (campaign_id, store_id, src_campaign_id)"
	") STRICT, WITHOUT ROWID;",
	/* 15: a model's session (generate: act): each step of an attempt, the
	   reply the moment it arrives, then the command's result */
	"CREATE TABLE steps("
	"  target_id INTEGER NOT NULL REFERENCES targets(id),"
	"  n INTEGER NOT NULL,"
	"  step INTEGER NOT NULL,"
	"  reply TEXT NOT NULL,"
	"  request_key TEXT,"
	"  kind TEXT NOT NULL,"
	"  command TEXT,"
	"  exit_status INTEGER NOT NULL DEFAULT -1,"
	"  output TEXT,"
	"  output_bytes INTEGER NOT NULL DEFAULT 0,"
	"  model_ms INTEGER NOT NULL DEFAULT 0,"
	"  command_ms INTEGER NOT NULL DEFAULT 0,"
	"  tokens_in INTEGER NOT NULL DEFAULT 0,"
	"  tokens_out INTEGER NOT NULL DEFAULT 0,"
	"  cost REAL NOT NULL DEFAULT 0,"
	"  ran INTEGER NOT NULL DEFAULT 0,"
	"  differs INTEGER NOT NULL DEFAULT 0,"
	"  PRIMARY KEY (target_id, n, step)"
	") STRICT, WITHOUT ROWID;",
	/* 16: what scoping gave for a target (its unit text, sites and captures,
	   scoping's encoding: sl_target_encode), written as the run scopes
	   and read back when a worker takes the target: a run does not hold
	   its targets in memory (issue 29) */
	"CREATE TABLE target_scope("
	"  target_id INTEGER PRIMARY KEY REFERENCES targets(id),"
	"  data BLOB NOT NULL"
	") STRICT;",
};

size_t sl_migrations_count(void)
{
	return sizeof(migrations) / sizeof(migrations[0]);
}

const char *sl_migration(size_t i)
{
	return i < sl_migrations_count() ? migrations[i] : NULL;
}
