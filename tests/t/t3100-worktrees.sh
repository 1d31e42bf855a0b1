#!/bin/sh
test_description='scratch worktrees: a crashed run is cleaned by the next run and by sluice gc; hooks and fsmonitor planted by a gate never run on the host; no root inside the repository'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

# campaign NAME GATE-COMMAND
campaign() {
	cat >"$1.yaml" <<-EOF
	name: $1
	repository: repo
	scratch: ${SCRATCH:-$TRASH/scratch}
	targets:
	  language: c
	  paths: ["src/*.c"]
	  query: "((call_expression function: (identifier) @fn) @call (#eq? @fn \"old_api\"))"
	  capture: call
	provider:
	  kind: command
	  command: "cat $TRASH/reply.txt"
	edit_format: udiff
	attempts: 1
	# worktrees are what this script is about: no warm base and layers
	jail: {warm_base: off}
	gates:
	  - name: check
	    command: |
	      $2
	    timeout: 60
	EOF
}

# crash NAME: start a run whose gate sleeps, kill -9 it while a worktree of
# it exists (the base's, where gates first run, or a candidate's)
crash() {
	m="sleep 10.3100$(printf %s "$1" | tr -cd 0-9)$$" &&
	campaign "$1" "$m" &&
	{ sluice run --store s.db "$1.yaml" >/dev/null 2>&1 & pid=$!; } &&
	for i in $(seq 1 600); do
		ls "scratch/$1" 2>/dev/null | grep -q "^sl-" && break
		sleep 0.1
	done &&
	# until a gate runs (its sleep has a command line of this crash's own)
	for i in $(seq 1 600); do
		pgrep -fx "$m" >/dev/null && break
		sleep 0.1
	done &&
	pgrep -fx "$m" >/dev/null &&
	kill -9 $pid && { wait $pid; true; } &&
	ls "scratch/$1" | grep "^sl-" >left &&
	test -s left
}

worktrees() {
	git -C repo worktree list --porcelain | grep -c "^worktree "
}

test_expect_success 'setup' '
	mkdir -p repo/src &&
	printf "int old_api(int x);\nint f(void)\n{\n\treturn old_api(1);\n}\n" >repo/src/a.c &&
	make_repo repo &&
	cat >reply.txt <<-\EOF
	--- a/src/a.c
	+++ b/src/a.c
	@@ -3,3 +3,3 @@
	 {
	-	return old_api(1);
	+	return 1;
	 }
	EOF
'

test_expect_success 'a crashed run leaves its worktree; sluice gc removes it' '
	crash crash1 &&
	test "$(worktrees)" -ge 2 &&
	sluice gc --repo repo --scratch "$TRASH/scratch" >out &&
	cat out &&
	grep -q "^removed [1-9][0-9]* worktree" out &&
	test "$(worktrees)" = 1 &&
	! ls scratch/crash1 | grep -q "^sl-" &&
	sluice gc --repo repo --scratch "$TRASH/scratch" >out &&
	grep -q "^removed 0 worktrees" out
'

test_expect_success 'sluice gc finds the repository through the store' '
	crash crash2 &&
	test "$(worktrees)" -ge 2 &&
	sluice gc --store s.db >out &&
	grep -q "^removed [1-9]" out &&
	test "$(worktrees)" = 1 &&
	! ls scratch/crash2 | grep -q "^sl-"
'

test_expect_success 'a crashed run is cleaned by the next run of the campaign' '
	crash crash3 &&
	test "$(worktrees)" -ge 2 &&
	campaign crash3 "true" &&
	sluice run --store s.db crash3.yaml >out &&
	grep -q "proposed  *1" out &&
	test "$(worktrees)" = 1 &&
	! ls scratch/crash3 | grep -q "^sl-"
'

test_expect_success 'a scratch root inside the repository is refused' '
	SCRATCH=$TRASH/repo/scratch campaign inside "true" &&
	test_expect_code 2 sluice run --store s.db inside.yaml 2>err &&
	grep -q "inside the repository" err &&
	! test -e repo/scratch
'

# plant DIR: what a candidate would leave for the host: a .git with hooks,
# core.fsmonitor, core.hooksPath and sshCommand, all touching pwned-* files
plant() {
	rm -rf "$1/.git" && mkdir -p "$1/.git/hooks" "$1/.git/refs" "$1/.git/objects" &&
	printf "[core]\n\tfsmonitor = touch $TRASH/pwned-fsmonitor\n\thooksPath = $TRASH/evilhooks\n\tsshCommand = touch $TRASH/pwned-ssh\n" >"$1/.git/config" &&
	printf "ref: refs/heads/main\n" >"$1/.git/HEAD" &&
	for h in post-checkout post-commit pre-commit reference-transaction pre-auto-gc post-index-change; do
		printf "#!/bin/sh\ntouch $TRASH/pwned-$h\n" >"$1/.git/hooks/$h" &&
		chmod +x "$1/.git/hooks/$h" || return 1
	done
}

test_expect_success 'a gate cannot replace the worktree .git; nothing it tries runs on the host' '
	mkdir evilhooks &&
	printf "#!/bin/sh\ntouch $TRASH/pwned-hookspath\n" >evilhooks/post-checkout &&
	chmod +x evilhooks/post-checkout &&
	campaign hooks "rm -rf .git; mkdir -p .git/hooks; printf \"#!/bin/sh\\ntouch $TRASH/pwned-gate\\n\" >.git/hooks/post-checkout; printf \"[core]\\n\\tfsmonitor = touch $TRASH/pwned-gate-fsmonitor\\n\" >>.git/config; exit 0" &&
	sluice run --store s.db hooks.yaml >out &&
	grep -q "proposed  *1" out &&
	sluice status --store s.db hooks >/dev/null &&
	sluice export --store s.db hooks --out exp >/dev/null &&
	sluice gc --store s.db >/dev/null &&
	! ls "$TRASH" | grep pwned
'

test_expect_success 'hooks and fsmonitor planted in the worktree during a gate never run on the host' '
	# the gate of the candidate (not of the base: it still calls old_api) sleeps
	# until the test has planted, then is woken: no race with the worktree
	m="sleep 60.3100$$" &&
	campaign planted "grep -q \"old_api(1)\" src/a.c && exit 0; $m || true" &&
	{ sluice run --store s.db planted.yaml >out 2>&1 & pid=$!; } &&
	for i in $(seq 1 600); do
		pgrep -fx "$m" >/dev/null && break
		sleep 0.1
	done &&
	pgrep -fx "$m" >/dev/null &&
	wt=scratch/planted/$(ls scratch/planted | grep "^sl-[0-9]" | head -1) &&
	test -f "$wt/src/a.c" &&
	plant "$wt" && mkdir -p "$wt/src" && plant "$wt/src" &&
	pkill -fx "$m" &&
	wait $pid &&
	grep -q "proposed  *1" out &&
	! test -e "$wt" &&
	test "$(worktrees)" = 1 &&
	sluice status --store s.db planted >/dev/null &&
	sluice export --store s.db planted --out exp2 >/dev/null &&
	sluice gc --store s.db >/dev/null &&
	git -C repo show sluice/planted/src-a.c-L4C9:src/a.c | grep -q "return 1;" &&
	! ls "$TRASH" | grep pwned
'

test_expect_success 'a user worktree under the scratch root survives a run' '
	campaign mine "true" &&
	mkdir -p scratch/mine &&
	git -C repo worktree add -q "$TRASH/scratch/mine/users-work" -b users-work &&
	echo "uncommitted" >scratch/mine/users-work/notes.txt &&
	sluice run --store m.db mine.yaml >/dev/null &&
	test -f scratch/mine/users-work/notes.txt &&
	git -C repo worktree list | grep -q users-work
'

test_done
