#!/usr/bin/env bash
# The shipped heuristic (bf16 pieces split beforehand for fp32) at the 12 shapes of
# attention_gpu.py, causal and not, with two more D = 128 tiles, and bf16 against flash.
# Usage (repository root, GPU machine): OUT=DIR bash benchmarks/results/attention-split-20261204/run-3.sh
set -u
export PYTHONPATH=$PWD/src:$PWD/benchmarks PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/gpu.txt
timeout ${LIMIT:-560} python3 benchmarks/attention_gpu.py --out $OUT/attention.jsonl \
    --budget-ms 150 --precisions bf16x3 --sweep --splits 15 \
    --configs '[[64,64,4,2],[128,64,8,1]]' > $OUT/attention-log.txt 2>&1
python3 benchmarks/results/attention-split-20261204/show.py $OUT/attention.jsonl
