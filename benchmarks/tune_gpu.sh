#!/usr/bin/env bash
# Tune the suite on the GPUs of this machine (PER_GPU shards per GPU take turns to time):
# per problem, the heuristic's and the tuned configs of every kernel group, the judge's
# timings against eager and torch.compile; every measured config lands in one tuning
# database, exported as JSON lines for training the cost model
# (python benchmarks/train_cost_model.py $OUT/records.jsonl).
# Usage (repository root, on the GPU machine): EFFORT=quick bash benchmarks/tune_gpu.sh
set -uo pipefail
OUT=${OUT:-benchmarks/results/tune-$(date +%Y%m%d)}
GPUS=${GPUS:-$(nvidia-smi -L | wc -l)}
mkdir -p "$OUT"
export PYTHONPATH=$PWD/src:${PYTHONPATH:-}
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$OUT/gpu.txt"
python3 benchmarks/generate_suite.py benchmarks/problems --device cuda --targets sm_90 \
    --no-build --mixed --gpus "$GPUS" --per-gpu "${PER_GPU:-3}" --tune "${EFFORT:-quick}" \
    --db "$OUT/tuning.db" --out out/suite-tune --results "$OUT/results.jsonl" "$@" \
    2>&1 | tee -a "$OUT/log.txt"
python3 -m kernelcraft.cli db export "$OUT/records.jsonl" --db "$OUT/tuning.db"
