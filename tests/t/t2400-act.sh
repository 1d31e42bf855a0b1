#!/bin/sh
test_description='generate: act: the model works in a jailed session of shell commands before it submits'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

# A small C project: src/calc.c calls old_api, which is to become new_api,
# declared in src/api.h, which calc.c does not include yet.  The build
# fails on an undeclared function; `make test` checks the program's output.
# The scripted model (tests/fixtures/act/model.sh) answers step K with what
# the script DIR/K prints.
test_expect_success 'setup' '
	mkdir -p repo/src repo/docs &&
	printf "%s\n" "CFLAGS := -O0 -Werror=implicit-function-declaration" \
		"prog: src/calc.o src/api.o" "	\$(CC) -o \$@ src/calc.o src/api.o" \
		"test: prog" "	./prog | grep -qx 6" >repo/Makefile &&
	printf "%s\n" "int new_api(int x);" "int old_api(int x);" >repo/src/api.h &&
	printf "%s\n" "int new_api(int x) { return x; }" "int old_api(int x) { return x; }" >repo/src/api.c &&
	cat >repo/src/calc.c <<-\EOF &&
	#include <stdio.h>
	int old_api(int x);
	int main(void)
	{
		printf("%d\n", old_api(3) * 2);
		return 0;
	}
	EOF
	echo "exit 0" >repo/check.sh &&
	echo notes >repo/docs/notes.txt &&
	make_repo repo &&
	cat >base.yaml <<-EOF
	name: act
	repository: repo
	scratch: $TRASH/scratch
	targets:
	  language: c
	  paths: ["src/*.c"]
	  query: "((call_expression function: (identifier) @fn) @call (#eq? @fn \"old_api\"))"
	  capture: call
	instructions: "Replace old_api with new_api."
	generate: act
	attempts: 1
	gates:
	  - {name: build, command: "make 2>&1", prepare: true}
	  - {name: test, command: "make test 2>&1 && sh check.sh"}
	EOF
'

# campaign FILE DIR [yaml...]: base.yaml with the scripted model in DIR
campaign() {
	f=$1 d=$2
	shift 2
	cp base.yaml "$f" &&
	echo "provider: {kind: command, command: \"ACT_DIR=$TRASH/$d ACT_LOG=$TRASH/$d.log sh $FIXTURES/act/model.sh\"}" >>"$f" &&
	for extra in "$@"; do printf "%s\n" "$extra" >>"$f"; done
}

# reply DIR K TEXT...: step K of DIR replies with one fenced command
reply() {
	d=$1 k=$2
	shift 2
	mkdir -p "$d" &&
	{ echo "cat <<\\END_OF_REPLY"; echo "Step $k."; echo "\`\`\`sh"; printf "%s\n" "$@"; echo "\`\`\`"; echo "END_OF_REPLY"; } >"$d/$k"
}

steps_of() {
	store_query "$1" "select s.step || \" \" || s.kind || \" \" || s.exit_status from steps s order by s.n, s.step"
}

test_expect_success 'a model explores, edits, builds, reads the failure, fixes and submits: proposed' '
	reply m1 1 "grep -rn old_api src" &&
	reply m1 2 "sed -i \"s/old_api(3)/new_api(3)/\" src/calc.c" &&
	reply m1 3 "make 2>&1" &&
	cat >m1/4 <<-\EOF &&
	# the fix only once the build said what was wrong
	if tail -n 20 "$1" | grep -q "implicit declaration of function .new_api"; then
	cat <<\END
	The header is missing.
	```sh
	sed -i "1i #include \"api.h\"" src/calc.c
	```
	END
	else
	printf "%s\n" "\`\`\`sh" "submit" "\`\`\`"
	fi
	EOF
	reply m1 5 "make 2>&1 && make test && cat src/calc.c" &&
	reply m1 6 submit &&
	campaign c1.yaml m1 &&
	sluice run --store s1.db c1.yaml >out 2>err &&
	grep -q "proposed  *1" out &&
	steps_of s1.db >actual &&
	printf "%s\n" "1 command 0" "2 command 0" "3 command 2" "4 command 0" "5 command 0" "6 submit -1" >expect &&
	test_cmp expect actual &&
	test "$(cat m1.log | tr "\n" " ")" = "1 2 3 4 5 6 " &&
	store_query s1.db "select diff from candidates" >diff &&
	grep -q "^+#include \"api.h\"" diff &&
	grep -q "^+.*new_api(3) \* 2" diff &&
	! grep -q "\.o" diff
'

test_expect_success 'show --steps prints the trajectory, text and JSON' '
	sluice show --store s1.db --steps 1 >show && cat show &&
	grep -q "step 3: make 2>&1" show &&
	grep -q "exit status 2" show &&
	grep -q "implicit declaration" show &&
	grep -q "step 6: submit" show &&
	sluice show --store s1.db --steps --json 1 >show.json &&
	jq -e ".steps | length == 6" show.json &&
	jq -e ".steps[2].exit_status == 2 and .steps[2].command == \"make 2>&1\"" show.json
'

test_done
