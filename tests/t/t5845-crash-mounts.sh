#!/bin/sh
test_description='the layer mounts of a run killed with -9 go with the next status (issue 25)

As root each candidate'"'"'s layer is a tmpfs of its own.  A run killed with
-9 leaves it mounted; the next sluice command that looks (status, as run
and gc do) unmounts and removes the layers whose process is provably gone
on this host: no such process, or one that started after the layer was
made (its pid reused).  A live process'"'"'s layer stays.'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"
. "$TEST_DIRECTORY/lib-reliability.sh"

# layer_mounts: tmpfs mounts of layers under this test's scratch root
layer_mounts() {
	grep -c " $TRASH/scratch/share/layer-[0-9]*-[0-9]* " /proc/self/mountinfo || true
}

# the gate waits on candidates (z() in src/m.py) for a file "go" that never comes
test_expect_success ROOT 'setup: a campaign whose gate waits on candidates' '
	mkdir -p repo/src &&
	printf "a()\n" >repo/src/m.py &&
	waiting_gate repo/gate.sh "grep -q z.. src/m.py" &&
	make_repo repo &&
	share_campaign c.yaml "z()" "sh gate.sh" &&
	sed -i "s/^    command: \"sh gate.sh\"$/&\n    timeout: 200/" c.yaml &&
	grep -q "timeout: 200" c.yaml
'

test_expect_success ROOT 'a run killed with -9 while its gate runs leaves its layer mounted' '
	{ sluice run --store s.db c.yaml >out1 2>err1 & pid=$!; } &&
	poll "test -n \"\$(find scratch/share -maxdepth 3 -path \"*/u/waiting\")\" || ! kill -0 $pid" &&
	test "$(layer_mounts)" = 1 &&
	kill -9 $pid &&
	{ wait $pid || :; } &&
	test "$(layer_mounts)" = 1 &&
	ls -d scratch/share/layer-$pid-* >layers &&
	test $(wc -l <layers) = 1
'

test_expect_success ROOT 'status unmounts and removes it, and leaves a live process'"'"'s layer' '
	# layers of this shell: one made while it lived, one made before it
	# started (the pid was another process'"'"'s then)
	mkdir -p scratch/share/layer-$$-1/u scratch/share/layer-$$-2/u &&
	touch -d "2001-01-01" scratch/share/layer-$$-2 &&
	sluice status --store s.db >st 2>err &&
	cat err &&
	grep "^sluice status: removed 2 layers of candidates a run that is gone left$" err &&
	test "$(layer_mounts)" = 0 &&
	! test -e "$(cat layers)" &&
	test -d scratch/share/layer-$$-1 &&
	! test -e scratch/share/layer-$$-2 &&
	sluice status --store s.db >st 2>err &&
	! grep "removed" err
'

test_expect_success ROOT 'nothing of this test stays mounted' '
	for m in $(grep " $TRASH/scratch/" /proc/self/mountinfo | cut -d" " -f5); do
		umount -l "$m" || return 1
	done &&
	test "$(layer_mounts)" = 0
'

test_done
