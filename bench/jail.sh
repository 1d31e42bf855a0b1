#!/bin/sh
# bench/jail.sh [N] - spawn latency of the jail vs bubblewrap (see bench/jail.c).
# Run by hand after `make`; builds build/bench/jail against build/libsluice.a,
# with validators/jail.c compiled again for its bench-only step times.
BENCH_SRCS="validators/jail.c" BENCH_CFLAGS="-DSL_JAIL_STEPS"
export BENCH_SRCS BENCH_CFLAGS
exec sh "$(dirname "$0")/run-c.sh" jail "${1:-200}"
