#!/bin/sh
# Fuzz smoke run for CI: each libFuzzer harness for 15 s over its seed corpus (45 s of fuzzing).
#
#   tests/fuzz/smoke.sh [BUILD_DIR]      (from the project root; default BUILD_DIR: build-fuzz)
#
# Needs clang with its libFuzzer runtime (Debian: clang, libclang-rt-14-dev).  Without BUILD_DIR
# it sets one up:  CC=clang meson setup build-fuzz -Dfuzz=true -Db_sanitize=address,undefined
# -Db_lundef=false.  The seed corpora are copied to a temporary directory, so the checked-in ones
# never change.  Exits non-zero when a harness crashes, leaks, hits UB or a 10 s timeout; the
# reproducer is left in the printed artifact directory (keep it under tests/fuzz/crashes/).
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
