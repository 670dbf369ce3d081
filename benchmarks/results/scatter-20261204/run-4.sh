#!/usr/bin/env bash
# Broadcast loads in the pointwise template (an operand constant along the tile's columns
# loaded once per row): modules of the commit before (old) and with it (new), made without
# a GPU, over 15 pointwise, gather and scatter problems, timed against eager and
# torch.compile; then the three scatter problems judged through `generate`.
# Usage (repository root, GPU machine): OUT=DIR bash benchmarks/results/scatter-20261204/run-4.sh
set -u
export PYTHONPATH=$PWD/src:$PWD/benchmarks PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/gpu.txt
P="reduce_gnn_scatter_mean scatter_segment_mean_pool scatter_moe_combine embed_positional upsample_bilinear_skip_relu upsample_nearest_scale act_prelu pointwise_bias_scale_residual gather_channel_shuffle_relu pointwise_rope embed_position_ids_from_mask pad_constant_affine pointwise_swiglu cat_skip_relu act_gelu"
timeout 240 python3 benchmarks/modules_ab_gpu.py --out $OUT/ab-4.jsonl --budget-ms 120 \
    $(for p in $P; do echo benchmarks/problems/$p.py; done) --modules old=out/ab3/old new=out/ab3/new \
    > $OUT/ab-4-log.txt 2>&1
grep "^|" $OUT/ab-4-log.txt
OUT=$OUT/generate LIMIT=200 bash benchmarks/generate_gpu_limited.sh reduce_gnn_scatter_mean \
    scatter_segment_mean_pool scatter_moe_combine > $OUT/gen-4-log.txt 2>&1
tail -4 $OUT/gen-4-log.txt
