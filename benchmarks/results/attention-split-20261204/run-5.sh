#!/usr/bin/env bash
# The heuristic after the D = 128 tile choice follows Triton's register allocation (the
# 12 shapes, bf16 against flash, the split pass alone, 128 x 32 x 8 warps for comparison),
# then the two head-dim-128 attention problems judged through `generate`.
# Usage (repository root, GPU machine): OUT=DIR bash benchmarks/results/attention-split-20261204/run-5.sh
set -u
export PYTHONPATH=$PWD/src:$PWD/benchmarks PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/gpu.txt
timeout 200 python3 benchmarks/attention_gpu.py --out $OUT/attention.jsonl \
    --budget-ms 150 --precisions bf16x3 --sweep --splits 15 \
    --configs '[[128,32,8,2]]' > $OUT/attention-log.txt 2>&1
python3 benchmarks/results/attention-split-20261204/show.py $OUT/attention.jsonl | grep -v "^.* None None None None$"
OUT=$OUT/generate LIMIT=${LIMIT:-200} bash benchmarks/generate_gpu_limited.sh \
    attention_sdpa_causal attention_causal_buffer_mask > $OUT/gen-log.txt 2>&1
tail -4 $OUT/gen-log.txt
rm -rf $OUT/generate/suite-gpu
