#!/usr/bin/env bash
# Conv problems whose latest rows predate this change, re-measured with the current code
# (judged through `generate`, eager and torch.compile timed in the same run), as many as
# finish in LIMIT seconds.
# Usage (repository root, GPU machine): OUT=DIR bash benchmarks/results/plane-20261204/run-5.sh
set -u
export PYTHONPATH=$PWD/src:$PWD/benchmarks PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/gpu.txt
P="block_resnet_basic conv_conv2d_batchnorm_relu conv_conv2d_batchnorm_scale conv_conv2d_gelu_gap"
P="$P conv_conv3d_min_softmax conv_depthwise2d conv_depthwise_silu conv_conv2d_maxpool_relu"
P="$P conv_conv1d conv_conv2d"
OUT=$OUT/generate LIMIT=${LIMIT:-400} bash benchmarks/generate_gpu_limited.sh $P > $OUT/gen-log.txt 2>&1
tail -12 $OUT/gen-log.txt
rm -rf $OUT/generate/suite-gpu
