#!/bin/sh
test_description='--repo stands in for a campaign file without repository:'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

test_expect_success 'setup: a repository, a campaign file with and one without repository:' '
	greet_repo repo &&
	write_campaign with.yaml &&
	grep -v "^repository:" with.yaml >bare.yaml &&
	! grep -q "^repository:" bare.yaml
'

test_expect_success 'without --repo a missing repository: stays an error (exit 2)' '
	test_expect_code 2 sluice scope bare.yaml 2>err &&
	test "$(wc -l <err)" = 1 &&
	grep -q "^sluice: bare.yaml:1:1: missing required field .repository.$" err &&
	test_expect_code 2 sluice run --store s.db bare.yaml 2>err &&
	grep -q "missing required field .repository." err &&
	! test -e s.db
'

test_expect_success 'scope with --repo finds what the file with repository: finds' '
	sluice scope with.yaml >expect &&
	test -s expect &&
	sluice scope --repo repo bare.yaml >out &&
	test_cmp expect out
'

# Candidate ids follow the order the workers finish in: compared without them;
# the second store finds the first's branches and proposes under its own
# prefix (sluice/greet-ID8): compared without the id.
test_expect_success 'run with --repo runs the campaign as the file with repository: does' '
	sluice run --store s.db --repo repo bare.yaml >run.out &&
	sluice run --store s2.db with.yaml >run.expect &&
	sluice status --store s.db >status.out &&
	sluice status --store s2.db >status.expect &&
	for f in run.out run.expect status.out status.expect; do
		sed "s/^ *[0-9]*  //; s|sluice/greet-[0-9a-f]\{8\}/|sluice/greet/|" $f |
			sort >$f.sorted || exit 1
	done &&
	test_cmp run.expect.sorted run.out.sorted &&
	test_cmp status.expect.sorted status.out.sorted &&
	grep -q "^src/app.c:10  sluice/greet/" status.out.sorted
'

test_expect_success 'a repository: in the file and --repo: --repo wins, as before' '
	sed "s|^repository: repo|repository: nowhere|" with.yaml >wrong.yaml &&
	test_expect_code 2 sluice scope wrong.yaml 2>err &&
	sluice scope --repo repo wrong.yaml >out &&
	sluice scope with.yaml >expect &&
	test_cmp expect out
'

test_done
