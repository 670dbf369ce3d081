#!/usr/bin/env bash
# bf16 against flash at the 12 shapes, causal included: the heuristic and 13 launch configs,
# each with K and V read through TMA descriptors (fifth field 1) or through pointers (0);
# then suite problems through generate (PROBLEMS) for LIMIT seconds, packed in one archive.
# Usage (repository root, GPU machine): OUT=DIR PROBLEMS="p q" bash run-2.sh
set -u
export PYTHONPATH=$PWD/src:$PWD/benchmarks PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/gpu.txt
timeout ${ATT_S:-300} python3 benchmarks/attention_gpu.py --out $OUT/attention.jsonl \
    --budget-ms 100 --no-fp32 --sweep \
    --shapes '[[16,8,1024,64,0],[16,8,1024,64,1],[8,16,2048,64,0],[8,16,2048,64,1],[4,16,4096,64,0],[4,16,4096,64,1],[16,8,1024,128,0],[16,8,1024,128,1],[8,16,2048,128,0],[8,16,2048,128,1],[4,16,4096,128,0],[4,16,4096,128,1]]' \
    --configs '[[128,64,8,3,1],[128,64,8,4,1],[128,64,8,2,1],[128,128,8,3,1],[128,128,8,2,1],[64,64,4,3,1],[64,64,4,4,1],[64,128,4,3,1],[128,64,4,3,1],[128,64,8,3,0],[128,64,4,3,0],[64,64,4,3,0],[128,128,8,3,0]]' \
    > $OUT/attention-log.txt 2>&1
tail -n 2 $OUT/attention-log.txt
if [ -n "${PROBLEMS:-}" ]; then
    OUT=$OUT/generate LIMIT=${LIMIT:-240} PER_GPU=${PER_GPU:-3} \
        bash benchmarks/generate_gpu_limited.sh $PROBLEMS > $OUT/gen-log.txt 2>&1
    tail -n 40 $OUT/gen-log.txt
    rm -rf $OUT/generate/suite-gpu
    tar -czf $OUT/generate.tgz -C $OUT generate && rm -rf $OUT/generate
fi
