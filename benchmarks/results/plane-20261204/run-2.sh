#!/usr/bin/env bash
# The PLANE walk with its launch heuristic: 1x1 layers against strict-fp32 cuDNN (no sweep),
# then the suite problems with 1x1 layers judged through `generate`.
# Usage (repository root, GPU machine): OUT=DIR bash benchmarks/results/plane-20261204/run-2.sh
set -u
export PYTHONPATH=$PWD/src:$PWD/benchmarks PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/gpu.txt
timeout 200 python3 benchmarks/conv_gpu.py --out $OUT/layers.jsonl --budget-ms 200 \
    --layers 1x1_256_256 1x1_256_512 1x1_64_256_56 1x1_1024_256_14 1x1_512_2048_7 \
    1x1_s2_256_512 > $OUT/layers-log.txt 2>&1
tail -3 $OUT/layers-log.txt
P="conv_pointwise1x1 conv_pointwise_residual_relu conv_depthwise_separable conv_depthwise1d_glu"
OUT=$OUT/generate LIMIT=300 bash benchmarks/generate_gpu_limited.sh $P > $OUT/gen-log.txt 2>&1
tail -6 $OUT/gen-log.txt
rm -rf $OUT/generate/suite-gpu
