#!/bin/sh
# t0010-campaign-manpage.sh - sluice-campaign(5) documents every key the
# campaign loader knows and no other (tests/check-campaign-manpage.sh reads
# both), the check sees a key left out or made up, and `make install`
# installs the page into man5.

test_description='the campaign file man page against the loader'
. ./test-lib.sh

top=$(cd "$TEST_DIRECTORY/../.." && pwd)

test_expect_success 'every key of the loader is documented, and only those' '
	sh "$top/tests/check-campaign-manpage.sh"
'

test_expect_success 'a key missing from the man page is named' '
	sed "/^\.BR attempts /,/^\.TP/{/^\.TP/!d}" "$top/docs/sluice-campaign.5" >c.5 &&
	! grep -q "^\.BR attempts " c.5 &&
	test_must_fail sh "$top/tests/check-campaign-manpage.sh" c.5 >out &&
	echo "c.5: key '\''attempts'\'' of root is in the loader ($top/pipeline/spec) but not documented" >expect &&
	test_cmp expect out
'

test_expect_success 'a key the loader does not know is named' '
	sed "s/^\.BR loopback /.BR loopbak /" "$top/docs/sluice-campaign.5" >c.5 &&
	test_must_fail sh "$top/tests/check-campaign-manpage.sh" c.5 >out &&
	grep -q "^c.5: key .loopback. of gates is in the loader" out &&
	grep -q "^c.5: key .loopbak. of gates is documented but the loader does not know it$" out &&
	test "$(wc -l <out)" = 2
'

test_expect_success 'a key table the check cannot read fails it' '
	mkdir empty &&
	test_must_fail sh "$top/tests/check-campaign-manpage.sh" "$top/docs/sluice-campaign.5" empty >out &&
	grep -q "cannot read the key tables" out
'

test_expect_success 'the man page renders without warnings' '
	if command -v groff >/dev/null 2>&1; then
		groff -man -ww -z "$top/docs/sluice-campaign.5" 2>err &&
		! test -s err
	fi
'

test_expect_success 'make install puts the page in man5' '
	make -s -n -C "$top" install DESTDIR=/dest PREFIX=/usr >out &&
	grep -q "docs/sluice-campaign.5 /dest/usr/share/man/man5/sluice-campaign.5" out
'

test_done
