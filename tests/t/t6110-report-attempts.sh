#!/bin/sh
test_description='report.html shows every attempt at a target: its source, outcome, reason, the failing gate log and the candidate diff, folded'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

# The rules write bad_api(), which the gate refuses; the model (attempt 2)
# writes new_api() in a.c, which passes, and bad_api() again in b.c.
test_expect_success 'setup: one target passes on its second attempt, one fails both' '
	mkdir -p repo/src &&
	printf "int old_api(int x);\nint f(void)\n{\n\treturn old_api(1);\n}\n" >repo/src/a.c &&
	printf "int old_api(int x);\nint g(void)\n{\n\treturn old_api(2);\n}\n" >repo/src/b.c &&
	make_repo repo &&
	cat >model.sh <<-\EOF &&
	p=$(cat)
	case "$p" in
	*"old_api(2)"*) f=src/b.c n=2 new=bad_api ;;
	*) f=src/a.c n=1 new=new_api ;;
	esac
	printf "%s\n\`\`\`\n<<<<<<< SEARCH\n\treturn old_api(%s);\n=======\n\treturn %s(%s);\n>>>>>>> REPLACE\n\`\`\`\n" "$f" "$n" "$new" "$n"
	EOF
	cat >c.yaml <<-EOF &&
	name: tries
	repository: repo
	scratch: $TRASH/scratch
	targets:
	  language: c
	  paths: ["src/*.c"]
	  query: "((call_expression function: (identifier) @fn) @call (#eq? @fn \"old_api\"))"
	  capture: call
	rules:
	  - capture: call
	    template: "bad_api(1)"
	provider: {kind: command, command: "sh $TRASH/model.sh"}
	edit_format: search-replace
	attempts: 2
	gates:
	  - name: nobad
	    command: "! grep -n bad_api src/*.c || { echo gate-refused-bad_api; exit 1; }"
	    timeout: 60
	EOF
	sluice run --store s.db c.yaml >out &&
	test "$(store_query s.db "select group_concat(state, \" \") from (select state from targets order by path)")" = "proposed failed" &&
	test "$(store_query s.db "select count(*) from attempts")" = 4 &&
	sluice export --store s.db --out export >out
'

test_expect_success 'the proposed change lists its failed first attempt with its diff and gate log' '
	h=export/report.html &&
	grep -q "<summary>attempt 1: rules, candidate, gate nobad: <span class=\"fail\">fail</span></summary>" $h &&
	grep -q "<summary>attempt 2: command, candidate, <span class=\"pass\">passed</span> (this change)</summary>" $h &&
	grep -q "<span class=\"l add\">+.*<span class=\"kw\">return</span> new_api(<span class=\"num\">1</span>);" $h &&
	grep -q "<span class=\"l add\">+.*<span class=\"kw\">return</span> bad_api(<span class=\"num\">1</span>);" $h &&
	grep -q "<span class=\"l add\">+.*<span class=\"kw\">return</span> bad_api(<span class=\"num\">2</span>);" $h &&
	test "$(grep -c "gate-refused-bad_api" $h)" -ge 3 &&
	! grep -qi "<script" $h
'

test_expect_success 'the failed target shows both attempts, folded' '
	h=export/report.html &&
	sed -n "/<h2>Targets that failed/,\$p" $h >failed &&
	grep -q "src/b.c:4" failed &&
	test "$(grep -c "<details><summary>attempt [12]: " failed)" = 2 &&
	test "$(grep -c "<span class=\"l add\">+" failed)" = 2 &&
	grep -q "gate-refused-bad_api" failed
'

test_expect_success 'the note of a gate run, here base failures not blamed, is in the gates table' '
	mkdir calc && cp -R "$FIXTURES/calc/." calc/ && make_repo calc &&
	calc_campaign ok "\${x}" "a" "  - {name: test, kind: test, format: tap, command: \"sh tests.sh\"}" |
	sed "s|^repository: .*|repository: calc|" >ok.yaml &&
	sluice run --store ok.db ok.yaml >out &&
	sluice export --store ok.db --out okexport >out &&
	grep -q "<td class=\"pass\">pass</td>.*not blamed (failing on the base; must_fix or goal: fix would blame them): broken_at_base</td>" okexport/report.html
'

test_done
