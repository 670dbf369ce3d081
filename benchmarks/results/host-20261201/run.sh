#!/usr/bin/env bash
# Suite problems re-measured on one H200, one problem at a time (PER_GPU=1: nothing else
# runs on the GPU while a problem is judged and timed). Stops after LIMIT seconds and
# keeps what finished. Usage (repository root, GPU machine):
#   LIMIT=480 bash benchmarks/results/host-20261201/run.sh PROBLEM ...
set -u
R=benchmarks/results/host-20261201
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
rm -rf out/suite-gpu
setsid env OUT=$R PER_GPU=1 bash benchmarks/generate_gpu.sh --only "$@" > "$R/log-run.txt" 2>&1 &
timeout "${LIMIT:-480}" bash -c 'sleep 5; while pgrep -f generate_suite.py > /dev/null; do sleep 3; done'
pkill -f generate_suite.py; sleep 2
grep -E ": (ok|FAIL|error)" "$R/log-run.txt" | tail -40
