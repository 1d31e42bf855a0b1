#!/bin/sh
test_description='sluice preview: the rewrite each rule makes, per site, before any run'
. ./test-lib.sh

# the campaigns of tests/fixtures/preview on the scoping fixtures' repositories
PREVIEW="$FIXTURES/preview"

test_expect_success 'setup: the C and Python scoping fixtures as repositories' '
	for l in c python; do
		cp -R "$FIXTURES/scope/$l/repo" $l && make_repo $l &&
		sed "s|^repository: .*|repository: $TRASH/$l|" "$PREVIEW/$l.yaml" >$l.yaml || return 1
	done &&
	git -C c for-each-ref >refs.before
'

for l in c python; do
	test_expect_success "$l: the exact diffs, and the sites left for the model" "
		sluice preview $l.yaml >out.$l 2>err.$l &&
		test_cmp '$PREVIEW/$l.expected' out.$l &&
		! test -s err.$l
	"
	test_expect_success "$l: --json gives the same, one object per site and a summary" "
		sluice preview --json $l.yaml >json.$l &&
		test_cmp '$PREVIEW/$l.json' json.$l
	"
done

test_expect_success 'a condition decides: the string-literal source is for the model' '
	grep -x "lib/a.c:12:9: for the model: strcpy(d, \"x\")" out.c &&
	grep -x "3 sites: 2 rewritten by rules, 0 unchanged, 1 for the model" out.c
'

test_expect_success 'nothing written: no store, no branch, no worktree' '
	git -C c for-each-ref >refs.after &&
	test_cmp refs.before refs.after &&
	! test -e "$XDG_DATA_HOME/sluice" &&
	test -z "$(git -C c worktree list | sed 1d)" &&
	test -z "$(git -C c status --porcelain)"
'

test_expect_success 'colour on request: removed lines red, added lines green; never in JSON' '
	sluice preview --color always c.yaml >color &&
	grep -q "$(printf "\033")\[31m-	strcpy(d, s);" color &&
	grep -q "$(printf "\033")\[32m+	strlcpy(d, s, sizeof d);" color &&
	sluice preview --color always --json c.yaml >color.json &&
	! grep -q "$(printf "\033")" color.json &&
	test_expect_code 2 sluice preview --color sometimes c.yaml 2>err &&
	grep -q "auto, always or never" err
'

test_expect_success 'a bad campaign: exit 2 with the file and line, nothing printed on stdout' '
	sed "s/not_match:/not-a-condition:/" c.yaml >bad.yaml &&
	test_expect_code 2 sluice preview bad.yaml >out 2>err &&
	! test -s out &&
	grep -q "bad.yaml:1[0-9]:[0-9]*: .*not-a-condition" err
'

test_done
