#!/usr/bin/env python3
"""Cycles per SASS instruction of one loop, from Nsight Compute's per-instruction warp sampling.

    python3 tests/hw/pcsamp_view.py LISTING.source.csv[.gz] FIRST_PC LAST_PC CYCLES [--kernel N]

The samples of the instructions from the first whose address ends in FIRST_PC to the next whose
address ends in LAST_PC (hex, e.g. the last four digits), in the listing's order, are scaled so that they add up to CYCLES, the loop's measured cycles per
trip (e.g. a validation row's cycles per batch): each instruction's line gives the cycles a trip
spends at it and its three largest stall reasons, and the head gives the loop's cycles by reason.
Listings: tests/hw/ncu_pcsamp.sh (traces/h100/validation_pcsamp/)."""
import argparse
import csv
import gzip


def sections(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", newline="") as f:
        out, cur = [], None
        for r in csv.reader(f):
            if r and r[0] == "Kernel Name":
                cur = {"name": r[1], "rows": []}
                out.append(cur)
            elif r and r[0] == "Address" and cur is not None:
                cur["hdr"] = r
            elif cur is not None and r and "hdr" in cur:
                cur["rows"].append(r)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("listing")
    ap.add_argument("first", type=str.lower)
    ap.add_argument("last", type=str.lower)
    ap.add_argument("cycles", type=float)
    ap.add_argument("--kernel", type=int, default=0, help="which kernel of the listing (0 = first)")
    a = ap.parse_args()
    s = sections(a.listing)[a.kernel]
    ix = {k: i for i, k in enumerate(s["hdr"])}
    stalls = [k for k in s["hdr"] if k.startswith("stall_") and "Not Issued" not in k]
    samples = "Warp Stall Sampling (All Samples)"
    rows, inside = [], False
    for r in s["rows"]:
        inside = inside or r[0].lower().endswith(a.first)
        if inside:
            rows.append(r)
            if r[0].lower().endswith(a.last):
                break
    total = sum(float(r[ix[samples]] or 0) for r in rows)
    if total == 0:
        raise SystemExit(f"no samples from {a.first} to {a.last} in {s['name'][:60]}")
    per = a.cycles / total
    print(f"{s['name'][:90]}\n{len(rows)} instructions, {total:.0f} samples, {per:.4f} cycles per sample")
    by = {k: sum(float(r[ix[k]] or 0) for r in rows) * per for k in stalls}
    for k, v in sorted(by.items(), key=lambda x: -x[1]):
        if v >= 0.5:
            print(f"  {k[6:]:<20} {v:7.1f}")
    for r in rows:
        top = sorted(((float(r[ix[k]] or 0) * per, k[6:]) for k in stalls), reverse=True)[:3]
        why = " ".join(f"{k}:{v:.1f}" for v, k in top if v >= 0.05)
        print(f"{r[0][-4:]} {r[1][:60]:<60} {float(r[ix[samples]] or 0) * per:6.1f}  {why}")


if __name__ == "__main__":
    main()
