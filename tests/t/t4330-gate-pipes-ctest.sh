#!/bin/sh
test_description='gate commands run with pipefail (a failure before a "|" fails the gate; without bash the loader warns); a ctest gate reads tests #1-#9 of a 12-test run'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

test_lazy_prereq CMAKE 'command -v cmake && command -v ctest'

test_expect_success 'setup' '
	greet_repo repo
'

test_expect_success 'a build gate piped into tail fails when the build fails' '
	RULE_TEMPLATE="greet(\${out}, \${name})" write_campaign c.yaml &&
	sed -i -e "s/command: make$/command: make 2>\&1 | tail -3/" \
	       -e "/name: test/,\$d" c.yaml &&
	grep -q "command: make 2>&1 | tail -3" c.yaml &&
	test_expect_code 1 sluice run --store s.db c.yaml >out 2>err &&
	grep -q "proposed  *0" out &&
	grep -q "build  *0 passed, 3 failed" out &&
	! grep -q "warning: gate" err &&
	store_query s.db "select output_tail from gate_runs where gate = '"'"'build'"'"' limit 1" >tail &&
	grep -q "Error 1" tail
'

# Each candidate changes one of the 4 greet_old in src/*.c: the first stage
# of "unchanged" fails on every candidate, and only there.
test_expect_success 'a gate whose first stage fails on the candidate ("false | cat") fails; "false || true" passes' '
	write_campaign f.yaml &&
	sed -i "s/^name: greet/name: piped/" f.yaml &&
	cat >>f.yaml <<-\EOF &&
	  - name: either
	    command: "false || true"
	  - name: unchanged
	    command: test "$(cat src/*.c | grep -c greet_old)" = 4 | cat
	EOF
	test_expect_code 1 sluice run --store f.db f.yaml >out 2>err &&
	grep -q "proposed  *0" out &&
	grep -q "either  *[1-9] passed, 0 failed" out &&
	grep -q "unchanged  *0 passed, 3 failed" out
'

test_expect_success 'a pipeline failing on the base stops the campaign before anything is generated' '
	write_campaign b.yaml &&
	sed -i -e "s/^name: greet/name: based/" -e "s/command: make$/command: sh -c \"exit 1\" | tail -1/" b.yaml &&
	test_expect_code 1 sluice run --store b.db b.yaml >out 2>err &&
	test "$(grep "^sluice: " err)" = "sluice: gate '"'"'build'"'"' fails on the base commit (exit 1): (no output)" &&
	test "$(store_query b.db "select count(*) from attempts")" = 0
'

test_expect_success 'without bash the gate runs with sh, and the loader warns where the command is' '
	rm -rf s.db &&
	SLUICE_TEST_NO_BASH=1 sluice run --store s.db c.yaml >out 2>err &&
	grep -q "proposed  *3" out &&
	grep -x "c.yaml:[0-9]*:[0-9]*: warning: gate '"'"'build'"'"': its command.s status is the last stage of its pipeline, so a failure before a .|. passes (no /bin/bash here to run it with pipefail)" err &&
	test $(grep -c "warning: gate" err) = 1 &&
	SLUICE_TEST_NO_BASH=1 sluice baseline --store s.db c.yaml >out 2>err &&
	grep -q "c.yaml:.*warning: gate '"'"'build'"'"'" err
'

test_expect_success 'a base measured without pipefail is measured again with it' '
	q="select def_digest from baselines where gate = '"'"'build'"'"'" &&
	without=$(store_query s.db "$q") &&
	sluice baseline --store s.db c.yaml >out 2>err &&
	! grep -q "warning: gate" err &&
	test -n "$(store_query s.db "$q")" &&
	test "$(store_query s.db "$q")" != "$without"
'

# A 12-test CMake project: test #3 checks sub(), which the rule rewrites;
# test #11 fails on the base already (not blamed).
test_expect_success CMAKE 'setup a 12-test ctest project' '
	mkdir calc &&
	cp -R "$FIXTURES/calc/src" calc/ &&
	cat >calc/CMakeLists.txt <<-\EOF &&
	cmake_minimum_required(VERSION 3.13)
	project(calc NONE)
	enable_testing()
	set(C ${CMAKE_SOURCE_DIR}/src/calc.c)
	foreach(i RANGE 1 12)
	  if(i EQUAL 3)
	    add_test(NAME sub COMMAND grep -q "a - legacy_scale(b);" ${C})
	  elseif(i EQUAL 11)
	    add_test(NAME broken_at_base COMMAND false)
	  else()
	    add_test(NAME check_${i} COMMAND grep -q "int add" ${C})
	  endif()
	endforeach()
	EOF
	make_repo calc
'

# sub() of calc: "a - legacy_scale(b)" becomes "a - (b)", which test #3 sees
ctest_campaign() {
	cat <<EOF2
name: ctest12
repository: calc
scratch: $TRASH/scratch
targets:
  language: c
  query: '((call_expression function: (identifier) @fn arguments: (argument_list (identifier) @x)) @call (#eq? @fn "legacy_scale") (#eq? @x "b"))'
  capture: call
rules: [{capture: call, template: "(\${x})"}]
attempts: 1
gates: [{name: ctest, kind: test, format: ctest, command: "cmake -S . -B /tmp/b >/dev/null && cd /tmp/b && ctest"}]
EOF2
}

test_expect_success CMAKE 'a ctest gate fails when test #3 of 12 breaks' '
	ctest_campaign >ct.yaml &&
	test_expect_code 1 sluice run --store ct.db ct.yaml >out 2>err &&
	grep -q "proposed  *0" out &&
	store_query ct.db "select output from baselines where gate = '"'"'ctest'"'"'" >base.out &&
	grep -q "^ 3/12 Test  #3: sub " base.out &&
	sluice baseline --store ct.db ct.yaml >base 2>err &&
	grep -q "12 tests" base &&
	grep -x "  pass  sub  (must pass)" base &&
	grep -x "  fail  broken_at_base  (not blamed)" base &&
	store_query ct.db "select reason from targets" >reason &&
	grep -q "sub" reason &&
	! grep -q "broken_at_base" reason
'

test_done
