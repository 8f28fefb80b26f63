#!/usr/bin/env python3
"""traces/h100/gemm.csv (tests/hw/gemm.cu's output) -> the rows `smsim validate` reads.

    tests/hw/gemm_rows.py traces/h100/gemm.csv traces/h100/gemm_validation.csv \
        traces/h100/gemm_validation_nofence.csv

A row's kernel is the experiment (configs/experiments/NAME.json), batch_sz the k-tiles (validate
reports cycles per batch), source L2 or DRAM (validate sets machine.l2_hit_fraction from it), dram
the kernel's panel layout (1: each block its own panels), grid_blocks 132 x blocks_per_sm (one
wave). ws_nofence rows (the kernel with fence = 0) go to the second file: the first's kernels
differ in their parameters (cp_async has no fence)."""
import csv
import sys

KERNEL = {"cp_async": ("gemm_cp_async_multistage", 128), "ws_bulk": ("gemm_warp_specialized_bulk", 160),
          "ws_nofence": ("gemm_warp_specialized_bulk", 160)}
HEAD = ["kernel", "stages", "block_size", "blocks_per_sm", "batch_sz", "grid_blocks", "source", "R", "dram",
        "cycles_per_batch_median", "cycles_per_batch_min", "cycles_per_batch_max"]

rows = list(csv.DictReader(open(sys.argv[1])))
with open(sys.argv[2], "w", newline="") as f1, open(sys.argv[3], "w", newline="") as f2:
    w1, w2 = csv.writer(f1, lineterminator="\n"), csv.writer(f2, lineterminator="\n")
    w1.writerow(HEAD)
    w2.writerow(HEAD + ["fence"])
    for r in rows:
        name, bs = KERNEL[r["design"]]
        out = [name, r["stages"], bs, r["blocks_per_sm"], r["k_tiles"], 132 * int(r["blocks_per_sm"]), r["mem"],
               r["R"], 1 if r["mem"] == "DRAM" else 0, r["cycles_per_ktile_median"], r["cycles_per_ktile_min"],
               r["cycles_per_ktile_max"]]
        if r["design"] == "ws_nofence":
            w2.writerow(out + [0])
        else:
            w1.writerow(out)
