#!/bin/sh
test_description='threats on the network: TCP, UDP and abstract Unix sockets of the host'
. ./test-lib.sh

mkdir work
cp "$SLUICE_BUILD/tests/helper/threat" work/threat

# start_peer KIND [NAME]: a host listener (threat peer-*) in the background,
# its port (or "ready") in ready.$KIND, what it received in got.$KIND.
start_peer() {
	rm -f "ready.$1"
	if test "$1" = abstract; then
		threat peer-abstract "$2" "ready.$1" 3 >"got.$1" &
	else
		threat "peer-$1" "ready.$1" 3 >"got.$1" &
	fi
	i=0
	while test ! -s "ready.$1" && test $i -lt 1200; do sleep 0.05; i=$((i + 1)); done
	test -s "ready.$1"
}

test_expect_success 'TCP to a host listener fails inside, the listener gets nothing' '
	start_peer tcp && port=$(cat ready.tcp) &&
	jail-run work "./threat connect-tcp $port;
		bash -c \"echo x >/dev/tcp/127.0.0.1/$port\" 2>/dev/null && echo bash-ok; true" >out &&
	wait &&
	echo "tcp denied: EAFNOSUPPORT" >expect && test_cmp expect out &&
	echo nothing >expect && test_cmp expect got.tcp
'

test_expect_success 'even with IPv4 allowed, the jail has its own loopback only' '
	start_peer tcp && port=$(cat ready.tcp) &&
	jail-run --allow-inet 1 work "./threat connect-tcp $port" >out &&
	wait &&
	echo "tcp denied: ECONNREFUSED" >expect && test_cmp expect out &&
	echo nothing >expect && test_cmp expect got.tcp
'

test_expect_success 'UDP to a host listener fails inside, the listener gets nothing' '
	start_peer udp && port=$(cat ready.udp) &&
	jail-run work "./threat send-udp $port" >out &&
	jail-run --allow-inet 1 work "./threat send-udp $port" >>out &&
	wait &&
	cat out &&
	grep -x "udp denied: EAFNOSUPPORT" out &&
	echo nothing >expect && test_cmp expect got.udp
'

test_expect_success 'a host abstract Unix socket is unreachable' '
	name=sluice-t4210-$$ &&
	start_peer abstract $name &&
	jail-run work "./threat connect-abstract $name" >out &&
	wait &&
	echo "abstract denied: ECONNREFUSED" >expect && test_cmp expect out &&
	echo nothing >expect && test_cmp expect got.abstract
'

test_expect_success 'the peers do work from the host (the test can fail)' '
	start_peer tcp && port=$(cat ready.tcp) &&
	./work/threat connect-tcp $port >out && wait &&
	echo "got from-jail" >expect && test_cmp expect got.tcp
'

test_done
