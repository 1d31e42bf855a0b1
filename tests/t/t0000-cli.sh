#!/bin/sh
test_description='command line: dispatch, help, exit codes, bad specs'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

test_expect_success 'help lists every command' '
	sluice help >out &&
	for c in scope run status show accept reject export; do grep -q "^  $c " out || exit 1; done
'

test_expect_success 'no command is a usage error (2)' '
	test_expect_code 2 sluice
'

test_expect_success 'unknown command exits 2 and names it' '
	test_expect_code 2 sluice frobnicate 2>err &&
	grep -q "frobnicate" err
'

test_expect_success 'every command has --help' '
	for c in scope run status show accept reject export; do
		sluice $c --help >out && grep -q "usage: sluice $c" out || exit 1
	done
'

test_expect_success 'unknown option exits 2' '
	test_expect_code 2 sluice status --bogus 2>err &&
	grep -q "unknown option" err
'

test_expect_success 'a usage error prints the message, then the help' '
	test_expect_code 2 sluice status --bogus 2>err &&
	head -n 1 err >first &&
	grep -q "^sluice status: unknown option .--bogus.$" first &&
	sed 1d err >rest &&
	sluice status --help >help &&
	test_cmp help rest
'

test_expect_success 'help COMMAND and COMMAND --help print the same, from the table' '
	sluice help | sed -n "s/^  \([a-z]*\) .*/\1/p" >commands &&
	test $(wc -l <commands) -ge 16 &&
	while read -r c; do
		sluice help $c >a && sluice $c --help >b && test_cmp a b &&
		sluice $c -h >b && test_cmp a b || exit 1
	done <commands &&
	sluice help --dump-options >dump &&
	while read -r c opt arg; do
		sluice $c --help | grep -q "^  $opt" || exit 1
	done <dump
'

test_expect_success '--opt=value, --opt value and a unique prefix are one option' '
	test_expect_code 2 sluice status --store=missing.db 2>err1 &&
	test_expect_code 2 sluice status --store missing.db 2>err2 &&
	test_expect_code 2 sluice status --sto missing.db 2>err3 &&
	test_cmp err1 err2 &&
	test_cmp err1 err3 &&
	grep -q "missing.db" err1
'

test_expect_success 'after --, an argument is not an option' '
	test_expect_code 2 sluice status --store missing.db -- --json 2>err &&
	grep -q "missing.db" err &&
	test_expect_code 2 sluice help -- --help 2>err &&
	grep -q "unknown command .--help." err
'

test_expect_success 'missing campaign file exits 2' '
	test_expect_code 2 sluice scope nope.yaml 2>err &&
	grep -q "nope.yaml" err
'

test_expect_success 'a bad spec exits 2 naming file, line and column' '
	greet_repo repo &&
	write_campaign c.yaml "colour: blue" &&
	test_expect_code 2 sluice run --store s.db c.yaml 2>err &&
	grep -q "^sluice: c.yaml:[0-9]*:1: unknown key .colour." err &&
	! test -e s.db
'

test_expect_success 'a wrong type exits 2 naming the line' '
	write_campaign c.yaml &&
	sed -i "s/^attempts: 1/attempts: many/" c.yaml &&
	line=$(grep -n "^attempts:" c.yaml | cut -d: -f1) &&
	test_expect_code 2 sluice scope c.yaml 2>err &&
	grep -q "^sluice: c.yaml:$line:11: " err
'

test_expect_success 'a query syntax error names the line in the spec' '
	write_campaign c.yaml &&
	sed -i "s/(#eq? @fn \"greet_old\")) @call/(#eq? @fn \"greet_old\") @call/" c.yaml &&
	test_expect_code 2 sluice scope c.yaml 2>err &&
	grep -q "^sluice: c.yaml:[0-9]*:[0-9]*: " err
'

test_expect_success 'an unknown predicate is an input error' '
	write_campaign c.yaml &&
	sed -i "s/#eq?/#frob?/" c.yaml &&
	test_expect_code 2 sluice scope c.yaml 2>err &&
	grep -q "frob" err
'

test_expect_success 'an unknown language is an input error with its line' '
	write_campaign c.yaml &&
	sed -i "s/language: c/language: cobol/" c.yaml &&
	line=$(grep -n "language:" c.yaml | cut -d: -f1) &&
	test_expect_code 2 sluice scope c.yaml 2>err &&
	grep -q "^sluice: c.yaml:$line:[0-9]*: unknown language .cobol." err
'

test_expect_success 'a rule naming a capture the query lacks exits 2 with the rule line' '
	RULE_TEMPLATE="greet(\${buf}, \${name})" write_campaign c.yaml &&
	line=$(grep -n "^  - capture:" c.yaml | cut -d: -f1) &&
	test_expect_code 2 sluice scope c.yaml 2>err &&
	grep -q "^sluice: c.yaml:$line:[0-9]*: rule template uses .\${buf}." err
'

test_expect_success 'a read command never turns an empty file into a store' '
	: >empty.db &&
	test_expect_code 2 sluice status --store empty.db 2>err &&
	grep -q "not a sluice store" err &&
	test ! -s empty.db &&
	! test -e empty.db-wal
'

test_expect_success 'status without a store exits 2' '
	test_expect_code 2 sluice status --store missing.db 2>err &&
	grep -q "missing.db" err
'

test_expect_success 'show of an unknown candidate exits 2' '
	write_campaign c.yaml &&
	sluice run --store s.db c.yaml >/dev/null &&
	test_expect_code 2 sluice show --store s.db 999 2>err &&
	grep -q "no candidate 999" err &&
	test_expect_code 2 sluice show --store s.db abc
'

test_done
