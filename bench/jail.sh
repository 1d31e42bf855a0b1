#!/bin/sh
# bench/jail.sh [N] - spawn latency of the jail vs bubblewrap (see bench/jail.c).
# Run by hand after `make`; builds build/bench/jail against build/libsluice.a.
exec sh "$(dirname "$0")/run-c.sh" jail "${1:-200}"
