#!/usr/bin/env bash
# D = 128 in bf16: tiles whose shared memory lets two or three blocks share an SM (64 x 64
# in 2 stages, 64 x 32) against the shipped ones, TMA, at the six D = 128 shapes.
# Usage (repository root, GPU machine): OUT=DIR bash run-5.sh
set -u
export PYTHONPATH=$PWD/src:$PWD/benchmarks PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/gpu.txt
timeout ${ATT_S:-240} python3 benchmarks/attention_gpu.py --out $OUT/attention.jsonl \
    --budget-ms 150 --no-fp32 --sweep \
    --shapes '[[16,8,1024,128,0],[16,8,1024,128,1],[8,16,2048,128,0],[8,16,2048,128,1],[4,16,4096,128,0],[4,16,4096,128,1]]' \
    --configs '[[64,64,4,2,1],[64,32,4,3,1],[64,32,4,2,1],[64,64,4,3,1],[128,128,8,3,1],[128,64,8,2,1],[128,32,8,3,1]]' \
    > $OUT/attention-log.txt 2>&1
python3 benchmarks/results/attention-bf16-20261204/rows.py $OUT/attention.jsonl
