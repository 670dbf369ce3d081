#!/usr/bin/env bash
# The final state: modules of the commit before the change (old) and of this one (new),
# made without a GPU, over 22 reduction problems, timed in one process against eager and
# torch.compile; then the three gather problems judged through `generate` on the GPU.
# Usage (repository root, GPU machine): OUT=DIR bash benchmarks/results/gather-reduction-20261203/run-final.sh
set -u
export PYTHONPATH=$PWD/src:$PWD/benchmarks PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/gpu.txt
P="gather_swin_roll_layernorm embed_bert_layernorm embed_rmsnorm embed_position_ids_from_mask norm_groupnorm norm_instancenorm norm_layernorm norm_layernorm2d_nchw norm_rmsnorm norm_batchnorm reduce_mean_dim1 reduce_min_dim2 reduce_sum_dim0 reduce_std_dim1 reduce_var_mean_multidim reduce_argmax_dim1 softmax_dim1_3d softmax_lastdim loss_cross_entropy loss_kl_div loss_cosine reduce_logsumexp"
timeout 330 python3 benchmarks/modules_ab_gpu.py --out $OUT/ab-final.jsonl --budget-ms 120 \
    $(for p in $P; do echo benchmarks/problems/$p.py; done) --modules old=out/ab/old new=out/ab/new \
    > $OUT/ab-final-log.txt 2>&1
grep "^|" $OUT/ab-final-log.txt
OUT=$OUT/generate LIMIT=230 bash benchmarks/generate_gpu_limited.sh gather_swin_roll_layernorm \
    embed_bert_layernorm embed_rmsnorm > $OUT/gen-log.txt 2>&1
tail -5 $OUT/gen-log.txt
rm -rf $OUT/generate/suite-gpu
