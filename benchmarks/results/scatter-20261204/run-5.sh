#!/usr/bin/env bash
# The zero base folded into the residual (rewrite.fold_scatter_bases): the MoE combine's
# module before (old) and after (new), then judged through `generate`.
# Usage (repository root, GPU machine): OUT=DIR bash benchmarks/results/scatter-20261204/run-5.sh
set -u
export PYTHONPATH=$PWD/src:$PWD/benchmarks PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/gpu.txt
timeout 100 python3 benchmarks/modules_ab_gpu.py --out $OUT/ab-5.jsonl --budget-ms 150 \
    benchmarks/problems/scatter_moe_combine.py --modules old=out/ab4/old new=out/ab4/new \
    > $OUT/ab-5-log.txt 2>&1
grep "^|" $OUT/ab-5-log.txt
OUT=$OUT/generate LIMIT=100 bash benchmarks/generate_gpu_limited.sh scatter_moe_combine \
    > $OUT/gen-5-log.txt 2>&1
tail -2 $OUT/gen-5-log.txt
