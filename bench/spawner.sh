#!/bin/sh
# bench/spawner.sh [N] [MB] - a jail run from a big process, with and without
# the jail spawner (see bench/spawner.c).  Run by hand after `make`.
exec sh "$(dirname "$0")/run-c.sh" spawner "${1:-40}" "${2:-160}"
