#!/usr/bin/env bash
# Shards of the shipped sweeps run through GNU parallel, merged, must be the bytes `smsim sweep -j 1`
# writes in the same run (README, "Sweeps on a cluster"; run by .ci/run):
#  - on this machine, each shard into its own part file (--csv);
#  - on this machine, every shard's stdout collected into one stream (parallel's --group), as over ssh;
#  - with --sshlogin over two "hosts", through a stand-in ssh that runs parallel's remote command on
#    this machine (no sshd needed; what it exercises is the recipe's remote form: the command line
#    travelling as a string to a remote shell, --workdir, the parts returning on stdout).
# Prints one line per check and ends with "parallel_sweep: N passed, N failed, N skipped"; a check
# that cannot run here (GNU parallel missing) says why and counts as skipped, not as passed.
set -u
smsim=$(realpath "${1:-build/smsim}")
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
skipped=0
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

if ! command -v parallel >/dev/null 2>&1 || ! parallel --version 2>/dev/null | grep -q '^GNU parallel'; then
	echo "SKIPPED: parallel_sweep: GNU parallel is not installed (Debian package parallel)"
	echo "parallel_sweep: 0 passed, 0 failed, 1 skipped"
	exit 0
fi

# A stand-in for ssh: "ssh HOST [--] COMMAND..." runs COMMAND in a shell here, as sshd would there.
cat >"$tmp/ssh" <<'EOF'
#!/bin/sh
while [ $# -gt 0 ]; do
	case $1 in
	-[lpoi]) shift 2 ;;
	-*) shift ;;
	*) break ;;
	esac
done
echo "$1" >>"$(dirname "$0")/hosts"
shift
[ "${1:-}" = -- ] && shift
exec sh -c "$*"
EOF
chmod +x "$tmp/ssh"

# parallel's citation notice stays off (it would wait for input on a terminal).
mkdir -p "$tmp/home/.parallel"
touch "$tmp/home/.parallel/will-cite"
export HOME=$tmp/home
# parallel quotes the command it sends to a remote host for the shell $SHELL names; with SHELL unset
# (a CI runner's or cron's bare environment) it quoted for none and every remote shard printed
# nothing, though parallel exited 0.
export SHELL=${SHELL:-/bin/sh}

files_merge() { # sweep, shards
	local sweep=$1 n=$2 dir=$tmp/files-$(basename "$1" .json)-$2
	mkdir -p "$dir"
	parallel --halt now,fail=1 "$smsim" sweep "$sweep" --shard {}/"$n" --csv "$dir"/{}.csv ::: $(seq 0 $((n - 1))) &&
		"$smsim" merge "$dir"/*.csv --csv "$dir/merged.csv" &&
		cmp "$dir/merged.csv" "$tmp/whole.csv"
}
stream_merge() { # sweep, shards
	local sweep=$1 n=$2 out=$tmp/stream.csv
	parallel --halt now,fail=1 "$smsim" sweep "$sweep" --shard {}/"$n" ::: $(seq 0 $((n - 1))) >"$out" &&
		"$smsim" merge "$out" >"$tmp/stream-merged.csv" &&
		cmp "$tmp/stream-merged.csv" "$tmp/whole.csv"
}
ssh_merge() { # sweep, shards
	local sweep=$1 n=$2 out=$tmp/ssh.csv
	rm -f "$tmp/hosts"
	parallel --halt now,fail=1 --ssh "$tmp/ssh" --sshlogin 2/nodeA,2/nodeB --workdir "$PWD" \
		"$smsim" sweep "$sweep" --shard {}/"$n" ::: $(seq 0 $((n - 1))) >"$out" &&
		"$smsim" merge "$out" --csv "$tmp/ssh-merged.csv" &&
		cmp "$tmp/ssh-merged.csv" "$tmp/whole.csv" &&
		grep -q nodeA "$tmp/hosts" && grep -q nodeB "$tmp/hosts" # both "hosts" took shards
}
missing_refused() { # sweep: one shard left out of the stream is named in merge's refusal
	local sweep=$1
	parallel "$smsim" sweep "$sweep" --shard {}/4 ::: 0 1 3 >"$tmp/three.csv" &&
		! "$smsim" merge "$tmp/three.csv" >"$tmp/none.csv" 2>"$tmp/err" &&
		grep -q 'shard 2/4: no part given' "$tmp/err" && [ ! -s "$tmp/none.csv" ]
}

for sweep in configs/sweeps/stages_by_compute.json configs/sweeps/overwait.json; do
	if ! "$smsim" sweep "$sweep" -j 1 >"$tmp/whole.csv"; then
		check "smsim sweep -j 1 $sweep" false
		continue
	fi
	check "parallel, a part file per shard, 5 shards = sweep -j 1: $sweep" files_merge "$sweep" 5
	check "parallel, shards' stdout in one stream, 3 shards = sweep -j 1: $sweep" stream_merge "$sweep" 3
	check "parallel --sshlogin (stand-in ssh), 7 shards = sweep -j 1: $sweep" ssh_merge "$sweep" 7
	check "parallel, a shard left out is refused by name: $sweep" missing_refused "$sweep"
done
echo "parallel_sweep: $passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
