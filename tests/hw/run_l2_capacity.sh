#!/bin/bash
# The L2 read hit rate of l2_capacity's measured launch (the second of two identical launches) against
# the footprint, by Nsight Compute (clocks and caches left alone: the warm-up's lines stay in L2), and
# the program's own timings.
#   run_l2_capacity.sh L2_CAPACITY_BINARY OUTDIR  -> OUTDIR/l2_capacity.csv, OUTDIR/l2_capacity_ncu.csv
set -u
[ $# -eq 2 ] || { echo "usage: $0 L2_CAPACITY_BINARY OUTDIR" >&2; exit 2; }
bin=$(realpath "$1") out=$2
mkdir -p "$out"
"$bin" "$out" > /dev/null || exit 1
echo "mode,footprint_mb,l2_read_hit_pct,l2_write_hit_pct,dram_read_bytes" > "$out/l2_capacity_ncu.csv"
for mode in rw r; do
  for mb in 8 16 24 28 32 34.6 36 40 44 48 56 64 96; do
    line=$(ncu --clock-control none --cache-control none --launch-skip 1 --launch-count 1 --csv \
           --metrics lts__t_sector_op_read_hit_rate.pct,lts__t_sector_op_write_hit_rate.pct,dram__bytes_read.sum \
           "$bin" --one "$mode" "$mb" 2>/dev/null | grep '^"' | tee "$out/ncu_${mode}_${mb}.csv" | tail -n +2 |
           awk -F'","' '{gsub(/"/, "", $NF); gsub(/,/, "", $NF); v[$(NF-2)] = $NF}
                        END {printf "%s,%s,%s", v["lts__t_sector_op_read_hit_rate.pct"],
                                                v["lts__t_sector_op_write_hit_rate.pct"], v["dram__bytes_read.sum"]}')
    echo "$mode,$mb,$line" >> "$out/l2_capacity_ncu.csv"
  done
done
cat "$out/l2_capacity.csv" "$out/l2_capacity_ncu.csv"
