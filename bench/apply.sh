#!/bin/sh
# bench/apply.sh [BUILD] - the apply corpus through sluice, `git apply` and `patch -F3`.
#
# For every tests/fixtures/apply/cases/NAME (see that directory's README),
# each tool gets a fresh copy of base/ and the raw model reply, exactly as
# the model wrote it (prose, fences and all); the prefix level (-p1 for
# "a/"-style paths, else -p0) is chosen for git and patch so they are not
# penalised for it.  Search/replace replies are fed to them too (they refuse
# them).  Outcome per case and tool:
#   correct  the tool said it applied and the tree is the expected one
#   wrong    the tool said it applied but the tree differs, or the case
#            expects a refusal (unsafe path, ambiguous, ...)
#   refused  the tool exited non-zero (patch may have applied part of it)
# Prints one line per case with the three outcomes, then the totals, and the
# cases another tool got right and sluice did not.  Run by hand:
#     make build/tests/helper/apply-one && sh bench/apply.sh
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$top/build}
corpus=$top/tests/fixtures/apply
one=$BUILD/tests/helper/apply-one
test -x "$one" || { echo "missing $one: make build/tests/helper/apply-one" >&2; exit 2; }
command -v git >/dev/null && command -v patch >/dev/null || { echo "needs git and patch" >&2; exit 2; }
tmp=$(mktemp -d /tmp/sluice-bench-apply.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

expected_tree() { # EXPECT DIR: base + results - deletes; returns 1 if a refusal is expected
	cp -a "$corpus/base/." "$2/"
	if grep -q '^refused \|^parse-error ' "$1"; then return 1; fi
	grep '^result ' "$1" | while read -r _ path golden; do
		mkdir -p "$2/$(dirname "$path")" && cp "$corpus/golden/$golden" "$2/$path"
	done
	grep '^delete ' "$1" | while read -r _ path; do rm -f "$2/$path"; done
	return 0
}

judge() { # RC WORKDIR EXPDIR EXPECT_REFUSAL
	if [ "$1" != 0 ]; then echo refused; return; fi
	if [ "$4" = 1 ]; then echo wrong; return; fi
	if diff -r --no-dereference "$2" "$3" >/dev/null 2>&1; then echo correct; else echo wrong; fi
}

n=0
for s in sluice git patch; do eval "c_$s=0 w_$s=0 r_$s=0"; done
missed=""
printf '%-36s %-8s %-8s %-8s\n' case sluice git patch
for ex in "$corpus"/cases/*.expect; do
	name=$(basename "$ex" .expect)
	reply=$corpus/cases/$name.reply
	format=$(sed -n 's/^format //p' "$ex")
	globs=$(sed -n 's/^globs //p' "$ex")
	rm -rf "$tmp"/*
	mkdir "$tmp/exp" "$tmp/sluice" "$tmp/git" "$tmp/patch"
	expected_tree "$ex" "$tmp/exp"; want_refusal=$?
	for s in sluice git patch; do cp -a "$corpus/base/." "$tmp/$s/"; done
	p=0; grep -q '^--- a/\|^+++ b/' "$reply" && p=1

	# shellcheck disable=SC2086
	"$one" "$corpus/base" "$format" "$reply" "$tmp/sluice" $globs >/dev/null 2>&1; rc_s=$?
	( cd "$tmp/git" && git apply -p$p "$reply" ) >/dev/null 2>&1; rc_g=$?
	( cd "$tmp/patch" && patch -p$p -F3 -f -s --no-backup-if-mismatch -r - <"$reply" ) >/dev/null 2>&1; rc_p=$?
	# a tool that wrote outside its copy would show up here
	rm -f "$tmp"/*/*.orig

	o_sluice=$(judge $rc_s "$tmp/sluice" "$tmp/exp" $want_refusal)
	o_git=$(judge $rc_g "$tmp/git" "$tmp/exp" $want_refusal)
	o_patch=$(judge $rc_p "$tmp/patch" "$tmp/exp" $want_refusal)
	printf '%-36s %-8s %-8s %-8s\n' "$name" "$o_sluice" "$o_git" "$o_patch"
	for s in sluice git patch; do
		eval "o=\$o_$s"
		case $o in
		correct) eval "c_$s=\$((c_$s + 1))" ;;
		wrong) eval "w_$s=\$((w_$s + 1))" ;;
		refused) eval "r_$s=\$((r_$s + 1))" ;;
		esac
	done
	if [ "$o_sluice" != correct ] && { [ "$o_git" = correct ] || [ "$o_patch" = correct ]; }; then
		missed="$missed $name"
	fi
	n=$((n + 1))
done
echo
echo "$n cases (expected: $(grep -l '^refused \|^parse-error ' "$corpus"/cases/*.expect | wc -l) refusals)"
printf '%-8s %8s %8s %8s\n' tool correct wrong refused
for s in sluice git patch; do
	eval "printf '%-8s %8d %8d %8d\n' $s \$c_$s \$w_$s \$r_$s"
done
echo "cases git or patch got right and sluice did not:${missed:- none}"
ls /tmp/sluice-pwned* 2>/dev/null && echo "WARNING: a tool wrote outside its directory"
exit 0
