#!/usr/bin/env bash
# The microbenchmark fit (README, "How well smsim agrees"): tests/callforms/fit.csv is what
# tests/callforms/fit.py derives from traces/h100/callforms.csv, barrier_lines.csv,
# inflight_lines.csv, burst_math.csv and ldgsts_spread.csv, and smsim run on the replicas of
# the call forms stays within the bound the README states.
#   tests/check_callforms_fit.sh SMSIM
set -u
smsim="$1"
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
python3 tests/callforms/fit.py traces/h100/callforms.csv traces/h100/barrier_lines.csv traces/h100/inflight_lines.csv \
	traces/h100/burst_math.csv traces/h100/ldgsts_spread.csv >"$out" || { echo "fit.py failed"; exit 1; }
if ! cmp -s "$out" tests/callforms/fit.csv; then
	echo "tests/callforms/fit.csv is not what tests/callforms/fit.py derives from traces/h100/callforms.csv, barrier_lines.csv, inflight_lines.csv, burst_math.csv and ldgsts_spread.csv"
	exit 1
fi
"$smsim" validate tests/callforms/fit.csv --configs tests/callforms --max-error 25
