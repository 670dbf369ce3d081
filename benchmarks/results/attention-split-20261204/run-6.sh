#!/usr/bin/env bash
# fp32 after the P @ V products sum from zero and join the accumulator in an fp32 add (as
# Triton's own bf16x3 does): error and time, heuristic and 128 x 32 x 8 warps.
# Usage (repository root, GPU machine): OUT=DIR bash benchmarks/results/attention-split-20261204/run-6.sh
set -u
export PYTHONPATH=$PWD/src:$PWD/benchmarks PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/gpu.txt
timeout 170 python3 benchmarks/attention_gpu.py --out $OUT/attention.jsonl \
    --budget-ms 120 --precisions bf16x3 --sweep --splits 15 --no-bf16 --configs '[[128,32,8,2]]' \
    --shapes '[[16,8,1024,128,0],[4,16,4096,128,0],[16,8,1024,128,1],[4,16,4096,128,1],[4,16,4096,64,0],[16,8,1024,64,1]]' \
    > $OUT/attention-log.txt 2>&1
python3 - $OUT/attention.jsonl <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["impl"] == "kc_fp32":
        c = r["config"] if isinstance(r["config"], str) else "128x32x8x2"
        print(r["seq"], r["head_dim"], r["causal"], c, round(r["ms"], 3), r["ok"],
              f"rel {r['rel_l2']:.1e} max {r['max_abs']:.1e}/{r['tol_abs']:.1e}",
              r.get("n_regs"), r.get("n_spills"))
    elif r["impl"] == "eager_sdpa_fp32":
        print(r["seq"], r["head_dim"], r["causal"], "eager", round(r["ms"], 3))
PY
