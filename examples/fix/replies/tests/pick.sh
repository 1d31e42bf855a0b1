#!/bin/sh
# pick.sh DIR: the command provider of campaign-tests.yaml.  The first
# attempt "fixes" the failing test by expecting what the code returns
# (DIR/weaken.txt); told that it changed the test that judges it, the
# second fixes the code (DIR/fix.txt).
if grep -q "changes the test that judges it"; then
	cat "$1/fix.txt"
else
	cat "$1/weaken.txt"
fi
