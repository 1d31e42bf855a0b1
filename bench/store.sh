#!/bin/sh
# bench/store.sh [K] - store write transactions from 1, 2, 4, 8 threads (see bench/store.c).
# Run by hand after `make`; builds build/bench/store against build/libsluice.a.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
PKGS="libgit2 tree-sitter libcurl jansson sqlite3 yaml-0.1 libseccomp libxml-2.0"
mkdir -p build/bench
${CC:-cc} -std=c11 -D_GNU_SOURCE -O2 -I. $(pkg-config --cflags $PKGS) \
	-o build/bench/store bench/store.c build/libsluice.a $(pkg-config --libs $PKGS) -lpthread
exec build/bench/store "${1:-500}"
