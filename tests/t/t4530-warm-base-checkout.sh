#!/bin/sh
test_description='the warm base is a checkout: submodule directories, executable bits, symlinks; a base refusal names the first error line'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

# A repository with a submodule (a gitlink: git checkout leaves an empty
# directory for it, and autotools projects such as jq need it there), an
# executable script and a symlink.  The gate checks all three as a checkout
# has them.
test_expect_success 'setup' '
	mkdir -p repo/src &&
	printf "%s\n" "int old_api(int x) { return x; }" "int f(void) { return old_api(1); }" \
		>repo/src/main.c &&
	printf "%s\n" "#!/bin/sh" "echo script ran" >repo/run.sh &&
	chmod 755 repo/run.sh &&
	echo "int f(void);" >repo/src/api.h &&
	ln -s src/api.h repo/link.h &&
	printf "%s\n" "[submodule \"modules/sub\"]" "	path = modules/sub" "	url = ./sub" >repo/.gitmodules &&
	printf "%s\n" "test -d modules/sub && test -z \"\$(ls -A modules/sub)\" &&" \
		"test -x run.sh && test ! -x src/main.c &&" \
		"test -L link.h && test \"\$(readlink link.h)\" = src/api.h && ./run.sh" >repo/check.sh &&
	make_repo repo &&
	git -C repo update-index --add --cacheinfo 160000,$(git -C repo rev-parse HEAD),modules/sub &&
	git -C repo commit -q -m "a submodule" &&
	test "$(git -C repo ls-tree HEAD modules/sub | cut -c1-6)" = 160000 &&
	cat >c.yaml <<-EOF &&
	name: checkout
	repository: repo
	scratch: $TRASH/scratch
	targets:
	  language: c
	  query: "((call_expression function: (identifier) @fn) @call (#eq? @fn \"old_api\"))"
	  capture: call
	rules:
	  - {capture: call, template: "1"}
	attempts: 1
	gates:
	  - {name: prepared, command: "sh check.sh", prepare: true}
	  - {name: checked, command: "sh check.sh"}
	EOF
	sed -e "s/^attempts: 1/attempts: 1\njail: {warm_base: off}/" -e "s/^name: checkout/name: checkout-off/" \
		c.yaml >off.yaml &&
	grep -q "warm_base: off" off.yaml
'

test_expect_success 'the gates see a checkout on the warm base' '
	sluice run --store s.db c.yaml >out 2>err &&
	grep -q "^tree: warm base (overlay)" err &&
	grep -q "proposed  *1" out &&
	tree=$(find "$TRASH/scratch/checkout" -maxdepth 2 -name tree -path "*warm-*") &&
	test -d "$tree/modules/sub" &&
	test -x "$tree/run.sh" &&
	test -L "$tree/link.h"
'

test_expect_success 'and on a worktree (warm_base: off), the same' '
	sluice run --store off.db off.yaml >out 2>err &&
	grep -q "^tree: a worktree per candidate" err &&
	grep -q "proposed  *1" out
'

test_expect_success 'a base refusal names the first error line, and the last' '
	sed -e "s/^name: checkout/name: refused/" -e "/name: checked/d" c.yaml >bad.yaml &&
	printf "%s\n" "  - name: auto" \
		"    command: '"'"'echo checking; echo configure.ac:3: error: modules/sub/x.m4 not found; echo a; echo b; echo c; echo d; echo automake failed; exit 1'"'"'" >>bad.yaml &&
	test_expect_code 1 sluice run --store bad.db bad.yaml >out 2>err &&
	test "$(grep "^sluice: " err)" = "sluice: gate '"'"'auto'"'"' fails on the base commit (exit 1): configure.ac:3: error: modules/sub/x.m4 not found (last line: automake failed)"
'

test_expect_success 'without an error line the last line is the cause' '
	sed -e "s/^name: checkout/name: refused2/" -e "/name: checked/d" c.yaml >bad2.yaml &&
	printf "%s\n" "  - name: auto" "    command: '"'"'echo one; echo two; exit 3'"'"'" >>bad2.yaml &&
	test_expect_code 1 sluice run --store bad2.db bad2.yaml >out 2>err &&
	test "$(grep "^sluice: " err)" = "sluice: gate '"'"'auto'"'"' fails on the base commit (exit 3): two"
'

test_done
