#!/usr/bin/env bash
# Sibling row reductions merged (cosine similarity): modules of the commit before (old) and
# with it (new), timed against eager and torch.compile; loss_cosine judged through
# `generate`; torch.compile's code for the scatter problems saved as text.
# Usage (repository root, GPU machine): OUT=DIR bash benchmarks/results/scatter-20261204/run-3.sh
set -u
export PYTHONPATH=$PWD/src:$PWD/benchmarks PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/gpu.txt
P="loss_cosine gemm_moe_router_topk"
timeout 150 python3 benchmarks/modules_ab_gpu.py --out $OUT/ab-3.jsonl --budget-ms 150 \
    $(for p in $P; do echo benchmarks/problems/$p.py; done) --modules old=out/ab2/old new=out/ab2/new \
    > $OUT/ab-3-log.txt 2>&1
grep "^|" $OUT/ab-3-log.txt
timeout 120 python3 benchmarks/inductor_code_gpu.py --out $OUT/inductor \
    benchmarks/problems/reduce_gnn_scatter_mean.py benchmarks/problems/scatter_segment_mean_pool.py \
    > $OUT/inductor-log.txt 2>&1
ls $OUT/inductor
OUT=$OUT/generate LIMIT=150 bash benchmarks/generate_gpu_limited.sh loss_cosine > $OUT/gen-3-log.txt 2>&1
tail -3 $OUT/gen-3-log.txt
