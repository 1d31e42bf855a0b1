#!/bin/sh
# run-fuzz.sh FUZZ_BUILD SECONDS [NAME...] - run each libFuzzer harness for
# SECONDS (make fuzz; FUZZ_SECONDS=30 by default).
#
# Each harness FUZZ_BUILD/fuzz_NAME starts from a corpus seeded with the
# files tests/fuzz/seeds names for it and with tests/fuzz/regress/NAME/,
# kept in FUZZ_BUILD/corpus/NAME between runs.  A crash, leak or timeout is
# written to FUZZ_BUILD/crash/NAME/ (emptied when the harness starts); copy
# it to tests/fuzz/regress/NAME/ once fixed, so `make test` replays it for
# ever.  Exits 1 if any harness found something.
set -u
FUZZ_BUILD=$1
SECONDS_EACH=$2
shift 2
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 2
found=0
names=${*:-$(for f in "$FUZZ_BUILD"/fuzz_*; do case $f in *.d) ;; *) [ -x "$f" ] && echo "${f##*/fuzz_}" ;; esac; done)}
for name in $names; do
	bin=$FUZZ_BUILD/fuzz_$name
	[ -x "$bin" ] || { echo "run-fuzz: no harness $bin" >&2; exit 2; }
	corpus=$FUZZ_BUILD/corpus/$name
	seed=$FUZZ_BUILD/seed/$name
	crash=$FUZZ_BUILD/crash/$name
	rm -rf "$seed" "$crash" && mkdir -p "$corpus" "$seed" "$crash" || exit 2
	for f in $(sed -n "s/^$name  *//p" tests/fuzz/seeds) tests/fuzz/regress/$name/*; do
		[ -f "$f" ] && cp "$f" "$seed/$(echo "$f" | tr / _)"
	done
	echo "fuzz_$name: $(ls "$seed" | wc -l) seeds, $SECONDS_EACH s"
	LSAN_OPTIONS="suppressions=$top/tests/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}" \
	TMPDIR=${TMPDIR:-/tmp} "$bin" -max_total_time="$SECONDS_EACH" -timeout=25 \
		-rss_limit_mb=2560 -max_len=65536 -print_final_stats=1 \
		-artifact_prefix="$crash/" "$corpus" "$seed" >"$FUZZ_BUILD/$name.log" 2>&1
	rc=$?
	grep -E '^stat::number_of_executed_units|^#[0-9]+.*DONE' "$FUZZ_BUILD/$name.log" | tail -n 2 | sed 's/^/  /'
	if [ $rc != 0 ] || [ -n "$(ls "$crash")" ]; then
		found=1
		echo "fuzz_$name: FOUND (exit $rc): see $FUZZ_BUILD/$name.log and $crash/"
	fi
done
exit $found
