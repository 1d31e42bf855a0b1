#!/bin/sh
test_description='threats that wait for the host: planted .git hooks, core.fsmonitor, core.hooksPath, symlinks'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

# The gate (a full `sluice run`) tries to leave things the host might run or
# follow afterwards; each would touch a pwned-* marker in the trash directory.
test_expect_success 'setup' '
	greet_repo repo &&
	echo "secret-4240" >secret &&
	write_campaign c.yaml &&
	cat >plant.sh <<-EOF &&
	hook="#!/bin/sh
	touch $TRASH/pwned-hook"
	r=""
	# the worktree .git: rewrite, replace, or point elsewhere
	(echo "[core]
	fsmonitor = touch $TRASH/pwned-fsmonitor
	hooksPath = /src/hooks" >>.git) 2>/dev/null && r="\$r git-written"
	rm -f .git 2>/dev/null && r="\$r git-removed"
	mv .git moved 2>/dev/null && r="\$r git-moved"
	mkdir -p .git/hooks 2>/dev/null && r="\$r git-dir"
	gitdir=\$(sed -n "s/^gitdir: //p" .git)
	mkdir -p "\$gitdir/hooks" 2>/dev/null && r="\$r gitdir-reached"
	git config core.fsmonitor "touch $TRASH/pwned-fsmonitor" 2>/dev/null && r="\$r git-config"
	# in-tree hooks and links sluice or git might follow
	mkdir -p hooks && printf "%s\n" "\$hook" >hooks/post-checkout && chmod +x hooks/post-checkout
	ln -s $TRASH/secret report.xml
	ln -s $TRASH/repo/.git/hooks hooklink
	ln -s ../../../.. up
	echo "result:\$r"
	EOF
	cat >>c.yaml <<-EOF
	  - name: plant
	    command: "sh $TRASH/plant.sh"
	    timeout: 30
	EOF
'

test_expect_success 'the gate cannot reach the plant script (control: it is outside)' '
	mkdir w && test_must_fail jail-run w "cat $TRASH/plant.sh"
'

test_expect_success 'so the plant runs from the worktree: copy it into the repo' '
	cp plant.sh repo/plant.sh &&
	(cd repo && git add plant.sh && git commit -q -m plant) &&
	sed -i "s|sh $TRASH/plant.sh|sh plant.sh|" c.yaml
'
git_digest() { (cd repo/.git && find config hooks -type f | sort | xargs sha1sum | sha1sum); }
digest_before=$(git_digest)

test_expect_success 'a full campaign runs the planting gate; nothing it planted is run or followed' '
	{ sluice run --store s.db c.yaml >out; rc=$?; } &&
	{ test $rc = 0 || test $rc = 1; } &&
	store_query s.db "select output_tail from gate_runs where gate = '"'"'plant'"'"'" >tails &&
	test -s tails &&
	! grep -e git-written -e git-removed -e git-moved -e git-dir -e gitdir-reached \
		-e git-config tails &&
	grep -c "^result:$" tails &&
	{ sluice export --store s.db --out exp >/dev/null 2>&1 || :; } &&
	git -C repo status >/dev/null &&
	git -C repo log --all --oneline >/dev/null &&
	for wt in $(git -C repo worktree list --porcelain | sed -n "s/^worktree //p"); do
		git -C "$wt" status >/dev/null 2>&1 || :; done &&
	test ! -e pwned-hook && test ! -e pwned-fsmonitor &&
	test "$digest_before" = "$(git_digest)" &&
	echo "secret-4240" >expect && test_cmp expect secret &&
	! grep -r -l "secret-4240" s.db exp 2>/dev/null
'

test_done
