#!/bin/sh
# run-demo.sh BUILD - the bundled campaign end to end (what `make demo` runs).
#
# Copies examples/greet/project into a fresh git repository under
# BUILD/demo/greet, scopes it, runs examples/greet/campaign.yaml (rules, the
# build and test gates in the jail, SQLite store BUILD/demo/sluice.db),
# prints the funnel and exports the proposed patches and a report.
set -eu
BUILD=$(cd "${1:-build}" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
demo="$BUILD/demo"
sluice="$BUILD/sluice"

rm -rf "$demo"
mkdir -p "$demo"
cp -R "$top/examples/greet/project" "$demo/greet"
(
	cd "$demo/greet"
	git init -q -b main
	git add -A
	git -c user.name="Demo" -c user.email="demo@example.com" commit -q -m "greet: the library before the migration"
)

echo "== sluice scope examples/greet/campaign.yaml"
"$sluice" scope "$top/examples/greet/campaign.yaml"
echo
echo "== sluice run examples/greet/campaign.yaml"
"$sluice" run --store "$demo/sluice.db" "$top/examples/greet/campaign.yaml"
echo
echo "== sluice export"
"$sluice" export --store "$demo/sluice.db" --out "$demo/export"
echo
echo "branches proposed in $demo/greet:"
git -C "$demo/greet" for-each-ref --format='  %(refname:short)' refs/heads/sluice/
echo
echo "Next: sluice show ID, sluice accept ID, sluice reject ID --reason TEXT (each with --store $demo/sluice.db)"
