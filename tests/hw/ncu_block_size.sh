#!/bin/bash
# Nsight Compute's warp states of the documented examples at 256-1,024 threads, one block per SM, k = 0,
# from DRAM (traces/h100/ncu_block_size.csv; its configurations beside smsim's binding limit in
# traces/h100/ncu_limits.csv, file ncu_block_size). No SASS patching: WarpStateStats and the sections
# tests/hw/ncu_profile.sh collects, one validation --ncu launch per configuration.
#   ncu_block_size.sh VALIDATION_BINARY OUT.csv
set -u
[ $# -eq 2 ] || { echo "usage: $0 VALIDATION_BINARY OUT.csv" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
bin=$(realpath "$1") out=$2
work=$(mktemp -d)
: > "$out"
for cfg in with_staging_unified:2:256:1:0 with_staging_unified:2:512:1:0 with_staging_unified:2:1024:1:0 \
           with_staging_unified:4:1024:1:0 with_single_stage:1:512:1:0 with_single_stage:1:1024:1:0 \
           with_staging_scope_thread:2:1024:1:0; do
  bash "$here/ncu_profile.sh" "$work/one.csv" 'with_' "$bin" --ncu "$work" "$cfg" > /dev/null 2>&1 ||
    echo "ncu failed for $cfg" >&2
  echo "# validation --ncu $cfg (tests/hw/ncu_profile.sh, $(date -u +%Y-%m-%d))" >> "$out"
  cat "$work/one.csv" >> "$out"
done
rm -rf "$work"
