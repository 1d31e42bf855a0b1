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
#
# Every binary and every run of a script is a job of its own (its own trash
# directory and log); JOBS of them run at once (default: three for each
# online core, as a script spends most of its time waiting on a server, a
# jail or a sleep: the serial suite keeps one core busy a third of its
# time; JOBS=1 runs them one after another).  Each job's line is printed
# in the fixed order above, once it and every job before it have finished,
# with the seconds it took.  The longest jobs of the last run (their times
# are kept in BUILD/tests/durations) start first, so the short ones fill
# the gaps.
set -u
BUILD=${1:-build}
BUILD=$(cd "$BUILD" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
export SLUICE_BUILD="$BUILD"
# sanitizer builds: third-party leaks we cannot fix (see the file)
export LSAN_OPTIONS="suppressions=$top/tests/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
log="$BUILD/tests/log"
durations="$BUILD/tests/durations"
rm -rf "$log" && mkdir -p "$log/.jobs"
pass=0 fail=0 skip=0
: >"$log/skipped"
: >"$log/failed"
jobs=${JOBS:-$((3 * $(nproc 2>/dev/null || echo 1)))}
case $jobs in ''|*[!0-9]*|0) echo "run-tests.sh: JOBS must be a positive number" >&2; exit 2 ;; esac

count() { # name logfile rc seconds
	s=$(grep -c '^ok [0-9]* # skip' "$2")
	p=$(($(grep -c '^ok ' "$2") - s))
	f=$(grep -c '^not ok ' "$2")
	grep '^ok [0-9]* # skip' "$2" | sed "s|^ok [0-9]* # skip|$1:|" >>"$log/skipped"
	if [ "$3" != 0 ] && [ "$f" = 0 ]; then
		f=1
		echo "not ok - $1 exited with status $3 (see $2)" | tee -a "$log/failed"
	elif ! grep -q '^# [0-9]* passed, [0-9]* failed' "$2"; then
		f=$((f + 1))
		echo "not ok - $1 ended before its summary line (see $2)" | tee -a "$log/failed"
	fi
	grep '^not ok ' "$2" | sed "s|^|$1: |" | tee -a "$log/failed"
	# what each failing case printed last (its "#   " lines), for a log
	# that keeps only its tail
	[ "$f" = 0 ] || awk -v name="$1" '
		function flush(   i) { for (i = (n > 10 ? n - 10 : 0); i < n; i++) print "  " name "| " b[i % 10]; n = 0 }
		/^not ok / { flush(); on = 1; next }
		on && /^#   / { b[n++ % 10] = $0; next }
		{ flush(); on = 0 }
		END { flush() }' "$2" >>"$log/failed"
	pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s))
	printf '%-40s %3d passed, %d failed, %d skipped %5ss\n' "$1" "$p" "$f" "$s" "$4"
}

# The job list: job N has a name (its line), a kind (unit, plain or a
# threat mode) and a path; kept in job_name_N, job_kind_N, job_path_N.
njobs=0
add_job() { # name kind path
	njobs=$((njobs + 1))
	eval "job_name_$njobs=\$1 job_kind_$njobs=\$2 job_path_$njobs=\$3"
}

for t in "$BUILD"/tests/unit/test_*; do
	[ -x "$t" ] || continue
	add_job "unit/$(basename "$t")" unit "$t"
done

# The jail's threat tests (t4000, t42xx) and the warm base's (t4500: as
# nobody its layers are tmpfs made in a user namespace, not root's mounts) run again
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

stage=
for t in "$top"/tests/t/t[0-9]*.sh; do
	[ -f "$t" ] || continue
	name=$(basename "$t" .sh)
	case $name in "${T:-t}"*) ;; *) continue ;; esac
	for mode in $(threat_modes "$name"); do
		if [ $mode = plain ]; then
			add_job "$name" plain "$t"
		else
			add_job "$name[$mode]" "$mode" "$name"
			case $mode in nobody*) stage=needed ;; esac
		fi
	done
done

# What the nobody runs read, copied where nobody can read it (the checkout
# may sit under a directory only its owner may enter), once for all of them.
if [ -n "$stage" ]; then
	stage=$(mktemp -d /tmp/sluice-stage.XXXXXX) &&
	mkdir -p "$stage/tests" "$stage/build/tests" &&
	cp -R "$top/tests/t" "$top/tests/fixtures" "$top/tests/lsan.supp" "$stage/tests/" &&
	cp -R "$top/examples" "$stage/" &&
	cp "$BUILD/sluice" "$stage/build/" &&
	cp -R "$BUILD/tests/helper" "$stage/build/tests/" &&
	chmod -R a+rX "$stage" || exit 3
fi

# job_run N: job N in the background.  Its log is job_out_N; when it ends,
# $log/.jobs/N.rc holds its exit status and seconds (written whole, so a
# file that exists is complete) and its trash directory, if it had one of
# its own, is gone.  $log/.jobs/N.pid names its timeout process, which an
# interrupt stops (with everything under it).
job_run() {
	eval "name=\$job_name_$1 kind=\$job_kind_$1 path=\$job_path_$1"
	trash=
	case $kind in
	unit)
		out="$log/$(basename "$path").out"
		set -- "$1" env -C "$top" timeout 300 "$path" ;;
	plain)
		out="$log/$name.out"
		set -- "$1" env -C "$top/tests/t" timeout 900 sh "$path" ;;
	*)
		out="$log/$path.$kind.out"
		trash=$(mktemp -d /tmp/sluice-test.XXXXXX) || exit 3
		nl=0 dir="$top" build="$BUILD" lsan="$LSAN_OPTIONS"
		case $kind in *no-landlock*) nl=1 ;; esac
		case $kind in
		nobody*)
			chown 65534:65534 "$trash"
			dir="$stage" build="$stage/build"
			lsan="suppressions=$stage/tests/lsan.supp:print_suppressions=0"
			set -- "$1" setpriv --reuid=65534 --regid=65534 --clear-groups ;;
		*)	set -- "$1" ;;
		esac
		n=$1; shift
		set -- "$n" env -C "$dir/tests/t" SLUICE_BUILD="$build" LSAN_OPTIONS="$lsan" \
			SLUICE_TEST_NO_LANDLOCK=$nl SLUICE_TEST_TRASH="$trash/t" \
			timeout 900 "$@" sh "$dir/tests/t/$path.sh" ;;
	esac
	eval "job_out_$1=\$out"
	{
		n=$1; shift
		start=$(date +%s)
		"$@" >"$out" 2>&1 </dev/null &
		echo $! >"$log/.jobs/$n.pid"
		wait $!
		rc=$?
		[ -z "$trash" ] || rm -rf "$trash"
		echo "$rc $(($(date +%s) - start))" >"$log/.jobs/$n.rc.tmp"
		mv "$log/.jobs/$n.rc.tmp" "$log/.jobs/$n.rc"
	} &
}

stop() {
	trap - INT TERM HUP
	for f in "$log"/.jobs/*.pid; do
		[ -e "$f" ] && [ ! -e "${f%.pid}.rc" ] && kill "$(cat "$f")" 2>/dev/null
	done
	wait
	[ -z "$stage" ] || rm -rf "$stage"
	echo "run-tests.sh: interrupted" >&2
	exit 130
}
trap stop INT TERM HUP

# The order jobs start in: one at a time, the fixed order; else the ones
# the last run did not have, then the rest, longest first (ties in the fixed
# order).
order=$(i=1; while [ $i -le $njobs ]; do
	eval "echo \"\$i \$job_name_$i\""
	i=$((i + 1))
done | awk -v d="$durations" -v one=$((jobs == 1)) '
	BEGIN { while (!one && (getline l <d) > 0) { split(l, f, " "); t[f[2]] = f[1] } }
	{ print (one ? 0 : ($2 in t) ? t[$2] : 999999), $1 }' | sort -k1,1nr -k2,2n | cut -d' ' -f2)

running=0 printed=0
: >"$log/.durations"
set -- $order
while [ $printed -lt $njobs ]; do
	while [ $running -lt $jobs ] && [ $# -gt 0 ]; do
		job_run "$1"
		shift
		running=$((running + 1))
	done
	next=$((printed + 1))
	for rc in "$log"/.jobs/*.rc; do
		[ -e "$rc" ] || continue
		n=$(basename "$rc" .rc)
		read -r status secs <"$rc"
		eval "job_rc_$n=\$status job_secs_$n=\$secs"
		rm -f "$rc" "$log/.jobs/$n.pid"
		running=$((running - 1))
	done
	progressed=
	while [ $next -le $njobs ] && eval "[ -n \"\${job_rc_$next:-}\" ]"; do
		eval "count \"\$job_name_$next\" \"\$job_out_$next\" \$job_rc_$next \$job_secs_$next"
		eval "echo \"\$job_secs_$next \$job_name_$next\"" >>"$log/.durations"
		printed=$next next=$((next + 1)) progressed=1
	done
	[ -n "$progressed" ] || sleep 0.2
done
wait
trap - INT TERM HUP

[ -z "$stage" ] || rm -rf "$stage"
# a filtered run (T=...) keeps the other jobs' times of the last full run
if [ -z "${T:-}" ]; then
	sort -k1,1nr "$log/.durations" >"$durations"
fi
rm -rf "$log/.jobs" "$log/.durations"

if [ -s "$log/skipped" ]; then
	echo "skipped:"
	sed 's/^/  /' "$log/skipped"
fi
# the failures again, last, so that a log cut to its tail still names them
if [ -s "$log/failed" ]; then
	echo "failed:"
	sed 's/^/  /' "$log/failed"
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
