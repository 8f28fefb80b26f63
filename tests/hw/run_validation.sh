#!/usr/bin/env bash
# Builds and runs tests/hw/validation.cu on the local GPU (an H100 for traces/h100/validation*.csv),
# then profiles a subset with Nsight Compute and classifies what binds each kernel. Needs nvcc, a GPU
# and ncu; CI has none of them and never runs this.
#
#   tests/hw/run_validation.sh [OUTDIR [BUDGET_S]]   OUTDIR defaults to $OUT, else ./out;
#                                                    BUDGET_S: no new configuration starts after it (300)
#
# Writes into OUTDIR:
#   validation.csv, validation_primitives.csv   the timed rows (columns: traces/h100/README.md)
#   validation.meta.txt   GPU, clocks, driver, date, the exact commands, nvcc version, exit statuses
#   log.txt               what the programs printed (residency failures, skipped configurations)
#   ncu_configs.csv       the profiled configurations, in launch order
#   ncu.csv[.gz]          ncu's raw CSV (tests/hw/ncu_profile.sh; gzipped when over 2 MB)
#   ncu_limits.csv        per configuration: its identity, ncu_limits.py's columns, and raw evidence
#   validation.sass.gz    cuobjdump -sass of the program
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
outdir="${1:-${OUT:-./out}}"
budget="${2:-300}"
mkdir -p "$outdir"
outdir="$(cd "$outdir" && pwd)"
build="$(mktemp -d)"
trap 'rm -rf "$build"' EXIT
NVCC="${NVCC:-nvcc}"
NVCCFLAGS=(-O3 -std=c++17 -arch=sm_90)
meta="$outdir/validation.meta.txt"
log="$outdir/log.txt"
status=0
{
  echo "command: $0 $*"
  echo "cwd: $(pwd)"
  echo "date_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(hostname)"
  echo "nvcc: $("$NVCC" --version | tail -n 2 | tr '\n' ' ')"
  echo "nvcc_flags: ${NVCCFLAGS[*]}"
  echo "ncu: $(ncu --version 2>/dev/null | tail -n 1)"
  echo "--- nvidia-smi before the runs"
  nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv
  nvidia-smi --query-gpu=clocks.mem,clocks.max.mem,power.draw,temperature.gpu,pstate --format=csv
} >"$meta" 2>&1

if ! "$NVCC" "${NVCCFLAGS[@]}" -o "$build/validation" "$here/validation.cu" >"$build/buildlog" 2>&1; then
  cat "$build/buildlog"; echo "build: FAILED" >>"$meta"; exit 1
fi
command -v cuobjdump >/dev/null && cuobjdump -sass "$build/validation" | gzip -9 >"$outdir/validation.sass.gz"

start=$(date +%s%N)
timeout 400 "$build/validation" "$outdir" "$budget" >"$log" 2>&1
rc=$?
end=$(date +%s%N)
echo "run_validation: $build/validation $outdir $budget rc=$rc ms=$(( (end - start) / 1000000 ))" >>"$meta"
[ "$rc" -eq 0 ] || status=1
grep -E "^sm_clock|^validation:|^primitives done" "$log" >>"$meta"

# Nsight Compute: one launch per configuration (ncu replays it; its cache control flushes the caches
# before every pass, so the input comes from DRAM). Clocks are left alone (--clock-control none).
start=$(date +%s%N)
timeout 180 bash "$here/ncu_profile.sh" "$outdir/ncu.csv" 'with_|primitive_copies' \
  "$build/validation" --ncu "$outdir" >>"$log" 2>&1
rc=$?
end=$(date +%s%N)
echo "run_ncu: ncu_profile.sh ncu.csv 'with_|primitive_copies' validation --ncu OUTDIR rc=$rc ms=$(( (end - start) / 1000000 ))" >>"$meta"
[ "$rc" -eq 0 ] || status=1

python3 - "$here" "$outdir" >>"$log" 2>&1 <<'PY' || { echo "ncu_limits: FAILED" >>"$meta"; status=1; }
# ncu_limits.csv: each profiled configuration (ncu_configs.csv, in launch order = ncu's ID order),
# ncu_limits.py's columns for it, and the raw evidence: issued warps per scheduler, DRAM %, memory pipes
# busy %, and the three largest stall reasons (warps stalled per issued instruction).
import csv, re, sys
sys.path.insert(0, sys.argv[1])
import ncu_limits as L
out = sys.argv[2]
cfgs = list(csv.DictReader(open(out + "/ncu_configs.csv")))
ks = sorted(L.load(out + "/ncu.csv").items())
assert len(ks) == len(cfgs), f"{len(ks)} profiled kernels for {len(cfgs)} configurations"
ident = ["kernel", "stages", "block_size", "blocks_per_sm", "k", "batch_sz", "source", "divergence", "per_group"]
w = csv.writer(open(out + "/ncu_limits.csv", "w"), lineterminator="\n")
w.writerow(ident + ["file", "ncu_kernel", "grid", "class", "also_accepted", "dram_pct", "mem_pipes_pct",
                    "issue_per_scheduler", "top_stall", "top_stall_per_issue",
                    "raw_issued_warp_per_scheduler", "raw_dram_throughput_pct", "raw_mem_pipes_busy_pct",
                    "stall_1", "stall_1_per_issue", "stall_2", "stall_2_per_issue", "stall_3", "stall_3_per_issue"])
for cfg, ((i, name, grid), m) in zip(cfgs, ks):
    assert cfg["kernel"] in name, (cfg, name)
    c, d, pi, iss, top, tv, also = L.classify(m)
    # ncu_limits.py's short name, after dropping the anonymous namespace (ncu prints "<unnamed>::")
    short = re.sub(r"\(.*", "", name.replace("(anonymous namespace)::", "").replace("<unnamed>::", "")).replace("void ", "")
    short = short.replace(",", ";").replace(" ", "")
    stalls = sorted(((L.f(v), n[34:-23]) for n, v in m.items()
                     if n.startswith("smsp__average_warps_issue_stalled_") and n[34:-23] != "selected"),
                    reverse=True)[:3]
    row = [cfg[c_] for c_ in ident] + ["ncu", short, grid.strip("()").split(",")[0], c, also, f"{d:.1f}", f"{pi:.1f}",
                                       f"{iss:.2f}", top, f"{tv:.2f}", m.get("Issued Warp Per Scheduler", ""),
                                       m.get("DRAM Throughput", ""), m.get("Mem Pipes Busy", "")]
    for v, n in stalls:
        row += [n, f"{v:.2f}"]
    w.writerow(row)
    print("ncu_limits:", ",".join(row))
PY
[ -f "$outdir/ncu.csv" ] && [ "$(stat -c %s "$outdir/ncu.csv")" -gt 2000000 ] && gzip -9 "$outdir/ncu.csv"

{
  echo "--- nvidia-smi after the runs"
  nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv
  echo "status: $status"
} >>"$meta" 2>&1
exit $status
