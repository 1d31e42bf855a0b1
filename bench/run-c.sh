#!/bin/sh
# bench/run-c.sh NAME [ARGS...] - build bench/NAME.c against build/libsluice.a
# into build/bench/NAME and run it with ARGS.  Run by hand after `make`.
# BENCH_SRCS: library sources compiled again into it (ahead of the library),
# BENCH_CFLAGS: flags for them (e.g. a bench-only -D).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
name=$1
shift
PKGS="libgit2 tree-sitter libcurl jansson sqlite3 yaml-0.1 libseccomp libxml-2.0"
mkdir -p build/bench
${CC:-cc} -std=c11 -D_GNU_SOURCE -O2 -I. $(pkg-config --cflags $PKGS) ${BENCH_CFLAGS:-} \
	-o "build/bench/$name" "bench/$name.c" ${BENCH_SRCS:-} build/libsluice.a $(pkg-config --libs $PKGS) -lpthread
exec "build/bench/$name" "$@"
