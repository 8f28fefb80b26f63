#!/usr/bin/env bash
# A real one-node Slurm on localhost runs configs/sweeps/sweep.sbatch (README, "Sweeps on a cluster";
# run by .ci/run): munged, slurmctld and slurmd are started here with their own key, socket, ports,
# state and logs under a temporary directory, and stopped again (by the process ids they wrote) however
# the script ends.  Checks:
#  - the job array (one task per shard) and its dependent merge job write the bytes
#    `smsim sweep -j 1` writes in the same run, and the picture `smsim sweep --svg` draws;
#  - one shard rerun alone (--array=2 with N given) and merged again gives those bytes again;
#  - a shard that fails leaves the merge job cancelled and no merged table.
# Ends with "slurm_sweep: N passed, N failed, N skipped".  When Slurm cannot start here (not root,
# packages missing, a daemon that does not come up), it says why and counts as skipped, not passed.
# Needs Debian's slurm-wlm and munge.  Usage: tests/slurm_sweep.sh [SMSIM]
set -u
smsim=$(realpath "${1:-build/smsim}")
cd "$(dirname "$0")/.."
passed=0
failed=0
tmp=
skip() { # why, on one line; the daemons' logs follow it
	echo "SKIPPED: slurm_sweep: $*"
	[ -n "$tmp" ] && logs
	echo "slurm_sweep: $passed passed, $failed failed, 1 skipped"
	exit 0
}
oneline() { tr -s '\n' ' ' <"$1" | cut -c1-300; } # a daemon's complaint, for a skip's reason
check() { # name, then a command that succeeds when the check passes
	local name=$1
	shift
	if "$@"; then
		echo "ok: $name"
		passed=$((passed + 1))
	else
		echo "FAILED: $name"
		failed=$((failed + 1))
	fi
}

[ "$(id -u)" = 0 ] || skip "slurmd and munged must be started as root here"
for b in munged munge unmunge slurmctld slurmd sbatch sinfo scontrol squeue; do
	command -v "$b" >/dev/null 2>&1 || skip "$b is not installed (Debian packages slurm-wlm and munge)"
done

tmp=$(mktemp -d /tmp/smsim-slurm.XXXXXX)
chmod 755 "$tmp"
mkdir -p "$tmp/munge" "$tmp/state" "$tmp/spool" "$tmp/out" "$tmp/bad"

# Stops a daemon by the pid it wrote: TERM, then KILL after 10 s.
stop() { # pidfile
	local pid
	pid=$(cat "$1" 2>/dev/null) || return 0
	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
	kill -TERM "$pid" 2>/dev/null
	for _ in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null
}
cleanup() {
	# jobs still queued or running would outlive slurmd's shutdown as stray processes
	[ -f "$tmp/slurmctld.pid" ] && scancel --quiet --user=root 2>/dev/null
	stop "$tmp/slurmd.pid"
	stop "$tmp/slurmctld.pid"
	stop "$tmp/munge/munged.pid"
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP

logs() { # the end of each daemon's log, for the reason of a skip or failure
	for f in "$tmp/munge/munged.log" "$tmp/slurmctld.log" "$tmp/slurmd.log"; do
		[ -s "$f" ] && { echo "--- $f"; tail -n 8 "$f"; }
	done
}

# munge: its own key and socket, so a system munged (if any) is left alone.
dd if=/dev/urandom of="$tmp/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$tmp/munge/munge.key"
socket=$tmp/munge/munge.socket
munged --force --key-file="$tmp/munge/munge.key" --socket="$socket" --pid-file="$tmp/munge/munged.pid" \
	--log-file="$tmp/munge/munged.log" --seed-file="$tmp/munge/munged.seed" >"$tmp/munged.out" 2>&1 ||
	skip "munged did not start: $(oneline "$tmp/munged.out")"
munge -S "$socket" -n 2>/dev/null | unmunge -S "$socket" >/dev/null 2>&1 ||
	skip "munged started but does not answer on $socket"

host=$(hostname -s)
cpus=$(nproc)
port=$((20000 + $$ % 20000)) # slurmctld; slurmd takes the next one
export SLURM_CONF=$tmp/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=smsimtest
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
AuthInfo=socket=$socket
CredType=cred/munge
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MailProg=/bin/true
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=smsim Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF

slurmctld -i -f "$SLURM_CONF" >"$tmp/slurmctld.out" 2>&1 ||
	skip "slurmctld did not start: $(oneline "$tmp/slurmctld.out")"
slurmd -f "$SLURM_CONF" -N "$host" >"$tmp/slurmd.out" 2>&1 ||
	skip "slurmd did not start: $(oneline "$tmp/slurmd.out")"
state=
for _ in $(seq 60); do
	state=$(sinfo -h -N -n "$host" -o %T 2>/dev/null)
	[ "$state" = idle ] && break
	sleep 0.5
done
[ "$state" = idle ] || skip "node $host is \"${state:-unreachable}\" after 30 s, not idle"
echo "slurm_sweep: Slurm $(sinfo -V | cut -d' ' -f2) is up on $host with $cpus CPUs"

export SMSIM=$smsim
sweep=configs/sweeps/stages_by_compute.json
sweep_name=$(basename "$sweep" .json)

# Waits (up to 300 s) for a job to end and sets state to how it ended: COMPLETED, FAILED, CANCELLED, ...
# (in this shell, not a subshell, so that a signal's trap runs within one sleep).
wait_job() { # job id
	for _ in $(seq 600); do
		state=$(scontrol show job "$1" -o 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
		case $state in
		PENDING | CONFIGURING | RUNNING | COMPLETING | REQUEUED | RESIZING | SUSPENDED | "") sleep 0.5 ;;
		*) return ;;
		esac
	done
	state="still ${state:-unknown} after 300 s"
}
# Array then merge, as the README has it; state is the merge job's final state.
array_then_merge() { # sweep, out, shards
	local jid mid
	state="not submitted"
	jid=$(sbatch --parsable --array=0-$(($3 - 1)) -o "$2/%A_%a.log" configs/sweeps/sweep.sbatch "$1" "$2") &&
		mid=$(sbatch --parsable --dependency=afterok:"$jid" -o "$2/merge.log" configs/sweeps/sweep.sbatch \
			--merge "$1" "$2") &&
		wait_job "$mid"
	echo "merge job: $state"
}
# Shard 2 rerun alone (its part lost), N given as sweep.sbatch's third argument, then the merge again.
rerun_one_shard() {
	local jid mid
	rm -f "$tmp/out/parts/2.csv" "$tmp/out/$sweep_name.csv"
	state="not submitted"
	jid=$(sbatch --parsable --array=2 -o "$tmp/out/%A_%a.log" configs/sweeps/sweep.sbatch "$sweep" "$tmp/out" 4) &&
		mid=$(sbatch --parsable --dependency=afterok:"$jid" -o "$tmp/out/merge.log" configs/sweeps/sweep.sbatch \
			--merge "$sweep" "$tmp/out") &&
		wait_job "$mid"
	echo "merge job: $state"
	[ "$state" = COMPLETED ] && cmp "$tmp/out/$sweep_name.csv" "$tmp/whole.csv"
}
same_as_sweep() {
	"$smsim" sweep "$sweep" -j 1 --svg "$tmp/whole.svg" >"$tmp/whole.csv" &&
		array_then_merge "$sweep" "$tmp/out" 4 && [ "$state" = COMPLETED ] &&
		[ "$(ls "$tmp/out/parts" | wc -l)" = 4 ] &&
		cmp "$tmp/out/$sweep_name.csv" "$tmp/whole.csv" && cmp "$tmp/out/$sweep_name.svg" "$tmp/whole.svg"
}
# A sweep whose odd runs are bad input (k = "x"): with two shards, shard 1 fails.
failed_shard_stops_merge() {
	cat >"$tmp/broken.json" <<EOF
{"sweep": "broken", "experiment": "$PWD/configs/experiments/with_staging_unified.json",
 "set": {"batch_sz": 4}, "vary": {"stages": [1, 2], "k": [0, "x"]}}
EOF
	array_then_merge "$tmp/broken.json" "$tmp/bad" 2 && [ "$state" = CANCELLED ] &&
		[ -s "$tmp/bad/parts/0.csv" ] && [ ! -e "$tmp/bad/parts/1.csv" ] && [ ! -e "$tmp/bad/broken.csv" ]
}
check "Slurm job array of 4 shards + dependent merge = sweep -j 1 (CSV and SVG): $sweep" same_as_sweep
check "Slurm: one shard rerun alone (--array=2, N given) and merged again = sweep -j 1" rerun_one_shard
check "Slurm: a failed shard cancels the merge job, no merged table" failed_shard_stops_merge
if [ "$failed" != 0 ]; then
	logs
	for f in "$tmp"/out/*.log "$tmp"/bad/*.log; do [ -s "$f" ] && { echo "--- $f"; tail -n 5 "$f"; }; done
fi
echo "slurm_sweep: $passed passed, $failed failed, 0 skipped"
[ "$failed" = 0 ]
