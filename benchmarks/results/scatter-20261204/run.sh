#!/usr/bin/env bash
# The scatter template on the GPU: modules of the commit before it (old: index_put and
# scatter_add in PyTorch) and with it (new), made without a GPU, timed in one process
# against eager and torch.compile, the new scatter kernels' launch configs swept; then
# the three scatter problems judged through `generate` (heuristic configs, kernel-or-eager choice).
# Usage (repository root, GPU machine): OUT=DIR bash benchmarks/results/scatter-20261204/run.sh
set -u
export PYTHONPATH=$PWD/src:$PWD/benchmarks PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/gpu.txt
P="reduce_gnn_scatter_mean scatter_moe_combine scatter_segment_mean_pool"
timeout 240 python3 benchmarks/modules_ab_gpu.py --out $OUT/ab.jsonl --budget-ms 150 \
    $(for p in $P; do echo benchmarks/problems/$p.py; done) --modules old=out/ab/old new=out/ab/new \
    --sweep new > $OUT/ab-log.txt 2>&1
grep "^|" $OUT/ab-log.txt
OUT=$OUT/generate LIMIT=250 bash benchmarks/generate_gpu_limited.sh $P > $OUT/gen-log.txt 2>&1
tail -5 $OUT/gen-log.txt
rm -rf $OUT/generate/suite-gpu
