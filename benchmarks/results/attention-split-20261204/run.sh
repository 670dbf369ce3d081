#!/usr/bin/env bash
# Strict-fp32 attention: Triton's bf16x6 / bf16x3 dots (SPLIT 0) against explicit bf16 pieces
# split in the kernel (SPLIT 1) or K and V split once beforehand (SPLIT 2), over a tile sweep;
# eager SDPA and torch.compile timed in the same run. Registers and spills per compiled config.
# Usage (repository root, GPU machine): OUT=DIR bash benchmarks/results/attention-split-20261204/run.sh
set -u
export PYTHONPATH=$PWD/src:$PWD/benchmarks PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/gpu.txt
timeout ${LIMIT:-560} python3 benchmarks/attention_gpu.py --out $OUT/split.jsonl --budget-ms 100 \
    --sweep --no-bf16 --precisions bf16x3 --splits 0 1 2 \
    --configs '[[128,64,8,1],[128,64,8,2],[128,32,8,2],[128,64,4,2],[64,64,4,2],[128,128,8,1],[64,32,4,2]]' \
    --shapes '[[4,16,4096,128,0],[16,8,1024,128,0],[4,16,4096,64,0],[16,8,1024,64,1],[4,16,4096,128,1],[16,8,1024,64,0]]' \
    > $OUT/split-log.txt 2>&1
python3 - $OUT/split.jsonl <<'PY'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    c = r.get("config")
    c = "heur" if not isinstance(c, dict) else "%dx%dx%dx%d s%d" % (c["BLOCK_M"], c["BLOCK_N"], c["num_warps"], c["num_stages"], c.get("SPLIT", 0))
    print(r["seq"], r["head_dim"], int(r["causal"]), r["impl"][:10], c, "%.3f" % r["ms"] if r.get("ms") else r.get("error", "")[:50],
          "ok" if r.get("ok") else r.get("ok"), r.get("max_abs") and "%.1e/%.1e" % (r["max_abs"], r["tol_abs"]), r.get("n_regs"), r.get("n_spills"))
PY
