#!/usr/bin/env bash
# Is 128 x 64 on 8 warps (TMA) slow at 16 x 8 x 1024 x 64 non-causal by itself, or only as
# the first shape a process times? The shape timed four times between others, with four
# tiles each (TMA and pointers).
# Usage (repository root, GPU machine): OUT=DIR bash run-4.sh
set -u
export PYTHONPATH=$PWD/src:$PWD/benchmarks PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/gpu.txt
timeout ${ATT_S:-200} python3 benchmarks/attention_gpu.py --out $OUT/attention.jsonl \
    --budget-ms 200 --no-fp32 --sweep \
    --shapes '[[16,8,1024,64,0],[16,8,1024,64,0],[8,16,2048,64,0],[16,8,1024,64,0],[16,8,1024,128,0],[16,8,1024,64,0],[32,16,1024,64,0]]' \
    --configs '[[128,64,8,3,1],[128,64,4,3,1],[128,64,8,3,0],[128,64,4,3,0],[64,64,4,3,1]]' \
    > $OUT/attention-log.txt 2>&1
python3 benchmarks/results/attention-bf16-20261204/rows.py $OUT/attention.jsonl
