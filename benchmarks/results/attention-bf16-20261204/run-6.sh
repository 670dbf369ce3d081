#!/usr/bin/env bash
# Triton's automatic warp specialization on a minimal bf16 flash kernel (ws_probe.py).
# Usage (repository root, GPU machine): OUT=DIR bash run-6.sh
set -u
export PYTHONPATH=$PWD/src:$PWD/benchmarks PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/gpu.txt
timeout ${S:-200} python3 benchmarks/results/attention-bf16-20261204/ws_probe.py \
    $OUT/probe.jsonl > $OUT/probe-log.txt 2>&1
python3 benchmarks/results/attention-bf16-20261204/rows.py $OUT/probe.jsonl
