#!/bin/sh
# check-options-docs.sh SLUICE [TOP] - the options each command documents
# are the options its table (pipeline/cli/cmd_*.c) parses.
#
# The tables are read from `SLUICE help --dump-options` ("CMD --NAME ARG" a
# line); the documents from TOP (default: this checkout):
#   - docs/sluice.1, COMMANDS: the option list of each command (the
#     ".B \-\-NAME \fIARG\fR" tags inside its .RS block) must be the table,
#     name and argument; the command's synopsis line names no other option;
#   - README.md, "Commands": the first cell of a command's rows
#     ("| `sluice CMD ...`") must name every option of the table, with its
#     argument, and no other;
#   - `SLUICE CMD --help`: the usage lines name no option the table lacks.
# --help and --version (read by the dispatcher) are left out.  Prints one
# line per difference, "FILE: CMD: --NAME ARG is missing" or "... is not an
# option of CMD", and exits 1 if any.
set -u
export LC_ALL=C
sluice=$1
top=${2:-$(cd "$(dirname "$0")/.." && pwd)}
man=$top/docs/sluice.1
readme=$top/README.md
for f in "$man" "$readme"; do
	[ -f "$f" ] || { echo "check-options-docs.sh: no file '$f'"; exit 2; }
done
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

"$sluice" help --dump-options | sort -u >"$tmp/table" || {
	echo "check-options-docs.sh: '$sluice help --dump-options' failed"
	exit 2
}
[ -s "$tmp/table" ] || { echo "check-options-docs.sh: no option in the tables"; exit 2; }
cut -d' ' -f1 "$tmp/table" | sort -u >"$tmp/commands"
"$sluice" help | sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p' >"$tmp/all-commands"

# "CMD TEXT" lines in, "CMD --NAME ARG" lines out (ARG: an upper-case word).
options_of() {
	while read -r cmd text; do
		printf '%s\n' "$text" | grep -oE -- '--[a-z][a-z-]*( [A-Z][A-Za-z0-9_=:|/]*)?' |
			sed "s/^/$cmd /"
	done | grep -vE '^[a-z-]+ --(help|version)( |$)' | sort -u
}

# troff to text: fonts, escaped hyphens and zero-width joiners go
man_text() {
	sed -e 's/\\f[BIRP]//g' -e 's/\\-/-/g' -e 's/\\&//g'
}

# docs/sluice.1: "CMD TAG" for each option tag, "CMD synopsis" lines apart
awk '
	/^\.SH / { in_cmds = ($2 == "COMMANDS"); next }
	!in_cmds { next }
	/^\.RS/ { depth++; next }
	/^\.RE/ { depth--; next }
	/^\.TP/ { tag = 1; next }
	tag && depth == 0 && /^\.B / { cmd = $2; sub(/\\f.*$/, "", cmd); sub(/,$/, "", cmd);
		print "S " cmd " " $0 }
	tag && depth > 0 && /^\.B / { print "O " cmd " " $0 }
	{ tag = 0 }
' "$man" | man_text >"$tmp/man-lines"
sed -n 's/^O //p' "$tmp/man-lines" | options_of >"$tmp/man"
sed -n 's/^S //p' "$tmp/man-lines" | options_of >"$tmp/man-synopsis"

# README.md: the first cell of each "| `sluice CMD" row of the command table
awk '
	/^## Commands/ { on = 1; next }
	/^## / { on = 0 }
	on && /^\| `sluice [a-z]/ {
		line = $0; gsub(/\\\|/, "\001", line)
		n = split(line, cell, "|"); c = cell[2]; gsub("\001", "|", c)
		split(c, w, " "); cmd = w[2]; sub(/[^a-z-].*$/, "", cmd)
		print cmd " " c
	}
' "$readme" | options_of >"$tmp/readme"

# each command's usage lines, up to the first blank line of its help
while read -r cmd; do
	"$sluice" help "$cmd" | sed '/^$/q' | sed "s/^/$cmd /"
done <"$tmp/all-commands" | options_of >"$tmp/usage"

status=0
# report FILE WHAT: the lines of WHAT missing from the table, or (with
# "both") of the table missing from WHAT, for the commands WHAT documents
report() {
	file=$1 what=$2 both=$3
	comm -13 "$tmp/table" "$tmp/$what" | while read -r cmd opt; do
		echo "$file: $cmd: $opt is not an option of $cmd"
	done
	[ "$both" = both ] && comm -23 "$tmp/table" "$tmp/$what" | while read -r cmd opt; do
		echo "$file: $cmd: $opt is missing"
	done
}
{
	report docs/sluice.1 man both
	report "docs/sluice.1 (synopsis)" man-synopsis one
	report README.md readme both
	report "sluice help (usage lines)" usage one
} >"$tmp/out"
for cmd in $(cat "$tmp/all-commands"); do
	grep -q "^S $cmd " "$tmp/man-lines" ||
		echo "docs/sluice.1: $cmd: no entry in COMMANDS" >>"$tmp/out"
	grep -q "^| \`sluice $cmd[ \`]" "$readme" ||
		echo "README.md: $cmd: no row in the command table" >>"$tmp/out"
done
if [ -s "$tmp/out" ]; then
	cat "$tmp/out"
	status=1
fi
exit $status
