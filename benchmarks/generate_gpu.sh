#!/usr/bin/env bash
# kernelcraft generate over the whole suite on the GPUs of this machine (one shard per GPU):
# full-size judge with timings against eager and torch.compile, per-group kernel-or-eager
# choice. Cross-compilation is left to the CPU run (generate_suite.py --device cpu), which
# builds every kernel for sm_90 and gfx942. Resumable (results are appended per problem).
# Usage (repository root, on the GPU machine): bash benchmarks/generate_gpu.sh [--only NAME ...]
set -uo pipefail
OUT=${OUT:-benchmarks/results/generate-$(date +%Y%m%d)}
GPUS=${GPUS:-$(nvidia-smi -L | wc -l)}
mkdir -p "$OUT"
export PYTHONPATH=$PWD/src:${PYTHONPATH:-}
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt"
python3 benchmarks/generate_suite.py benchmarks/problems --device cuda --targets sm_90 \
    --no-build --mixed --gpus "$GPUS" --per-gpu "${PER_GPU:-3}" --out out/suite-gpu --results "$OUT/results.jsonl" "$@" \
    2>&1 | tee -a "$OUT/log.txt"
