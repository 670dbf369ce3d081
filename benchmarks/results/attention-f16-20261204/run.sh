#!/usr/bin/env bash
# Strict fp32: Q @ K^T from scaled fp16 pieces (SPLIT 31: three products) against bf16 pieces
# (SPLIT 15: six), over tiles, at the 12 shapes; the causal grid order (longest KV walks
# first) against the same code without it (--alt), fp32 and bf16; both split passes alone.
# Usage (repository root, GPU machine): OUT=DIR bash benchmarks/results/attention-f16-20261204/run.sh
set -u
export PYTHONPATH=$PWD/src:$PWD/benchmarks PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $OUT/gpu.txt
sed '/the longest KV walks (last query tiles) first/,+1d' src/kernelcraft/codegen/attention.py \
    > $OUT/alt_attention.py
grep -c num_programs $OUT/alt_attention.py
timeout 500 python3 benchmarks/attention_gpu.py --out $OUT/attention.jsonl --budget-ms 100 \
    --precisions bf16x3 --sweep --splits 31 --alt $OUT/alt_attention.py \
    --configs '[[64,64,4,2],[64,64,4,3],[128,64,8,2],[128,32,8,2],[128,64,8,1]]' \
    --shapes '[[16,8,1024,128,0],[16,8,1024,128,1],[4,16,4096,128,0],[4,16,4096,128,1],[8,16,2048,128,0],[8,16,2048,128,1],[16,8,1024,64,0],[16,8,1024,64,1],[4,16,4096,64,0],[4,16,4096,64,1],[8,16,2048,64,0],[8,16,2048,64,1]]' \
    > $OUT/attention-log.txt 2>&1
python3 benchmarks/results/attention-split-20261204/show.py $OUT/attention.jsonl
