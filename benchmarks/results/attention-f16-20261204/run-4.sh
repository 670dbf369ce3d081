#!/usr/bin/env bash
# Wider tiles (128 keys, 3 stages) for bf16 against flash and for fp32 with SPLIT 31, at the
# four non-causal shapes of 1024 and 4096 keys (SHAPES overrides them).
# Usage (repository root, GPU machine): OUT=DIR bash benchmarks/results/attention-f16-20261204/run-4.sh
set -u
export PYTHONPATH=$PWD/src:$PWD/benchmarks PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/gpu.txt
timeout 400 python3 benchmarks/attention_gpu.py --out $OUT/attention.jsonl --budget-ms 100 \
    --precisions bf16x3 --sweep --splits 31 \
    --configs '[[128,128,8,2],[128,128,8,3],[128,64,4,3],[128,128,4,2],[64,128,4,2],[128,64,8,3],[64,64,4,3],[128,64,4,2]]' \
    --shapes "${SHAPES:-[[16,8,1024,64,0],[16,8,1024,128,0],[4,16,4096,128,0],[4,16,4096,64,0]]}" \
    > $OUT/attention-log.txt 2>&1
python3 benchmarks/results/attention-split-20261204/show.py $OUT/attention.jsonl
