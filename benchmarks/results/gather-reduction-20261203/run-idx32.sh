#!/usr/bin/env bash
# int32 index math in the reduction template: modules of the previous commit (old: int64,
# no gathers in reductions) and this one (new), made without a GPU, over 22 reduction
# problems, timed in one process against eager and torch.compile; then a launch-config
# sweep of the new module on the three gather problems.
# Usage (repository root, GPU machine): OUT=DIR bash benchmarks/results/gather-reduction-20261203/run-idx32.sh
set -u
export PYTHONPATH=$PWD/src:$PWD/benchmarks PYTHONUNBUFFERED=1
P="gather_swin_roll_layernorm embed_bert_layernorm embed_rmsnorm embed_position_ids_from_mask norm_groupnorm norm_instancenorm norm_layernorm norm_layernorm2d_nchw norm_rmsnorm norm_batchnorm reduce_mean_dim1 reduce_min_dim2 reduce_sum_dim0 reduce_std_dim1 reduce_var_mean_multidim reduce_argmax_dim1 softmax_dim1_3d softmax_lastdim loss_cross_entropy loss_kl_div loss_cosine reduce_logsumexp"
timeout 330 python3 benchmarks/modules_ab_gpu.py --out $OUT/ab3.jsonl --budget-ms 120 \
    $(for p in $P; do echo benchmarks/problems/$p.py; done) --modules old=out/ab/old new=out/ab/new \
    > $OUT/ab3-log.txt 2>&1
grep "^|" $OUT/ab3-log.txt
S="benchmarks/problems/gather_swin_roll_layernorm.py benchmarks/problems/embed_bert_layernorm.py benchmarks/problems/norm_groupnorm.py"
timeout 150 python3 benchmarks/modules_ab_gpu.py --out $OUT/sweep3.jsonl --budget-ms 60 --sweep new $S \
    --modules new=out/ab/new > $OUT/sweep3-log.txt 2>&1
python3 - <<'PY'
import json, os
rows = [json.loads(l) for l in open(os.environ['OUT'] + '/sweep3.jsonl')]
res = {}
for r in rows:
    if r.get('impl') == 'new:sweep' and r.get('ok'):
        res.setdefault(r['problem'], []).append((round(r['ms'], 4), r['config']))
    if r.get('impl') == 'new':
        print(r['problem'], 'heuristic', round(r['ms'], 4))
for p, v in res.items():
    v.sort(key=lambda x: x[0])
    print(p, v[:5])
PY
