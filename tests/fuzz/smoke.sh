#!/bin/sh
# Fuzz smoke run for CI: each libFuzzer harness for 15 s over its seed corpus (45 s of fuzzing).
#
#   tests/fuzz/smoke.sh [BUILD_DIR]      (from the project root; default BUILD_DIR: build-fuzz)
#
# Needs clang with its libFuzzer runtime (Debian: clang, libclang-rt-14-dev).  When BUILD_DIR is
# not set up yet it runs:  CC=clang meson setup BUILD_DIR -Dfuzz=true -Db_sanitize=address,undefined
# -Db_lundef=false.  The reproducers kept in tests/fuzz/crashes/ are replayed first; the seed
# corpora are copied to a temporary directory, so the checked-in ones never change.  Exits non-zero
# when a harness crashes, leaks, hits UB or a 10 s timeout; the new reproducer is left in the
# printed artifact directory (keep it under tests/fuzz/crashes/ as HARNESS-what.json).
# FUZZ_SECONDS overrides the 15 s per harness.
set -eu
cd "$(dirname "$0")/../.."
build=${1:-build-fuzz}
secs=${FUZZ_SECONDS:-15}
if [ ! -f "$build/build.ninja" ]; then
	CC=${CC:-clang} meson setup "$build" -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false
fi
ninja -C "$build" tests/fuzz_kernel tests/fuzz_expr tests/fuzz_machine
work=$(mktemp -d /tmp/smsim_fuzz_smoke_XXXXXX)
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
status=0
for h in kernel expr machine; do
	mkdir -p "$work/$h" "$work/artifacts"
	dict=
	[ "$h" = expr ] || dict=-dict=tests/fuzz/json.dict
	# Replay the kept reproducers (tests/fuzz/crashes/HARNESS-*.json): each must now pass.
	for f in tests/fuzz/crashes/"$h"-*; do
		[ -f "$f" ] || continue
		if ! "$build/tests/fuzz_$h" "$f" >"$work/replay.log" 2>&1; then
			status=1
			echo "fuzz_$h: reproducer $f fails again:"
			grep -E 'ERROR|runtime error|SUMMARY' "$work/replay.log" || tail -n 20 "$work/replay.log"
		fi
	done
	echo "== fuzz_$h: $secs s"
	if ! "$build/tests/fuzz_$h" -max_total_time="$secs" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 $dict -artifact_prefix="$work/artifacts/$h-" \
		"$work/$h" "tests/fuzz/corpus_$h" >"$work/$h.log" 2>&1; then
		status=1
		grep -E 'ERROR|runtime error|SUMMARY|Test unit written' "$work/$h.log" || tail -n 20 "$work/$h.log"
	fi
	grep -E '^(stat::number_of_executed_units|stat::new_units_added)|DONE' "$work/$h.log" || true
done
if [ "$status" -ne 0 ]; then
	echo "fuzz smoke: FAILED; reproducers in $work/artifacts (run: $build/tests/fuzz_NAME FILE)"
else
	rm -rf "$work"
	echo "fuzz smoke: ok"
fi
exit "$status"
