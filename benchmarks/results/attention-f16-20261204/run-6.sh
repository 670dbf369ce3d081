#!/usr/bin/env bash
# The two transformer blocks (their attention now takes SPLIT 31), then the conv and block
# problems whose latest rows date from 2026-11-30, judged through generate, as many as finish
# in LIMIT seconds.
# Usage (repository root, GPU machine): OUT=DIR bash benchmarks/results/attention-f16-20261204/run-6.sh
set -u
export PYTHONPATH=$PWD/src:$PWD/benchmarks PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/gpu.txt
P="transformer_prenorm_block transformer_postnorm_block block_resnet_basic conv_conv1d"
P="$P conv_conv2d_batchnorm_scale conv_conv2d_strided_dilated conv_conv3d conv_conv1d_glu"
P="$P conv_conv1d_tanh conv_conv2d_bias_leakyrelu conv_conv2d_groupnorm_silu conv_conv2d_relu_biasadd"
OUT=$OUT/generate LIMIT=${LIMIT:-470} bash benchmarks/generate_gpu_limited.sh $P > $OUT/gen-log.txt 2>&1
tail -14 $OUT/gen-log.txt
rm -rf $OUT/generate/suite-gpu
