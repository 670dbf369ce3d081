#!/usr/bin/env bash
# Tune the suite on the GPUs of this machine: generate_gpu.sh with tuning on (EFFORT, default
# quick) and one shared tuning database; per problem the heuristic's and the tuned configs
# of every kernel group and the judge's timings; the records are exported as JSON lines for
# training the cost model (python benchmarks/train_cost_model.py $OUT/records.jsonl).
# Usage (repository root, on the GPU machine): EFFORT=quick bash benchmarks/tune_gpu.sh
set -uo pipefail
export OUT=${OUT:-benchmarks/results/tune-$(date +%Y%m%d)}
mkdir -p "$OUT"
bash benchmarks/generate_gpu.sh --tune "${EFFORT:-quick}" --db "$OUT/tuning.db" "$@"
PYTHONPATH=$PWD/src python3 -m kernelcraft.cli db export "$OUT/records.jsonl" \
    --db "$OUT/tuning.db"
