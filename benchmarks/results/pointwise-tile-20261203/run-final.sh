export PYTHONPATH=$PWD/src:$PWD/benchmarks PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > $OUT/gpu.txt
P="upsample_bilinear_skip_relu upsample_nearest_scale gather_swin_roll_layernorm embed_positional act_prelu gather_channel_shuffle_relu"
timeout 150 python3 benchmarks/modules_ab_gpu.py --out $OUT/sweep.jsonl --budget-ms 150 --sweep new $(for p in $P; do echo benchmarks/problems/$p.py; done) --modules new=out/ab/new3 > $OUT/sweep-log.txt 2>&1
timeout 60 python3 benchmarks/modules_ab_gpu.py --out $OUT/ab.jsonl benchmarks/problems/gather_channel_shuffle_relu.py --modules old=out/ab/old new=out/ab/new4 > /dev/null 2>&1
OUT=$OUT/generate LIMIT=320 bash benchmarks/generate_gpu_limited.sh upsample_bilinear_skip_relu reduce_argmin_lastdim norm_t5_rmsnorm_cast gather_channel_shuffle_relu gather_swin_roll_layernorm upsample_nearest_scale reduce_argmax_onehot > $OUT/gen-log.txt 2>&1
cp -r out/suite-gpu $OUT/ 2>/dev/null; rm -rf $OUT/suite-gpu
tail -8 $OUT/gen-log.txt
python3 - <<'PY'
import json, os
rows=[json.loads(l) for l in open(os.environ['OUT']+'/sweep.jsonl')]
best={}
for r in rows:
    if r.get('impl')=='new:sweep' and r.get('ok'):
        k=(r['problem'],r['wrapper'][-14:])
        if k not in best or r['ms']<best[k][0]: best[k]=(round(r['ms'],4), r['config'])
    if r.get('impl')=='new': print(r['problem'], 'heuristic', round(r['ms'],4))
for k,v in best.items(): print(k, v)
PY
rm -f $OUT/generate/gpu.txt $OUT/generate/summary.md
