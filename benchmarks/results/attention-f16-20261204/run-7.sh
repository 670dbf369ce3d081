#!/usr/bin/env bash
# The two problems whose plans changed with additive float masks (ALiBi's computed bias,
# BERT's padding bias) judged through generate, as far as LIMIT seconds allow.
# Usage (repository root, GPU machine): OUT=DIR bash benchmarks/results/attention-f16-20261204/run-7.sh
set -u
export PYTHONPATH=$PWD/src:$PWD/benchmarks PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/gpu.txt
OUT=$OUT/generate LIMIT=${LIMIT:-170} bash benchmarks/generate_gpu_limited.sh attention_alibi attention_bert_padding_mask > $OUT/gen-log.txt 2>&1
tail -4 $OUT/gen-log.txt
rm -rf $OUT/generate/suite-gpu
