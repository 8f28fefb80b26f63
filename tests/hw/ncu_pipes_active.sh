#!/bin/bash
# Nsight Compute's pipe activity (cycles each pipe is busy, instructions it took) and warp states per
# issued instruction for validation kernels: what an instruction class costs its pipe in the examples'
# own code (traces/h100/ncu_pipes_active.csv).  Run on the device machine from the repository root,
# validation built into hwbin/:
#   nvcc -O3 -std=c++17 -arch=sm_90 -lineinfo tests/hw/validation.cu -o hwbin/validation
#   bash tests/hw/ncu_pipes_active.sh OUTDIR KERNEL:STAGES:BS:BPS:K ...
# Clocks are left alone.  VALIDATION_NCU_L2 is set (a warm-up launch before each profiled one), but
# ncu's default cache control flushes the caches before every replay pass, so the inputs come from
# DRAM in what it measures; NCU_CACHE=none keeps them (--cache-control none: from L2, as warmed).
# ncu_pipes_active.py keeps the second launch of each configuration.
set -u
out=${1:?usage: ncu_pipes_active.sh OUTDIR CONFIG...}; shift
here=$(cd "$(dirname "$0")" && pwd)
w=$(mktemp -d)
export VALIDATION_NCU_L2=1
M='regex:^(smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio|sm__pipe_(alu|fma|fmaheavy|fmalite)_cycles_active\.sum|sm__inst_executed_pipe_(alu|fma|fmaheavy|fmalite)\.sum|smsp__inst_executed\.sum|sm__cycles_elapsed\.avg)$'
ncu --clock-control none ${NCU_CACHE:+--cache-control $NCU_CACHE} --csv --page details --print-units base --metrics "$M" -k 'regex:with_' \
  ./hwbin/validation --ncu "$w" "$@" > "$w/ncu.csv" 2> "$out/ncu_pipes_active.err" || exit 1
python3 "$here/ncu_pipes_active.py" "$w/ncu_configs.csv" "$w/ncu.csv" "$([ "${NCU_CACHE:-}" = none ] && echo kept || echo flushed)" \
  > "$out/ncu_pipes_active.csv"
