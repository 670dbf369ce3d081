#!/usr/bin/env bash
# Gathers inside reduction kernels: modules of the previous commit (old) and this one (new),
# made without a GPU, timed in one process against eager and torch.compile; then the three
# problems the change targets judged through `generate` on the GPU.
# Usage (repository root, GPU machine): OUT=DIR bash benchmarks/results/gather-reduction-20261203/run.sh
set -u
export PYTHONPATH=$PWD/src:$PWD/benchmarks PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/gpu.txt
timeout 100 python3 benchmarks/inductor_code_gpu.py --out $OUT/inductor \
    benchmarks/problems/upsample_bilinear_skip_relu.py benchmarks/problems/gather_swin_roll_layernorm.py \
    benchmarks/problems/embed_bert_layernorm.py > $OUT/inductor-log.txt 2>&1
P="gather_swin_roll_layernorm embed_bert_layernorm embed_rmsnorm gather_channel_shuffle_relu embed_positional loss_label_smoothing_ce reduce_gnn_scatter_mean scan_reverse_cumsum embed_position_ids_from_mask"
timeout 200 python3 benchmarks/modules_ab_gpu.py --out $OUT/ab.jsonl --budget-ms 200 \
    $(for p in $P; do echo benchmarks/problems/$p.py; done) --modules old=out/ab/old new=out/ab/new \
    > $OUT/ab-log.txt 2>&1
tail -30 $OUT/ab-log.txt
OUT=$OUT/generate LIMIT=200 bash benchmarks/generate_gpu_limited.sh gather_swin_roll_layernorm \
    embed_bert_layernorm embed_rmsnorm > $OUT/gen-log.txt 2>&1
tail -6 $OUT/gen-log.txt
rm -rf $OUT/generate/suite-gpu
