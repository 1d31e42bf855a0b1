#!/bin/sh
# bench/tests.sh [N] - comparing test reports, indexed vs linear (see bench/tests.c).
# Run by hand after `make`; builds build/bench/tests against build/libsluice.a.
exec sh "$(dirname "$0")/run-c.sh" tests "${1:-20000}"
