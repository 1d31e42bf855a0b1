#!/bin/sh
test_description='Coccinelle rules: a semantic patch run by spatch in the jail rewrites a call inside a macro body that tree-sitter cannot see'
. ./test-lib.sh

test_lazy_prereq SPATCH 'command -v spatch'

test_expect_success 'setup: a macro whose body calls strcpy, the README campaign and semantic patch' '
	mkdir -p project/src &&
	cat >project/src/m.c <<-\EOF &&
	#include <string.h>

	#define COPY(d, s) strcpy(d, s)

	void a(char *d, char *s)
	{
		char buf[8];

		COPY(buf, s);
	}
	EOF
	make_repo project &&
	awk "/^# strlcpy-macros.yaml/ { on = 1 } on && /^\`\`\`$/ { exit } on" "$TEST_DIRECTORY/../../README.md" >strlcpy-macros.yaml &&
	awk "/^\/\/ strlcpy.cocci/ { on = 1; next } on && /^\`\`\`$/ { exit } on" "$TEST_DIRECTORY/../../README.md" >strlcpy.cocci &&
	grep -q "^  - cocci: strlcpy.cocci$" strlcpy-macros.yaml &&
	grep -q "^+ strlcpy(d, s, sizeof(d))$" strlcpy.cocci
'

test_expect_success 'tree-sitter cannot see the call: a literal without a match' '
	sluice scope --stats --repo project --lang c \
		--query "((call_expression function: (identifier) @fn) @call (#eq? @fn \"strcpy\"))" >stats &&
	grep -x "literal without match: 1" stats &&
	grep -x "  src/m.c" stats
'

test_expect_success SPATCH 'preview shows the semantic patch rewriting the macro body' '
	sluice preview strlcpy-macros.yaml >out 2>err &&
	cat >expect <<-\EOF &&
	src/m.c:3:1: rule 1 (strlcpy.cocci)
	--- a/src/m.c
	+++ b/src/m.c
	@@ -1,6 +1,6 @@
	 #include <string.h>
	 
	-#define COPY(d, s) strcpy(d, s)
	+#define COPY(d, s) strlcpy(d, s, sizeof(d))
	 
	 void a(char *d, char *s)
	 {
	1 site: 1 rewritten by rules, 0 unchanged, 0 for the model
	EOF
	test_cmp expect out &&
	! test -s err &&
	sluice preview --json strlcpy-macros.yaml >json &&
	grep -q "\"cocci\":\"[^\"]*strlcpy.cocci\"" json
'

test_expect_success SPATCH 'its output is a candidate like any rule'"'"'s: committed, checked, proposed' '
	sluice run --store s.db strlcpy-macros.yaml >out 2>&1 &&
	grep -q "^  proposed  *1" out &&
	test "$(sqlite3 s.db "select group_concat(gate || '"'"':'"'"' || verdict) from gate_runs")" = "syntax:pass,expect:pass" &&
	test "$(sqlite3 s.db "select source from attempts")" = rules &&
	git -C project show sluice/strlcpy-macros/src-m.c-L3:src/m.c >m.c &&
	grep -qx "#define COPY(d, s) strlcpy(d, s, sizeof(d))" m.c &&
	grep -qx "COPY(buf, s);" m.c
'

test_expect_success SPATCH 'a semantic patch that does not parse stops with spatch'"'"'s message' '
	printf "@@\n@@\n- foo(\n" >bad.cocci &&
	sed "s/strlcpy.cocci/bad.cocci/" strlcpy-macros.yaml >bad.yaml &&
	test_expect_code 2 sluice preview bad.yaml >out 2>err &&
	grep -q "^sluice: rule .*bad.cocci.: spatch failed: minus: parse error" err
'

test_expect_success 'a cocci rule is checked when the campaign loads' '
	sed "s/strlcpy.cocci/missing.cocci/" strlcpy-macros.yaml >missing.yaml &&
	test_expect_code 2 sluice preview missing.yaml 2>err &&
	grep -q "^sluice: missing.yaml:[0-9]*:[0-9]*: cannot read .*missing.cocci" err &&
	printf "    template: x\n" >>missing.yaml &&
	test_expect_code 2 sluice preview missing.yaml 2>err &&
	grep -q "missing.yaml:[0-9]*:[0-9]*: a rule with .cocci. takes no capture, template or where" err
'

test_done
