#!/bin/sh
test_description='the bundled examples of each job run end to end with no network, exact funnels'
. ./test-lib.sh

run_example() { # KIND: run examples/run-example.sh into the trash directory
	SLUICE_DEMO_DIR=$TRASH/demo sh "$EXAMPLES/run-example.sh" "$1" "$SLUICE_BUILD" >"$1.out" 2>"$1.err" ||
	{ cat "$1.out" "$1.err"; false; }
}

test_expect_success 'migration: three sites in three directories, two by rule, one only the model does' '
	run_example migration &&
	grep -q "targets  *3" migration.out &&
	grep -q "test  *3 passed, 1 failed" migration.out &&
	grep -q "proposed  *3" migration.out &&
	grep -q "by rules  *2" migration.out &&
	grep -q "by model  *1" migration.out &&
	git -C demo/migration show sluice/buf-copy-n/ui-ui.c-L8C2:ui/ui.c >ui.c &&
	grep -q "buf_copy_n(dst, cap, name);" ui.c &&
	git -C demo/migration show sluice/buf-copy-n/net-conn.c-L7C2:net/conn.c >conn.c &&
	grep -q "buf_copy_n(c->host, sizeof c->host, host);" conn.c
'

test_expect_success 'fix: the analyzer example proposes one fix of five' '
	run_example fix &&
	grep -q "targets  *5" fix.out &&
	grep -q "analyzer  *2 passed, 3 failed" fix.out &&
	grep -q "proposed  *1" fix.out &&
	grep -q "^- analyzer: the target.s findings are gone" demo/fix-export/report.md
'

test_expect_success 'testgen: the example proposes the one good test of six' '
	run_example testgen &&
	grep -q "mutants  *1 passed, 1 failed" testgen.out &&
	grep -q "proposed  *1" testgen.out &&
	grep -q "^- mutants: kills 2 of 9 mutants" demo/testgen-export/report.md
'

test_done
