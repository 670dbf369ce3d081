#!/usr/bin/env bash
# The tuner on scatter groups: the two GNN-style problems generated with `--tune quick`
# (the pointwise space searched for each scatter kernel, every config checked in float64).
# Usage (repository root, GPU machine): OUT=DIR bash benchmarks/results/scatter-20261204/run-6.sh
set -u
export PYTHONPATH=$PWD/src:$PWD/benchmarks PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/gpu.txt
OUT=$OUT/generate LIMIT=280 bash benchmarks/generate_gpu_limited.sh reduce_gnn_scatter_mean \
    scatter_segment_mean_pool --tune quick > $OUT/gen-6-log.txt 2>&1
tail -3 $OUT/gen-6-log.txt
