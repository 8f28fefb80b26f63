#!/bin/bash
# What a long input changes (traces/h100/long_local.csv): the unified pipeline at 1552 batches, one block
# per SM, from DRAM, at 2/4/8 stages of 256 threads (k 0 and 128) and 2/8 stages of 128 threads (k 128),
# under Nsight Compute's counters: the local loads' L1 misses, the L2's hits, DRAM's reads and writes,
# the carveout and the kernel's cycles.  Clocks are left alone; every launch starts with the program's own
# L2 flush (validation --ncu).
#   ncu_long.sh VALIDATION_BINARY OUTDIR -> OUTDIR/long_local.csv
set -eu
[ $# -eq 2 ] || { echo "usage: $0 VALIDATION_BINARY OUTDIR" >&2; exit 2; }
bin=$(realpath "$1") out=$2
mkdir -p "$out"
work=$(mktemp -d)
export VALIDATION_NCU_BATCH=1552
M=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,gpc__cycles_elapsed.max,launch__shared_mem_config_size
M=$M,l1tex__t_sectors_pipe_lsu_mem_local_op_ld_lookup_hit.sum,l1tex__t_sectors_pipe_lsu_mem_local_op_ld_lookup_miss.sum
ncu --clock-control none --csv --page raw --print-units base --metrics "$M" -k "regex:with_" \
    "$bin" --ncu "$work" with_staging_unified:2:256:1:0 with_staging_unified:4:256:1:0 with_staging_unified:8:256:1:0 \
    with_staging_unified:2:256:1:128 with_staging_unified:4:256:1:128 with_staging_unified:8:256:1:128 \
    with_staging_unified:2:128:1:128 with_staging_unified:8:128:1:128 > "$work/raw.csv"
python3 - "$work/raw.csv" "$work/ncu_configs.csv" "$out/long_local.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
head = [i for i, r in enumerate(rows) if r and r[0] == "ID"][0]
names = rows[head]
data = [dict(zip(names, r)) for r in rows[head + 1:] if r and r[0].isdigit()]
num = lambda d, k: float(d[k].replace(",", ""))
with open(sys.argv[3], "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["kernel", "stages", "block_size", "blocks_per_sm", "k", "batch_sz", "source", "carveout_kb",
                "local_sectors", "local_miss_rate", "l2_hit_pct", "dram_read_mb", "dram_write_mb", "cycles_per_batch"])
    for c, d in zip(csv.DictReader(open(sys.argv[2])), data):
        hit = num(d, "l1tex__t_sectors_pipe_lsu_mem_local_op_ld_lookup_hit.sum")
        miss = num(d, "l1tex__t_sectors_pipe_lsu_mem_local_op_ld_lookup_miss.sum")
        w.writerow([c["kernel"], c["stages"], c["block_size"], c["blocks_per_sm"], c["k"], c["batch_sz"], c["source"],
                    int(num(d, "launch__shared_mem_config_size")) // 1024, int(hit + miss), f"{miss / (hit + miss):.5f}",
                    d["lts__t_sector_hit_rate.pct"], f"{num(d, 'dram__bytes_read.sum') / 1e6:.1f}",
                    f"{num(d, 'dram__bytes_write.sum') / 1e6:.1f}",
                    f"{num(d, 'gpc__cycles_elapsed.max') / int(c['batch_sz']):.1f}"])
PY
