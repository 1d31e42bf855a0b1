#!/bin/sh
# install-deps.sh - install what sluice needs to build, test and run its demo,
# and only what is missing.
#
# Debian packages (apt-get, as root or through sudo) and the pinned tree-sitter
# grammars (npm ci from package-lock.json into node_modules/; only their
# generated C sources are used, no install scripts run).  Safe to run again:
# when everything is present it does nothing and prints nothing.  With
# WITH_CLANG=1 (make fuzz sets it when clang is missing) clang is added.
# With --check nothing is installed: it names what is missing and exits 1
# (a plain `make` uses it; `make deps`, `make test` and `make demo` install).
set -eu
check=0
[ "${1:-}" = --check ] && check=1
cd "$(dirname "$0")/.."

PKGS="build-essential pkg-config git ca-certificates
libgit2-dev libtree-sitter-dev libcurl4-openssl-dev libjansson-dev
libsqlite3-dev libyaml-dev libseccomp-dev libxml2-dev zlib1g-dev libxml2-utils
libmicrohttpd-dev python3-prometheus-client
nodejs npm sqlite3 bubblewrap ripgrep iproute2 procps util-linux
chromium cppcheck coccinelle python3-yaml slurm-wlm munge"

# clang (libFuzzer) only for `make fuzz`, which sets WITH_CLANG=1
[ "${WITH_CLANG:-}" = 1 ] && PKGS="$PKGS clang"

missing=""
for p in $PKGS; do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$st" = installed ] || missing="$missing $p"
done
# node and npm may come from elsewhere (nodesource, nvm): accept them on PATH
if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
	missing=$(printf '%s\n' $missing | grep -vx -e nodejs -e npm | tr '\n' ' ' || true)
fi
missing=$(echo $missing)

if [ "$check" = 1 ]; then
	bad=0
	[ -z "$missing" ] || { echo "missing Debian packages: $missing" >&2; bad=1; }
fi
if [ "$check" = 0 ] && [ -n "$missing" ]; then
	echo "install-deps: installing Debian packages: $missing" >&2
	if [ "$(id -u)" = 0 ]; then SUDO=""; elif command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
		echo "install-deps: need root or sudo to install: $missing" >&2
		exit 2
	fi
	export DEBIAN_FRONTEND=noninteractive
	$SUDO apt-get update -qq >/dev/null || $SUDO apt-get update
	# shellcheck disable=SC2086
	$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null ||
		$SUDO apt-get install -y --no-install-recommends $missing
fi

# The grammars: reinstall when node_modules does not match package-lock.json.
need_npm=0
for g in $(sed -n 's/.*"tree-sitter-\([a-z]*\)": "[0-9.]*".*/\1/p' package.json); do
	want=$(sed -n "s/.*\"tree-sitter-$g\": \"\([0-9.]*\)\".*/\1/p" package.json | head -n 1)
	have=$(sed -n 's/^ *"version": "\([0-9.]*\)".*/\1/p' \
		"node_modules/tree-sitter-$g/package.json" 2>/dev/null | head -n 1)
	[ -n "$want" ] && [ "$want" = "$have" ] || need_npm=1
done
if [ "$check" = 1 ]; then
	[ "$need_npm" = 0 ] || { echo "missing the pinned tree-sitter grammars (node_modules/)" >&2; bad=1; }
	exit "$bad"
fi
if [ "$need_npm" = 1 ]; then
	echo "install-deps: installing pinned tree-sitter grammars (npm ci)" >&2
	npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null
fi
exit 0
