#!/bin/bash
# Local-load L1 misses and the driver's shared-memory carveout (tests/hw/l1_local.cu), on the device:
#   run_l1_local.sh L1_LOCAL_BINARY OUTDIR [wide] -> OUTDIR/l1_local_launches.csv, OUTDIR/l1_local_ncu.csv
#   (wide: l1_local.cu's blocks of 512 and 1,024 threads)
# then, anywhere: python3 tests/hw/l1_local.py OUTDIR -> OUTDIR/l1_local.csv, OUTDIR/carveout.csv
# Clocks are left alone; ncu's default cache control flushes L1 and L2 before each launch, so every
# launch starts cold, as a validation launch from DRAM does.
set -eu
[ $# -eq 2 ] || [ $# -eq 3 ] || { echo "usage: $0 L1_LOCAL_BINARY OUTDIR [wide]" >&2; exit 2; }
bin=$(realpath "$1") out=$2 mode=${3:-}
mkdir -p "$out"
"$bin" "$out" $mode > /dev/null
ncu --clock-control none --csv \
    --metrics launch__shared_mem_config_size,launch__registers_per_thread,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,launch__occupancy_limit_warps,launch__occupancy_limit_blocks,l1tex__t_sectors_pipe_lsu_mem_local_op_ld_lookup_hit.sum,l1tex__t_sectors_pipe_lsu_mem_local_op_ld_lookup_miss.sum,gpc__cycles_elapsed.max \
    "$bin" "$(mktemp -d)" $mode 2>/dev/null | grep '^"' > "$out/l1_local_ncu.csv"
