#!/bin/sh
test_description='campaign jail limits: a disk cap through an overlay, reports collected from inside'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

test_expect_success 'setup' '
	mkdir -p repo/src &&
	{
		echo "int old_api(int x) { return x; }"
		echo "int f1(void) { return old_api(1); }"
	} >repo/src/m.c &&
	printf "%s\n" "#!/bin/sh" "echo 1..1" "echo ok 1 - builds" >repo/t.sh &&
	make_repo repo &&
	cat >c.yaml <<-EOF
	name: capped
	repository: repo
	scratch: $TRASH/scratch
	jail: {disk_mb: 8, memory_mb: 512, pids: 128}
	targets:
	  language: c
	  query: "((call_expression function: (identifier) @fn) @call (#eq? @fn \"old_api\"))"
	  capture: call
	rules:
	  - {capture: call, template: "new_api(1)"}
	attempts: 1
	gates:
	  - name: tap
	    kind: test
	    format: tap
	    command: "sh t.sh >report.tap"
	    report: report.tap
	EOF
'

test_expect_success 'a report written inside the overlay is collected and judged' '
	sluice run --store s.db c.yaml >out &&
	grep -q "proposed  *1" out &&
	test "$(store_query s.db "select verdict from gate_runs where gate = '"'"'tap'"'"'")" = pass &&
	store_query s.db "select report from baselines" | grep -q "ok 1 - builds"
'

test_expect_success 'a gate that fills the disk hits the cap; nothing reaches the host' '
	sed -e "s/^name: capped/name: fill/" c.yaml >f.yaml &&
	cat >>f.yaml <<-\EOF &&
	  - name: fill
	    command: "if grep -q new_api src/m.c; then dd if=/dev/zero of=big bs=1M count=20 2>&1; else true; fi"
	EOF
	test_expect_code 1 sluice run --store f.db f.yaml >out &&
	test "$(store_query f.db "select verdict from gate_runs where gate = '"'"'fill'"'"'")" = fail &&
	store_query f.db "select output_tail from gate_runs where gate = '"'"'fill'"'"'" | grep -q "No space left" &&
	test -z "$(find "$TRASH" -name big -size +1M)"
'

test_expect_success 'gates run at nice 0 where a CPU cgroup holds the jail, else at nice 10' '
	sed -e "s/^name: capped/name: nice/" c.yaml >n.yaml &&
	cat >>n.yaml <<-\EOF &&
	  - name: nice
	    command: "echo nice $(nice)"
	EOF
	sluice run --store n.db n.yaml >out &&
	grep -q "proposed  *1" out &&
	if sluice doctor | grep -q "^  cgroup-cpu  *yes"; then want=0; else want=10; fi &&
	test "$(store_query n.db "select output from baselines where gate = '"'"'nice'"'"'")" = "nice $want"
'

test_expect_success 'a bad jail key is an input error with its line' '
	sed -e "s/memory_mb: 512/memory: 512/" c.yaml >b.yaml &&
	test_expect_code 2 sluice scope b.yaml 2>err &&
	grep -q "b.yaml:4:20: unknown key .memory. in .jail." err
'

test_expect_success 'the new jail keys: unenforced names memory or cpu; writable_worktree excludes disk_mb' '
	sed -e "s/memory_mb: 512/memory_mb: 512, unenforced: [memory, disk]/" c.yaml >u.yaml &&
	test_expect_code 2 sluice scope u.yaml 2>err &&
	grep -q "u.yaml:4:.*unknown limit .disk. in .unenforced. of .jail." err &&
	sed -e "s/memory_mb: 512/memory_mb: 512, writable_worktree: true/" c.yaml >w.yaml &&
	test_expect_code 2 sluice scope w.yaml 2>err &&
	grep -q "w.yaml:4:.*.writable_worktree. and .disk_mb. of .jail. exclude each other" err &&
	sed -e "s/memory_mb: 512/memory_mb: 512, cpus: 1, unenforced: [memory, cpu], address_space_mb: 65536/" c.yaml >ok.yaml &&
	sluice scope ok.yaml >out
'

test_done
