#!/bin/bash
# Nsight Compute's hardware counts (not SASS patching: the kernel runs as it does unprofiled) of warp-
# instructions and ALU-pipe instructions, and the elapsed cycles, for validation kernels from DRAM (L2
# flushed) and from L2 (VALIDATION_NCU_L2: a warm-up launch first, ncu's cache control off), the
# evidence of traces/h100/specialized_counts.csv.  Run on the device machine from the repository root,
# validation built into hwbin/:
#   bash tests/hw/ncu_counts.sh OUTDIR DRAM|L2 KERNEL:STAGES:BS:BPS:K ...
# OUTDIR gets counts_configs.csv (validation's launch order) and counts.csv (ncu's rows; with L2 every
# configuration's second launch is the measured one).
set -u
out=${1:?usage: ncu_counts.sh OUTDIR DRAM|L2 CONFIG ...} src=${2:?DRAM or L2}; shift 2
w=$(mktemp -d)
cache=()
if [ "$src" = L2 ]; then export VALIDATION_NCU_L2=1; cache=(--cache-control none); fi
./hwbin/validation --ncu "$w" "$@" > /dev/null || exit 1
cp "$w/ncu_configs.csv" "$out/counts_configs.csv"
ncu --clock-control none "${cache[@]}" --csv --print-units base \
  --metrics smsp__inst_executed.sum,sm__inst_executed_pipe_alu.sum,gpc__cycles_elapsed.max \
  -k 'regex:with_|primitive|diverged' ./hwbin/validation --ncu "$w" "$@" 2> "$out/counts.err" | grep '^"' > "$out/counts.csv"
