# lib-act.sh - the fixture of the generate: act tests (t2400, t2410; sourced
# after lib-campaign.sh).

# act_repo DIR: a small C project, not yet committed.  src/calc.c calls
# old_api, which is to become new_api, declared in src/api.h, which calc.c
# does not include yet: the build fails on an undeclared function
# (-Werror=implicit-function-declaration); `make test` checks the output.
act_repo() {
	mkdir -p "$1/src" &&
	printf "%s\n" "CFLAGS := -O0 -Werror=implicit-function-declaration" \
		"prog: src/calc.o src/api.o" "	\$(CC) -o \$@ src/calc.o src/api.o" \
		"test: prog" "	./prog | grep -qx 6" >"$1/Makefile" &&
	printf "%s\n" "int new_api(int x);" "int old_api(int x);" >"$1/src/api.h" &&
	printf "%s\n" "int new_api(int x) { return x; }" "int old_api(int x) { return x; }" >"$1/src/api.c" &&
	printf "%s\n" "#include <stdio.h>" "int old_api(int x);" "int main(void)" "{" \
		"printf(\"%d\\n\", old_api(3) * 2);" "return 0;" "}" >"$1/src/calc.c"
}

# reply DIR K TEXT...: step K of the scripted model (tests/fixtures/act/model.sh)
# in DIR replies with one fenced command, the lines TEXT
reply() {
	d=$1 k=$2
	shift 2
	mkdir -p "$d" &&
	{ echo "cat <<\\END_OF_REPLY"; echo "Step $k."; echo "\`\`\`sh"; printf "%s\n" "$@"; echo "\`\`\`"; echo "END_OF_REPLY"; } >"$d/$k"
}

# act_yaml NAME: the head of a campaign on act_repo's repo (name, repository,
# scratch, targets: the calls of old_api, instructions)
act_yaml() {
	printf "%s\n" "name: $1" "repository: repo" "scratch: $TRASH/scratch" "targets:" \
		"  language: c" "  paths: [\"src/*.c\"]" \
		"  query: \"((call_expression function: (identifier) @fn) @call (#eq? @fn \\\"old_api\\\"))\"" \
		"  capture: call" "instructions: \"Replace old_api with new_api.\""
}

# act_session_yaml NAME TEST: act_yaml NAME, then a one-attempt session
# whose gates are `make` (preparing) and the command TEST
act_session_yaml() {
	act_yaml "$1" &&
	printf "%s\n" "generate: act" "attempts: 1" "gates:" \
		"  - {name: build, command: \"make 2>&1\", prepare: true}" \
		"  - {name: test, command: \"$2\"}"
}

# campaign FILE DIR [yaml...]: base.yaml with the scripted model in DIR
# (tests/fixtures/act/model.sh) and the lines yaml...
campaign() {
	f=$1 d=$2
	shift 2
	cp base.yaml "$f" &&
	echo "provider: {kind: command, command: \"ACT_DIR=$TRASH/$d ACT_LOG=$TRASH/$d.log sh $FIXTURES/act/model.sh\"}" >>"$f" &&
	for extra in "$@"; do printf "%s\n" "$extra" >>"$f"; done
}
