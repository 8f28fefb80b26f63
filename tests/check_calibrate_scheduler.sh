#!/usr/bin/env bash
# calibrate reads the scheduling policy from issue_order.csv (derive_scheduler): with the shipped
# rows it is gto_lri (check_calibrate.sh); with one block's dependent chains ending one after
# another (the later half of the warps 20% later, as greedy-then-oldest ends them) it is gto, and
# the citation says why.
#   tests/check_calibrate_scheduler.sh SMSIM
set -u
smsim="$1"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
for f in traces/h100/*; do ln -s "$PWD/$f" "$dir/"; done
rm "$dir/issue_order.csv"
awk -F, 'BEGIN { OFS = "," }
	NR > 1 && $1 == "dep" && $2 == "one" && $3 == 4 && $5 >= 8 { $8 = int($8 * 1.2) }
	{ print }' traces/h100/issue_order.csv >"$dir/issue_order.csv"
"$smsim" calibrate "$dir" -o "$dir/m.json" || { echo "calibrate failed"; exit 1; }
line="$(grep '"scheduler"' "$dir/m.json")"
case "$line" in
*'"value": "gto",'*'one after another: the oldest goes'*'the older block goes first'*) ;;
*) echo "expected scheduler gto, one after another, the older block first; got: $line"; exit 1 ;;
esac
echo "issue_order.csv with one block's warps ending apart: $line"
