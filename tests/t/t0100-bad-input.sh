#!/bin/sh
test_description='bad input: one clear line, exit 2, nothing changed'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

# spec_error FILE PATTERN: scope FILE exits 2 with one "sluice: FILE:LINE:COL: " line
# matching PATTERN.
spec_error() {
	test_expect_code 2 sluice scope "$1" 2>err &&
	test "$(wc -l <err)" = 1 &&
	grep -q "^sluice: $1:[0-9]*:[0-9]*: $2" err
}

test_expect_success 'setup: a repository and a finished run' '
	greet_repo repo &&
	write_campaign c.yaml &&
	sluice run --store s.db c.yaml >/dev/null &&
	cp s.db s.db.orig
'

test_expect_success 'a campaign file that is a directory exits 2 naming it' '
	mkdir dir.yaml &&
	test_expect_code 2 sluice run --store new.db dir.yaml 2>err &&
	grep -q "^sluice: .dir.yaml. is a directory" err &&
	! test -e new.db
'

test_expect_success 'a tab in the indentation is named as such' '
	write_campaign c.yaml &&
	sed -i "s/^  language: c/\tlanguage: c/" c.yaml &&
	line=$(grep -n "language: c" c.yaml | cut -d: -f1) &&
	spec_error c.yaml "invalid YAML: a tab" &&
	grep -q "^sluice: c.yaml:$line:" err
'

test_expect_success 'an unknown key names the nearest known one, at its line' '
	write_campaign c.yaml "attemps: 3" &&
	spec_error c.yaml "unknown key .attemps.; did you mean .attempts.?$" &&
	line=$(grep -n "^attemps" c.yaml | cut -d: -f1) &&
	grep -q "^sluice: c.yaml:$line:1: " err &&
	write_campaign c.yaml "colour: red" &&
	spec_error c.yaml "unknown key .colour.$"
'

test_expect_success 'an integer too large for its field exits 2' '
	write_campaign c.yaml "budget:" "  max_tokens: 99999999999999999999999" &&
	spec_error c.yaml ".max_tokens. must be between"
'

test_expect_success 'a bad session (generate: act) exits 2 naming the key' '
	write_campaign c.yaml "generate: agent" &&
	spec_error c.yaml ".generate. must be one of: reply, act" &&
	write_campaign c.yaml "session: {steps: 3}" &&
	spec_error c.yaml ".session. belongs to .generate: act." &&
	write_campaign c.yaml "generate: act" "session: {on_budget: keep}" &&
	spec_error c.yaml ".on_budget. must be one of: drop, gate"
'

test_expect_success 'a model priced twice exits 2' '
	write_campaign c.yaml "provider:" "  kind: rules" "  model: m" \
		"  prices: {m: {input: 1, output: 1}, m: {input: 2, output: 2}}" &&
	spec_error c.yaml "duplicate key .m. in .prices."
'

test_expect_success 'a glob overridden twice exits 2' '
	write_campaign c.yaml &&
	sed -i "s/^  capture: call$/  capture: call\n  language_overrides: {\"*.h\": c, \"*.h\": cpp}/" c.yaml &&
	spec_error c.yaml "duplicate key .\*\.h. in .language_overrides."
'

test_expect_success 'a null entry in must_fix exits 2' '
	write_campaign c.yaml "  - name: t2" "    kind: test" "    command: make test" \
		"    must_fix: [~]" &&
	spec_error c.yaml "expected a string for an entry of .must_fix."
'

test_expect_success 'must_fix on a test gate without a report format exits 2, at its line' '
	write_campaign c.yaml "  - name: t2" "    kind: test" "    command: make test" \
		"    must_fix: [t1]" &&
	spec_error c.yaml ".must_fix. needs a test gate with a .format." &&
	line=$(grep -n "must_fix" c.yaml | cut -d: -f1) &&
	grep -q "^sluice: c.yaml:$line:" err
'

test_expect_success 'must_fix on a custom gate exits 2' '
	write_campaign c.yaml "  - name: t2" "    command: make test" "    must_fix: [t1]" &&
	spec_error c.yaml ".must_fix. needs a test gate"
'

test_expect_success 'an unknown expectation or goal exits 2' '
	write_campaign c.yaml "  - name: t2" "    command: make test" "    expect: maybe" &&
	spec_error c.yaml ".expect. must be one of: pass, fix" &&
	write_campaign c.yaml "goal: everything" &&
	spec_error c.yaml ".goal. must be one of: keep, fix"
'

test_expect_success 'expect on a static gate, allow_skip on a policy gate exit 2' '
	write_campaign c.yaml "  - {name: w, kind: static, format: gcc, command: make, expect: fix}" &&
	spec_error c.yaml ".expect. belongs to build, custom and test gates" &&
	write_campaign c.yaml "  - {name: p, kind: policy, allow_skip: true}" &&
	spec_error c.yaml ".allow_skip. belongs to gates that run a command"
'

test_expect_success 'a header name with a space exits 2' '
	write_campaign c.yaml "provider:" "  kind: rules" "  headers: [\"X Org: y\"]" &&
	spec_error c.yaml "a header must look like"
'

test_expect_success 'loopback on a policy gate exits 2' '
	write_campaign c.yaml "  - name: p" "    kind: policy" "    loopback: true" &&
	spec_error c.yaml ".loopback. belongs to gates that run a command"
'

test_expect_success 'ids with a sign, spaces or too many digits are usage errors' '
	for id in +1 " 1" 99999999999999999999; do
		test_expect_code 2 sluice show --store s.db -- "$id" 2>err &&
		grep -q "expected one candidate id" err || exit 1
	done &&
	test_expect_code 2 sluice accept --store s.db 99999999999999999999 2>err &&
	grep -q "expected one candidate id" err &&
	test_cmp s.db.orig s.db
'

test_expect_success 'an option a command does not take is named, not its value' '
	test_expect_code 2 sluice doctor --store x 2>err &&
	grep -q "unknown option .--store." err &&
	test_expect_code 2 sluice status --store s.db -xy 2>err &&
	grep -q "unknown option .-x." err
'

test_expect_success 'an empty option value is a usage error' '
	test_expect_code 2 sluice export --store s.db --out "" 2>err &&
	grep -q "option .--out. needs a value" err &&
	test_expect_code 2 sluice status --store= 2>err &&
	grep -q "option .--store. needs a value" err &&
	test_expect_code 2 sluice gc --scratch "" 2>err &&
	grep -q "option .--scratch. needs a value" err &&
	test_expect_code 2 sluice scope c.yaml --repo "" 2>err &&
	grep -q "option .--repo. needs a value" err
'

test_expect_success 'a store that is a directory exits 2' '
	write_campaign c.yaml &&
	mkdir storedir &&
	test_expect_code 2 sluice run --store storedir c.yaml 2>err &&
	grep -q "storedir. is a directory" err &&
	test_expect_code 2 sluice status --store storedir 2>err &&
	grep -q "storedir. is a directory" err &&
	test_expect_code 2 sluice scope c.yaml --cache storedir 2>err &&
	grep -q "storedir. is a directory" err &&
	test -z "$(ls storedir)"
'

test_expect_success 'run --record into a directory or a missing one exits 2 before anything' '
	test_expect_code 2 sluice run --store r.db --record storedir c.yaml 2>err &&
	grep -q "record .storedir. is a directory" err &&
	test_expect_code 2 sluice run --store r.db --record nodir/x.jsonl c.yaml 2>err &&
	grep -q "nodir. is not a directory" err &&
	! test -e r.db
'

test_expect_success 'export --out onto a file exits 2 and leaves the file alone' '
	echo keep >outfile &&
	test_expect_code 2 sluice export --store s.db --out outfile 2>err &&
	grep -q "out .outfile. is not a directory" err &&
	echo keep >expect &&
	test_cmp expect outfile
'

test_expect_success 'scope: a directory as --query-file, --budget without --context' '
	test_expect_code 2 sluice scope --repo repo --lang c --query-file storedir 2>err &&
	grep -q "query-file .storedir. is a directory" err &&
	test_expect_code 2 sluice scope c.yaml --budget 10 2>err &&
	grep -q "budget goes with --context" err
'

test_expect_success 'gc: a named repository that is not one, a --scratch that is a file' '
	echo x >afile &&
	test_expect_code 2 sluice gc --repo afile --scratch scratch 2>err &&
	grep -q "repository .afile." err &&
	test_expect_code 2 sluice gc --scratch afile 2>err &&
	grep -q "scratch .afile. is not a directory" err
'

test_expect_success 'gc refuses to remove a worktree the user made under the root' '
	git -C repo worktree add -q "$TRASH/mine/feature" -b feature &&
	echo work >mine/feature/uncommitted.txt &&
	test_expect_code 2 sluice gc --repo repo --scratch mine 2>err &&
	grep -q "worktree .feature.* not made by sluice" err &&
	test -f mine/feature/uncommitted.txt &&
	git -C repo worktree list | grep -q "mine/feature"
'

test_expect_success 'version and help take no extra arguments' '
	test_expect_code 2 sluice version extra &&
	test_expect_code 2 sluice help run extra
'

# libtree-sitter 0.20.7 crashes on "_??" and never returns on "((_)?)? @a"
# (or runs out of the memory its child is allowed, depending on the machine).
test_expect_success 'a query that crashes tree-sitter exits 2 at its position' '
	write_campaign c.yaml &&
	sed -i "s/^  query: |$/  query: \"_??\"/; /^    (call_expression$/,/^      (#eq? @fn/d" c.yaml &&
	grep -n "query: \"_??\"" c.yaml >line &&
	spec_error c.yaml "invalid query: quantifier .?. right after another" &&
	grep -q "^sluice: c.yaml:$(cut -d: -f1 line):13: " err
'

test_expect_success 'a query that hangs tree-sitter (a quantified group of quantified patterns) exits 2 at its position' '
	git -C repo for-each-ref >refs.before &&
	write_campaign c.yaml &&
	sed -i "s/^  query: |$/  query: \"((_)?)? @call\"/; /^    (call_expression$/,/^      (#eq? @fn/d" c.yaml &&
	spec_error c.yaml "invalid query: quantifier .?. on a group that holds a quantified pattern is not supported" &&
	test_expect_code 2 sluice run --store hang.db c.yaml 2>err &&
	grep -q "^sluice: c.yaml:[0-9]*:[0-9]*: invalid query: quantifier" err &&
	git -C repo for-each-ref >refs &&
	test_cmp refs.before refs &&
	! test -e hang.db
'

test_expect_success 'a query whose matches grow without bound on a file stops at the time limit' '
	mkdir -p wide/src &&
	i=0 &&
	while test $i -lt 3000; do echo "int f$i(void) { return $i; }"; i=$((i + 1)); done >wide/src/w.c &&
	make_repo wide &&
	test_expect_code 2 sluice scope --repo wide --lang c \
		--query "((function_definition) @a (function_definition) @b)" 2>err &&
	grep -q "^sluice: src/w.c: the query ran longer than 10 s on this file" err
'

test_expect_success 'a forbid pattern that would exhaust memory exits 2 at its line' '
	write_campaign c.yaml "  - name: policy" "    kind: policy" "    forbid: [\"x{1,32767}\"]" &&
	spec_error c.yaml "bad forbid pattern .x{1,32767}.: too large once its repetitions are expanded" &&
	grep -q "^sluice: c.yaml:$(grep -n "forbid:" c.yaml | cut -d: -f1):" err
'

test_expect_success 'a rule capture longer than the rest of the query is not read past its end' '
	write_campaign c.yaml &&
	sed -i "s/^  - capture: call$/  - capture: callxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx/" c.yaml &&
	spec_error c.yaml "rule replaces capture .callx*., which the query does not define"
'

test_done
