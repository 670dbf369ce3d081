#!/usr/bin/env bash
# kernelcraft generate over the whole suite on a GPU: full-size judge with timings against
# eager and torch.compile, per-group kernel-or-eager choice, cross-compilation for sm_90 and
# gfx942. Resumable (results are appended per problem).
# Usage (repository root, on the GPU machine): bash benchmarks/generate_gpu.sh
set -uo pipefail
OUT=${OUT:-benchmarks/results/generate-$(date +%Y%m%d)}
mkdir -p "$OUT"
export PYTHONPATH=$PWD/src:${PYTHONPATH:-}
export PYTHONUNBUFFERED=1
python3 benchmarks/generate_suite.py benchmarks/problems --device cuda --targets sm_90,gfx942 \
    --out out/suite-gpu --results "$OUT/results.jsonl" "$@" 2>&1 | tee -a "$OUT/log.txt"
