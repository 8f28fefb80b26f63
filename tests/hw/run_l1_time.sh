#!/bin/bash
# Local-load L1 misses against the time between two loads (tests/hw/l1_time.cu), on the device:
#   run_l1_time.sh L1_TIME_BINARY OUTDIR -> OUTDIR/l1_time.csv
# Clocks are left alone; ncu's default cache control flushes L1 and L2 before each launch.
set -eu
[ $# -eq 2 ] || { echo "usage: $0 L1_TIME_BINARY OUTDIR" >&2; exit 2; }
bin=$(realpath "$1") out=$2
mkdir -p "$out"
work=$(mktemp -d)
"$bin" "$work" > /dev/null
ncu --clock-control none --csv \
    --metrics launch__shared_mem_config_size,l1tex__t_sectors_pipe_lsu_mem_local_op_ld_lookup_hit.sum,l1tex__t_sectors_pipe_lsu_mem_local_op_ld_lookup_miss.sum,gpc__cycles_elapsed.max \
    "$bin" "$(mktemp -d)" 2>/dev/null | grep '^"' > "$work/ncu.csv"
python3 - "$work/l1_time_launches.csv" "$work/ncu.csv" "$out/l1_time.csv" <<'PY'
import csv, sys
from collections import defaultdict
c = defaultdict(dict)
for r in csv.DictReader(open(sys.argv[2])):
    c[int(r["ID"])][r["Metric Name"]] = r["Metric Value"].replace(",", "")
with open(sys.argv[3], "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["stages", "block_size", "blocks_per_sm", "warps_per_sm", "k", "batches", "carveout_kb", "local_sectors",
                "local_miss_rate", "cycles_per_batch"])
    for r in csv.DictReader(open(sys.argv[1])):
        m = c[int(r["order"])]
        hit = float(m["l1tex__t_sectors_pipe_lsu_mem_local_op_ld_lookup_hit.sum"])
        miss = float(m["l1tex__t_sectors_pipe_lsu_mem_local_op_ld_lookup_miss.sum"])
        w.writerow([r["stages"], r["block_size"], r["blocks_per_sm"], int(r["block_size"]) // 32 * int(r["blocks_per_sm"]),
                    r["k"], r["batches"], int(m["launch__shared_mem_config_size"]) // 1024, int(hit + miss),
                    f"{miss / (hit + miss):.5f}", f"{float(m['gpc__cycles_elapsed.max']) / int(r['batches']):.1f}"])
PY
cat "$out/l1_time.csv"
