#!/usr/bin/env bash
# Triton's automatic warp specialization on a minimal bf16 flash kernel (ws_probe.py).
# Usage (repository root, GPU machine): OUT=DIR bash run-6.sh
set -u
export PYTHONPATH=$PWD/src:$PWD/benchmarks PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv > $OUT/gpu.txt
timeout ${S:-200} python3 benchmarks/results/attention-bf16-20261204/ws_probe.py \
    $OUT/probe.jsonl > $OUT/probe-log.txt 2>&1
python3 - $OUT/probe.jsonl <<'PY'
import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    c = ",".join(map(str, r["config"].values())) if "config" in r else ""
    print(r["seq"], r["head_dim"], r["impl"], c.ljust(22), "%.4f" % r["ms"] if "ms" in r else "",
          "%.3f" % r["vs_flash"] if "vs_flash" in r else "", "%.1e" % r["rel_l2"] if "rel_l2" in r else "",
          r.get("error", "")[:150])
PY
