#!/bin/sh
test_description='generate: act reaches the fix with fewer gate runs than one-shot replies'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"
. "$TEST_DIRECTORY/lib-act.sh"

# The fixture of README "Letting the model work": src/calc.c calls old_api,
# to become new_api, declared in src/api.h, which calc.c does not include.
# The model's first guess calls new_api undeclared; the build says so
# (-Werror=implicit-function-declaration) and the right fix adds the include.
# One-shot: the build gate is what tells the model, at the cost of an attempt.
# Act: the model runs make in its session, reads the error, fixes, submits.
test_expect_success 'setup' '
	act_repo repo &&
	make_repo repo &&
	act_yaml fixture >base.yaml &&
	cat >>base.yaml <<-EOF
	attempts: 3
	gates:
	  - {name: build, command: "make 2>&1", prepare: true}
	  - {name: test, command: "make test 2>&1"}
	EOF
'

# One-shot replies (search-replace): the first guess, and once the chat
# holds the build's error, the fix with the include.
test_expect_success 'one-shot: the build gate reveals the error; the fix takes a second attempt' '
	cat >oneshot.sh <<-\EOF &&
	chat=$(cat)
	echo x >>"$LOG"
	echo src/calc.c
	echo "\`\`\`"
	echo "<<<<<<< SEARCH"
	if printf "%s" "$chat" | grep -q "implicit declaration of function .new_api"; then
		printf "%s\n" "#include <stdio.h>" "=======" "#include <stdio.h>" "#include \"api.h\"" \
			">>>>>>> REPLACE" "\`\`\`" "src/calc.c" "\`\`\`" "<<<<<<< SEARCH"
	fi
	printf "%s\n" "	printf(\"%d\\n\", old_api(3) * 2);" "=======" \
		"	printf(\"%d\\n\", new_api(3) * 2);" ">>>>>>> REPLACE" "\`\`\`"
	EOF
	cp base.yaml one.yaml &&
	printf "%s\n" "edit_format: search-replace" \
		"provider: {kind: command, command: \"LOG=$TRASH/one.log sh $TRASH/oneshot.sh\"}" >>one.yaml &&
	sluice run --store one.db one.yaml >out 2>err &&
	grep -q "proposed  *1" out &&
	test $(wc -l <one.log) = 2 &&
	store_query one.db "select diff from candidates where state = \"passed\"" >diff &&
	grep -q "^+#include \"api.h\"" diff
'

test_expect_success 'act: the session builds, reads the error, fixes and submits; one attempt' '
	reply m 1 "sed -i \"s/old_api(3)/new_api(3)/\" src/calc.c && make 2>&1" &&
	cat >m/2 <<-\EOF &&
	if tail -n 20 "$1" | grep -q "implicit declaration of function .new_api"; then
	cat <<\END
	The header is missing.
	```sh
	sed -i "1i #include \"api.h\"" src/calc.c && make 2>&1 && make test
	```
	END
	else
	printf "%s\n" "\`\`\`sh" "submit" "\`\`\`"
	fi
	EOF
	reply m 3 submit &&
	reply m default submit &&
	cp base.yaml act.yaml &&
	printf "%s\n" "generate: act" \
		"provider: {kind: command, command: \"ACT_DIR=$TRASH/m ACT_LOG=$TRASH/m.log sh $FIXTURES/act/model.sh\"}" >>act.yaml &&
	sluice run --store act.db act.yaml >out 2>err &&
	grep -q "proposed  *1" out &&
	test "$(cat m.log | tr "\n" " ")" = "1 2 3 " &&
	store_query act.db "select diff from candidates where state = \"passed\"" >diff &&
	grep -q "^+#include \"api.h\"" diff
'

# gate_runs STORE [GATE]: the gate runs candidates needed (no baseline, no prepare)
gate_runs() {
	store_query "$1" "select count(*) from gate_runs where candidate_id is not null${2:+ and gate = \"$2\"}"
}

test_expect_success 'act needs fewer gate runs and attempts than one-shot for the same fix' '
	one=$(gate_runs one.db) act=$(gate_runs act.db) &&
	oneb=$(gate_runs one.db build) actb=$(gate_runs act.db build) &&
	echo "one-shot: $oneb build runs, $one gate runs; act: $actb build runs, $act gate runs" &&
	test "$oneb" = 2 && test "$actb" = 1 &&
	test "$act" -lt "$one" &&
	test "$(store_query one.db "select count(*) from attempts")" = 2 &&
	test "$(store_query act.db "select count(*) from attempts")" = 1
'

test_done
