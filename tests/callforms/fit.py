#!/usr/bin/env python3
"""Writes tests/callforms/fit.csv, the microbenchmark fit's reference, from traces/h100/callforms.csv,
traces/h100/barrier_lines.csv, traces/h100/inflight_lines.csv and traces/h100/burst_math.csv.

Each call form looped alone on the H100 (tests/hw/callforms.cu) has a replica kernel here
(kernels/cf_*.json, experiments/cf_*.json); a row says which, with its parameters, and the
launch callforms.cu used: W warps per scheduler = one block of 128 W threads per SM (W <= 8),
two blocks of 1024 at W = 16, every SM busy, the source warmed into L2. cycles_per_batch_median
is the form's cycles per iteration (the SM's time, all warps done); batch_sz its iterations.
`smsim validate tests/callforms/fit.csv --configs tests/callforms` prints the fit.

barrier_lines.csv (tests/hw/barrier_lines.cu) adds the 4-byte copy's round trip at 1-8 blocks per
SM from L2 and DRAM, each warp waiting for its own line (cf_chase_cp) or the block for all of its
lines (cf_chase_mbar): its rows are cycles per batch of one warp (the median warp), batch_sz
its batches.

inflight_lines.csv (tests/hw/inflight_latency.cu lines mode) adds DRAM's latency against the lines
in flight: C = 1-8 copies of 16 bytes a thread from their grid-wide rows, 1-32 warps in one block
per SM on every SM (cf_inflight, the rows pattern calibrate reads for dram_line_latency): cycles
per batch of the SM. burst_math.csv (tests/hw/burst_math.cu) is the same loop with k dependent
FFMAs after each wait (cf_inflight's k), 16-128 lines an SM, on every SM.

ldgsts_spread.csv (tests/hw/ldgsts_spread.cu) adds a divergent warp's groups copying the same
512-byte rows from L2 in turn, D = 1-32 groups (cf_grouped's n), 1-16 warps in one block per SM on
every SM: cycles per batch of 17 rows, the block's cycles at 32 batches over 32. Its DRAM rows are
left out: they stream past what the GPU's DRAM serves (traces/h100/README.md, session 33).

Usage: tests/callforms/fit.py traces/h100/callforms.csv traces/h100/barrier_lines.csv \
           traces/h100/inflight_lines.csv traces/h100/burst_math.csv traces/h100/ldgsts_spread.csv \
           > tests/callforms/fit.csv
"""
import csv
import sys

# form name in callforms.csv -> (replica, its parameters); the burst forms (a half of a loop
# timed between __syncthreads) have no whole-kernel replica and are left out.
FORMS = {
    "pipeline_memcpy_async(4)+pipeline_commit+wait_prior(0)": ("cf_prim", {"bytes": 4, "n": 1}),
    "pipeline_memcpy_async(16)+pipeline_commit+wait_prior(0)": ("cf_prim", {"bytes": 16, "n": 1}),
    "8x pipeline_memcpy_async(4)+pipeline_commit+wait_prior(0)": ("cf_prim", {"bytes": 4, "n": 8}),
    "8x pipeline_memcpy_async(16)+pipeline_commit+wait_prior(0)": ("cf_prim", {"bytes": 16, "n": 8}),
    "memcpy_async.thread(4)": ("cf_copy_thread", {}),
    "memcpy_async.group(4*block_size)": ("cf_copy_group", {}),
    "producer_acquire.block+producer_commit.block+consumer_wait.block+consumer_release.block(2 stages)":
        ("cf_block_roundtrip", {"stages": 2}),
    "unified(2):producer_acquire.block+memcpy_async.group+producer_commit.block+consumer_wait.block+consumer_release.block":
        ("cf_unified", {"stages": 2}),
    "unified(4):producer_acquire.block+memcpy_async.group+producer_commit.block+consumer_wait.block+consumer_release.block":
        ("cf_unified", {"stages": 4}),
    "partitioned(2):producer_acquire.block+memcpy_async.thread+producer_commit.block|consumer_wait.block+consumer_release.block":
        ("cf_partitioned", {}),
    "producer_acquire.thread+producer_commit.thread": ("cf_thread_commit", {}),
    "producer_acquire.thread+producer_commit.thread+consumer_wait.thread+consumer_release.thread":
        ("cf_thread_roundtrip", {}),
    "scope_thread(2):producer_acquire.thread+memcpy_async.thread+producer_commit.thread+consumer_wait.thread+consumer_release.thread":
        ("cf_scope_thread", {}),
    "barrier_arrive_and_wait": ("cf_arrive_and_wait", {}),
    "syncthreads": ("cf_syncthreads", {}),
    "size_t%3": ("cf_mod", {"m": 3}),
    "size_t%4": ("cf_mod", {"m": 4}),
}
CHASES = {"cp_async": "cf_chase_cp", "mbarrier": "cf_chase_mbar"}
PARAMS = ["stages", "bytes", "n", "m", "k"]
DEFAULTS = {"stages": 2, "bytes": 4, "n": 1, "m": 3, "k": 0}


def main():
    rows = csv.DictReader(open(sys.argv[1]))
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["kernel"] + PARAMS + ["block_size", "blocks_per_sm", "grid_blocks", "source", "batch_sz",
                                        "cycles_per_batch_median"])
    for r in rows:
        if r["form"] not in FORMS:
            continue
        kernel, params = FORMS[r["form"]]
        w = int(r["warps_per_scheduler"])
        bs, bps = (128 * w, 1) if w <= 8 else (1024, 2)
        p = dict(DEFAULTS, **params)
        out.writerow([kernel] + [p[k] for k in PARAMS] + [bs, bps, 132 * bps, "L2", r["iterations"],
                                                           r["cycles_per_iteration_median"]])
    for r in csv.DictReader(open(sys.argv[2])):
        out.writerow([CHASES[r["mode"]]] + [DEFAULTS[k] for k in PARAMS] +
                     [r["block_size"], r["blocks_per_sm"], r["grid_blocks"], r["source"], r["batches"],
                      r["cycles_per_batch_median"]])
    for r in csv.DictReader(open(sys.argv[3])):
        if r["pattern"] == "rows" and r["bytes"] == "16" and r["grid_blocks"] != "1":
            inflight_row(out, r, 0)
    for r in csv.DictReader(open(sys.argv[4])):
        if r["grid_blocks"] != "1":
            inflight_row(out, r, int(r["k"]))
    for r in csv.DictReader(open(sys.argv[5])):
        if r["source"] == "L2_grouped":
            p = dict(DEFAULTS, bytes=16, n=int(r["d"]))
            batches = int(r["n_high"]) // 17
            out.writerow(["cf_grouped"] + [p[name] for name in PARAMS] +
                         [32 * int(r["warps_per_sm"]), 1, 132, "L2", batches,
                          "%.1f" % (float(r["cycles_high"]) / batches)])


def inflight_row(out, r, k):
    """A row of the lines loop on every SM (inflight_lines.csv, burst_math.csv) for its replica, cf_inflight."""
    p = dict(DEFAULTS, bytes=16, n=int(r["copies"]), k=k)
    out.writerow(["cf_inflight"] + [p[name] for name in PARAMS] +
                 [32 * int(r["warps"]), 1, r["grid_blocks"], "DRAM", 64, r["cycles_per_batch"]])


if __name__ == "__main__":
    main()
