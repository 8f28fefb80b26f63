#!/usr/bin/env python3
"""Adds up Nsight Compute's executed instructions per statement of tests/hw/examples.cuh.

    python3 tests/hw/ncu_lines.py lines_configs.csv lines_sass.csv lines_gi.sass > traces/h100/line_counts.csv

lines_sass.csv is `ncu --page source --print-source sass` of a SourceCounters report (each kernel's SASS
with its executed count; ncu prints every result twice), lines_gi.sass `nvdisasm -g -gi` of the same
binary: each instruction's outermost examples.cuh line (the statement a library call is inlined into).
Output: per configuration and statement line, warp-instructions per warp and batch, in all and per
instruction class (sass_lower.py's classes).
"""
import csv
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sass_lower  # noqa: E402

CLASSES = sass_lower.ICLASS_ORDER


def iclass(text):
    m = re.match(r"(@!?U?P[0-9T]\s+)?([A-Z0-9_.]+)", text)
    if (m.group(1) or "").strip() == "@!PT":
        return "BRA"
    return next((c for p, c in sass_lower.CLASS_RULES if re.match(p, m.group(2))), None)


def launches(path):
    out, cur, n = [], None, 0
    for r in csv.reader(open(path)):
        if not r:
            continue
        if r[0] == "Kernel Name":
            n += 1
            cur = [] if n % 2 else None  # each result is printed twice
            if cur is not None:
                out.append((r[1], cur))
            continue
        if cur is not None and r[0].startswith("0x"):
            cur.append((int(r[0], 16), r[1].strip(), int(r[5]) if r[5] not in ("-", "") else 0))
    return out


def line_table(path):
    funcs, fn, line = {}, None, None
    for l in open(path):
        m = re.match(r"^(_Z\S+):$", l)
        if m:
            fn, line = m.group(1), None
            funcs[fn] = {}
            continue
        m = re.match(r'\s*//## File "([^"]+)", line (\d+)\s*$', l)
        if m:
            line = (os.path.basename(m.group(1)), int(m.group(2)))
            continue
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/", l)
        if m and fn:
            funcs[fn][int(m.group(1), 16)] = line
    return funcs


def mangled(name, funcs):
    m = re.search(r"::(\w+)(?:<\((?:unsigned long|bool)\)(\w+)>)?\(", name)
    kern, arg = m.group(1), m.group(2)
    for f in funcs:
        tail = f.split(kern, 1)[1] if kern in f else None
        if tail is None or not re.match(r"\d*", f.split(kern)[0][-3:]):
            continue
        if arg is None and not tail.startswith("I") or arg is not None and re.match(r"IL[mb]%sEE" % arg, tail):
            return f
    raise SystemExit("ncu_lines: no function for %s" % name)


def main():
    cfg = list(csv.DictReader(open(sys.argv[1])))
    runs = launches(sys.argv[2])
    funcs = line_table(sys.argv[3])
    if len(runs) != len(cfg):
        raise SystemExit("ncu_lines: %d launches for %d configurations" % (len(runs), len(cfg)))
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(["kernel", "stages", "block_size", "blocks_per_sm", "k", "batch_sz", "line", "per_warp_batch"] +
               [c.lower() for c in CLASSES])
    for c, (name, ins) in zip(cfg, runs):
        table = funcs[mangled(name, funcs)]
        base = ins[0][0]
        warp_batches = 132 * int(c["blocks_per_sm"]) * int(c["block_size"]) // 32 * int(c["batch_sz"])
        per = {}
        for addr, text, n in ins:
            where = table.get(addr - base)
            if not where or where[0] != "examples.cuh" or n == 0:
                continue
            d = per.setdefault(where[1], dict.fromkeys(CLASSES, 0))
            cls = iclass(text)
            if cls:
                d[cls] += n
        for line in sorted(per):
            d = per[line]
            total = sum(d.values()) / warp_batches
            if total < 0.05:
                continue
            w.writerow([c["kernel"], c["stages"], c["block_size"], c["blocks_per_sm"], c["k"], c["batch_sz"], line,
                        "%.2f" % total] + ["%.2f" % (d[k] / warp_batches) for k in CLASSES])


if __name__ == "__main__":
    main()
