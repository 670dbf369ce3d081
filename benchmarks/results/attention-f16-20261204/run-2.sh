#!/usr/bin/env bash
# The new default (SPLIT 31, its tiles) at the 12 shapes with bf16 against flash, SPLIT 15
# and 31 side by side at 1024 x 64 (non-causal twice).
# Usage (repository root, GPU machine): OUT=DIR bash benchmarks/results/attention-f16-20261204/run-2.sh
set -u
export PYTHONPATH=$PWD/src:$PWD/benchmarks PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/gpu.txt
timeout 240 python3 benchmarks/attention_gpu.py --out $OUT/attention.jsonl --budget-ms 100 \
    --precisions bf16x3 \
    --shapes '[[16,8,1024,128,0],[16,8,1024,128,1],[4,16,4096,128,0],[4,16,4096,128,1],[8,16,2048,128,0],[8,16,2048,128,1],[16,8,1024,64,0],[16,8,1024,64,1],[4,16,4096,64,0],[4,16,4096,64,1],[8,16,2048,64,0],[8,16,2048,64,1]]' \
    > $OUT/attention-log.txt 2>&1
timeout 100 python3 benchmarks/attention_gpu.py --out $OUT/small.jsonl --budget-ms 150 \
    --precisions bf16x3 --sweep --splits 15 31 --no-bf16 \
    --configs '[[64,64,4,2],[64,64,4,3],[128,64,8,2]]' \
    --shapes '[[16,8,1024,64,0],[16,8,1024,64,1],[16,8,1024,64,0]]' > $OUT/small-log.txt 2>&1
python3 benchmarks/results/attention-split-20261204/show.py $OUT/attention.jsonl
python3 benchmarks/results/attention-split-20261204/show.py $OUT/small.jsonl
