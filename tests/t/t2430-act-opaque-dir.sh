#!/bin/sh
test_description='generate: act: a directory a session deleted and made again deletes the base'"'"'s files it no longer holds'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"
. "$TEST_DIRECTORY/lib-act.sh"

# The fixture of t2400 (lib-act.sh) with a nested src/sub/deep.c.  A
# command that removes src and makes it again leaves an opaque directory in
# the session's layer (user.overlay.opaque): the base's files below it that
# the new directory does not hold are deleted by the candidate, those it
# holds again are compared with the base, and the rest of the tree is kept.
test_expect_success 'setup' '
	act_repo repo &&
	mkdir repo/src/sub repo/docs &&
	echo "int deep(void) { return 1; }" >repo/src/sub/deep.c &&
	echo notes >repo/docs/notes.txt &&
	make_repo repo &&
	act_yaml act >base.yaml &&
	sed -i "s|\"src/\\*.c\"|\"src/**\"|" base.yaml &&
	cat >>base.yaml <<-EOF
	generate: act
	attempts: 1
	gates:
	  - {name: files, command: "ls src"}
	EOF
'

# diffs_of STORE: each file of the candidate's diff, "new", "deleted" or "changed"
diffs_of() {
	store_query "$1" "select diff from candidates" | awk '
		/^diff --git / { if (f) print f, k; f = substr($4, 3); k = "changed" }
		/^new file mode/ { k = "new" }
		/^deleted file mode/ { k = "deleted" }
		END { if (f) print f, k }' | sort
}

test_expect_success 'rm -rf src && mkdir src: the base'"'"'s other src files are deleted' '
	reply m1 1 "cp src/api.h /tmp/api.h && rm -rf src && mkdir src && cp /tmp/api.h src/api.h && echo \"int main(void) { return 0; }\" >src/new.c && ls -R src" &&
	reply m1 2 submit &&
	campaign c1.yaml m1 &&
	sluice run --store s1.db c1.yaml >out 2>err &&
	grep -q "proposed  *1" out &&
	diffs_of s1.db >actual &&
	printf "%s\n" "src/api.c deleted" "src/calc.c deleted" "src/new.c new" \
		"src/sub/deep.c deleted" >expect &&
	test_cmp expect actual
'

test_expect_success 'a subdirectory made again: only its files are deleted, its siblings kept' '
	reply m2 1 "rm -rf src/sub && mkdir src/sub && echo \"int x;\" >src/sub/new.c && sed -i \"s/old_api(3)/new_api(3)/\" src/calc.c" &&
	reply m2 2 submit &&
	campaign c2.yaml m2 &&
	sluice run --store s2.db c2.yaml >out 2>err &&
	grep -q "proposed  *1" out &&
	diffs_of s2.db >actual &&
	printf "%s\n" "src/calc.c changed" "src/sub/deep.c deleted" "src/sub/new.c new" >expect &&
	test_cmp expect actual
'

test_done
