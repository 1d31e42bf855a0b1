#!/bin/sh
test_description='bad values the loader, the providers, the store and export refuse: exit 2, one line, nothing changed'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

# one_error PATTERN: err holds exactly one line, "sluice: " then PATTERN.
one_error() {
	test "$(wc -l <err)" = 1 &&
	grep -q "^sluice: $1" err
}

test_expect_success 'setup: a repository' '
	greet_repo repo &&
	write_campaign good.yaml
'

test_expect_success 'a 100,000-character name exits 2 at load, storing nothing' '
	long=$(awk "BEGIN { while (i++ < 100000) printf \"a\" }") &&
	sed "s/^name: greet$/name: $long/" good.yaml >c.yaml &&
	test_expect_code 2 sluice run --store s.db c.yaml 2>err &&
	one_error "c.yaml:1:7: .name. is longer than 100 characters$" &&
	! test -e s.db &&
	! test -e scratch &&
	sed "s/^name: greet$/name: $(echo $long | cut -c1-100)/" good.yaml >c.yaml &&
	sluice scope c.yaml >/dev/null
'

test_expect_success 'a branch_prefix longer than 200 characters exits 2' '
	long=$(awk "BEGIN { while (i++ < 201) printf \"b\" }") &&
	write_campaign c.yaml "review:" "  branch_prefix: $long" &&
	test_expect_code 2 sluice scope c.yaml 2>err &&
	one_error "c.yaml:[0-9]*:[0-9]*: .branch_prefix. is longer than 200 characters$"
'

test_expect_success 'a control character in a quoted value is escaped, on one line' '
	write_campaign c.yaml "provider:" "  kind: rules" "  model: \"m\\nx\\ty\\x01\"" \
		"budget:" "  max_cost: 3" &&
	test_expect_code 2 sluice scope c.yaml 2>err &&
	one_error "c.yaml:[0-9]*:[0-9]*: .max_cost. needs a price for model .m\\\\nx\\\\ty\\\\x01. " &&
	write_campaign c.yaml "jail:" "  unenforced: [\"me\\nm\"]" &&
	test_expect_code 2 sluice scope c.yaml 2>err &&
	one_error "c.yaml:[0-9]*:[0-9]*: unknown limit .me\\\\nm. in .unenforced." &&
	sed "s/^  language: c$/  language: \"c\\\\nx\"/" good.yaml >c.yaml &&
	test_expect_code 2 sluice scope c.yaml 2>err &&
	one_error "c.yaml:6:[0-9]*: unknown language .c\\\\nx. " &&
	sed "s/^  capture: call$/  capture: \"ca\\\\nll\"/" good.yaml >c.yaml &&
	test_expect_code 2 sluice scope c.yaml 2>err &&
	one_error "c.yaml:[0-9]*:[0-9]*: capture .@ca\\\\nll. is not defined" &&
	sed "s/^base: main$/base: \"ma\\\\nin\"/" good.yaml >c.yaml &&
	test_expect_code 2 sluice run --store s.db c.yaml 2>err &&
	one_error "base revision .ma\\\\nin. not found" &&
	! test -e s.db &&
	sed "s/^repository: repo$/repository: \"re\\\\npo\"/" good.yaml >c.yaml &&
	test_expect_code 2 sluice scope c.yaml 2>err &&
	one_error "repository .*re\\\\npo.: No such file"
'

test_expect_success 'review.api_url that is not http(s) exits 2 at load: nothing pushed, nothing stored' '
	git init -q --bare remote.git &&
	sluice run --store pub.db good.yaml >out &&
	grep -q "proposed  *3" out &&
	cp pub.db pub.db.orig &&
	review="review: {forge: github, project: a/b, token_env: T, remote: $TRASH/remote.git" &&
	write_campaign c.yaml "$review, api_url: \"file://$TRASH/api\"}" &&
	T=t test_expect_code 2 sluice publish --store pub.db c.yaml 2>err &&
	one_error "c.yaml:[0-9]*:[0-9]*: .api_url. must be an http:// or https:// URL with a host" &&
	test -z "$(git -C remote.git for-each-ref)" &&
	test_cmp pub.db.orig pub.db &&
	write_campaign c.yaml "$review, api_url: \"http:///x\"}" &&
	test_expect_code 2 sluice scope c.yaml 2>err &&
	one_error "c.yaml:[0-9]*:[0-9]*: .api_url. must be an http:// or https:// URL with a host"
'

test_expect_success 'a replay file that is a device, a directory or too large exits 2 before anything is stored' '
	truncate -s 300M big.jsonl &&
	for f in /dev/zero "$TRASH" big.jsonl; do
		write_campaign c.yaml "provider: {kind: replay, replay: \"$f\"}" &&
		test_expect_code 2 sluice run --store r.db c.yaml 2>err &&
		! test -e r.db || exit 1
	done &&
	one_error "replay file .*big.jsonl. is larger than 256 MiB$" &&
	write_campaign c.yaml "provider: {kind: replay, replay: /dev/zero}" &&
	test_expect_code 2 sluice run --store r.db c.yaml 2>err &&
	one_error "replay file ./dev/zero. is not a regular file$"
'

test_expect_success 'another program'"'"'s SQLite file is refused as a store, its bytes unchanged' '
	sqlite3 notes.db "create table notes(x); insert into notes values (1)" &&
	sqlite3 versioned.db "pragma user_version = 3; create table t(x)" &&
	sqlite3 other-app.db "pragma application_id = 7" &&
	for f in notes.db versioned.db other-app.db; do
		cp $f $f.orig &&
		test_expect_code 2 sluice run --store $f good.yaml 2>err &&
		one_error ".$f. is another program.s SQLite database, not a sluice store" &&
		test_expect_code 2 sluice status --store $f 2>err &&
		one_error ".$f. is another program.s SQLite database" &&
		test_cmp $f.orig $f &&
		! test -e $f-wal &&
		! test -e $f-journal || exit 1
	done
'

test_expect_success 'an empty file, a missing path and a store made before the id still work' '
	: >empty.db &&
	sluice run --store empty.db good.yaml >out &&
	grep -q "proposed  *3" out &&
	test "$(sqlite3 empty.db "pragma application_id")" = 1397511491 &&
	sluice run --store sub/fresh.db good.yaml >out &&
	cp pub.db old.db &&
	sqlite3 old.db "pragma application_id = 0" &&
	sluice status --store old.db >out
'

test_expect_success 'export --out under a regular file exits 2 naming the file, writing nothing' '
	echo keep >afile &&
	for out in afile/dir afile/a/b; do
		test_expect_code 2 sluice export --store pub.db --out $out 2>err &&
		head -n 1 err >first &&
		grep -q "^sluice export: --out .$out.: .afile. is not a directory$" first || exit 1
	done &&
	echo keep >expect &&
	test_cmp expect afile &&
	test_expect_code 2 sluice status --store afile/s.db 2>err &&
	grep -q "^sluice status: --store .afile/s.db.: .afile. is not a directory$" err
'

test_done
