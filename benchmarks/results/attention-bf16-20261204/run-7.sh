#!/usr/bin/env bash
# Strict fp32 with K and V pieces read through 5-D TMA descriptors ([P, B, H, S, D]) against
# the template with pointer loads of the pieces (ALTS), heuristic tiles, at six shapes; and
# three wider tiles with TMA.
# Usage (repository root, GPU machine): OUT=DIR ALTS=FILE bash run-7.sh
set -u
export PYTHONPATH=$PWD/src:$PWD/benchmarks PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/gpu.txt
timeout ${ATT_S:-230} python3 benchmarks/attention_gpu.py --out $OUT/attention.jsonl \
    --budget-ms 150 --no-bf16 --precisions bf16x3 --alt $ALTS --sweep --splits 31 \
    --shapes '[[16,8,1024,64,0],[4,16,4096,64,1],[16,8,1024,128,1],[8,16,2048,128,0],[4,16,4096,128,0],[4,16,4096,128,1]]' \
    --configs '[[128,64,8,2],[128,32,8,2],[64,64,4,3]]' > $OUT/attention-log.txt 2>&1
python3 benchmarks/results/attention-bf16-20261204/rows.py $OUT/attention.jsonl
