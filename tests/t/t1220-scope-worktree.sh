#!/bin/sh
# t1220-scope-worktree.sh - scoping reads a file the index shows clean from
# the work tree (scoping/worktree.h) and gets the commit's targets all the
# same: an edit, even one that keeps the size and the mtime, a checkout
# conversion (eol=crlf), core.autocrlf, a filter driver and an older --rev
# all send scoping back to the blob.  Files are dated 2001 before they are
# added, so no index entry is racy whatever the clock does.

test_description='sluice scope: clean files from the work tree'
. ./test-lib.sh

Q='((call_expression function: (identifier) @fn) @call (#eq? @fn "strcpy"))'

# scope REPO [ARGS...]: the targets as JSON, then the stats, into out / stats
scope() {
	r=$1; shift
	sluice scope --repo "$r" --lang c --query "$Q" --json "$@" >out &&
	sluice scope --repo "$r" --lang c --query "$Q" --stats "$@" >stats &&
	SLUICE_SCOPE_NO_WORKTREE=1 sluice scope --repo "$r" --lang c --query "$Q" --json "$@" >blobs &&
	SLUICE_SCOPE_NO_WORKTREE=1 sluice scope --repo "$r" --lang c --query "$Q" --stats "$@" >stats.blobs &&
	grep -x "read from the work tree: 0" stats.blobs
}

test_expect_success 'setup' '
	mkdir -p repo/src &&
	printf "void f(char *a, char *b)\n{\n\tstrcpy(a, b);\n}\n" >repo/src/a.c &&
	printf "void g(char *a, char *b)\n{\n\tstrcpy(b, a);\n\tstrcpy(a, b);\n}\n" >repo/src/b.c &&
	printf "int h(void)\n{\n\treturn 0;\n}\n" >repo/src/c.c &&
	touch -d @1000000000 repo/src/a.c repo/src/b.c repo/src/c.c &&
	make_repo repo
'

test_expect_success 'clean files are read from the work tree, same targets' '
	scope repo &&
	grep -x "read from the work tree: 3" stats &&
	test "$(wc -l <out)" -eq 3 &&
	test_cmp blobs out
'

test_expect_success 'an edit of the same size and mtime is read from the blob' '
	cp out committed &&
	sed -i "s/strcpy(a, b)/strcat(a, b)/" repo/src/a.c &&
	touch -d @1000000000 repo/src/a.c &&
	scope repo &&
	grep -x "read from the work tree: 2" stats &&
	test_cmp committed out &&
	test_cmp blobs out
'

test_expect_success 'an edit of another size is read from the blob' '
	printf "void k(void) { strcpy(m, n); }\n" >>repo/src/b.c &&
	touch -d @1000000000 repo/src/b.c &&
	scope repo &&
	grep -x "read from the work tree: 1" stats &&
	test_cmp committed out
'

test_expect_success 'an older revision: files whose blob the index does not hold' '
	(cd repo && git checkout -q -- . && touch -d @1000000000 src/a.c src/b.c &&
	 git update-index -q --refresh &&
	 printf "void z(char *a) { strcpy(a, a); }\n" >src/d.c && touch -d @1000000000 src/d.c &&
	 git add src/d.c && sed -i "s/strcpy(b, a)/strcat(b, a)/" src/b.c &&
	 touch -d @1000000001 src/b.c && git commit -q -am second) &&
	scope repo &&
	grep -x "read from the work tree: 4" stats &&
	test_cmp blobs out &&
	scope repo --rev HEAD~1 &&
	grep -x "read from the work tree: 2" stats &&
	test_cmp committed out &&
	test_cmp blobs out
'

test_expect_success 'a checkout that converts end of lines: read from the blob' '
	(cd repo && printf "src/a.c text eol=crlf\n" >.gitattributes && git add .gitattributes &&
	 git commit -q -m attributes && rm src/a.c && git checkout -- src/a.c &&
	 touch -d @1000000000 src/a.c && git update-index -q --refresh) &&
	grep -q "$(printf "\r")" repo/src/a.c &&
	git -C repo diff --quiet &&
	scope repo &&
	grep -x "read from the work tree: 3" stats &&
	test_cmp blobs out
'

test_expect_success 'an untracked .gitattributes converted the checkout: read from the blob' '
	mkdir -p repo2/sub &&
	printf "void f(char *a, char *b)\n{\n\tstrcpy(a, b);\n}\n" >repo2/sub/a.c &&
	printf "void g(char *a, char *b)\n{\n\tstrcpy(b, a);\n}\n" >repo2/b.c &&
	touch -d @1000000000 repo2/sub/a.c repo2/b.c &&
	make_repo repo2 &&
	(cd repo2 && printf "a.c text eol=crlf\n" >sub/.gitattributes && rm sub/a.c &&
	 git checkout -- sub/a.c && touch -d @1000000000 sub/a.c && git update-index -q --refresh) &&
	grep -q "$(printf "\r")" repo2/sub/a.c &&
	scope repo2 &&
	grep -x "read from the work tree: 1" stats &&
	test_cmp blobs out
'

test_expect_success 'core.autocrlf or a filter driver: every file from its blob' '
	git -C repo config core.autocrlf input &&
	scope repo &&
	grep -x "read from the work tree: 0" stats &&
	test_cmp blobs out &&
	git -C repo config --unset core.autocrlf &&
	git -C repo config filter.up.smudge "tr a-z A-Z" &&
	scope repo &&
	grep -x "read from the work tree: 0" stats &&
	test_cmp blobs out &&
	git -C repo config --unset filter.up.smudge &&
	scope repo &&
	grep -x "read from the work tree: 3" stats
'

test_done
