#!/usr/bin/env python3
"""Latencies read from Nsight Compute's per-instruction warp sampling of the call-form microbenchmarks.

    ncu --section SourceCounters -o cf callforms OUTDIR --profile      (tests/hw/run_calib.sh)
    ncu -i cf.ncu-rep --page source --csv --print-source sass > cf.csv
    ncu --section SourceCounters -o rt -k regex:chase roundtrip OUTDIR; ncu -i rt.ncu-rep ... > rt.csv
    python3 tests/hw/pcsamp_latency.py cf.csv traces/h100/callforms.csv tests/hw/callforms.cu \
        rt.csv traces/h100/roundtrip.csv > traces/h100/pcsamp_latency.csv
(the listings may be gzipped: traces/h100/callforms_pcsamp.csv.gz and roundtrip_pcsamp.csv.gz
reproduce the shipped pcsamp_latency.csv, which the pcsamp_latency test checks)

Some results cannot be timed by a loop of their own: ptxas hoists a special-register read (S2R,
S2UR) out of any loop that would chain it, or issues it ahead of its use. The compiled mbarrier
calls do read SR_CgaCtaId (the shared::cluster window of the barrier) right before they use it, in
every iteration, so their own samples show the wait: a warp stalled at the first reader of the
register (short_scoreboard) until the read is back. For each such pair in the call-form kernels
(the loop: the instructions executed at least half as often as the most executed one), the cycles
from the read's issue to its reader's issue are the samples of the instructions after the read up
to and including the reader, over the kernel's samples per cycle of one iteration (its loop's
samples / callforms.csv's cycles per iteration, one warp per scheduler); one more cycle is the
read's own issue. LDC pairs are measured the same way, as a check against special_latency.csv.
Only pairs with at most 4 instructions from the read to its reader count (further apart, other
waits fill the gap), and not the burst kernels (callforms.csv times their calls, not their loop).

The round trips of roundtrip.cu (one block of 128 threads per SM, input in L2), the same way:
from each LDG / LDGSTS to the instruction that waits for it (ldg: the IMAD.WIDE reading the loaded
value; cp_async: the LDS after DEPBAR; mbarrier: the branch on the try_wait's predicate), over
the loop's samples per cycle of one trip (roundtrip.csv's cycles per batch). The medians give
what a copy adds over a load (cp_async - ldg) and what completing an mbarrier phase adds over
a DEPBAR (mbarrier - cp_async).

Output: one row per pair, one `median` row per kind, then one `roundtrip` row per mode (in the
latency column, the median cycles from issue to the waiting instruction's issue); smsim
calibrate reads the median and roundtrip rows.
"""
import csv
import gzip
import re
import statistics
import sys

KINDS = [("S2R", re.compile(r"^\s*(?:@!?U?P\d\s+)?S2U?R\s+(U?R\d+),\s*SR_CgaCtaId")),
         ("LDC", re.compile(r"^\s*(?:@!?U?P\d\s+)?LDC(?:\.64)?\s+(R\d+),"))]


def sections(path):
    with (gzip.open(path, "rt", newline="") if path.endswith(".gz") else open(path, newline="")) as f:
        rows = list(csv.reader(f))
    out, cur = [], None
    for r in rows:
        if r and r[0] == "Kernel Name":
            cur = {"name": r[1], "rows": []}
            out.append(cur)
        elif r and r[0] == "Address":
            cur["hdr"] = r
        elif cur is not None and r:
            cur["rows"].append(r)
    return out


def form_cycles(callforms_csv, callforms_cu):
    """kernel symbol -> cycles per iteration at one warp per scheduler."""
    per_form = {}
    for r in csv.DictReader(open(callforms_csv)):
        if r["warps_per_scheduler"] == "1":
            per_form.setdefault(r["form"], float(r["cycles_per_iteration_median"]))
    out = {}
    for m in re.finditer(r'\{"([^"]+)",\s*"([^"]+)",\s*k_', open(callforms_cu).read()):
        if m.group(1) in per_form:
            out[m.group(2)] = per_form[m.group(1)]
    return out


def reads(text, reg):
    ops = text.split(None, 1)
    if len(ops) < 2:
        return False
    body = ops[1]
    if ops[0].startswith("@"):
        body = body.split(None, 1)[1] if len(body.split(None, 1)) > 1 else ""
    parts = body.split(",", 1)
    src = parts[1] if len(parts) > 1 else ""
    return re.search(r"\b%s\b" % re.escape(reg), src) is not None


def roundtrip(src, rt_csv, w):
    per_batch = {}
    for r in csv.DictReader(open(rt_csv)):
        if r["block_size"] == "128" and r["source"] == "L2":
            per_batch[r["mode"]] = float(r["cycles_per_batch_median"])
    waits = {"ldg": lambda t: t.startswith("IMAD.WIDE"), "cp_async": lambda t: t.startswith("LDS "),
             "mbarrier": lambda t: t.startswith("@P0") and "BRA" in t}
    kinds = {"1": "ldg", "2": "cp_async", "3": "mbarrier"}
    done = {}
    for s in sections(src):
        m = re.search(r"chase<\(int\)(\d)>", s["name"])
        if not m or m.group(1) not in kinds or kinds[m.group(1)] in done:
            continue
        mode = kinds[m.group(1)]
        rows = s["rows"]
        top = max(int(r[5]) for r in rows)
        loop = [r for r in rows if int(r[5]) >= top // 2]
        issues = [i for i, r in enumerate(loop) if re.match(r"^\s*(LDG\.|LDGSTS)", r[1])]
        if len(loop) < 4 or not issues:
            continue
        per_cycle = sum(int(r[2]) for r in loop) / len(issues) / per_batch[mode]
        trips = []
        for i in issues:
            smp = 0
            for j in range(i + 1, len(loop)):
                smp += int(loop[j][2])
                if waits[mode](loop[j][1].strip()):
                    trips.append(smp / per_cycle + 1)
                    break
        done[mode] = statistics.median(trips)
        w.writerow(["roundtrip", mode, "", "", len(trips), "", "%.4f" % per_cycle, "%.1f" % done[mode]])


def main():
    src, cf_csv, cf_cu = sys.argv[1:4]
    cycles = form_cycles(cf_csv, cf_cu)
    seen = set()
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(["kind", "kernel", "read_pc", "reader_pc", "instructions", "samples", "samples_per_cycle", "latency"])
    lat = {k: [] for k, _ in KINDS}
    for s in sections(src):
        sym = next((k for k in cycles if re.sub(r"I.*", "", k) in s["name"] and
                    all(t in s["name"] for t in re.findall(r"Li(\d+)E", k))), None)
        key = (s["name"], len(s["rows"]))
        if sym is None or key in seen or "burst" in sym:
            continue  # a kernel ncu lists twice, one callforms.csv does not time, or times per call
        seen.add(key)
        rows = s["rows"]
        base = int(rows[0][0], 16)
        top = max(int(r[5]) for r in rows)
        loop = [r for r in rows if int(r[5]) >= top // 2]
        per_cycle = sum(int(r[2]) for r in loop) / cycles[sym]
        for i, r in enumerate(rows):
            if int(r[5]) < top // 2:
                continue
            for kind, pat in KINDS:
                m = pat.match(r[1])
                if not m:
                    continue
                for j in range(i + 1, min(i + 24, len(rows))):
                    if reads(rows[j][1].strip(), m.group(1)):
                        if j - i > 4:
                            break
                        smp = sum(int(rows[k][2]) for k in range(i + 1, j + 1))
                        cyc = smp / per_cycle + 1
                        lat[kind].append(cyc)
                        w.writerow([kind, sym, "0x%04x" % (int(r[0], 16) - base), "0x%04x" % (int(rows[j][0], 16) - base),
                                    j - i, smp, "%.4f" % per_cycle, "%.1f" % cyc])
                        break
    for kind, v in lat.items():
        if v:
            w.writerow([kind, "median", "", "", "", len(v), "", "%.1f" % statistics.median(v)])
    if len(sys.argv) > 5:
        roundtrip(sys.argv[4], sys.argv[5], w)


if __name__ == "__main__":
    main()
