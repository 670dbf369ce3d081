#!/usr/bin/env bash
# Direct launches on one H200: generated modules (made without a GPU, `generate --no-judge
# --no-build`, all groups as kernels, under MODS) timed with and without the direct launch
# path (benchmarks/fast_launch.py), then a few problems through the whole `generate` on the
# GPU (judge, timings vs eager and torch.compile), stopped after LIMIT seconds.
# Usage (repository root, GPU machine): MODS=dir OUT=dir LIMIT=360 bash run.sh PROBLEM ...
set -u
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt"
pairs=()
for m in "$MODS"/*/kernel.py; do
    p=$(basename "$(dirname "$m")")
    pairs+=("benchmarks/problems/$p.py" "$m")
done
python3 benchmarks/fast_launch.py "$OUT/fast_launch.jsonl" "${pairs[@]}" > "$OUT/fast_launch.txt" 2>&1
tail -4 "$OUT/fast_launch.txt"
[ $# -gt 0 ] && OUT="$OUT/generate" LIMIT="${LIMIT:-360}" bash benchmarks/generate_gpu_limited.sh "$@"
