#!/bin/sh
# check-layout.sh [TOP] - the dependency rules between folders
# (docs/ARCHITECTURE.md, "Which folder may include which"), read off the
# #include "..." lines of the library and the command-line program under TOP
# (default: this checkout).  Prints one line per broken rule,
# "FILE:LINE: FOLDER may not include HEADER (why)", and exits 1 if any.
#
# Folders, innermost first; each may include its own headers and those of
# the folders listed after "<-" in the table below.  Also:
#   - outside validators/, only validators/validators.h (the front door);
#   - a header named *_internal.h (storage/store_internal.h,
#     pipeline/run/run_internal.h, ...) only inside its own folder;
#   - pipeline/apply/ may take the edit type (pipeline/generate/edit.h) and
#     nothing else of generation;
#   - pipeline/review/ may take the campaign (pipeline/spec.h) and the
#     apply stage (branches, commits), nothing else of pipeline/;
#   - pipeline/spec/ (the campaign loader) fills pipeline/spec.h and may
#     take generation's enums (edit formats, providers);
#   - an include names its folder ("common/buf.h"), never a bare file name.
#
# And states are types (docs/ARCHITECTURE.md, "States and names"): no
# strcmp (strncmp, strcasecmp) against the name of a state, outcome,
# verdict, decision, pull-request state, gate kind, report format or
# fail_on level outside the files that read text from outside: storage/
# (SQL rows), pipeline/spec/ (the campaign file), pipeline/review/forge_*.c
# (each forge's JSON, with GitLab's "opened"), validators/findings.c and
# validators/findings_json.c (SARIF and gcc's JSON).  The names are read
# off the name tables ("static const char *const X_names[...] = {") of
# NAME_TABLES; one line per comparison, "FILE:LINE: strcmp on the name
# "open" ...".
#
# And no file under pipeline/ is over 1,200 lines, no function there over
# 100 ("FILE:LINE: function of N lines ..."; docs/ARCHITECTURE.md).
#
# And the library never prints (docs/ARCHITECTURE.md, "Progress and
# printing"): outside pipeline/cli/, no code names stdout or stderr, writes
# to descriptor 1 or 2, or calls printf, vprintf, puts, putchar or perror;
# progress and notices go through the callbacks of the options.  The one
# exception is common/util.c, whose BUG() and out-of-memory exit print
# their last words.  String literals and comments are not code; one line
# per call, "FILE:LINE: the library prints ...".
#
# And no include circles: in the #include "..." graph of the library and
# the command-line program, no file outside common/ reaches itself again
# (a header that includes a header that includes it).  One line per circle,
# "include circle: A -> B -> A", started at its first file by name.
set -u
top=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$top" || exit 2

NAME_TABLES="storage/store.c storage/review_store.c validators/gating.c"
NAME_BOUNDARY="storage/ pipeline/spec/ pipeline/review/forge_github.c
pipeline/review/forge_gitlab.c validators/findings.c validators/findings_json.c"

# The names in every name table, one a line.
table_names() {
	for f in $NAME_TABLES; do
		awk '/^static const char \*const [a-z_]*_names\[[A-Za-z_]*\] = \{/ { on = 1 }
		     on { print }
		     on && /^\};/ { on = 0 }' "$f"
	done | grep -o '"[a-z][a-z_-]*"' | tr -d '"' | sort -u
	echo opened
}

# 0 if file is one of the boundary's files or under one of its folders.
at_boundary() {
	for b in $NAME_BOUNDARY; do
		case $b in
		*/) case $1 in "$b"*) return 0 ;; esac ;;
		*) [ "$1" = "$b" ] && return 0 ;;
		esac
	done
	return 1
}

check_names() {
	[ "$(table_names | wc -l)" -ge 20 ] || {
		echo "check-layout.sh: cannot read the name tables of $NAME_TABLES"
		return 1
	}
	names=$(table_names | tr '\n' '|' | sed 's/|$//')
	cmp="str(n|case|ncase)?cmp[[:space:]]*\\(([^;\"]*,[[:space:]]*)?\"($names)\"[[:space:]]*[,)]"
	found=$(find common storage scoping validators pipeline -name '*.[ch]' | sort |
		while read -r f; do
			at_boundary "$f" || grep -nE "$cmp" "$f" /dev/null
		done)
	[ -z "$found" ] && return 0
	echo "$found" | while IFS=: read -r f line text; do
		name=$(echo "$text" | grep -oE "\"($names)\"" | head -n 1)
		echo "$f:$line: strcmp on the name $name outside the SQL and JSON boundary:" \
		     "compare the enum (docs/ARCHITECTURE.md)"
	done
	return 1
}

# The library's lines of code that print, as FILE:LINE:TEXT: string
# literals and comments blanked first.
library_prints() {
	find common storage scoping validators pipeline -name '*.[ch]' | sort |
	while read -r f; do
		case $f in pipeline/cli/*|common/util.c) continue ;; esac
		sed -e 's/"\([^"\\]\|\\.\)*"/""/g' -e 's|/\*.*\*/||g' -e 's|//.*||' \
		    -e 's|^[[:space:]]*/\*.*||' -e 's|^[[:space:]]*\*.*||' "$f" |
		grep -nE '\bstd(out|err)\b|\bSTD(OUT|ERR)_FILENO\b|\b(printf|vprintf|puts|putchar|perror)[[:space:]]*\(|\b(write|dprintf)[[:space:]]*\([[:space:]]*[12][[:space:]]*,' |
		sed "s|^|$f:|"
	done
}

check_prints() {
	found=$(library_prints)
	[ -z "$found" ] && return 0
	echo "$found" | while IFS=: read -r f line text; do
		echo "$f:$line: the library prints; report through the options' callback" \
		     "(docs/ARCHITECTURE.md)"
	done
	return 1
}

# Every circle of the include graph, one a line "A -> B -> A"; files of
# common/ are left out (nothing outside common/ is included from there).
include_cycles() {
	find storage scoping validators pipeline -name '*.[ch]' | sort |
	while read -r f; do
		sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" |
		sed "s|^|$f |"
	done | awk '
	$2 !~ /^common\// && !(($1, $2) in edge) {
		edge[$1, $2] = 1
		out[$1] = out[$1] " " $2
		node[$1] = 1
		node[$2] = 1
	}
	function visit(v,   n, i, w, k, s, j, c) {
		state[v] = 1
		stack[++depth] = v
		n = split(out[v], w, " ")
		for (i = 1; i <= n; i++) {
			if (state[w[i]] == 1) {
				# back to a file on the stack: the circle from it to v
				for (k = depth; stack[k] != w[i]; k--)
					;
				s = k
				for (j = k; j <= depth; j++)
					if (stack[j] < stack[s])
						s = j
				c = ""
				for (j = s; j <= depth; j++)
					c = c stack[j] " -> "
				for (j = k; j < s; j++)
					c = c stack[j] " -> "
				c = c stack[s]
				if (!(c in seen))
					print c
				seen[c] = 1
			} else if (!state[w[i]]) {
				visit(w[i])
			}
		}
		depth--
		state[v] = 2
	}
	END {
		for (v in node)
			if (!state[v])
				visit(v)
	}' | sort
}

check_include_cycles() {
	found=$(include_cycles)
	[ -z "$found" ] && return 0
	echo "$found" | while read -r circle; do
		echo "include circle: $circle (docs/ARCHITECTURE.md)"
	done
	return 1
}

# No file under pipeline/ over MAX_FILE_LINES lines, no function there over
# MAX_FN_LINES (a function: from a "{" in column 0 to the next "}" in column 0).
MAX_FILE_LINES=1200
MAX_FN_LINES=100
check_sizes() {
	found=$(find pipeline -name '*.[ch]' | sort | while read -r f; do
		awk -v f="$f" -v maxf=$MAX_FILE_LINES -v maxfn=$MAX_FN_LINES '
		/^\{/ { s = NR; name = prev }
		/^\}/ { if (s && NR - s > maxfn)
				print f ":" s ": function of " NR - s " lines (at most " maxfn "): " name
			 s = 0 }
		{ prev = $0 }
		END { if (NR > maxf) print f ":" NR ": file of " NR " lines (at most " maxf ")" }' "$f"
	done)
	[ -z "$found" ] && return 0
	echo "$found"
	return 1
}

# A struct field that holds an enum is typed as its enum, so -Wswitch sees
# it: refuse "int x; /* enum sl_... */" and "int x; /* SL_FOO_* */".
check_enum_fields() {
	found=$(find common storage scoping validators pipeline -name '*.[ch]' | sort |
		xargs grep -nE '^[[:space:]]+(unsigned |signed )?int [a-z_]+;[[:space:]]*/\*[[:space:]]*(enum sl_|SL_[A-Z_]+_\*)' /dev/null)
	[ -z "$found" ] && return 0
	echo "$found" | sed 's/^\([^:]*:[0-9]*\):.*/\1: a field that holds an enum is declared int (type it as the enum)/'
	return 1
}

status=0
check_names || status=1
check_prints || status=1
check_include_cycles || status=1
check_sizes || status=1
check_enum_fields || status=1

find common storage scoping validators pipeline -name '*.[ch]' | sort |
while read -r f; do
	grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
	sed 's/^\([0-9]*\):.*"\([^"]*\)".*/\1 \2/' |
	while read -r line inc; do
		echo "$f $line $inc"
	done
done | awk '
function folder(path,   d) {
	d = path
	sub(/\/[^\/]*$/, "", d)
	if (d == path)
		return ""
	return d
}
BEGIN {
	allow["common"] = ""
	allow["storage"] = "common"
	allow["scoping"] = "common storage"
	allow["validators"] = "common storage scoping"
	allow["pipeline/http"] = "common"
	allow["pipeline/generate"] = "common storage scoping validators pipeline/http"
	allow["pipeline/apply"] = "common storage scoping validators"
	allow["pipeline/spec"] = "common storage scoping validators pipeline/generate"
	allow["pipeline/review"] = "common storage scoping validators pipeline/http pipeline/apply"
	allow["pipeline"] = "common storage scoping validators pipeline/http pipeline/generate pipeline/apply pipeline/review"
	allow["pipeline/run"] = "common storage scoping validators pipeline/http pipeline/generate pipeline/apply pipeline/review pipeline"
	allow["pipeline/cli"] = "common storage scoping validators pipeline pipeline/http pipeline/generate pipeline/apply pipeline/review"
	bad = 0
}
{
	file = $1; line = $2; inc = $3
	from = folder(file); to = folder(inc)
	where = file ":" line ": "
	if (to == "") {
		print where "#include \"" inc "\" does not name its folder"
		bad++
		next
	}
	if (!(from in allow)) {
		print where "folder " from " is not in the dependency rules"
		bad++
		next
	}
	if (to != from) {
		ok = 0
		n = split(allow[from], a, " ")
		for (i = 1; i <= n; i++)
			if (a[i] == to)
				ok = 1
		if (from == "pipeline/apply" && inc == "pipeline/generate/edit.h")
			ok = 1
		if ((from == "pipeline/review" || from == "pipeline/spec") && inc == "pipeline/spec.h")
			ok = 1
		if (!ok) {
			print where from " may not include " inc " (docs/ARCHITECTURE.md)"
			bad++
		}
	}
	if (to == "validators" && from != "validators" && inc != "validators/validators.h") {
		print where "outside validators/ include validators/validators.h, not " inc
		bad++
	}
	# a header X_internal.h is shared by the files of its own folder only
	if (inc ~ /_internal\.h$/ && from != to) {
		print where inc " is private to " to "/"
		bad++
	}
}
END { exit bad ? 1 : 0 }
' || status=1
exit $status
