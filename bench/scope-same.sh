#!/bin/sh
# bench/scope-same.sh TREE - run by hand (never by make test): for twenty-two
# C queries (keywords, literals, comments, strings, preprocessor nodes,
# argument lists), the targets sluice finds in TREE (a git repository) with
# its prefilter and parsing item by item or statement by statement
# (scoping/items.c), compared byte for byte with those of parsing every
# whole file (--no-prefilter).  Prints per query SAME or
# DIFF (with how many targets only one side found), the number of targets
# and the files parsed in part; exits 1 on any DIFF.  SLUICE=path checks another build.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SLUICE=${SLUICE:-"$ROOT/build/sluice"}
[ $# -eq 1 ] && git -C "$1" rev-parse -q --verify HEAD >/dev/null ||
	{ echo "usage: bench/scope-same.sh TREE (a git repository)" >&2; exit 2; }
work=$(mktemp -d) || exit 2
trap 'rm -rf "$work"' EXIT
n=0 same=0
while IFS= read -r q; do
	n=$((n + 1))
	"$SLUICE" scope --repo "$1" --lang c --query "$q" --json --no-prefilter >"$work/whole" || exit 2
	"$SLUICE" scope --repo "$1" --lang c --query "$q" --json --stats >"$work/items" || exit 2
	part=$(sed -n 's/.*"parsed_in_part":\([0-9]*\).*/\1/p' "$work/items")
	grep -v '"stats"' "$work/items" >"$work/targets"
	if cmp -s "$work/whole" "$work/targets"; then
		r=SAME same=$((same + 1))
	else
		# how many targets only one side has
		r="DIFF ($(sort "$work/whole" >"$work/w"; sort "$work/targets" >"$work/t"
			comm -23 "$work/w" "$work/t" | wc -l) only whole, $(comm -13 "$work/w" "$work/t" | wc -l) only in part)"
	fi
	printf '%s %6d targets, %4d files in part  %s\n' "$r" "$(wc -l <"$work/whole")" "$part" "$q"
done <<'Q'
(function_definition body: (compound_statement (for_statement) @for))
((call_expression function: (identifier) @fn) @call (#eq? @fn "strcpy"))
((call_expression function: (identifier) @fn) @call (#match? @fn "^(memcpy|free|xfree)$"))
(while_statement) @w
(goto_statement (statement_identifier) @l)
((struct_specifier name: (type_identifier) @n) @s (#eq? @n "strbuf"))
(switch_statement body: (compound_statement (case_statement) @c))
(return_statement (call_expression) @c)
((comment) @c (#match? @c "TODO"))
((string_literal) @s (#match? @s "for"))
((comment) @c (#match? @c "Copyright"))
(preproc_def) @d
((preproc_include) @i (#match? @i "stdio"))
((identifier) @i (#eq? @i "GIT_VERSION"))
(do_statement) @d
(sizeof_expression) @s
(call_expression arguments: (argument_list . (_) . (_) . (_) .)) @call
(call_expression arguments: (argument_list . (_) . (_) .)) @call
(argument_list (_) (_) (_) (_) (_)) @a
((call_expression function: (identifier) @fn arguments: (argument_list (_) (_))) @c (#eq? @fn "memcpy"))
((identifier) @i (#eq? @i "the_repository"))
((string_literal) @s (#match? @s "%s"))
Q
echo "$same of $n queries: same targets"
[ "$same" = "$n" ]
