"""Where a generated module's forward spends its host time: ``cProfile`` over repeated
forwards on the GPU, the functions with the most time of their own.

Usage (repository root, a CUDA machine):
  python benchmarks/host_profile_gpu.py PROBLEM.py --modules old=DIR_A new=DIR_B
"""

from __future__ import annotations

import argparse
import cProfile
import pstats

import torch
from gpu_rows import version_models

from kernelcraft.problem import load_problem


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("problem")
    ap.add_argument("--modules", nargs="+", required=True)
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--top", type=int, default=14)
    args = ap.parse_args()
    problem = load_problem(args.problem)
    inputs = problem.sample_inputs(0, device="cuda")
    for label, model in version_models(problem, args.modules):
        with torch.no_grad():
            for _ in range(10):
                model(*inputs)
            torch.cuda.synchronize()
            prof = cProfile.Profile()
            prof.enable()
            for _ in range(args.reps):
                model(*inputs)
            prof.disable()
            torch.cuda.synchronize()
        print(f"== {problem.name} {label} ({args.reps} forwards)")
        pstats.Stats(prof).sort_stats("tottime").print_stats(args.top)


if __name__ == "__main__":
    main()
