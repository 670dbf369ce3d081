#!/usr/bin/env bash
# kernelcraft generate on the GPU for programs outside the suite: every *.py of the folders
# in DIRS (names must differ) in one mixed order, PER_GPU shards on one GPU (each times with
# the GPU alone), stopped after LIMIT seconds keeping what finished (rows per shard in
# $OUT/r/results.<i>.jsonl). Usage (repository root, GPU machine):
#   OUT=DIR DIRS="a/programs b/programs" LIMIT=540 bash benchmarks/generate_programs_gpu.sh [--only NAME ...]
set -u
: "${OUT:?set OUT to the results directory}" "${DIRS:?set DIRS to the program folders}"
all=$(mktemp -d)
for d in $DIRS; do cp "$d"/*.py "$all"/; done
mkdir -p "$OUT/r"
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt"
setsid python3 benchmarks/generate_suite.py "$all" --device cuda --targets sm_90 --no-build \
    --mixed --gpus 1 --per-gpu "${PER_GPU:-4}" --out "$all/out" --results "$OUT/r/results.jsonl" \
    "$@" > "$OUT/log.txt" 2>&1 &
# a bracket pattern: the command lines that carry it never match it themselves
pat='[g]enerate_suite[.]py'
timeout "${LIMIT:-540}" bash -c "sleep 5; while pgrep -f '$pat' > /dev/null; do sleep 3; done"
pkill -f "$pat"; sleep 2
grep -E "^[a-z0-9_]+: " "$OUT/log.txt" | tail -60
