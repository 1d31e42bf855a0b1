#!/bin/sh
# t0003-options-docs.sh - the options the man page, README and each usage
# line document are those the command tables parse (the check lives in
# tests/check-options-docs.sh), and the check sees an option left out or
# made up.

test_description='options: man page, README and usage lines against the tables'
. ./test-lib.sh

top=$(cd "$TEST_DIRECTORY/../.." && pwd)
check() {
	sh "$top/tests/check-options-docs.sh" "$SLUICE_BUILD/sluice" "$@"
}

test_expect_success 'every command documents the options of its table' '
	check "$top"
'

test_expect_success 'the dump names every command with options, no hidden one' '
	sluice help --dump-options >dump &&
	grep -q "^run --lease-ttl SECONDS$" dump &&
	grep -q "^scope --lang-override GLOB=LANG$" dump &&
	grep -q "^show --attempts$" dump &&
	! grep -q "dump-options" dump &&
	! sluice help help | grep -q "dump-options"
'

test_expect_success 'setup: a copy of the documents' '
	mkdir -p tree/docs &&
	cp "$top/docs/sluice.1" tree/docs/ &&
	cp "$top/README.md" tree/ &&
	check tree
'

test_expect_success 'an option left out of the man page is named' '
	sed "/^\.B \\\\-\\\\-lease\\\\-ttl/,+1d" "$top/docs/sluice.1" >tree/docs/sluice.1 &&
	test $(wc -l <tree/docs/sluice.1) = $(($(wc -l <"$top/docs/sluice.1") - 2)) &&
	test_must_fail check tree >out &&
	echo "docs/sluice.1: run: --lease-ttl SECONDS is missing" >expect &&
	test_cmp expect out
'

test_expect_success 'an option the table lacks, or a wrong argument, is named' '
	sed -e "s/^\.B \\\\-\\\\-attempts$/.B \\\\-\\\\-attempt/" \
	    -e "s/^\.B \\\\-\\\\-scratch .*/.B \\\\-\\\\-scratch \\\\fIPATH\\\\fR/" \
		"$top/docs/sluice.1" >tree/docs/sluice.1 &&
	test_must_fail check tree >out &&
	cat >expect <<-\EOF &&
	docs/sluice.1: gc: --scratch PATH is not an option of gc
	docs/sluice.1: show: --attempt is not an option of show
	docs/sluice.1: gc: --scratch DIR is missing
	docs/sluice.1: show: --attempts is missing
	EOF
	test_cmp expect out &&
	cp "$top/docs/sluice.1" tree/docs/sluice.1
'

test_expect_success 'README: an option left out or made up is named' '
	sed -e "s/^\(| \`sluice show ID.*\) \[--attempts\]\`/\1\`/" \
	    -e "s/^\(| \`sluice gc .*\)\`/\1 [--force]\`/" \
		"$top/README.md" >tree/README.md &&
	test_must_fail check tree >out &&
	cat >expect <<-\EOF &&
	README.md: gc: --force is not an option of gc
	README.md: show: --attempts is missing
	EOF
	test_cmp expect out &&
	cp "$top/README.md" tree/README.md
'

test_expect_success 'a command without a man page entry or README row is named' '
	sed "/^\.B doctor/s/doctor/doktor/" "$top/docs/sluice.1" >tree/docs/sluice.1 &&
	test_must_fail check tree >out &&
	grep -q "^docs/sluice.1: doctor: no entry in COMMANDS$" out &&
	grep -q "^docs/sluice.1: doktor: --json is not an option of doktor$" out
'

test_done
