#!/usr/bin/env bash
# The reduction kernels of the gather problems with int64 index math (new) and the same text
# with int32 (i32, a sed of tl.int64), then a launch-config sweep of new.
# Usage (repository root, GPU machine): OUT=DIR bash benchmarks/results/gather-reduction-20261203/run-i32-sweep.sh
set -u
export PYTHONPATH=$PWD/src:$PWD/benchmarks PYTHONUNBUFFERED=1
P="benchmarks/problems/gather_swin_roll_layernorm.py benchmarks/problems/embed_bert_layernorm.py"
timeout 100 python3 benchmarks/modules_ab_gpu.py --out $OUT/ab2.jsonl --budget-ms 150 $P --modules new=out/ab/new i32=out/ab/i32 > $OUT/ab2-log.txt 2>&1
tail -4 $OUT/ab2-log.txt
timeout 200 python3 benchmarks/modules_ab_gpu.py --out $OUT/sweep.jsonl --budget-ms 100 --sweep new $P --modules new=out/ab/new > $OUT/sweep-log.txt 2>&1
python3 - <<'PY'
import json, os
rows=[json.loads(l) for l in open(os.environ['OUT']+'/sweep.jsonl')]
res={}
for r in rows:
    if r.get('impl')=='new:sweep' and r.get('ok'):
        res.setdefault(r['problem'],[]).append((round(r['ms'],4), r['config']))
for p,v in res.items():
    v.sort(key=lambda x:x[0]); print(p, v[:6], 'worst', v[-1])
PY
