#!/bin/bash
# Nsight Compute's instructions per pipe and per SASS opcode for validation kernels, the
# evidence of which pipe each lowered instruction class takes (traces/h100/pipes_ncu.csv).
# Run on the device machine from the repository root, validation built into hwbin/:
#   nvcc -O3 -std=c++17 -arch=sm_90 -lineinfo tests/hw/validation.cu -o hwbin/validation
#   bash tests/hw/ncu_pipes.sh OUTDIR [KERNEL:STAGES:BS:BPS:K[:D:PER_GROUP] ...]
# Clocks are left alone. Without configurations it profiles the session-19 set.
set -u
out=${1:?usage: ncu_pipes.sh OUTDIR [CONFIG ...]}; shift
here=$(cd "$(dirname "$0")" && pwd)
cf=("$@")
[ ${#cf[@]} -gt 0 ] || cf=(with_staging_unified:2:256:8:0 with_staging_unified:1:1024:1:0 with_single_stage:1:256:8:0
  with_staging_scope_thread:2:256:8:0 with_specialized_staging_unified:2:256:2:0 with_staging_scope_thread:4:128:2:32
  with_staging_scope_thread:2:256:1:0 primitive_copies:2:32:1:0:32:1 primitive_copies:2:32:1:0:4:0
  diverged_commit:2:128:1:0:8:1 with_single_stage:1:128:1:32)
w=$(mktemp -d)
./hwbin/validation --ncu "$w" "${cf[@]}" > /dev/null || exit 1
m=sass__inst_executed_per_opcode,smsp__inst_executed.sum
for p in alu fmaheavy fma adu cbu lsu uniform xu; do m=$m,sm__inst_executed_pipe_$p.sum; done
ncu --clock-control none --csv --print-units base --metrics "$m" --print-metric-instances details \
  -k 'regex:with_|primitive|diverged' ./hwbin/validation --ncu "$w" "${cf[@]}" 2>"$out/ncu_pipes.err" | grep '^"' > "$w/ncu.csv"
python3 "$here/ncu_pipes.py" "$w/ncu_configs.csv" "$w/ncu.csv" > "$out/pipes_ncu.csv"
