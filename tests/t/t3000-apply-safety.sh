#!/bin/sh
test_description='apply: hostile model edits are refused with a reason; the repository and the scratch root stay unchanged'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

# campaign NAME: a command-provider campaign whose model replies with reply.txt
campaign() {
	cat >"$1.yaml" <<-EOF
	name: $1
	repository: repo
	scratch: $TRASH/scratch
	targets:
	  language: c
	  paths: ${PATHS:-["src/*.c"]}
	  query: "((call_expression function: (identifier) @fn) @call (#eq? @fn \"old_api\"))"
	  capture: call
	provider:
	  kind: command
	  command: "cat $TRASH/reply.txt"
	edit_format: udiff
	attempts: 1
	gates:
	  - name: check
	    command: "true"
	EOF
}

# state: everything of the user's repository and of the scratch root that must not change
state() {
	{
		tree_digest repo
		( cd repo/.git && find . -path ./objects -prune -o -path ./logs -prune -o \
			-path ./refs/heads/sluice -prune -o -print | grep -v "^./worktrees\$" | sort )
		sha1sum repo/.git/config
		git -C repo for-each-ref --format="%(refname) %(objectname)" | grep -v "^refs/heads/sluice/" || true
		git -C repo worktree list --porcelain
		# a warm base (README, "Warm base") is made by the baseline, before any edit
		find scratch -mindepth 2 2>/dev/null | grep -v "/warm-[0-9a-f]\{16\}\(/\|\$\)" | sort
		ls "$TRASH" | grep pwned || true
	} >"$1"
}

# refused NAME REASON: the run proposes nothing, records an apply error with REASON
refused() {
	campaign "$1" &&
	test_expect_code 1 sluice run --store s.db "$1.yaml" >out 2>err &&
	store_query s.db "select a.error from attempts a join targets t on t.id = a.target_id join campaigns c on c.id = t.campaign_id where c.name = '$1'" >why &&
	cat why &&
	grep -F -q "$2" why &&
	test "$(store_query s.db "select a.outcome from attempts a join targets t on t.id = a.target_id join campaigns c on c.id = t.campaign_id where c.name = '$1'")" = apply_error &&
	store_query s.db "select a.apply_report from attempts a join targets t on t.id = a.target_id join campaigns c on c.id = t.campaign_id where c.name = '$1'" >report &&
	grep -q '"tier":"refused"' report &&
	state after &&
	test_cmp before after
}

test_expect_success 'setup: a repository with a symlink, a binary file and a target' '
	mkdir -p repo/src repo/docs &&
	printf "int old_api(int x);\nint f(void)\n{\n\treturn old_api(1);\n}\n" >repo/src/a.c &&
	printf "BIN\000\001data\n" >repo/data.bin &&
	printf "# doc\n" >repo/docs/x.md &&
	ln -s src repo/lnk &&
	make_repo repo &&
	mkdir scratch &&
	state before
'

test_expect_success 'a hook under .git/ is refused' '
	cat >reply.txt <<-\EOF &&
	--- /dev/null
	+++ b/.git/hooks/post-checkout
	@@ -0,0 +1,2 @@
	+#!/bin/sh
	+touch pwned-hook
	EOF
	refused hook "it is under .git"
'

test_expect_success 'a .GIT/config in another case is refused' '
	cat >reply.txt <<-\EOF &&
	--- a/.GIT/config
	+++ b/.GIT/config
	@@ -1 +1,2 @@
	 [core]
	+	fsmonitor = touch pwned-fsmonitor
	EOF
	refused gitcase "it is under .git"
'

test_expect_success 'a path with .. is refused' '
	cat >reply.txt <<-\EOF &&
	--- a/src/../../pwned-dotdot.c
	+++ b/src/../../pwned-dotdot.c
	@@ -0,0 +1 @@
	+int pwned;
	EOF
	refused dotdot "it contains '"'"'..'"'"'"
'

test_expect_success 'an absolute path is refused' '
	printf -- "--- /dev/null\n+++ $TRASH/pwned-abs.c\n@@ -0,0 +1 @@\n+int pwned;\n" >reply.txt &&
	refused absolute "refusing absolute path"
'

test_expect_success 'a path through a symlink of the tree is refused' '
	cat >reply.txt <<-\EOF &&
	--- a/lnk/a.c
	+++ b/lnk/a.c
	@@ -4 +4 @@
	-	return old_api(1);
	+	return 0;
	EOF
	PATHS="[\"src/*.c\", \"lnk/*\"]" refused symlink "'"'"'lnk'"'"' is a symbolic link in the base tree"
'

test_expect_success 'a binary file is refused' '
	cat >reply.txt <<-\EOF &&
	--- a/data.bin
	+++ b/data.bin
	@@ -1 +1 @@
	-BIN
	+TXT
	EOF
	PATHS="[\"src/*.c\", \"*.bin\"]" refused binary "refusing to edit binary file"
'

test_expect_success 'a path outside the campaign globs is refused' '
	cat >reply.txt <<-\EOF &&
	--- a/docs/x.md
	+++ b/docs/x.md
	@@ -1 +1 @@
	-# doc
	+# pwned
	EOF
	refused globs "outside the campaign'"'"'s allowed paths (src/*.c)"
'

test_expect_success 'a hunk past the size cap is refused' '
	{
		printf -- "--- a/src/a.c\n+++ b/src/a.c\n@@ -4 +4,5000 @@\n-\treturn old_api(1);\n+\treturn 0;\n"
		awk "BEGIN { for (i = 0; i < 5000; i++) printf \"+/* padding padding padding padding padding padding padding %d */\\n\", i }"
	} >reply.txt &&
	refused big "the limit is 262144 per edit"
'

test_expect_success 'one bad file refuses the whole reply' '
	cat >reply.txt <<-\EOF &&
	--- a/src/a.c
	+++ b/src/a.c
	@@ -4 +4 @@
	-	return old_api(1);
	+	return 1;
	--- /dev/null
	+++ b/.git/hooks/pre-commit
	@@ -0,0 +1 @@
	+touch pwned
	EOF
	refused mixed "it is under .git"
'

test_expect_success 'control: a good reply is proposed; only the candidate branch is new' '
	cat >reply.txt <<-\EOF &&
	Here you go:
	```diff
	--- a/a.c
	+++ b/a.c
	@@ -40,2 +40,2 @@
	 {
	-	return old_api(1);
	+	return 1;
	```
	EOF
	campaign good &&
	{ sluice run --store s.db good.yaml >out 2>&1 || { cat out; false; }; } &&
	grep -q "proposed  *1" out &&
	git -C repo show sluice/good/src-a.c-L4C9:src/a.c >a.c &&
	grep -q "return 1;" a.c &&
	store_query s.db "select a.apply_report from attempts a join targets t on t.id = a.target_id join campaigns c on c.id = t.campaign_id where c.name = '"'"'good'"'"'" >report &&
	grep -q "\"path\":\"src/a.c\"" report &&
	grep -q "\"tier\":\"moved\"" report &&
	state after &&
	test_cmp before after
'

test_done
