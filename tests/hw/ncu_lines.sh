#!/bin/bash
# Nsight Compute's executed instructions per SASS instruction (the SourceCounters section) for validation
# kernels, and nvdisasm's line table with its inlining chain, so that ncu_lines.py can add them up per
# statement of tests/hw/examples.cuh (traces/h100/line_counts.csv).  Run on the device machine from the
# repository root, validation built into hwbin/ (nvcc -O3 -std=c++17 -arch=sm_90 -lineinfo):
#   bash tests/hw/ncu_lines.sh OUTDIR KERNEL:STAGES:BS:BPS:K ...
# Clocks are left alone.  SourceCounters patches the SASS to count: the counts of a kernel whose paths'
# timing decides what runs (the partitioned pipeline's retries) are those of the patched run, not of the
# kernel alone (smsp__inst_executed, ncu_pipes.sh, is the unpatched count).
set -u
out=${1:?usage: ncu_lines.sh OUTDIR CONFIG ...}; shift
w=$(mktemp -d)
./hwbin/validation --ncu "$w" "$@" > /dev/null || exit 1
cp "$w/ncu_configs.csv" "$out/lines_configs.csv"
ncu --clock-control none --set none --section SourceCounters -k 'regex:with_|primitive|diverged' -o "$w/rep" \
  ./hwbin/validation --ncu "$w" "$@" > "$out/lines_ncu.log" 2>&1 || exit 1
ncu -i "$w/rep.ncu-rep" --page source --csv --print-source sass > "$out/lines_sass.csv" || exit 1
(cd "$w" && cuobjdump -xelf all "$OLDPWD/hwbin/validation" > /dev/null && nvdisasm -g -gi -c validation.sm_90.cubin) \
  > "$out/lines_gi.sass" || exit 1
