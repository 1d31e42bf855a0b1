#!/bin/sh
test_description='a real one-node Slurm cluster runs the example campaign as a job array of 4 shards and a dependent merge job (ci/slurm/, as README shows it); the result equals the campaign on one machine'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-shard.sh"
. "$TEST_DIRECTORY/lib-slurm.sh"

CAMPAIGN=examples/migration/campaign.yaml
CI=$(cd "$TEST_DIRECTORY/../../ci" && pwd)

test_lazy_prereq SLURM 'command -v slurmctld && command -v slurmd && command -v munged && command -v sbatch'
trap stop_slurm EXIT
trap 'stop_slurm; exit 143' TERM INT
# the cluster: started here, once; every test below needs it
if test_have_prereq ROOT,SLURM; then
	if start_slurm "$TRASH/cluster" >cluster.err 2>&1; then
		test_set_prereq CLUSTER
	else
		echo "# no Slurm cluster here:"
		sed 's/^/#   /' cluster.err
	fi
fi

test_expect_success CLUSTER 'setup: the example project, and the campaign on one machine' '
	cp -R "$EXAMPLES/migration/project" user &&
	make_repo user &&
	git clone -q user single &&
	(cd "$EXAMPLES/.." && sluice run --repo "$TRASH/single" --store "$TRASH/single.db" $CAMPAIGN) >single.out 2>&1 &&
	grep -q "proposed  *3" single.out
'

test_expect_success CLUSTER 'the campaign as a job array of 4 shards and a dependent merge job' '
	(cd "$EXAMPLES/.." && sh "$CI/slurm/sluice-submit.sh" $CAMPAIGN "$TRASH/user" "$TRASH/out" 4) >ids 2>submit.err &&
	read -r array merge <ids &&
	test -n "$merge" &&
	test "$(wait_slurm_job "$merge" 600)" = "COMPLETED " &&
	test "$(wait_slurm_job "$array" 60)" = "COMPLETED " &&
	test $(scontrol show job "$array" | grep -c "JobState=COMPLETED") = 4 &&
	scontrol show job "$array" | sed -n "s/.*EndTime=\([^ ]*\).*/\1/p" | sort | tail -1 >order &&
	scontrol show job "$merge" | sed -n "s/.*StartTime=\([^ ]*\).*/\1/p" >>order &&
	test $(wc -l <order) = 2 &&
	sort -c order &&
	for k in 0 1 2 3; do test -s out/shard-$k.db && test -s out/shard-$k.bundle || return 1; done &&
	grep -q "merged 4 stores into $TRASH/out/merged.db: 3 targets copied" out/merge.log
'

test_expect_success CLUSTER 'the merged store and branches equal the single-machine run' '
	status_flat single.db >flat.single &&
	status_flat out/merged.db >flat.merged &&
	test_cmp flat.single flat.merged &&
	target_lines single.db >targets.single &&
	target_lines out/merged.db >targets.merged &&
	test_cmp targets.single targets.merged &&
	branch_trees single >trees.single &&
	branch_trees user >trees.merged &&
	test $(wc -l <trees.merged) = 3 &&
	test_cmp trees.single trees.merged
'

test_expect_success CLUSTER 'the merge job run again adds nothing' '
	row_counts out/merged.db >rows.before &&
	job=$(SLUICE_REPO="$TRASH/user" SLUICE_OUT="$TRASH/out" SLUICE_SHARDS=4 \
		sbatch --parsable --export=ALL --output="$TRASH/out/merge2.log" "$CI/slurm/sluice-merge.sbatch") &&
	test "$(wait_slurm_job "${job%%;*}" 300)" = "COMPLETED " &&
	grep -q "0 targets copied, 0 replaced, 3 already there" out/merge2.log &&
	row_counts out/merged.db >rows.after &&
	test_cmp rows.before rows.after
'

test_done
