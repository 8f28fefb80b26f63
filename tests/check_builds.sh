#!/usr/bin/env bash
# Determinism and memory hygiene across builds, for CI:
#  - every shipped experiment gives byte-identical JSON (--no-timing) and traces from the
#    release build and the ASan/UBSan build, and twice in a row;
#  - every shipped sweep gives the same CSV with -j 1 and -j 2;
#  - valgrind memcheck finds no leak or invalid access on a full run of every experiment.
# Prints one line per check and a summary "check_builds: N passed, N failed".
set -u
release=${1:-build/smsim}
sanitized=${2:-build-asan/smsim}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
check() { # name, then a command that succeeds when the check passes
	local name=$1
	shift
	if "$@"; then passed=$((passed + 1)); else echo "FAILED: $name"; failed=$((failed + 1)); fi
}
same_run() { # experiment
	local f=$1 b
	b=$(basename "$f" .json)
	"$release" run "$f" --json --no-timing --trace "$tmp/$b.r.trace" >"$tmp/$b.r1" 2>/dev/null
	"$release" run "$f" --json --no-timing >"$tmp/$b.r2" 2>/dev/null
	"$sanitized" run "$f" --json --no-timing --trace "$tmp/$b.s.trace" >"$tmp/$b.s" 2>/dev/null
	cmp -s "$tmp/$b.r1" "$tmp/$b.r2" && cmp -s "$tmp/$b.r1" "$tmp/$b.s" &&
		cmp -s "$tmp/$b.r.trace" "$tmp/$b.s.trace"
}
same_sweep() {
	"$release" sweep "$1" -j 1 >"$tmp/sw1" 2>/dev/null && "$release" sweep "$1" -j 2 >"$tmp/sw2" 2>/dev/null &&
		cmp -s "$tmp/sw1" "$tmp/sw2"
}
memcheck() {
	valgrind -q --leak-check=full --errors-for-leak-kinds=definite,indirect,possible --error-exitcode=99 \
		"$release" run "$1" --no-timing >/dev/null 2>"$tmp/vg"
	[ $? != 99 ]
}
for f in configs/experiments/*.json; do
	check "identical reports and traces: $f" same_run "$f"
	if command -v valgrind >/dev/null 2>&1; then check "valgrind memcheck: $f" memcheck "$f"; fi
done
for f in configs/sweeps/*.json; do
	check "sweep -j 1 = -j 2: $f" same_sweep "$f"
done
echo "check_builds: $passed passed, $failed failed"
[ "$failed" = 0 ]
