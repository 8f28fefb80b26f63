#!/usr/bin/env bash
# Builds and runs every hardware microbenchmark in tests/hw/ on the local GPU (an H100 for the
# reference traces in traces/h100/). Needs nvcc and a GPU; CI has neither and never runs this.
#
#   tests/hw/run_all.sh [OUTDIR]      OUTDIR defaults to $OUT, else ./out
#
# Writes one CSV per benchmark into OUTDIR (columns: see traces/h100/README.md), meta.txt
# (GPU, clocks, driver, date, the exact command, nvcc version, each benchmark's exit status),
# *.sass (disassembly of every benchmark, where cuobjdump exists)
# and log.txt (everything the benchmarks printed).
set -u
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
outdir="${1:-${OUT:-./out}}"
mkdir -p "$outdir"
outdir="$(cd "$outdir" && pwd)"
build="$(mktemp -d)"
trap 'rm -rf "$build"' EXIT
benches=(mem_latency sync_alu bandwidth pipelines diverged_commit anatomy roundtrip contention iclass callforms chain special_latency trywait_window warp_order diverge fence copy_burst yield_window l2_capacity local_latency inflight_latency s2r_mio port_share fetch_granularity barrier_lines lane_copies_sm burst_math imad_wide)
NVCC="${NVCC:-nvcc}"
NVCCFLAGS=(-O3 -std=c++17 -arch=sm_90)

meta="$outdir/meta.txt"
{
  echo "command: $0 $*"
  echo "cwd: $(pwd)"
  echo "date_utc: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(hostname)"
  echo "nvcc: $("$NVCC" --version | tail -n 2 | tr '\n' ' ')"
  echo "nvcc_flags: ${NVCCFLAGS[*]}"
  echo "--- nvidia-smi before the runs"
  nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv
  nvidia-smi --query-gpu=clocks.mem,clocks.max.mem,power.draw,temperature.gpu,pstate --format=csv
} >"$meta" 2>&1

status=0
# Build everything first (in parallel): a compile error shows before any device time is used.
pids=()
for b in "${benches[@]}"; do
  "$NVCC" "${NVCCFLAGS[@]}" -o "$build/$b" "$here/$b.cu" >"$build/$b.buildlog" 2>&1 &
  pids+=($!)
done
for i in "${!benches[@]}"; do
  if ! wait "${pids[$i]}"; then
    echo "build of ${benches[$i]} FAILED:"; cat "$build/${benches[$i]}.buildlog"
    echo "build_${benches[$i]}: FAILED" >>"$meta"; status=1
  fi
done

log="$outdir/log.txt"
: >"$log"
for b in "${benches[@]}"; do
  [ -x "$build/$b" ] || continue
  start=$(date +%s%N)
  "$build/$b" "$outdir" 2>&1 | tee -a "$log"
  rc=${PIPESTATUS[0]}
  end=$(date +%s%N)
  echo "run_$b: rc=$rc ms=$(( (end - start) / 1000000 ))" >>"$meta"
  [ "$rc" -eq 0 ] || status=1
done

# copy_burst's chained variant under register pressure, so ptxas keeps one address register
# (copy_burst_chained.csv: calibrate's ldgsts_operand_read; its SASS the continuation copy's form)
if "$NVCC" "${NVCCFLAGS[@]}" -maxrregcount=24 -o "$build/copy_burst_chained" "$here/copy_burst.cu" >"$build/chained.buildlog" 2>&1; then
  "$build/copy_burst_chained" "$outdir" chained 2>&1 | tee -a "$log"
  rc=${PIPESTATUS[0]}
  echo "run_copy_burst_chained: rc=$rc" >>"$meta"
  [ "$rc" -eq 0 ] || status=1
else
  echo "build of copy_burst_chained FAILED:"; cat "$build/chained.buildlog"
  echo "build_copy_burst_chained: FAILED" >>"$meta"; status=1
fi

# The benchmarks' other modes: inflight_latency's (inflight_spread.csv: calibrate's dram_spread*;
# inflight_lines.csv: dram_line_latency; inflight_occupancy.csv: evidence only) and trywait_window's
# (trywait_paths.csv: calibrate's diverged_poll_cycles; trywait_restep_fine.csv: diverged_poll_look;
# trywait_partial.csv, trywait_rejoin.csv, trywait_rejoin_fine.csv, trywait_restep.csv, trywait_siblings.csv: evidence)
for run in inflight_latency:spread inflight_latency:occupancy inflight_latency:lines \
           trywait_window:partial trywait_window:paths trywait_window:rejoin trywait_window:restep \
           trywait_window:restep_fine trywait_window:rejoin_fine \
           trywait_window:siblings; do
  b=${run%%:*} mode=${run#*:}
  [ -x "$build/$b" ] || continue
  "$build/$b" "$outdir" "$mode" 2>&1 | tee -a "$log"
  rc=${PIPESTATUS[0]}
  echo "run_${b}_$mode: rc=$rc" >>"$meta"
  [ "$rc" -eq 0 ] || status=1
done

# L1 and the carveout (l1_local.csv, carveout.csv: calibrate's l1_* and smem_carveout_* fields) need ncu's
# counters, not clock64: run_l1_local.sh runs the binary under ncu, l1_local.py joins the two tables
if "$NVCC" "${NVCCFLAGS[@]}" -o "$build/l1_local" "$here/l1_local.cu" >"$build/l1_local.buildlog" 2>&1; then
  "$here/run_l1_local.sh" "$build/l1_local" "$outdir" 2>&1 | tee -a "$log" && python3 "$here/l1_local.py" "$outdir"
  rc=$?
  echo "run_l1_local: rc=$rc" >>"$meta"
  [ "$rc" -eq 0 ] || status=1
else
  echo "build of l1_local FAILED:"; cat "$build/l1_local.buildlog"
  echo "build_l1_local: FAILED" >>"$meta"; status=1
fi

if command -v cuobjdump >/dev/null; then
  [ -x "$build/l1_local" ] && cuobjdump -sass "$build/l1_local" >"$outdir/l1_local.sass" 2>&1
  for b in "${benches[@]}"; do
    [ -x "$build/$b" ] && cuobjdump -sass "$build/$b" >"$outdir/$b.sass" 2>&1
  done
  [ -x "$build/copy_burst_chained" ] && cuobjdump -sass "$build/copy_burst_chained" >"$outdir/copy_burst_chained.sass" 2>&1
else
  echo "cuobjdump: not found, no SASS" >>"$meta"
fi

{
  echo "--- nvidia-smi after the runs"
  nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,driver_version --format=csv
  echo "status: $status"
} >>"$meta" 2>&1
exit $status
