#!/bin/sh
# run-tests.sh BUILD - run both test layers and print one line
# "N passed, N failed, N skipped"; exit non-zero if anything failed.
#
# Unit tests: every build/tests/unit/test_* binary.  End-to-end tests: every
# tests/t/t[0-9]*.sh script.  Both print TAP lines ("ok N - ...",
# "not ok N - ...", "ok N # skip reason"); this script counts them, counts a
# script or binary that exits non-zero without a "not ok" line (a crash),
# or that ends without its closing "# N passed, N failed" line, as one
# failure, and lists every skipped case with its reason before the total,
# so a machine that lacks something (cgroups, Landlock, root) shows it.
# Set T=t4 (or T=t4220) to run only the end-to-end scripts whose names start
# with it.
set -u
BUILD=${1:-build}
BUILD=$(cd "$BUILD" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
export SLUICE_BUILD="$BUILD"
# sanitizer builds: third-party leaks we cannot fix (see the file)
export LSAN_OPTIONS="suppressions=$top/tests/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
log="$BUILD/tests/log"
rm -rf "$log" && mkdir -p "$log"
pass=0 fail=0 skip=0
: >"$log/skipped"

count() { # name logfile rc
	s=$(grep -c '^ok [0-9]* # skip' "$2")
	p=$(($(grep -c '^ok ' "$2") - s))
	f=$(grep -c '^not ok ' "$2")
	grep '^ok [0-9]* # skip' "$2" | sed "s|^ok [0-9]* # skip|$1:|" >>"$log/skipped"
	if [ "$3" != 0 ] && [ "$f" = 0 ]; then
		f=1
		echo "not ok - $1 exited with status $3 (see $2)"
	elif ! grep -q '^# [0-9]* passed, [0-9]* failed' "$2"; then
		f=$((f + 1))
		echo "not ok - $1 ended before its summary line (see $2)"
	fi
	grep '^not ok ' "$2" | sed "s|^|$1: |"
	pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
	printf '%-40s %3d passed, %d failed, %d skipped\n' "$1" "$p" "$f" "$s"
}

for t in "$BUILD"/tests/unit/test_*; do
	[ -x "$t" ] || continue
	name=unit/$(basename "$t")
	( cd "$top" && timeout 300 "$t" ) >"$log/$(basename "$t").out" 2>&1
	count "$name" "$log/$(basename "$t").out" $?
done

# The jail's threat tests (t4000, t42xx) and the warm base's (t4500: as
# nobody its layers are plain directories, not tmpfs mounts) run again
# without Landlock (SLUICE_TEST_NO_LANDLOCK=1: every escape must be closed by
# another layer) and, when we are root, twice more as nobody (setpriv), in a
# trash directory of their own.
threat_modes() {
	case $1 in
	t4000-*|t42[0-9][0-9]-*|t4500-*) ;;
	*) echo plain; return ;;
	esac
	echo plain no-landlock
	if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
		echo nobody nobody,no-landlock
	fi
}

# What the nobody runs read, copied where nobody can read it: the checkout
# may sit under a directory only its owner may enter.
stage=
make_stage() {
	[ -n "$stage" ] && return 0
	stage=$(mktemp -d /tmp/sluice-stage.XXXXXX) &&
	mkdir -p "$stage/tests" "$stage/build/tests" &&
	cp -R "$top/tests/t" "$top/tests/fixtures" "$top/tests/lsan.supp" "$stage/tests/" &&
	cp -R "$top/examples" "$stage/" &&
	cp "$BUILD/sluice" "$stage/build/" &&
	cp -R "$BUILD/tests/helper" "$stage/build/tests/" &&
	chmod -R a+rX "$stage" || exit 3
}

for t in "$top"/tests/t/t[0-9]*.sh; do
	[ -f "$t" ] || continue
	name=$(basename "$t" .sh)
	case $name in "${T:-t}"*) ;; *) continue ;; esac
	for mode in $(threat_modes "$name"); do
		if [ $mode = plain ]; then
			( cd "$top/tests/t" && timeout 900 sh "$t" ) >"$log/$name.out" 2>&1 </dev/null
			count "$name" "$log/$name.out" $?
			continue
		fi
		out="$log/$name.$mode.out"
		trash=$(mktemp -d /tmp/sluice-test.XXXXXX) || exit 3
		nl=0 as= dir="$top" build="$BUILD" lsan="$LSAN_OPTIONS"
		case $mode in *no-landlock*) nl=1 ;; esac
		case $mode in
		nobody*)
			make_stage
			chown 65534:65534 "$trash"
			dir="$stage" build="$stage/build"
			lsan="suppressions=$stage/tests/lsan.supp:print_suppressions=0"
			as="setpriv --reuid=65534 --regid=65534 --clear-groups" ;;
		esac
		( cd "$dir/tests/t" && SLUICE_BUILD="$build" LSAN_OPTIONS="$lsan" \
			SLUICE_TEST_NO_LANDLOCK=$nl SLUICE_TEST_TRASH="$trash/t" \
			timeout 900 $as sh "$dir/tests/t/$name.sh" ) >"$out" 2>&1 </dev/null
		count "$name[$mode]" "$out" $?
		rm -rf "$trash"
	done
done

[ -n "$stage" ] && rm -rf "$stage"

if [ -s "$log/skipped" ]; then
	echo "skipped:"
	sed 's/^/  /' "$log/skipped"
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
