#!/bin/sh
# bench/jail.sh [N] - spawn latency of the jail vs bubblewrap (see bench/jail.c).
# Run by hand after `make`; builds build/bench/jail against build/libsluice.a.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
PKGS="libgit2 tree-sitter libcurl jansson sqlite3 yaml-0.1 libseccomp libxml-2.0"
mkdir -p build/bench
# validators/jail.c again, with its bench-only step times (see bench/jail.c)
${CC:-cc} -std=c11 -D_GNU_SOURCE -O2 -I. $(pkg-config --cflags $PKGS) -DSL_JAIL_STEPS \
	-o build/bench/jail bench/jail.c validators/jail.c build/libsluice.a \
	$(pkg-config --libs $PKGS) -lpthread
exec build/bench/jail "${1:-200}"
