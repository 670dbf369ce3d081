#!/usr/bin/env bash
# Second sweep: which operands to split beforehand (SPLIT bits: 1 pieces, 2 K, 4 V, 8 Q).
# Usage (repository root, GPU machine): OUT=DIR bash benchmarks/results/attention-split-20261204/run-2.sh
set -u
export PYTHONPATH=$PWD/src:$PWD/benchmarks PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/gpu.txt
timeout ${LIMIT:-540} python3 benchmarks/attention_gpu.py --out $OUT/split.jsonl --budget-ms 100 \
    --sweep --no-bf16 --precisions bf16x3 --splits 7 15 3 \
    --configs '[[64,64,4,2],[64,64,4,3],[128,64,8,1],[128,32,8,2],[64,128,4,1],[64,32,4,3],[128,64,8,2]]' \
    --shapes '[[16,8,1024,128,0],[4,16,4096,128,0],[4,16,4096,128,1],[4,16,4096,64,0],[16,8,1024,64,1]]' \
    > $OUT/split-log.txt 2>&1
python3 benchmarks/results/attention-split-20261204/show.py $OUT/split.jsonl
