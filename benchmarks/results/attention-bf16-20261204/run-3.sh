#!/usr/bin/env bash
# The shipped bf16 heuristic (K and V through TMA at the swept tiles) against flash at the
# 12 shapes, beside the template as it was before (ALTS); then suite problems through
# generate one at a time (PROBLEMS, PER_GPU=1: no other process's compiles on the host while
# a host-bound module is timed), packed in one archive.
# Usage (repository root, GPU machine): OUT=DIR ALTS=FILE PROBLEMS="p q" bash run-3.sh
set -u
export PYTHONPATH=$PWD/src:$PWD/benchmarks PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/gpu.txt
timeout ${ATT_S:-150} python3 benchmarks/attention_gpu.py --out $OUT/attention.jsonl \
    --budget-ms 200 --no-fp32 --alt $ALTS > $OUT/attention-log.txt 2>&1
tail -n 2 $OUT/attention-log.txt
if [ -n "${PROBLEMS:-}" ]; then
    OUT=$OUT/generate LIMIT=${LIMIT:-240} PER_GPU=${PER_GPU:-1} \
        bash benchmarks/generate_gpu_limited.sh $PROBLEMS > $OUT/gen-log.txt 2>&1
    tail -n 40 $OUT/gen-log.txt
    rm -rf $OUT/generate/suite-gpu
    tar -czf $OUT/generate.tgz -C $OUT generate && rm -rf $OUT/generate
fi
