#!/usr/bin/env python3
"""Nsight Compute's per-pipe and per-opcode instruction counts, one row per profiled configuration.

    python3 tests/hw/ncu_pipes.py CONFIGS.csv NCU.csv [CONFIGS.csv NCU.csv ...] > traces/h100/pipes_ncu.csv

CONFIGS.csv is validation --ncu's ncu_configs.csv (launch order), NCU.csv the CSV ncu wrote with
sass__inst_executed_per_opcode and sm__inst_executed_pipe_* (tests/hw/ncu_pipes.sh). ncu collects
the opcode counts and the pipe counts in different replay passes: `exact` says whether the
opcodes add up to smsp__inst_executed within 0.01% (a kernel whose try_wait loops spin a different
number of times in each pass does not), and only exact rows say which pipe an opcode went to.
"""
import csv
import re
import sys

PIPES = ["alu", "fmaheavy", "fma", "adu", "cbu", "lsu", "uniform", "xu"]


def rows(configs, ncu):
    cfg = list(csv.DictReader(open(configs)))
    data = {}
    for x in csv.DictReader(open(ncu)):
        d = data.setdefault(int(x["ID"]), {})
        name, value = x["Metric Name"], x["Metric Value"]
        if name == "sass__inst_executed_per_opcode":
            for kv in re.search(r"\((.*)\)", value).group(1).split("; "):
                k, v = kv.split(": ")
                d.setdefault("opcodes", {})[k] = int(v.replace(",", ""))
        else:
            d[name] = int(value.replace(",", ""))
    for i, c in enumerate(cfg):
        d = data[i]
        ops = d.get("opcodes", {})
        total = d["smsp__inst_executed.sum"]
        out = {k: c[k] for k in ("kernel", "stages", "block_size", "blocks_per_sm", "k", "batch_sz", "source",
                                  "divergence", "per_group")}
        out["inst_executed"] = total
        for p in PIPES:
            out["pipe_" + p] = d.get("sm__inst_executed_pipe_%s.sum" % p, "")
        out["opcode_total"] = sum(ops.values())
        out["exact"] = int(abs(out["opcode_total"] - total) <= total * 1e-4)
        out["opcodes"] = ";".join("%s:%d" % kv for kv in sorted(ops.items(), key=lambda kv: -kv[1]))
        yield out


def main():
    args = sys.argv[1:]
    if not args or len(args) % 2:
        sys.exit(__doc__)
    w = None
    for i in range(0, len(args), 2):
        for r in rows(args[i], args[i + 1]):
            if w is None:
                w = csv.DictWriter(sys.stdout, fieldnames=list(r), lineterminator="\n")
                w.writeheader()
            w.writerow(r)


if __name__ == "__main__":
    main()
