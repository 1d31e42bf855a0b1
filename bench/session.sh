#!/bin/sh
# bench/session.sh [N] - where a generate: act step's time goes (see bench/session.c).
# Run by hand after `make`; builds build/bench/session against build/libsluice.a.
exec sh "$(dirname "$0")/run-c.sh" session "${1:-100}"
