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

test_done
