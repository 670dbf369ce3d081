#!/usr/bin/env bash
# The seven attention problems judged through generate with the new default (SPLIT 31).
# Usage (repository root, GPU machine): OUT=DIR bash benchmarks/results/attention-f16-20261204/run-3.sh
set -u
export PYTHONPATH=$PWD/src:$PWD/benchmarks PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/gpu.txt
P="attention_sdpa attention_sdpa_causal attention_causal_buffer_mask attention_causal attention_alibi attention_bert_padding_mask attention_gqa"
OUT=$OUT/generate LIMIT=${LIMIT:-480} bash benchmarks/generate_gpu_limited.sh $P > $OUT/gen-log.txt 2>&1
tail -12 $OUT/gen-log.txt
rm -rf $OUT/generate/suite-gpu
