#!/usr/bin/env bash
# The tuner on scatter groups after the float64-reference fix: the segment pool with `--tune quick`
# (the pointwise space searched for each scatter kernel, every config checked in float64).
# Usage (repository root, GPU machine): OUT=DIR bash benchmarks/results/scatter-20261204/run-7.sh
set -u
export PYTHONPATH=$PWD/src:$PWD/benchmarks PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/gpu.txt
OUT=$OUT/generate LIMIT=150 bash benchmarks/generate_gpu_limited.sh scatter_segment_mean_pool --tune quick > $OUT/gen-7-log.txt 2>&1
tail -3 $OUT/gen-7-log.txt
