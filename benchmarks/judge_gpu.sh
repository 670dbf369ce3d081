#!/usr/bin/env bash
# The judge on a GPU: the adversarial suite on CUDA, eval of the Triton softmax, and bench
# over the honest examples. Results land in $OUT (default benchmarks/results/judge-<date>).
# Usage (repository root, a machine with a GPU): bash benchmarks/judge_gpu.sh
set -uo pipefail
OUT=${OUT:-benchmarks/results/judge-$(date +%Y%m%d)}
mkdir -p "$OUT"
export PYTHONPATH=$PWD/src:${PYTHONPATH:-}
export PYTHONUNBUFFERED=1
KC="python3 -m kernelcraft.cli"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv | tee "$OUT/gpu.txt"
python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)" \
    | tee -a "$OUT/gpu.txt"
python3 -m pytest -q -p no:cacheprovider tests/test_adversarial.py -k cuda -n 8 \
    --junitxml="$OUT/adversarial-cuda.xml" 2>&1 | tail -30 | tee "$OUT/adversarial-cuda.txt"
$KC eval examples/candidates/softmax.py --ref examples/problems/softmax.py \
    --json "$OUT/eval_softmax.json" 2>&1 | tee "$OUT/eval_softmax.txt"
$KC bench examples --out "$OUT/bench-examples" --fresh 2>&1 | tee "$OUT/bench.txt"
