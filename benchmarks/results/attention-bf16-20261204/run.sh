#!/usr/bin/env bash
# bf16 attention vs flash at the 12 shapes: the template (K and V through TMA descriptors,
# scale folded into the softmax's fma, pointers stepped per block) against its earlier
# versions given as ALTS (files), a small tile sweep at the non-causal shapes; fp32 with
# the default SPLIT at four shapes; then suite problems through generate (PROBLEMS) for
# the seconds left (LIMIT).
# Usage (repository root, GPU machine): OUT=DIR ALTS="a.py b.py" PROBLEMS="p q" bash run.sh
set -u
export PYTHONPATH=$PWD/src:$PWD/benchmarks PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/gpu.txt
timeout ${ATT_S:-200} python3 benchmarks/attention_gpu.py --out $OUT/attention.jsonl \
    --budget-ms 100 --no-fp32 --alt $ALTS --sweep \
    --configs '[[128,64,4,2],[128,64,4,3],[128,64,8,3],[128,128,8,2],[128,128,8,3],[64,64,4,3]]' \
    > $OUT/attention-log.txt 2>&1
timeout ${FP32_S:-90} python3 benchmarks/attention_gpu.py --out $OUT/attention-fp32.jsonl \
    --budget-ms 100 --no-bf16 --precisions bf16x3 --alt $ALTS \
    --shapes '[[16,8,1024,128,0],[4,16,4096,128,1],[16,8,1024,64,1],[4,16,4096,64,0]]' \
    > $OUT/attention-fp32-log.txt 2>&1
tail -n 3 $OUT/attention-log.txt $OUT/attention-fp32-log.txt
if [ -n "${PROBLEMS:-}" ]; then
    OUT=$OUT/generate LIMIT=${LIMIT:-240} PER_GPU=${PER_GPU:-3} \
        bash benchmarks/generate_gpu_limited.sh $PROBLEMS > $OUT/gen-log.txt 2>&1
    tail -40 $OUT/gen-log.txt
    rm -rf $OUT/generate/suite-gpu
fi
