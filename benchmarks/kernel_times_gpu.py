"""Per-kernel GPU time of generated modules under ``torch.profiler``: which kernel of a
module's forward takes the time, and whether the GPU or the host is the limit (the sum of
kernel times against the forward's wall time). With ``--baselines``, eager PyTorch's and
``torch.compile``'s kernels too: a losing module is read kernel by kernel against Inductor's.

Usage (repository root, a CUDA machine):
  python benchmarks/kernel_times_gpu.py PROBLEM.py [...] --modules old=DIR_A new=DIR_B [--baselines]
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
    ap.add_argument("problems", nargs="+")
    ap.add_argument("--modules", nargs="+", required=True)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--baselines", action="store_true",
                    help="also profile eager PyTorch and torch.compile (default mode)")
    args = ap.parse_args()
    for path in args.problems:
        profile_problem(load_problem(path), args.modules, args.reps, args.baselines)


def profile_problem(problem, modules: list[str], reps: int, baselines: bool) -> None:
    inputs = problem.sample_inputs(0, device="cuda")
    models = version_models(problem, modules)
    if baselines:
        # the mode the judge times: training, as KernelBench's problems run
        ref = problem.make_model(problem.init_inputs()).cuda()
        models = [("eager", ref), ("compile", torch.compile(ref)), *models]
    for label, model in models:
        with torch.no_grad():
            for _ in range(5):
                model(*inputs)
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(reps):
                model(*inputs)
            torch.cuda.synchronize()
            wall = (time.perf_counter() - t0) / reps * 1e3
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                for _ in range(reps):
                    model(*inputs)
                torch.cuda.synchronize()
        print(f"{problem.name} {label}: {wall:.4f} ms per forward (back to back)")
        for ev in sorted(prof.key_averages(), key=lambda e: -e.device_time_total):
            if ev.device_time_total > 0:
                ms = ev.device_time_total / reps / 1e3
                print(f"    {ms:8.4f} ms  x{ev.count // reps}  {ev.key[:90]}")


if __name__ == "__main__":
    main()
