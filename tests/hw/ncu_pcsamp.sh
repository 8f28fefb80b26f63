#!/bin/bash
# Nsight Compute's per-instruction warp sampling of validation configurations, one report each, so that a
# kernel's cycles can be split by SASS instruction and stall reason (tests/hw/pcsamp_view.py reads them).
# Clocks and caches are left alone and every pass replays the whole program (--replay-mode application), so
# the program's own L2 flush holds in the pass that samples: a DRAM row stays a DRAM row.
#   ncu_pcsamp.sh VALIDATION_BINARY OUTDIR CONFIG...
# CONFIG is validation --ncu's kernel:stages:block_size:blocks_per_sm:k[:d:per_group], or L2:CONFIG for the
# input warmed in L2 first (VALIDATION_NCU_L2; the report then holds the warm-up launch and the measured one).
# Writes OUTDIR/<config with : as _>.source.csv.gz (ncu --page source --print-source sass) and .details.csv.gz.
set -u
[ $# -ge 3 ] || { echo "usage: $0 VALIDATION_BINARY OUTDIR CONFIG..." >&2; exit 2; }
bin=$(realpath "$1") out=$2; shift 2
mkdir -p "$out"
work=$(mktemp -d)
for cfg in "$@"; do
  name=$(echo "$cfg" | tr ':' '_')
  run=$cfg
  if [ "${cfg#L2:}" != "$cfg" ]; then run=${cfg#L2:}; export VALIDATION_NCU_L2=1; else unset VALIDATION_NCU_L2; fi
  ncu --clock-control none --cache-control none --replay-mode application \
      --section SourceCounters --section WarpStateStats --section SpeedOfLight \
      -o "$work/$name" -k "regex:primitive|diverged|with_" "$bin" --ncu "$work" "$run" > "$work/$name.log" 2>&1 ||
    { echo "ncu failed for $cfg (log: $work/$name.log)" >&2; continue; }
  ncu -i "$work/$name.ncu-rep" --page source --csv --print-source sass | gzip -9 > "$out/$name.source.csv.gz"
  ncu -i "$work/$name.ncu-rep" --page details --csv | gzip -9 > "$out/$name.details.csv.gz"
done
