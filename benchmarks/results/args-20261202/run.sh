#!/usr/bin/env bash
# Fewer launch arguments and cached split plans for the reduction template, on one H200.
# 1. Host time of one forward of generated modules made on the CPU machine (`generate
#    --no-judge --no-build`) before (BEFORE, at the parent commit of this change) and after
#    (AFTER), through benchmarks/launch_cost.py: with Triton's launches and with them
#    replaced by a no-op (the wrappers' own Python).
# 2. `generate` on the GPU (judge, timings vs eager and torch.compile) for the problems
#    given, stopped after LIMIT seconds keeping what finished.
# Usage (repository root, GPU machine):
#   BEFORE=dir AFTER=dir HOST="p1 p2" OUT=dir LIMIT=420 bash run.sh PROBLEM ...
set -u
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt"
for side in BEFORE AFTER; do
    dir=${!side}
    pairs=()
    for p in $HOST; do pairs+=("benchmarks/problems/$p.py" "$dir/$p/kernel.py"); done
    python3 benchmarks/launch_cost.py "${pairs[@]}" > "$OUT/host-$side.txt" 2>&1
done
grep -h "^module" "$OUT"/host-*.txt
OUT="$OUT/generate" LIMIT="${LIMIT:-420}" bash benchmarks/generate_gpu_limited.sh "$@"
