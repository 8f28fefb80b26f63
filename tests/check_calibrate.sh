#!/usr/bin/env bash
# `smsim calibrate` reproduces the shipped machine config from the shipped CSVs, byte for byte:
# no field of configs/machines/h100.json is edited by hand (README, "How well smsim agrees").
#   tests/check_calibrate.sh SMSIM
set -u
smsim="$1"
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
"$smsim" calibrate traces/h100 -o "$out" || { echo "calibrate failed"; exit 1; }
if ! cmp -s "$out" configs/machines/h100.json; then
	echo "configs/machines/h100.json is not what 'smsim calibrate traces/h100' derives:"
	diff "$out" configs/machines/h100.json | head -40
	exit 1
fi
echo "configs/machines/h100.json = smsim calibrate traces/h100"
