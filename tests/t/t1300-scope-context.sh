#!/bin/sh
# t1300-scope-context.sh - `sluice scope --context`: the unit, the function
# around a call, the file's includes, the definitions of the names the unit
# uses (functions by their signature; same file first, in order of first
# use, then other files, the unit's directory first), cut to
# a token budget of bytes/4; targets named by index or PATH:LINE, ad hoc and
# with a campaign file.

test_description='sluice scope --context'
. ./test-lib.sh

Q='((call_expression function: (identifier) @fn) @call (#eq? @fn "strcpy"))'

test_expect_success 'setup' '
	mkdir -p repo/src repo/lib &&
	cat >repo/src/a.c <<-\EOF &&
	#include <string.h>
	#include "u.h"

	struct buf { char d[8]; };

	static int helper(int v)
	{
		return v * 2;
	}

	void f(struct buf *b, char *s)
	{
		u_fn(1);
		strcpy(b->d, s);
		helper(3);
	}
	EOF
	printf "int u_fn(int x);\n" >repo/src/u.h &&
	printf "int u_fn(int x)\n{\n    return x;\n}\n" >repo/lib/u.c &&
	printf "int unrelated(void) { return 0; }\n" >repo/lib/z.c &&
	make_repo repo
'

test_expect_success 'the context of a function, ranked' '
	sluice scope --repo repo --lang c --query "$Q" --unit function --context 1 >ctx &&
	cat >expect <<-\EOF &&
	### unit src/a.c:11-16 (function)
	void f(struct buf *b, char *s)
	{
		u_fn(1);
		strcpy(b->d, s);
		helper(3);
	}
	### imports of src/a.c
	#include <string.h>
	#include "u.h"
	### definition of buf (src/a.c:4)
	struct buf { char d[8]; }
	### definition of helper (src/a.c:6)
	static int helper(int v);
	### definition of u_fn (src/u.h:1)
	int u_fn(int x);
	EOF
	test_cmp expect ctx
'

test_expect_success 'a call: its enclosing function, the types of its parameters, not their names elsewhere' '
	printf "int s;\n" >>repo/lib/z.c &&
	git -C repo add . && git -C repo commit -q -m s &&
	sluice scope --repo repo --lang c --query "$Q" --capture call --context 1 >call &&
	cat >expect <<-\EOF &&
	### unit src/a.c:14-14 (capture)
	strcpy(b->d, s)
	### enclosing function src/a.c:11-16
	void f(struct buf *b, char *s)
	{
		u_fn(1);
		strcpy(b->d, s);
		helper(3);
	}
	### imports of src/a.c
	#include <string.h>
	#include "u.h"
	### definition of buf (src/a.c:4)
	struct buf { char d[8]; }
	EOF
	test_cmp expect call
'

test_expect_success 'PATH:LINE names the same target' '
	sluice scope --repo repo --lang c --query "$Q" --unit function --context src/a.c:14 >ctx2 &&
	test_cmp ctx ctx2 &&
	test_expect_code 2 sluice scope --repo repo --lang c --query "$Q" --context src/a.c:2 &&
	test_expect_code 2 sluice scope --repo repo --lang c --query "$Q" --context 9
'

test_expect_success 'the budget cuts lower-ranked sections first' '
	sluice scope --repo repo --lang c --query "$Q" --unit function --context 1 --budget 60 >b60 &&
	test $(wc -c <b60) -le 240 &&
	grep "^### unit" b60 && grep "^### imports" b60 &&
	! grep "lib/u.c" b60 &&
	sluice scope --repo repo --lang c --query "$Q" --unit function --context 1 --budget 1000 >b1000 &&
	test_cmp ctx b1000
'

test_expect_success 'a unit over the budget is cut at a line' '
	sluice scope --repo repo --lang c --query "$Q" --unit function --context 1 --budget 26 >b20 &&
	test $(wc -c <b20) -le 104 &&
	head -1 b20 | grep "^### unit src/a.c:11-16" &&
	grep -x "void f(struct buf \*b, char \*s)" b20 &&
	tail -1 b20 | grep "truncated to the token budget"
'

test_expect_success 'with a campaign file' '
	cat >c.yaml <<-\EOF &&
	name: ctx
	repository: repo
	targets:
	  language: c
	  query: |
	    ((call_expression function: (identifier) @fn) @call
	     (#eq? @fn "strcpy"))
	  capture: call
	  unit: function
	rules:
	  - capture: fn
	    template: safe_strcpy
	EOF
	sluice scope c.yaml --context 1 >ctx3 &&
	test_cmp ctx ctx3
'

test_done
