#!/usr/bin/env python3
"""Joins tests/hw/l1_local.cu's launch list with Nsight Compute's counters (run_l1_local.sh).

  l1_local.py DIR  reads DIR/l1_local_launches.csv and DIR/l1_local_ncu.csv and writes
    DIR/l1_local.csv  stages,block_size,blocks_per_sm,warps_per_sm,dynamic_smem,carveout_pct,store,
                      carveout_kb,registers,local_sectors,local_miss_rate,cycles,batches
    DIR/carveout.csv  block_size,dynamic_smem,carveout_kb  (the driver's default choice, probe kernel)
  l1_local.py DIR --validation  reads DIR/val_configs.csv and DIR/val_ncu.csv (validation --ncu under
    ncu with the same counters) and writes DIR/l1_local_validation.csv.
"""
import csv
import sys
from collections import defaultdict

HIT = "l1tex__t_sectors_pipe_lsu_mem_local_op_ld_lookup_hit.sum"
MISS = "l1tex__t_sectors_pipe_lsu_mem_local_op_ld_lookup_miss.sum"


def counters(path):
    by_launch = defaultdict(dict)
    with open(path) as f:
        for row in csv.DictReader(f):
            by_launch[int(row["ID"])][row["Metric Name"]] = row["Metric Value"].replace(",", "")
    return by_launch


def local(c):
    hit, miss = float(c.get(HIT, "nan")), float(c.get(MISS, "nan"))
    total = hit + miss
    return (int(total), f"{miss / total:.5f}") if total > 0 else (0, "")


def main():
    d = sys.argv[1]
    if sys.argv[2:] == ["--validation"]:
        ncu = counters(f"{d}/val_ncu.csv")
        with open(f"{d}/val_configs.csv") as f, open(f"{d}/l1_local_validation.csv", "w", newline="") as o:
            w = csv.writer(o)
            w.writerow(["kernel", "stages", "block_size", "blocks_per_sm", "source", "carveout_kb", "registers",
                        "local_sectors", "local_miss_rate", "cycles"])
            for r in csv.DictReader(f):
                c = ncu[int(r["ncu_order"])]
                sectors, rate = local(c)
                w.writerow([r["kernel"], r["stages"], r["block_size"], r["blocks_per_sm"], r["source"],
                            int(c["launch__shared_mem_config_size"]) // 1024, c["launch__registers_per_thread"],
                            sectors, rate, c["gpc__cycles_elapsed.max"]])
        return
    ncu = counters(f"{d}/l1_local_ncu.csv")
    with open(f"{d}/l1_local_launches.csv") as f:
        launches = list(csv.DictReader(f))
    with open(f"{d}/l1_local.csv", "w", newline="") as o1, open(f"{d}/carveout.csv", "w", newline="") as o2:
        reuse, probe = csv.writer(o1), csv.writer(o2)
        reuse.writerow(["stages", "block_size", "blocks_per_sm", "warps_per_sm", "dynamic_smem", "carveout_pct",
                        "store", "carveout_kb", "registers", "local_sectors", "local_miss_rate", "cycles", "batches"])
        probe.writerow(["block_size", "dynamic_smem", "carveout_kb"])
        for r in launches:
            c = ncu[int(r["order"])]
            carveout = int(c["launch__shared_mem_config_size"]) // 1024
            if r["kernel"] == "probe":
                probe.writerow([r["block_size"], r["dynamic_smem"], carveout])
                continue
            sectors, rate = local(c)
            reuse.writerow([r["stages"], r["block_size"], r["blocks_per_sm"],
                            int(r["block_size"]) // 32 * int(r["blocks_per_sm"]), r["dynamic_smem"],
                            r["carveout_pct"], r["store"], carveout, c["launch__registers_per_thread"], sectors, rate,
                            c["gpc__cycles_elapsed.max"], r.get("batches", "128")])


if __name__ == "__main__":
    main()
