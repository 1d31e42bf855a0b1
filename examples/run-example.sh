#!/bin/sh
# run-example.sh KIND [BUILD] - one bundled campaign end to end, no network.
#
# KIND is fix, testgen or migration.  Copies examples/KIND/project into a
# fresh git repository under BUILD/demo/KIND (BUILD defaults to build), runs
# examples/KIND/campaign.yaml from the top of the source tree (its command
# provider reads the canned replies in examples/KIND/replies), stores
# everything in BUILD/demo/KIND.db, prints the funnel and exports the
# proposed patches and report.md to BUILD/demo/KIND-export.  SLUICE_DEMO_DIR
# replaces BUILD/demo.
set -eu
kind=$1
top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${2:-$top/build}" && pwd)
demo=${SLUICE_DEMO_DIR:-$BUILD/demo}
sluice="$BUILD/sluice"

rm -rf "$demo/$kind" "$demo/$kind.db" "$demo/$kind-export" "$demo/$kind.state"
mkdir -p "$demo"
cp -R "$top/examples/$kind/project" "$demo/$kind"
(
	cd "$demo/$kind"
	git init -q -b main
	git add -A
	git -c user.name="Demo" -c user.email="demo@example.com" commit -q -m "$kind: the project before the campaign"
)
cd "$top"
echo "== sluice run examples/$kind/campaign.yaml"
status=0
SLUICE_DEMO_STATE="$demo/$kind.state" "$sluice" run --store "$demo/$kind.db" \
	--repo "$demo/$kind" "examples/$kind/campaign.yaml" || status=$?
echo
echo "== sluice export"
"$sluice" export --store "$demo/$kind.db" --out "$demo/$kind-export"
echo "report: $demo/$kind-export/report.md"
exit "$status"
