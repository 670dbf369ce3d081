#!/usr/bin/env bash
# The PHASE walk with its launch heuristic (strided transposed convolutions phase by phase):
# x2 upsampling layers against strict-fp32 cuDNN and against the gather over every tap (no
# sweep); then the suite's transposed-convolution problems judged through `generate`.
# Usage (repository root, GPU machine): OUT=DIR bash benchmarks/results/plane-20261204/run-4.sh
set -u
export PYTHONPATH=$PWD/src:$PWD/benchmarks PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/gpu.txt
timeout 280 python3 benchmarks/conv_gpu.py --out $OUT/layers.jsonl --budget-ms 150 \
    --layers t4x4_s2_128_64 t3x3_s2_64_32 t2x2_s2_64_32 t3d_3_s2_32_16 > $OUT/layers-log.txt 2>&1
tail -3 $OUT/layers-log.txt
P="conv_convtranspose2d conv_convtranspose3d conv_convtranspose2d_add_hardswish"
P="$P conv_convtranspose2d_gelu_instancenorm"
OUT=$OUT/generate LIMIT=300 bash benchmarks/generate_gpu_limited.sh $P > $OUT/gen-log.txt 2>&1
tail -6 $OUT/gen-log.txt
rm -rf $OUT/generate/suite-gpu
