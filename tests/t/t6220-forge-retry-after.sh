#!/bin/sh
test_description='publish: a forge that asks to wait longer than a number holds stops with the clear error'
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

# publish_waiting VALUE: publish against a stub GitHub whose first API reply
# is 429 with Retry-After: VALUE; its exit status in rc, its error in err
publish_waiting() {
	rm -f forge.log &&
	start_forge github acme/wait "$TRASH/remote.git" --limit-429 1 --retry-after "$1" &&
	cp c.yaml c-forge.yaml &&
	printf "%s\n" "review:" "  forge: github" "  api_url: $forge_url" \
		"  project: acme/wait" "  token_env: FORGE_TOKEN" \
		"  remote: $TRASH/remote.git" >>c-forge.yaml &&
	cp s.db s-forge.db || return 1
	sluice publish --store s-forge.db c-forge.yaml >out 2>err
	rc=$?
	curl -sf "$forge_url/_stub/state" >state.json
	kill $forge_pid
	wait $forge_pid 2>/dev/null
	cat err
}

for v in 99999999999999999999 9223372036854775807 9223372036854776 \
	"Fri, 31 Dec 99999999 23:59:59 GMT"; do
	test_expect_success "Retry-After: $v stops publish with the wait it asked for, nothing opened" '
		publish_waiting "$v" &&
		test $rc != 0 && test $rc -lt 125 &&
		test $(wc -l <err) = 1 &&
		grep -q "the forge asks to wait 86400 s (more than 900 s); try later" err &&
		! grep -q "POST /repos/acme/wait/pulls" forge.log &&
		! grep -q "\"number\"" state.json
	'
done

test_done
