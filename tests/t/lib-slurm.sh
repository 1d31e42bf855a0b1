# lib-slurm.sh - a one-node Slurm cluster on localhost for a test (sourced
# after test-lib.sh).  Everything lives under DIR: a munge key made at random,
# munged's socket, a generated slurm.conf (this host as controller and only
# node, its address 127.0.0.1, two free ports), the state, spool, logs and
# pid files.  The daemons run in the foreground (-F, -D) as children of the
# test and are stopped by their pids.  Needs root and Debian's slurm-wlm and
# munge; every wait is bounded.
#
# start_slurm DIR   start munged, slurmctld and slurmd; wait (at most 60 s)
#                   until the node takes jobs; exports SLURM_CONF; fails,
#                   with the daemons' logs, when the cluster does not come up
# stop_slurm        stop what start_slurm started (safe to call twice)
# wait_slurm_job ID SECONDS   wait until job ID has ended; prints its state

slurm_pids=""

# A TCP port nothing listens on, from a range that depends on this process.
slurm_free_port() {
	p=$((20000 + ($$ * 7 + $1) % 20000))
	for i in $(seq 1 50); do
		ss -Hltn "sport = :$p" 2>/dev/null | grep -q . || { echo "$p"; return 0; }
		p=$((p + 1))
	done
	return 1
}

slurm_logs() {
	for f in "$slurm_dir"/munged.log "$slurm_dir"/slurmctld.log "$slurm_dir"/slurmd.log; do
		[ -f "$f" ] && { echo "== $f"; tail -20 "$f"; }
	done
	return 0
}

start_slurm() {
	slurm_dir=$1
	host=$(hostname -s)
	mkdir -p "$slurm_dir/state" "$slurm_dir/spool" &&
	chmod 700 "$slurm_dir" &&
	dd if=/dev/urandom of="$slurm_dir/munge.key" bs=1024 count=1 2>/dev/null &&
	chmod 400 "$slurm_dir/munge.key" || return 1
	munged -F --force --key-file="$slurm_dir/munge.key" --socket="$slurm_dir/munge.sock" \
		--log-file="$slurm_dir/munged.log" --pid-file="$slurm_dir/munged.pid" \
		--seed-file="$slurm_dir/munged.seed" >/dev/null 2>&1 &
	slurm_pids="$!"
	for i in $(seq 1 100); do
		[ -S "$slurm_dir/munge.sock" ] && break
		sleep 0.1
	done
	[ -S "$slurm_dir/munge.sock" ] || { echo "munged did not start" >&2; slurm_logs >&2; return 1; }
	ctld_port=$(slurm_free_port 0) && slurmd_port=$(slurm_free_port 1) || return 1
	[ "$ctld_port" != "$slurmd_port" ] || slurmd_port=$((slurmd_port + 1))
	node=$(slurmd -C | head -1 | sed 's/ RealMemory=.*//')
	cat >"$slurm_dir/slurm.conf" <<EOF2
ClusterName=sluicetest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
AuthInfo=socket=$slurm_dir/munge.sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$slurm_dir/state
SlurmdSpoolDir=$slurm_dir/spool
SlurmctldPidFile=$slurm_dir/slurmctld.pid
SlurmdPidFile=$slurm_dir/slurmd.pid
SlurmctldLogFile=$slurm_dir/slurmctld.log
SlurmdLogFile=$slurm_dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MinJobAge=3600
$node NodeAddr=127.0.0.1 RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF2
	export SLURM_CONF="$slurm_dir/slurm.conf"
	slurmctld -D -i -f "$SLURM_CONF" >"$slurm_dir/slurmctld.out" 2>&1 &
	slurm_pids="$slurm_pids $!"
	slurmd -D -f "$SLURM_CONF" >"$slurm_dir/slurmd.out" 2>&1 &
	slurm_pids="$slurm_pids $!"
	for i in $(seq 1 600); do
		state=$(sinfo -h -o %T 2>/dev/null | head -1)
		case $state in idle*|mixed*|alloc*) return 0 ;; esac
		sleep 0.1
	done
	echo "the Slurm node did not come up (state '$state')" >&2
	slurm_logs >&2
	return 1
}

stop_slurm() {
	for p in $slurm_pids; do kill "$p" 2>/dev/null; done
	for p in $slurm_pids; do
		for i in $(seq 1 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$p" 2>/dev/null
	done
	slurm_pids=""
	return 0
}

wait_slurm_job() {
	for i in $(seq 1 $(($2 * 2))); do
		state=$(scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | sort -u | tr '\n' ' ')
		case $state in
		*PENDING*|*RUNNING*|*CONFIGURING*|*COMPLETING*|"") ;;
		*) echo "$state"; return 0 ;;
		esac
		sleep 0.5
	done
	echo "job $1 did not end in $2 s (state '$state')" >&2
	return 1
}
