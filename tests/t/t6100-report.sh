#!/bin/sh
test_description='export: report.md with rejections, a self-contained HTML report rendered by headless Chromium, JUnit XML'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

cand_of() { # PATH LINE: the candidate id of the target at PATH:LINE
	store_query s.db "select c.id from candidates c join targets t on t.id = c.target_id where t.path = '$1' and t.start_line = $2"
}

test_expect_success 'setup: three proposed candidates, one accepted, one rejected with a hostile reason' '
	greet_repo repo &&
	write_campaign c.yaml &&
	sluice run --store s.db c.yaml >out &&
	grep -q "proposed  *3" out &&
	sluice accept --store s.db $(cand_of src/app.c 10) &&
	sluice reject --store s.db $(cand_of src/report.c 18) \
		--reason "<script>alert(1)</script> use a named constant" &&
	sluice export --store s.db --out export >out &&
	grep -q "report in export/report.md and export/report.html, gate results in export/junit.xml" out
'

test_expect_success 'report.md lists the rejected candidate with its reason' '
	grep -q "## Proposed changes (2)" export/report.md &&
	grep -q "## Rejected by reviewers (1)" export/report.md &&
	grep -q "^- .src/report.c:18. (candidate [0-9]*): <script>alert(1)</script> use a named constant" export/report.md
'

test_expect_success 'report.html is self-contained: no script, no external asset, text escaped' '
	h=export/report.html &&
	grep -q "<svg id=\"funnel\"" $h &&
	! grep -qi "<script" $h &&
	! grep -qiE "<link|<img|<iframe|src=|href=|url\(|@import" $h &&
	test "$(grep -o "https\?://[^\"]*" $h | sort -u)" = "http://www.w3.org/2000/svg" &&
	grep -q "&lt;script&gt;alert(1)&lt;/script&gt; use a named constant" $h &&
	grep -q "<h2>Proposed changes (2)</h2>" $h &&
	grep -q "<h2>Rejected by reviewers (1)</h2>" $h &&
	grep -q "<span class=\"l add\">+.*<span class=\"kw\">sizeof</span>" $h &&
	grep -q "<span class=\"l del\">-" $h &&
	grep -q "<td class=\"pass\">pass</td>" $h &&
	grep -q "<b>accepted</b>" $h &&
	grep -q "produced by <b>rules</b>" $h &&
	grep -q "<tr><th>acceptance rate</th><td>50% (1 of 2)</td>" $h
'

test_expect_success 'junit.xml is well-formed and counts every gate run' '
	xmllint --noout export/junit.xml &&
	runs=$(store_query s.db "select count(*) from gate_runs") &&
	test "$runs" -gt 0 &&
	test "$(grep -c "<testcase " export/junit.xml)" = "$runs" &&
	grep -q "<testsuites name=\"sluice.greet\" tests=\"$runs\" failures=\"0\" errors=\"0\"" export/junit.xml &&
	grep -q "<testsuite name=\"build\" tests=\"3\"" export/junit.xml &&
	grep -q "classname=\"sluice.greet.test\" name=\"src/app.c:10 (candidate [0-9]*)\"" export/junit.xml
'

test_expect_success 'junit.xml reports a failing gate as a failure with its output' '
	write_campaign f.yaml "  - name: nope" \
		"    command: \"grep -q greet_old src/app.c || { echo broken \\\"<here> & gone\\\"; exit 3; }\"" &&
	sed -i "s/^name: greet/name: failing/" f.yaml &&
	sluice run --store f.db f.yaml >out &&
	sluice export --store f.db --out fexport >out &&
	xmllint --noout fexport/junit.xml &&
	grep -q "<testsuite name=\"nope\" tests=\"3\" failures=\"1\"" fexport/junit.xml &&
	grep -q "<failure message=\"fail\" type=\"fail\">.*broken &lt;here&gt; &amp; gone" fexport/junit.xml
'

test_expect_success 'headless Chromium renders the report: funnel bars above a coloured diff' '
	{ command -v chromium >/dev/null || { echo "chromium is missing: run ci/install-deps.sh" >&2; false; }; } &&
	timeout 300 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$TRASH/chromium" \
		--screenshot="$TRASH/shot.png" --window-size=1200,1600 \
		"file://$TRASH/export/report.html" >chromium.log 2>&1 &&
	png-probe shot.png 1f6feb aef0b9 ffc1c0 >probe &&
	cat probe &&
	grep -q "^size 1200 1600$" probe &&
	read _ bars bars_top _ <<-EOF &&
	$(grep ^1f6feb probe)
	EOF
	read _ added added_top _ <<-EOF &&
	$(grep ^aef0b9 probe)
	EOF
	read _ removed removed_top _ <<-EOF &&
	$(grep ^ffc1c0 probe)
	EOF
	test "$bars" -gt 10000 &&
	test "$added" -gt 5000 &&
	test "$removed" -gt 5000 &&
	test "$bars_top" -lt "$removed_top" &&
	test "$removed_top" -lt "$added_top"
'

test_expect_success 'png-probe itself tells a blank page from a rendered one' '
	printf "<!DOCTYPE html><html><body></body></html>" >blank.html &&
	timeout 300 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$TRASH/chromium" \
		--screenshot="$TRASH/blank.png" --window-size=400,300 "file://$TRASH/blank.html" \
		>chromium.log 2>&1 &&
	png-probe blank.png 1f6feb ffffff >probe &&
	grep -q "^1f6feb 0 -1 -1$" probe &&
	grep -q "^ffffff 120000 0 299$" probe
'

test_done
