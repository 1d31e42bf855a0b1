#!/bin/sh
test_description='warm base: prepared once, never written, a layer per candidate shared by its gates; the worktree fallback gives the same verdicts'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

# A small C project whose Makefile tracks header dependencies (-MMD -MP) and
# links the objects of its source list, so a stale object of a deleted source
# is never linked.  Each compile prints "compile FILE".  `make check` builds
# nothing: it runs the program the build gate built and compares its output.
# Three calls of old_api in src/main.c are the targets; the command provider
# answers each by its line with tests/fixtures/warm/reply-LINE.diff:
#   7  adds src/added.c;
#   8  deletes src/extra.c and defines extra_value in a new src/moved.c (were
#      extra.c or its object still there, the link would fail: duplicate),
#      and doc/old.txt, the only file of doc/;
#   9  changes SCALE in src/api.h, which util.c and api.c include.
# Each also updates expected.txt to what its program must print.
test_expect_success 'setup' '
	mkdir -p repo/src &&
	printf "%s\n" "SRCS := \$(sort \$(wildcard src/*.c))" "OBJS := \$(SRCS:.c=.o)" \
		"CFLAGS := -O0 -MMD -MP" \
		"prog: \$(OBJS)" "	\$(CC) -o \$@ \$(OBJS)" \
		"%.o: %.c" "	@echo \"compile \$<\"" "	@\$(CC) \$(CFLAGS) -c -o \$@ \$<" \
		"-include \$(OBJS:.o=.d)" \
		"check:" "	./prog >out.txt && cmp out.txt expected.txt" >repo/Makefile &&
	printf "%s\n" "#define SCALE 10" "int scaled(int);" "int extra_value(void);" >repo/src/api.h &&
	printf "%s\n" "#include \"api.h\"" "int scaled(int x) { return x * SCALE; }" >repo/src/api.c &&
	printf "%s\n" "#include \"api.h\"" "int util_scale(void) { return SCALE; }" >repo/src/util.c &&
	echo "int extra_value(void) { return 2; }" >repo/src/extra.c &&
	cat >repo/src/main.c <<-\EOF &&
	#include <stdio.h>
	#include "api.h"
	int old_api(int x) { return x; }
	int util_scale(void);
	int main(void)
	{
		printf("a %d\n", old_api(1));
		printf("b %d\n", old_api(2) + extra_value());
		printf("c %d\n", old_api(3));
		printf("s %d %d\n", util_scale(), scaled(1));
		return 0;
	}
	EOF
	printf "%s\n" "a 1" "b 4" "c 3" "s 10 10" >repo/expected.txt &&
	mkdir repo/doc && echo old >repo/doc/old.txt &&
	# the prompt ends with the target line (prompt: below)
	printf "%s\n" "n=\$(grep -v \"^\$\" | tail -n 1)" "cat \"$FIXTURES/warm/reply-\$n.diff\"" >reply.sh &&
	make_repo repo &&
	cat >c.yaml <<-EOF &&
	name: warm
	repository: repo
	scratch: $TRASH/scratch
	targets:
	  language: c
	  query: "((call_expression function: (identifier) @fn) @call (#eq? @fn \"old_api\"))"
	  capture: call
	provider: {kind: command, command: "sh $TRASH/reply.sh"}
	prompt: "{{start_line}}"
	edit_format: udiff
	attempts: 1
	jobs: 2
	gates:
	  - {name: build, command: "echo built >>runs.log; make 2>&1", prepare: true}
	  - {name: test, command: "make check 2>&1 && od -An -tx8 -N8 /dev/urandom"}
	EOF
	sed -e "s/^jobs: 2/jobs: 2\njail: {warm_base: off}/" c.yaml >off.yaml &&
	grep -q "warm_base: off" off.yaml
'

# every file and directory of the tree: path, type, mode, size, mtime, content
snapshot() {
	( cd "$1" && find . -print0 | sort -z | xargs -0 stat -c "%n %F %a %s %y" &&
	  find . -type f -print0 | sort -z | xargs -0 sha256sum )
}

warm_dirs() {
	find "$TRASH/scratch/warm" -maxdepth 1 -name "warm-*" | sort
}

# per target line: candidate state and its gates' verdicts, in order
verdicts() {
	store_query "$1" "select t.start_line || \" \" || c.state || \" \" ||
		(select group_concat(gate || \":\" || verdict, \",\") from
		 (select gate, verdict from gate_runs g where g.candidate_id = c.id order by g.id))
		from candidates c join targets t on t.id = c.target_id order by t.start_line"
}

# the build gate's output for the candidate of target line $2
build_output() {
	store_query "$1" "select g.output_tail from gate_runs g join candidates c on c.id = g.candidate_id
		join targets t on t.id = c.target_id where g.gate = \"build\" and t.start_line = $2"
}

test_expect_success 'the baseline prepares the warm base once, in the jail' '
	sluice baseline --store s1.db c.yaml >out &&
	test "$(warm_dirs | wc -l)" = 1 &&
	tree=$(warm_dirs)/tree &&
	test -f "$tree/prog" &&
	test -f "$tree/src/util.o" &&
	test "$(cat "$tree/runs.log")" = built &&
	echo "gitdir: /nonexistent" >expect-git &&
	test_cmp expect-git "$tree/.git" &&
	snapshot "$tree" >before
'

test_expect_success 'candidates in parallel: each sees only its own change, built incrementally' '
	sluice run --store s1.db c.yaml >out &&
	grep -q "proposed  *3" out &&
	cat >expect <<-\EOF &&
	7 passed syntax:pass,expect:pass,build:pass,test:pass
	8 passed syntax:pass,expect:pass,build:pass,test:pass
	9 passed syntax:pass,expect:pass,build:pass,test:pass
	EOF
	verdicts s1.db >actual &&
	test_cmp expect actual &&
	build_output s1.db 7 | grep "^compile" | sort >c7 &&
	printf "%s\n" "compile src/added.c" "compile src/main.c" >e7 &&
	test_cmp e7 c7 &&
	build_output s1.db 8 | grep "^compile" | sort >c8 &&
	printf "%s\n" "compile src/main.c" "compile src/moved.c" >e8 &&
	test_cmp e8 c8 &&
	build_output s1.db 9 | grep "^compile" | sort >c9 &&
	printf "%s\n" "compile src/api.c" "compile src/main.c" "compile src/util.c" >e9 &&
	test_cmp e9 c9
'

test_expect_success 'the warm base is byte for byte what it was; no layer is left' '
	snapshot "$(warm_dirs)/tree" >after &&
	test_cmp before after &&
	test -z "$(find "$TRASH/scratch" -maxdepth 2 -name "layer-*")"
'

test_expect_success 'another store with the same campaign reuses the warm base, its preparation and its baseline' '
	sluice run --store s2.db c.yaml >out &&
	store_query s1.db "select gate, run, verdict, output from baselines order by gate, run" >base1 &&
	store_query s2.db "select gate, run, verdict, output from baselines order by gate, run" >base2 &&
	test "$(wc -l <base1)" -gt 3 &&
	test_cmp base1 base2 &&
	grep -q "proposed  *3" out &&
	test "$(warm_dirs | wc -l)" = 1 &&
	test "$(cat "$(warm_dirs)/tree/runs.log")" = built &&
	snapshot "$(warm_dirs)/tree" >after2 &&
	test_cmp before after2
'

test_expect_success 'gates whose verdicts are cached run again before a later gate that must run sees the tree' '
	sed -e "s/^name: warm/name: warm-cache/" c.yaml >cache.yaml &&
	printf "%s\n" "  - {name: again, command: \"./prog | cmp - expected.txt\"}" >>cache.yaml &&
	cp s1.db cache.db &&
	sluice run --store cache.db cache.yaml >out &&
	grep -q "proposed  *3" out &&
	store_query cache.db "select g.gate || \" \" || g.verdict || \" \" || g.cached from gate_runs g
		join candidates c on c.id = g.candidate_id join targets t on t.id = c.target_id
		join campaigns k on k.id = t.campaign_id where k.name = \"warm-cache\" and g.gate != \"syntax\"
		order by g.id" | sort | uniq -c | sed "s/^ *//" >actual-cache &&
	printf "%s\n" "3 again pass 0" "3 build pass 1" "3 expect pass 0" "3 test pass 1" >expect-cache &&
	test_cmp expect-cache actual-cache
'

test_expect_success 'a deleted file (and a directory it leaves empty) is gone from the candidate that deletes it, and only there' '
	sed -e "s/make check 2>&1 \&\& od -An -tx8 -N8 \/dev\/urandom/{ test -e src\/moved.c || test -e src\/extra.c; } \&\& { test ! -e src\/moved.c || test ! -e src\/extra.c; } \&\& { test -e src\/moved.c || test -d doc; } \&\& { test ! -e src\/moved.c || test ! -e doc; } \&\& make check 2>\&1/" \
		-e "s/^name: warm/name: warm-del/" c.yaml >del.yaml &&
	grep -q "test ! -e doc; } && make check" del.yaml &&
	sluice run --store del.db del.yaml >out &&
	grep -q "proposed  *3" out
'

test_expect_success 'without the overlay (warm_base: off): a worktree each, the same verdicts' '
	sluice run --store s3.db off.yaml >out &&
	grep -q "proposed  *3" out &&
	verdicts s3.db >actual-off &&
	test_cmp expect actual-off &&
	build_output s3.db 7 | grep -c "^compile" >n7 &&
	echo 5 >e &&
	test_cmp e n7 &&
	test -z "$(find "$TRASH/scratch/warm" -maxdepth 1 -name "layer-*")"
'

test_expect_success 'show and the reports give each candidate its tree, the time to make it and the jail setup of each gate' '
	id=$(store_query s1.db "select min(id) from candidates") &&
	sluice show --store s1.db $id >show &&
	grep -q "^tree:     overlay, made in [0-9]* ms$" show &&
	grep -q "^gate build .* ms (jail setup [0-9]* ms)$" show &&
	sluice show --json --store s1.db $id >show.json &&
	grep -q "\"tree\":\"overlay\",\"tree_ms\":[0-9]" show.json &&
	grep -q "\"gate\":\"test\",\"verdict\":\"pass\",\"exit_status\":0,\"duration_ms\":[0-9]*,\"jail_ms\":[0-9]" show.json &&
	id=$(store_query s3.db "select min(id) from candidates") &&
	sluice show --json --store s3.db $id | grep -q "\"tree\":\"worktree\"" &&
	sluice export --store s1.db --out exp >/dev/null &&
	grep -q "^Tree: overlay, made in [0-9]* ms\.$" exp/report.md &&
	grep -q "| build | pass | [0-9]* ms | [0-9]* ms |" exp/report.md &&
	grep -q "<p>Tree: overlay, made in [0-9]* ms.</p>" exp/report.html &&
	grep -q "<th>jail setup</th>" exp/report.html
'

test_expect_success 'a changed preparing gate makes a new warm base; gc removes the unused ones' '
	sed -e "s/prepare: true}/prepare: true, timeout: 300}/" c.yaml >c2.yaml &&
	sluice baseline --store s4.db c2.yaml >out &&
	test "$(warm_dirs | wc -l)" = 2 &&
	sluice gc --scratch "$TRASH/scratch" --repo repo >out &&
	grep -q "removed 4 warm bases, 0 layers" out &&
	test "$(warm_dirs | wc -l)" = 0
'

test_expect_success 'a bad warm_base, warm_base: overlay with writable_worktree, a late prepare: input errors with their line' '
	sed -e "s/^jobs: 2/jobs: 2\njail: {warm_base: sideways}/" c.yaml >bad.yaml &&
	test_expect_code 2 sluice scope bad.yaml 2>err &&
	grep -q "bad.yaml:13:.*warm_base.* must be one of: auto, overlay, off" err &&
	sed -e "s/^jobs: 2/jobs: 2\njail: {warm_base: overlay, writable_worktree: true}/" c.yaml >both.yaml &&
	test_expect_code 2 sluice scope both.yaml 2>err &&
	grep -q "writable_worktree. and .warm_base: overlay. of .jail. exclude each other" err &&
	printf "%s\n" "  - {name: late, command: true, prepare: true}" >>c.yaml.late &&
	cat c.yaml c.yaml.late >late.yaml &&
	test_expect_code 2 sluice scope late.yaml 2>err &&
	grep -q "late.yaml:16:.*.prepare. after gate .test., which does not prepare" err
'

test_done
