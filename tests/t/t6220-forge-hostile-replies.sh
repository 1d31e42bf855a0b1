#!/bin/sh
test_description='publish against a hostile forge: a wait longer than a number holds stops with the clear error; a reply quoting the token shows it nowhere'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

export FORGE_TOKEN=ghp-secret-token-4711

test_expect_success 'setup: one proposed candidate, a bare remote' '
	mkdir -p repo/src &&
	echo "x = a.b()" >repo/src/m.py &&
	make_repo repo &&
	git init -q --bare remote.git &&
	git -C repo push -q "$TRASH/remote.git" main &&
	python_campaign c.yaml wait repo &&
	sluice run --store s.db c.yaml >out &&
	grep -q "proposed  *1" out
'

# publish_to STUB-OPTIONS...: publish (with the token $SENT, by default the
# right one) against a stub GitHub started with these options; its exit
# status in rc, its output in out and err
publish_to() {
	rm -f forge.log &&
	start_forge github acme/wait "$TRASH/remote.git" "$@" &&
	cp c.yaml c-forge.yaml &&
	printf "%s\n" "review:" "  forge: github" "  api_url: $forge_url" \
		"  project: acme/wait" "  token_env: FORGE_TOKEN" \
		"  remote: $TRASH/remote.git" >>c-forge.yaml &&
	cp s.db s-forge.db || return 1
	FORGE_TOKEN=${SENT:-$FORGE_TOKEN} sluice publish --store s-forge.db c-forge.yaml >out 2>err
	rc=$?
	curl -sf "$forge_url/_stub/state" >state.json
	kill $forge_pid
	wait $forge_pid 2>/dev/null
	cat err
}

for v in 99999999999999999999 9223372036854775807 9223372036854776 \
	"Fri, 31 Dec 99999999 23:59:59 GMT"; do
	test_expect_success "Retry-After: $v stops publish with the wait it asked for, nothing opened" '
		publish_to --limit-429 1 --retry-after "$v" &&
		test $rc != 0 && test $rc -lt 125 &&
		test $(wc -l <err) = 1 &&
		grep -q "the forge asks to wait 86400 s (more than 900 s); try later" err &&
		! grep -q "POST /repos/acme/wait/pulls" forge.log &&
		! grep -q "\"number\"" state.json
	'
done

test_expect_success 'a 401 that quotes the token back: the token is in no output and no table' '
	SENT=ghp-wrong-token-0815 &&
	publish_to --echo-auth 1 &&
	test $rc = 2 &&
	grep -q "Bad credentials (got Authorization: Bearer \[redacted\])" err &&
	sqlite3 s-forge.db .dump >dump &&
	! grep -q "ghp-wrong-token-0815" out err dump forge.log
'

test_done
