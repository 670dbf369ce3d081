#!/usr/bin/env bash
# generate_gpu.sh for a list of problems, one at a time on one GPU (PER_GPU, default 1:
# nothing else runs on the GPU while a problem is judged and timed), stopped after LIMIT
# seconds keeping what finished (the suite runs in its own session, so the stop reaches
# its Python children). Usage (repository root, GPU machine):
#   OUT=benchmarks/results/NAME LIMIT=480 bash benchmarks/generate_gpu_limited.sh PROBLEM ...
set -u
: "${OUT:?set OUT to the results directory}"
mkdir -p "$OUT"
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
rm -rf out/suite-gpu
log="$OUT/log-run-$(date +%H%M%S).txt"
setsid env OUT="$OUT" PER_GPU="${PER_GPU:-1}" bash benchmarks/generate_gpu.sh --only "$@" \
    > "$log" 2>&1 &
# a bracket pattern: the command lines that carry it never match it themselves
pat='[g]enerate_suite[.]py'
timeout "${LIMIT:-480}" bash -c "sleep 5; while pgrep -f '$pat' > /dev/null; do sleep 3; done"
pkill -f "$pat"; sleep 2
grep -E ": (ok|FAIL|error)" "$log" | tail -40
