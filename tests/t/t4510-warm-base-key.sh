#!/bin/sh
test_description='the warm base is keyed by the programs its gates run, not by whole folders, and a re-preparation says why'
. ./test-lib.sh
. "$TEST_DIRECTORY/lib-campaign.sh"

warm_dirs() {
	find "$TRASH/scratch/greet" -maxdepth 1 -name "warm-*" | sort
}

# The preparing gate names a program by its absolute path, outside any
# folder the old digest looked at; `true ||` never runs it.
test_expect_success 'setup: a preparing gate that names a program of its own' '
	greet_repo repo &&
	mkdir bin &&
	printf "#!/bin/sh\nexit 0\n" >bin/tool && chmod +x bin/tool &&
	write_campaign c.yaml &&
	sed -i "s|^  - name: build$|  - name: prep\n    command: \"true \|\| $TRASH/bin/tool --x; make -v >/dev/null\"\n    prepare: true\n  - name: build|" c.yaml &&
	grep -q "prepare: true" c.yaml &&
	sluice baseline --store s.db c.yaml >out 2>err &&
	test "$(warm_dirs | wc -l)" = 1
'

test_expect_success 'the key names each program the gates run, resolved on the jail PATH, with its size and mtime' '
	key=$(warm_dirs)/key &&
	grep -q "^tool $TRASH/bin/tool $TRASH/bin/tool $TRASH/bin/tool [0-9]* [0-9]*\.[0-9]*$" "$key" &&
	grep -q "^tool make /usr[a-z/]*/make /[^ ]*make [0-9]* [0-9.]*$" "$key" &&
	grep -q "^tool /bin/[a-z]*sh /bin/[a-z]*sh " "$key" &&
	grep -q "^gate prep [0-9a-f]\{64\}$" "$key" &&
	! grep -q "^tool true" "$key" &&
	! grep -q "^tool --x" "$key"
'

test_expect_success 'nothing the gates run changed: the warm base is reused' '
	sluice baseline --store s.db c.yaml >out 2>err &&
	grep -q "tree: warm base (overlay), reused" err &&
	! grep -q "prepared again" err &&
	test "$(warm_dirs | wc -l)" = 1
'

test_expect_success 'a program the gates run changed: prepared again, and the run says why' '
	touch -d "2001-01-01" bin/tool &&
	sluice baseline --store s.db c.yaml >out 2>err &&
	grep -q "^warm base: prepared again: $TRASH/bin/tool changed$" err &&
	test "$(warm_dirs | wc -l)" = 2
'

test_expect_success 'a changed preparing gate: prepared again, naming the gate' '
	sed -i "s|make -v >/dev/null|make -v >/dev/null 2>\&1|" c.yaml &&
	sluice baseline --store s.db c.yaml >out 2>err &&
	grep -q "^warm base: prepared again: the gate .prep. changed$" err &&
	test "$(warm_dirs | wc -l)" = 3
'

test_done
