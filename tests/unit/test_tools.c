/*
 * test_tools.c - validators/tools: the programs a gate command names (the
 * first word of each simple command), and the warm base's reasons to be
 * prepared again (validators.h, sl_gating_warm_why).
 */
#include <string.h>

#include "validators/tools.h"
#include "validators/validators.h"
#include "unit.h"

static char *words_of(const char *command)
{
	sl_strvec w = SL_STRVEC_INIT;
	sl_buf b = SL_BUF_INIT;

	sl_tools_of_command(&w, command);
	for (size_t i = 0; i < w.n; i++)
		sl_buf_addf(&b, "%s%s", i ? " " : "", w.v[i]);
	sl_strvec_release(&w);
	return sl_buf_detach(&b, NULL);
}

#define CHECK_WORDS(cmd, want) do { char *got_ = words_of(cmd); CHECK_STR(got_, want); \
	free(got_); } while (0)

static void test_first_words(void)
{
	CHECK_WORDS("make -j2 && make check 2>&1 | tail -n 5", "make tail");
	CHECK_WORDS("CFLAGS=-O0 make; ./configure && cc -o x x.c", "make cc");
	CHECK_WORDS("cd src && python3 -m pytest -q || exit 1", "python3");
	CHECK_WORDS("if test -f x; then gcc x.c; fi # comment | awk", "gcc");
	CHECK_WORDS("2>&1 cmake . ; >log ninja; env A=1 node t.js", "cmake ninja node");
	CHECK_WORDS("\"$CC\" x.c; `which cc`; /usr/bin/clang x.c; 'g++' y.cc", "/usr/bin/clang g++");
	CHECK_WORDS("(cppcheck --quiet src/) & wait", "cppcheck");
	CHECK_WORDS("", "");
}

static void test_warm_why(void)
{
	const char *old = "base a\nunsafe 0\ntool cc /usr/bin/cc /usr/bin/gcc-12 10 1.0\n"
		"tool jq -\ngate build 11\ngate conf 22\n";
	sl_buf why = SL_BUF_INIT;

	sl_gating_warm_why(old, old, &why);
	CHECK_STR(why.buf, "");
	sl_gating_warm_why(old, "base a\nunsafe 0\ntool cc /usr/bin/cc /usr/bin/gcc-12 10 2.0\n"
			   "tool jq -\ngate build 12\ngate conf 22\n", &why);
	CHECK_STR(why.buf, "/usr/bin/cc changed, the gate 'build' changed");
	sl_buf_reset(&why);
	sl_gating_warm_why(old, "base b\nunsafe 0\ntool cc /usr/bin/cc /usr/bin/gcc-12 10 1.0\n"
			   "tool jq /usr/bin/jq /usr/bin/jq 5 1.0\ntool make /usr/bin/make "
			   "/usr/bin/make 3 1.0\ngate build 11\n", &why);
	CHECK_STR(why.buf, "the base commit changed, /usr/bin/jq appeared, the gates run "
		  "/usr/bin/make now and 1 more");
	sl_buf_release(&why);
}

int main(void)
{
	RUN(test_first_words);
	RUN(test_warm_why);
	return unit_done();
}
