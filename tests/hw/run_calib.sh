#!/usr/bin/env bash
# Builds and runs the instruction-class and call-form calibration benchmarks (tests/hw/iclass.cu,
# tests/hw/callforms.cu) on the local GPU (an H100 for traces/h100/). Needs nvcc and a GPU;
# CI has neither and never runs this.
#
#   tests/hw/run_calib.sh [OUTDIR]          OUTDIR defaults to $OUT, else ./out
#   CALIB_BIN=DIR tests/hw/run_calib.sh ... runs the binaries DIR/iclass and DIR/callforms (built
#                                           elsewhere with the same command) instead of building
#   tests/hw/run_calib.sh --post OUTDIR     only the SASS step below, on OUTDIR's files
#
# Writes into OUTDIR: iclass.csv, callforms.csv (columns: traces/h100/README.md), iclass.sass and
# callforms.sass (cuobjdump -sass), calib.meta.txt (GPU, clocks, driver, date, nvcc, the exact
# commands, each program's exit status and run time), log.txt (everything the programs printed,
# with the slowest and fastest warp beside warp 0's time) and check.txt: for every timed loop in
# the SASS, its instructions by opcode, so that one can see that each loop holds what it means
# to time (256 instructions of its class per trip). The SASS step also fills callforms.csv's
# sass_instructions_per_iteration: the warp-instructions one iteration executes, from ncu's
# per-instruction execution counts (ncu_source.csv; ncu runs with --clock-control none) summed
# over the timed loop's body (the loop is found as the backward branch whose head and end lie
# next to the two clock reads), or the body's static count where ncu is missing. It also drops
# iclass.csv rows whose timed loop does not hold the instructions it is meant to time.
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

post() {
  local dir="$1"
  python3 - "$dir" <<'PY'
import collections, re, sys
out = sys.argv[1]

def parse(path):
    funcs, cur = {}, None
    for line in open(path, errors="replace"):
        m = re.search(r"Function : (\S+)", line)
        if m:
            cur = m.group(1)
            funcs[cur] = []
            continue
        m = re.search(r"/\*([0-9a-f]{4,6})\*/\s+(.*?)\s*;", line)
        if m and cur is not None:
            funcs[cur].append((int(m.group(1), 16), m.group(2).strip()))
    return funcs

def opcode(ins):
    s = re.sub(r"^@!?U?P[T0-9]+\s+", "", ins)
    return s.split()[0] if s else ""

def loops(code):
    """Timed-loop candidates: backward branches with no clock read inside, each with the clock
    reads nearest before its head and after its end (score = instructions between them)."""
    addr_idx = {a: i for i, (a, _) in enumerate(code)}
    clocks = [i for i, (_, s) in enumerate(code) if "SR_CLOCKLO" in s]
    cands = []
    for i, (a, s) in enumerate(code):
        if not opcode(s).startswith("BRA"):
            continue
        m = re.search(r"0x([0-9a-f]+)\s*$", s)
        if not m:
            continue
        t = int(m.group(1), 16)
        if t >= a or t not in addr_idx:
            continue
        h = addr_idx[t]
        if any(h <= c <= i for c in clocks):
            continue
        before = [c for c in clocks if c < h]
        after = [c for c in clocks if c > i]
        if not before or not after:
            continue
        cands.append({"head": h, "end": i, "score": (h - before[-1]) + (after[0] - i)})
    return cands

def describe(code, c):
    body = code[c["head"]:c["end"] + 1]
    hist = collections.Counter(opcode(s) for _, s in body)
    return body, ", ".join(f"{k} {v}" for k, v in sorted(hist.items(), key=lambda kv: -kv[1]))

def pick(cands, sel):
    if not cands:
        return None
    if sel is not None:
        return cands[sel] if sel < len(cands) else None
    return min(cands, key=lambda c: c["score"])

def rows_with_tags(csvname, logname, section):
    rows = open(f"{out}/{csvname}").read().splitlines()
    if rows and not any(",K:" in r for r in rows[1:]):
        # already post-processed: take the tagged rows from the log instead
        log = open(f"{out}/{logname}").read().splitlines()
        start = log.index(f"== {section}") + 2
        end = next((k for k in range(start, len(log)) if log[k].startswith("== ")), len(log))
        rows = [rows[0]] + [l for l in log[start:end] if ",K:" in l]
    return rows

def find_func(funcs, *parts):
    match = [n for n in funcs if all(p in n for p in parts)]
    return match[0] if len(match) == 1 else None

lines = []
# ---- iclass: every kernel's timed loop must hold kPerTrip = 256 instructions of its opcode
# per trip; rows of a kernel where it does not are dropped (and listed here).
PER_TRIP = 256
funcs = parse(f"{out}/iclass.sass")
rows = rows_with_tags("iclass.csv", "log.txt", "iclass.csv")
verdict = {}
kept = []
for r in rows[1:]:
    head, tag = r.rsplit(",K:", 1)
    ktag, expect = tag.split(":", 1)
    if ktag not in verdict:
        name = find_func(funcs, "iclass_kernelI" + ktag + "EEvNS_6ParamsE")
        lines.append(f"== iclass {ktag} (expect {expect})")
        ok = False
        if name is None:
            lines.append("   kernel not found")
        else:
            code = funcs[name]
            cands = loops(code)
            c = pick(cands, None)
            for k, cc in enumerate(cands):
                body, hist = describe(code, cc)
                lines.append(f" {'*' if cc is c else ' '} loop {k} [{code[cc['head']][0]:#06x}..{code[cc['end']][0]:#06x}] {len(body)} instructions: {hist}")
            if c is None:
                lines.append("   no timed loop found")
            else:
                body, _ = describe(code, c)
                n = sum(1 for _, s in body if re.search(expect, opcode(s)))
                ok = expect == "-" or PER_TRIP <= n <= PER_TRIP + 4
                lines.append(f"   {n} instructions match {expect} per trip: {'OK' if ok else 'FAILED, rows dropped'}")
                lines.append("   first instructions: " + " | ".join(s for _, s in body[:12]))
                lines.append("   last instructions:  " + " | ".join(s for _, s in body[-6:]))
        verdict[ktag] = ok
    if verdict[ktag]:
        kept.append(head)
# several chain counts for one (class, sass, W, mode): keep the largest that passed
best = {}
for h in kept:
    f = h.split(",")
    key = tuple(f[0:4])
    if key not in best or int(f[4]) > int(best[key].split(",")[4]):
        best[key] = h
final = [h for h in kept if best[tuple(h.split(",")[0:4])] is h]
open(f"{out}/iclass.csv", "w").write("\n".join([rows[0]] + final) + "\n")
lines.append(f"iclass.csv: {len(final)} rows kept of {len(rows) - 1}")

# ---- callforms: the timed loop of each form's kernel. sass_instructions_per_iteration is the
# number of warp-instructions one iteration executes: ncu's per-instruction execution counts
# (SourceCounters, one block of 4 warps, callforms --profile) summed over the loop's body and
# divided by warps x iterations; where ncu's counts are missing, the loop body's static count.
funcs = parse(f"{out}/callforms.sass")
prof = {}  # kernel tag -> (iterations, warps)
for l in open(f"{out}/log.txt"):
    if l.startswith("PROFILE,"):
        _, k, it, w = l.strip().split(",")
        prof[k] = (int(it), int(w))
executed = {}  # kernel tag -> list of (SASS text, per-instruction warp-level execution count)
try:
    import csv as csvmod
    sections, hdr = [], None
    for rec in csvmod.reader(open(f"{out}/ncu_source.csv", errors="replace")):
        if not rec:
            continue
        if rec[0] == "Kernel Name":
            sections.append((rec[1], []))
            hdr = None
        elif "Instructions Executed" in rec and "Source" in rec:
            hdr = rec
        elif hdr and sections and len(rec) >= len(hdr):
            v = rec[hdr.index("Instructions Executed")].replace(",", "")
            sections[-1][1].append((rec[hdr.index("Source")].strip(), float(v) if v else 0.0))
    # ncu prints each kernel's page twice: keep one of each
    uniq = [sec for k, sec in enumerate(sections) if k == 0 or sec != sections[k - 1]]
    order = list(prof)  # the profile pass launched the kernels in this order
    for k, (kname, recs) in enumerate(uniq):
        if k < len(order) and re.match(r"[a-z_]+", order[k]).group(0) in kname:
            executed[order[k]] = recs
except OSError:
    pass
lines.append(f"ncu per-instruction counts: {len(executed)} kernels")
rows = rows_with_tags("callforms.csv", "log.txt", "callforms.csv")
counts = {}
new = [rows[0]]
for r in rows[1:]:
    head, tag = r.rsplit(",K:", 1)
    if tag not in counts:
        kern, _, sel = tag.partition("#")
        sel = int(sel) if sel else None
        name = find_func(funcs, kern + "E")
        if name is None:
            name = find_func(funcs, kern)
        n_ins = "NA"
        lines.append(f"== callforms {tag} ({head.split(',')[0]})")
        if name is None:
            lines.append("   kernel not found uniquely")
        else:
            code = funcs[name]
            cands = loops(code)
            c = pick(cands, sel)
            for k, cc in enumerate(cands):
                body, hist = describe(code, cc)
                lines.append(f" {'*' if cc is c else ' '} loop {k} [{code[cc['head']][0]:#06x}..{code[cc['end']][0]:#06x}] score {cc['score']}, {len(body)} instructions: {hist}")
            if c is not None:
                body, _ = describe(code, c)
                n_ins = str(len(body))
                src = "static"
                ex = executed.get(kern)
                if ex is not None and [opcode(re.sub(r"\s+", " ", t)) for t, _ in ex[:len(code)]] != [opcode(t) for _, t in code]:
                    lines.append("   ncu's instructions differ from the SASS: static count")
                    ex = None
                if ex is not None:
                    ex = [v for _, v in ex]
                    it, w = prof[kern]
                    dyn = sum(ex[c["head"]:c["end"] + 1]) / (it * w)
                    n_ins = f"{dyn:.1f}"
                    src = f"ncu ({it} iterations x {w} warps)"
                    lines.append(f"   executed per iteration per warp: {dyn:.2f} (static body {len(body)})")
                    lines.append("   per instruction: " + " | ".join(
                        f"{a:#06x} {s} x{ex[c['head'] + q] / (it * w):.2f}" for q, (a, s) in enumerate(body)))
                else:
                    lines.append("   loop: " + " | ".join(f"{a:#06x} {s}" for a, s in body))
                lines.append(f"   sass_instructions_per_iteration = {n_ins} ({src})")
        counts[tag] = n_ins
    new.append(f"{head},{counts[tag]}")
open(f"{out}/callforms.csv", "w").write("\n".join(new) + "\n")
open(f"{out}/check.txt", "w").write("\n".join(lines) + "\n")
print(f"check.txt: {len(lines)} lines; iclass.csv: {len(final)} rows; callforms.csv: {len(new) - 1} rows")
PY
}

if [ "${1:-}" = "--post" ]; then
  post "$2"
  exit $?
fi

outdir="${1:-${OUT:-./out}}"
mkdir -p "$outdir"
outdir="$(cd "$outdir" && pwd)"
benches=(iclass callforms)
NVCC="${NVCC:-nvcc}"
NVCCFLAGS=(-O3 -std=c++17 -arch=sm_90)

meta="$outdir/calib.meta.txt"
{
  echo "command: $0 $*"
  echo "cwd: $(pwd)"
  echo "date_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(hostname)"
  echo "nvcc: $("$NVCC" --version 2>/dev/null | tail -n 2 | tr '\n' ' ')"
  echo "nvcc_flags: ${NVCCFLAGS[*]}"
  echo "--- nvidia-smi before the runs"
  nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv
  nvidia-smi --query-gpu=clocks.mem,clocks.max.mem,power.draw,temperature.gpu,pstate --format=csv
} >"$meta" 2>&1

status=0
if [ -n "${CALIB_BIN:-}" ]; then
  bin="$(cd "$CALIB_BIN" && pwd)"
  echo "binaries: prebuilt in $bin, built with: $NVCC ${NVCCFLAGS[*]} -o BIN/NAME tests/hw/NAME.cu" >>"$meta"
  for b in "${benches[@]}"; do
    echo "binary_$b: sha256 $(sha256sum "$bin/$b" | cut -c1-16)" >>"$meta"
  done
else
  bin="$(mktemp -d)"
  trap 'rm -rf "$bin"' EXIT
  pids=()
  for b in "${benches[@]}"; do
    echo "build_$b: $NVCC ${NVCCFLAGS[*]} -o BIN/$b $here/$b.cu" >>"$meta"
    "$NVCC" "${NVCCFLAGS[@]}" -o "$bin/$b" "$here/$b.cu" >"$bin/$b.buildlog" 2>&1 &
    pids+=($!)
  done
  for i in "${!benches[@]}"; do
    if ! wait "${pids[$i]}"; then
      echo "build of ${benches[$i]} FAILED:"; cat "$bin/${benches[$i]}.buildlog"
      echo "build_${benches[$i]}: FAILED" >>"$meta"; status=1
    fi
  done
fi

log="$outdir/log.txt"
: >"$log"
for b in "${benches[@]}"; do
  [ -x "$bin/$b" ] || continue
  start=$(date +%s%N)
  timeout 280 "$bin/$b" "$outdir" >>"$log" 2>&1
  rc=$?
  end=$(date +%s%N)
  echo "run_$b: $bin/$b $outdir: rc=$rc ms=$(( (end - start) / 1000000 ))" >>"$meta"
  [ "$rc" -eq 0 ] || status=1
done

if command -v cuobjdump >/dev/null; then
  for b in "${benches[@]}"; do
    [ -x "$bin/$b" ] && cuobjdump -sass "$bin/$b" >"$outdir/$b.sass" 2>&1
  done
  echo "sass: cuobjdump -sass BIN/NAME > NAME.sass ($(cuobjdump --version | tail -n 1))" >>"$meta"
else
  echo "cuobjdump: not found, no SASS" >>"$meta"
fi
# Per-instruction execution counts of every call form's kernel (one block, W = 1), for
# sass_instructions_per_iteration. --clock-control none: ncu leaves the GPU's clocks alone.
if command -v ncu >/dev/null && [ -x "$bin/callforms" ]; then
  ncutmp="$(mktemp -d)"
  start=$(date +%s%N)
  timeout 300 ncu --clock-control none --section SourceCounters -f -o "$ncutmp/cf" "$bin/callforms" "$ncutmp" --profile \
    >"$ncutmp/profile.log" 2>&1
  rc=$?
  grep -E "^PROFILE," "$ncutmp/profile.log" >>"$log"
  ncu --import "$ncutmp/cf.ncu-rep" --page source --csv --print-source sass >"$outdir/ncu_source.csv" 2>"$ncutmp/import.err"
  rc2=$?
  end=$(date +%s%N)
  {
    echo "ncu: $(ncu --version | tail -n 1)"
    echo "ncu_profile: ncu --clock-control none --section SourceCounters -f -o TMP/cf BIN/callforms TMP --profile: rc=$rc ms=$(( (end - start) / 1000000 ))"
    echo "ncu_import: ncu --import TMP/cf.ncu-rep --page source --csv --print-source sass > ncu_source.csv: rc=$rc2"
    tail -n 5 "$ncutmp/profile.log" | sed 's/^/  profile.log: /'
    tail -n 5 "$ncutmp/import.err" | sed 's/^/  import.err: /'
  } >>"$meta"
  rm -rf "$ncutmp"
else
  echo "ncu: not run (no ncu), sass_instructions_per_iteration from the static loop bodies" >>"$meta"
fi
post "$outdir" >>"$log" 2>&1 || { echo "sass check: FAILED" >>"$meta"; status=1; }

{
  echo "--- nvidia-smi after the runs"
  nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv
  echo "status: $status"
} >>"$meta" 2>&1
exit $status
