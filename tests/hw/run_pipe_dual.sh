#!/bin/bash
# pipe_dual on the device (clocks left alone): the timed loops, their SASS, and Nsight Compute's
# instructions per pipe for each test at 1 and 8 warps per scheduler.
#   nvcc -O3 -std=c++17 -arch=sm_90 -lineinfo tests/hw/pipe_dual.cu -o hwbin/pipe_dual
#   bash tests/hw/run_pipe_dual.sh OUTDIR -> pipe_dual.csv, pipe_dual.sass, pipe_dual_ncu.csv
set -u
out=${1:?usage: run_pipe_dual.sh OUTDIR}
./hwbin/pipe_dual "$out" > "$out/pipe_dual.log" 2>&1 || exit 1
# the loops' SASS, both words of each instruction, without the NOP padding after EXIT
cuobjdump -sass hwbin/pipe_dual | awk '/Function/ {print; next} /NOP/ {getline; next} /^ +\/\*[0-9a-f]{4}\*\// {print; getline; print}' \
  > "$out/pipe_dual.sass"
m=smsp__inst_executed.sum,sass__inst_executed_per_opcode
for p in alu fmaheavy fma; do m=$m,sm__inst_executed_pipe_$p.sum; done
ncu --clock-control none --csv --print-units base --metrics "$m" --print-metric-instances details \
  -k regex:dual_kernel ./hwbin/pipe_dual /tmp ncu 2>"$out/pipe_dual_ncu.err" | grep '^"' > "$out/ncu_raw.csv"
python3 - "$out/ncu_raw.csv" > "$out/pipe_dual_ncu.csv" <<'PY'
import csv, re, sys
tests = ["alu", "imad", "i2fp", "cs2r", "lea", "add"]  # dual_kernel<T>'s T, in pipe_dual.cu's order
rows = {}
for x in csv.DictReader(open(sys.argv[1])):
    d = rows.setdefault(int(x["ID"]), {"test": tests[int(re.search(r"dual_kernel<(\d+)>", x["Kernel Name"]).group(1))],
                                        "warps_per_scheduler": int(x["Block Size"].strip("()").split(",")[0]) // 128})
    if x["Metric Name"] == "sass__inst_executed_per_opcode":
        d["opcodes"] = ";".join(kv.replace(": ", ":").replace(",", "")
                                for kv in re.search(r"\((.*)\)", x["Metric Value"]).group(1).split("; "))
    else:
        d[x["Metric Name"].replace("sm__inst_executed_pipe_", "pipe_").replace(".sum", "")] = x["Metric Value"].replace(",", "")
w = csv.DictWriter(sys.stdout, ["test", "warps_per_scheduler", "smsp__inst_executed", "pipe_alu", "pipe_fmaheavy",
                                "pipe_fma", "opcodes"], lineterminator="\n", extrasaction="ignore")
w.writeheader()
for i in sorted(rows):
    w.writerow(rows[i])
PY
