#!/bin/sh
# t1231-scope-startup.sh - what a scope pays before it scopes (issue 29: a
# re-scope after a one-file change under 20 ms, a third of it start-up):
# libmicrohttpd, and gnutls with the eight libraries it pulls in, are
# loaded only when `sluice serve` starts a server (dlopen), and libgit2
# built on mbedTLS does not parse the system's CA bundle when it starts,
# except for publish and sync, the commands that open connections.  The
# libraries are read off the dynamic loader's own trace (LD_DEBUG=files),
# the CA bundle off strace where it is installed.

test_description='sluice scope: start-up without the server and TLS libraries'
. ./test-lib.sh

test_lazy_prereq STRACE 'command -v strace'
# Debian's libgit2 reads the CA bundle at start-up only when built on mbedTLS
test_lazy_prereq MBEDTLS 'ldd "$SLUICE_BUILD/sluice" | grep -q libmbedtls'

Q='((call_expression function: (identifier) @fn) @call (#eq? @fn "strcpy"))'

test_expect_success 'setup' '
	mkdir -p repo &&
	printf "void f(char *a, char *b)\n{\n\tstrcpy(a, b);\n}\n" >repo/f.c &&
	make_repo repo
'

test_expect_success 'a scope loads neither libmicrohttpd nor gnutls' '
	LD_DEBUG=files sluice scope --repo repo --lang c --query "$Q" >out 2>trace &&
	grep "^f.c:3:" out &&
	grep "file=libgit2" trace &&
	! grep -e "file=libmicrohttpd" -e "file=libgnutls" trace
'

test_expect_success 'serve loads libmicrohttpd when it starts a server' '
	sluice scope --repo repo --lang c --query "$Q" --cache c.db >/dev/null &&
	(LD_DEBUG=files sluice serve --store c.db --listen 127.0.0.1:0 >url 2>trace &
	 echo $! >pid) &&
	i=0 && while ! grep -q "http://127.0.0.1:" url && [ $i -lt 600 ]; do
		sleep 0.1 && i=$((i + 1)) || return 1
	done &&
	kill "$(cat pid)" &&
	grep "http://127.0.0.1:[1-9]" url &&
	grep "file=libmicrohttpd.*dynamically loaded" trace
'

# LeakSanitizer cannot run under ptrace: a sanitizer build checks no leaks here
LSAN_OFF="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"

test_expect_success STRACE,MBEDTLS 'a scope does not read the CA bundle; sync does' '
	ASAN_OPTIONS=$LSAN_OFF strace -f -e trace=open,openat -o st.scope sluice scope --repo repo --lang c --query "$Q" >/dev/null &&
	grep "libgit2" st.scope &&
	! grep "/etc/ssl" st.scope &&
	{ ASAN_OPTIONS=$LSAN_OFF strace -f -e trace=open,openat -o st.sync sluice sync no-such.yaml 2>/dev/null || :; } &&
	grep "/etc/ssl/certs" st.sync
'

test_done
