#!/bin/sh
# bench/scale.sh - cost per target as a campaign grows (run by hand).
#
#   sh bench/scale.sh [BUILD]
#
# For each size N of SIZES (default "100 1000 10000 100000") it generates a
# repository of N/10 C files (10 functions each, 100 files per directory;
# past 100,000 targets, 100 such directories per directory),
# each function calling old_api() once, and runs a campaign with the rules
# provider (a rule rewrites the call; unit: function, so N targets):
#   - without gates: every target, the whole pipeline (scope, rule, apply,
#     commit, branch, store);
#   - with one trivial gate (`true`, jailed): every target when N is at most
#     GATED_MAX (default 1000), else the targets done within GATED_SECONDS
#     (default 60; the campaign's max_wall_time), which measures the cost per
#     target in a tree and a store of that size.
# Prints per run: targets done, milliseconds per target (the whole run's
# wall time over the targets done), the ratio to the same mode at the first
# size (the anchor, measured in the same run), the steady cost: milliseconds
# between the first and the last target proposed, per target (without the
# run's start - scoping every target, the warm base, the baselines - nor,
# past GATED_MAX, the end that marks the rest out of budget: what one more
# target costs in a tree and a store of that size) and its ratio to the
# anchor, store bytes per scoped target (the store holds every target, done
# or not), bytes added to the repository's .git per target done, and the
# run's peak RSS in MiB (from /usr/bin/time; "-" without it): a run reads its
# targets from the store a chunk at a time, so it should not grow with N.
#
# Environment: SIZES; WORK (default: a new directory under $TMPDIR or /tmp;
# the repositories and stores live there, so its file system is the one
# measured); SCRATCH (the campaigns' scratch root; default: sluice's own);
# GATED_MAX, GATED_SECONDS; MODES (default "0 1": without gates, with the
# trivial gate); RESUME=1: after each run, a second campaign with the same
# query on the same store (a row marked "*"): scoping answers every file
# from the scope cache, as a rerun or a resumed campaign does, and the new
# campaign's targets are recorded and worked on.  Everything is removed at
# the end.  Each run is followed by how long it took and the load.
#
# A million targets: SIZES="1000 1000000" MODES=0 WORK=/var/tmp (100,000
# files; about 1 GB in WORK; the run's log is not kept whole, only its
# first and last proposals and its end).
set -eu
BUILD=$(cd "${1:-build}" && pwd)
SIZES=${SIZES:-"100 1000 10000 100000"}
GATED_MAX=${GATED_MAX:-1000}
GATED_SECONDS=${GATED_SECONDS:-60}
[ -x "$BUILD/sluice" ] || { echo "bench/scale.sh: build sluice first (make)" >&2; exit 2; }
work=$(mktemp -d "${WORK:-${TMPDIR:-/tmp}}/sluice-bench-scale.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
cd "$work"
echo "work: $work ($(stat -f -c %T "$work")), scratch: ${SCRATCH:-sluice's default}"

now_ms() { date +%s%3N; }
# the run's log, each line after the wall clock in milliseconds: kept are
# the first and the last "proposed after" lines and the last 20 lines (a
# run of 1,000,000 targets logs about 3 lines a target)
stamp() {
	perl -MTime::HiRes=time -ne 'BEGIN { $|=1 } my $l = sprintf "%d %s", time * 1000, $_;
		if (/ proposed after /) { print $l unless $n++; $last = $l }
		push @t, $l; shift @t if @t > 20;
		END { print $last if $n > 1; print "proposed: ", $n + 0, "\n"; print "tail: $_" for @t }'
}
bytes() { du -sb "$1" | cut -f1; }

gen_repo() { # dir n
	mkdir -p "$1/src"
	awk -v dir="$1/src" -v n="$2" 'BEGIN {
		files = int((n + 9) / 10)
		for (f = 0; f < files; f++) {
			# past 10,000 files, two levels: a tree of 1,000 entries would
			# make each candidate 30 KB of trees
			d = files > 10000 ? dir "/d" int(f / 10000) "/d" (int(f / 100) % 100) : \
				dir "/d" int(f / 100)
			if (f % 100 == 0) system("mkdir -p " d)
			path = d "/f" f ".c"
			print "int old_api(int x);\nint new_api(int x);\n" > path
			for (i = 0; i < 10 && f * 10 + i < n; i++)
				printf "int f%d_%d(void)\n{\n\treturn old_api(%d);\n}\n\n", f, i, i > path
			close(path)
		}
	}'
	(cd "$1" && git init -q -b main && git add -A &&
		git -c gc.auto=0 -c user.name=b -c user.email=b@b commit -q -m base && git gc -q)
}

campaign() { # name repo gated n
	cat <<EOF
name: $1
repository: $2
${SCRATCH:+scratch: $SCRATCH}
targets:
  language: c
  query: "((call_expression function: (identifier) @fn arguments: (argument_list (_) @arg)) @call (#eq? @fn \"old_api\"))"
  capture: call
  unit: function
rules:
  - capture: call
    template: "new_api(\${arg})"
attempts: 1
EOF
	if [ "$3" = 1 ] && [ "$4" -gt "$GATED_MAX" ]; then
		cat <<EOF
budget:
  max_wall_time: $GATED_SECONDS
EOF
	fi
	if [ "$3" = 1 ]; then
		cat <<EOF
gates:
  - name: trivial
    command: "true"
EOF
	fi
}

anchors=
# measure NAME N GATED AGAIN: run campaign NAME on repo and s.db, print its row
# (AGAIN=1: a second campaign on the same store, its files scope-cache hits)
measure() {
	name=$1 n=$2 gated=$3 again=$4
	git0=$(bytes repo/.git)
	campaign "$name" "$work/repo" $gated "$n" >c.yaml
	t0=$(now_ms)
	rm -f rss.txt
	if [ -x /usr/bin/time ]; then
		{ /usr/bin/time -f %M -o rss.txt "$BUILD/sluice" run --store s.db c.yaml 2>&1 \
			>out.txt || true; } | stamp >err.txt
	else
		{ "$BUILD/sluice" run --store s.db c.yaml 2>&1 >out.txt || true; } | stamp >err.txt
	fi
	t1=$(now_ms)
	steady=$(awk '/^proposed: / { c = $2 } /^[0-9]+ .* proposed after / { if (!n++) f = $1; l = $1 }
		END { if (c > 1) printf "%.2f", (l - f) / (c - 1); else print 0 }' err.txt)
	done_n=$(sqlite3 s.db "select count(*) from targets t join campaigns c on c.id = t.campaign_id
		where c.name = '$name' and t.state = 'proposed'")
	if [ "$done_n" -eq 0 ]; then
		echo "bench/scale.sh: nothing proposed for N=$n gates=$gated again=$again:" >&2
		tail -5 err.txt >&2
		exit 1
	fi
	sqlite3 s.db "pragma wal_checkpoint(truncate)" >/dev/null
	store=$(bytes s.db)
	gitb=$(($(bytes repo/.git) - git0))
	ms=$(awk -v ms=$((t1 - t0)) -v n="$done_n" 'BEGIN { printf "%.2f", ms / n }')
	# the anchors: the first size's, per mode and run
	key="$gated.$again"
	a=$(echo "$anchors" | tr ' ' '\n' | awk -F= -v k="$key" '$1 == k { print $2 }')
	[ -n "$a" ] || { a="$ms,$steady"; anchors="$anchors $key=$a"; }
	rss=$(tail -1 rss.txt 2>/dev/null | awk '/^[0-9]+$/ { printf "%.0f", $1 / 1024 }')
	printf '%-8s %-10s %8s %10s %7.2fx %10s %7.2fx %12d %12d %8s\n' "$n" \
		"$([ $gated = 1 ] && echo trivial || echo none)$([ $again = 1 ] && echo '*')" \
		"$done_n" "$ms" "$(awk -v m="$ms" -v a="${a%,*}" 'BEGIN { print m / a }')" "$steady" \
		"$(awk -v m="$steady" -v a="${a#*,}" 'BEGIN { print (a > 0 ? m / a : 0) }')" \
		$((store / n)) $((gitb / done_n)) "${rss:--}"
	echo "         (run in $(((t1 - t0) / 1000)) s, load $(cut -d' ' -f1-3 /proc/loadavg))"
	if [ $gated = 1 ] && [ "$n" -gt "$GATED_MAX" ] && [ "$done_n" -lt "$n" ]; then
		echo "         (trivial gate: the first $done_n targets within ${GATED_SECONDS} s)"
	fi
}

printf '%-8s %-10s %8s %10s %8s %10s %8s %12s %12s %8s\n' targets gates done ms/target ratio \
	steady steady-x store-B/tgt git-B/tgt rss-MiB
for n in $SIZES; do
	for gated in ${MODES:-0 1}; do
		rm -rf repo s.db s.db-wal s.db-shm
		g0=$(now_ms)
		gen_repo repo "$n"
		g1=$(now_ms)
		echo "         (N=$n: repository generated in $(((g1 - g0) / 1000)) s)"
		measure "scale$n" "$n" $gated 0
		[ "${RESUME:-0}" = 1 ] && measure "scale${n}b" "$n" $gated 1
	done
done
if [ "${RESUME:-0}" = 1 ]; then
	echo "*: a second campaign of the same query on the same store: scoping answers every" \
		"file from the scope cache; store-B/tgt counts both campaigns"
fi
