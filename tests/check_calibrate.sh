#!/usr/bin/env bash
# `smsim calibrate` reproduces the shipped machine config from the shipped CSVs, byte for byte:
# no field of configs/machines/h100.json is edited by hand (README, "How well smsim agrees").
# One of those CSVs is itself derived: pcsamp_latency.csv from the shipped ncu sampling listings
# (tests/hw/pcsamp_latency.py), which must reproduce it first.
#   tests/check_calibrate.sh SMSIM
set -u
smsim="$1"
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
python3 tests/hw/pcsamp_latency.py traces/h100/callforms_pcsamp.csv.gz traces/h100/callforms.csv tests/hw/callforms.cu \
	traces/h100/roundtrip_pcsamp.csv.gz traces/h100/roundtrip.csv >"$out" || { echo "pcsamp_latency.py failed"; exit 1; }
if ! cmp -s "$out" traces/h100/pcsamp_latency.csv; then
	echo "traces/h100/pcsamp_latency.csv is not what tests/hw/pcsamp_latency.py derives from the shipped listings:"
	diff "$out" traces/h100/pcsamp_latency.csv | head -20
	exit 1
fi
"$smsim" calibrate traces/h100 -o "$out" || { echo "calibrate failed"; exit 1; }
if ! cmp -s "$out" configs/machines/h100.json; then
	echo "configs/machines/h100.json is not what 'smsim calibrate traces/h100' derives:"
	diff "$out" configs/machines/h100.json | head -40
	exit 1
fi
echo "configs/machines/h100.json = smsim calibrate traces/h100"
