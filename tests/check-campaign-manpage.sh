#!/bin/sh
# check-campaign-manpage.sh [MANPAGE [LOADER-DIR]] - the keys of the campaign
# file documented in sluice-campaign(5) (default docs/sluice-campaign.5) are
# the keys the loader knows (default pipeline/spec/), section by section.
#
# The loader's keys are read off its key tables: in each file of LOADER-DIR,
# "static const char *const SECTION_keys[] = { "a", "b", ..., NULL };"
# (root_keys is the top level).  The man page's: a section starts at a
# '.\" keys: SECTION' line and ends at the next .SH or .SS; its keys are the
# first word of the line after each .TP.  Prints one line per difference,
# "sluice-campaign.5: key 'K' of SECTION is ...", and exits 1 if any.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
man=${1:-$top/docs/sluice-campaign.5}
dir=${2:-$top/pipeline/spec}
tmp=${TMPDIR:-/tmp}/check-campaign-manpage.$$
trap 'rm -f "$tmp".*' EXIT

# "SECTION KEY" for every key of every table, sorted.
cat "$dir"/*.c 2>/dev/null | awk '
	/static const char \*const [a-z]+_keys\[\] = \{/ {
		on = 1
		sec = $0
		sub(/.*static const char \*const /, "", sec)
		sub(/_keys\[\].*/, "", sec)
	}
	on {
		line = $0
		while (match(line, /"[^"]*"/)) {
			print sec, substr(line, RSTART + 1, RLENGTH - 2)
			line = substr(line, RSTART + RLENGTH)
		}
	}
	on && /NULL \};/ { on = 0 }' | sort -u >"$tmp.loader"

awk '
	/^\.S[HS]/ { sec = "" }
	/^\.\\" keys: / { sec = $3 }
	/^\.TP/ { tp = 1; next }
	tp && sec != "" {
		key = $2
		gsub(/"/, "", key)
		gsub(/\\f[BIRP]/, "", key)
		print sec, key
	}
	{ tp = 0 }' "$man" | sort -u >"$tmp.man"

if [ "$(wc -l <"$tmp.loader")" -lt 50 ]; then
	echo "check-campaign-manpage.sh: cannot read the key tables in $dir"
	exit 1
fi
name=$(basename "$man")
status=0
comm -23 "$tmp.loader" "$tmp.man" | while read -r sec key; do
	echo "$name: key '$key' of $sec is in the loader ($dir) but not documented"
done | grep . && status=1
comm -13 "$tmp.loader" "$tmp.man" | while read -r sec key; do
	echo "$name: key '$key' of $sec is documented but the loader does not know it"
done | grep . && status=1
exit $status
