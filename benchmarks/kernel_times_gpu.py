"""Per-kernel GPU time of generated modules under ``torch.profiler``: which kernel of a
module's forward takes the time, and whether the GPU or the host is the limit (the sum of
kernel times against the forward's wall time).

Usage (repository root, a CUDA machine):
  python benchmarks/kernel_times_gpu.py PROBLEM.py --modules old=DIR_A new=DIR_B
where DIR/<problem name>/kernel.py is each version's module.
"""

from __future__ import annotations

import argparse
import time

import torch
from gpu_rows import version_models
from torch.profiler import ProfilerActivity, profile

from kernelcraft.problem import load_problem


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("problem")
    ap.add_argument("--modules", nargs="+", required=True)
    ap.add_argument("--reps", type=int, default=20)
    args = ap.parse_args()
    problem = load_problem(args.problem)
    inputs = problem.sample_inputs(0, device="cuda")
    for label, model in version_models(problem, args.modules):
        with torch.no_grad():
            for _ in range(5):
                model(*inputs)
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(args.reps):
                model(*inputs)
            torch.cuda.synchronize()
            wall = (time.perf_counter() - t0) / args.reps * 1e3
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                for _ in range(args.reps):
                    model(*inputs)
                torch.cuda.synchronize()
        print(f"{problem.name} {label}: {wall:.4f} ms per forward (back to back)")
        for ev in sorted(prof.key_averages(), key=lambda e: -e.device_time_total):
            if ev.device_time_total > 0:
                ms = ev.device_time_total / args.reps / 1e3
                print(f"    {ms:8.4f} ms  x{ev.count // args.reps}  {ev.key[:90]}")


if __name__ == "__main__":
    main()
