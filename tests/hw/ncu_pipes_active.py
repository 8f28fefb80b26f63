#!/usr/bin/env python3
"""ncu_pipes_active.py CONFIGS.csv NCU.csv CACHES: one row per profiled configuration (the second of its
two launches: validation --ncu with VALIDATION_NCU_L2 warms before each), its pipes' busy cycles per
instruction they took and its warp states per issued instruction (tests/hw/ncu_pipes_active.sh).
CACHES is what ncu did to the caches before each replay pass: "flushed" (its default: the input
then comes from DRAM) or "kept" (--cache-control none: from L2, as warmed)."""
import collections
import csv
import sys

PIPES = ["alu", "fmaheavy", "fma"]
STATES = ["wait", "long_scoreboard", "short_scoreboard", "branch_resolving", "not_selected", "math_pipe_throttle",
          "dispatch_stall", "no_instruction", "mio_throttle", "barrier", "imc_miss"]


def number(s):
    return float(s.replace(",", ""))


def main():
    configs = list(csv.DictReader(open(sys.argv[1])))
    lines = [l for l in open(sys.argv[2]) if l.startswith('"')]
    rows = list(csv.reader(lines))
    head = rows[0]
    at_id, at_name, at_value = head.index("ID"), head.index("Metric Name"), head.index("Metric Value")
    launches = collections.defaultdict(dict)
    for r in rows[1:]:
        launches[int(r[at_id])][r[at_name]] = r[at_value]
    out = csv.writer(sys.stdout, lineterminator="\n")
    caches = sys.argv[3]
    out.writerow(["kernel", "stages", "block_size", "blocks_per_sm", "k", "batch_sz", "caches", "cycles", "inst_executed"] +
                 ["%s_inst" % p for p in PIPES] + ["%s_active_per_inst" % p for p in PIPES] + STATES)
    for c in configs:
        m = launches[2 * int(c["ncu_order"]) + 1]
        row = [c["kernel"], c["stages"], c["block_size"], c["blocks_per_sm"], c["k"], c["batch_sz"], caches,
               "%.0f" % number(m["sm__cycles_elapsed.avg"]), "%.0f" % number(m["smsp__inst_executed.sum"])]
        inst = [number(m["sm__inst_executed_pipe_%s.sum" % p]) for p in PIPES]
        active = [number(m["sm__pipe_%s_cycles_active.sum" % p]) for p in PIPES]
        row += ["%.0f" % n for n in inst] + ["%.3f" % (a / n if n else 0.0) for a, n in zip(active, inst)]
        key = "smsp__average_warps_issue_stalled_%s_per_issue_active.ratio"
        row += ["%.3f" % number(m.get(key % s, "0")) for s in STATES]
        out.writerow(row)


if __name__ == "__main__":
    main()
