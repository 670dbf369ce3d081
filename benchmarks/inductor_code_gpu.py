"""The Triton code ``torch.compile`` (default mode) generates for problems, one file per
problem: the reference a generated kernel that loses to Inductor is read against.

Usage (repository root, a CUDA machine):
  python benchmarks/inductor_code_gpu.py --out DIR benchmarks/problems/NAME.py ...
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch
from torch._inductor.utils import run_and_get_code

from kernelcraft.problem import load_problem


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("problems", nargs="+")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for path in args.problems:
        problem = load_problem(path)
        # the mode the judge times (a new module's: training, as KernelBench's problems run;
        # eval mode would compile batch norm to a pointwise kernel)
        model = problem.make_model(problem.init_inputs()).cuda()
        inputs = problem.sample_inputs(0, device="cuda")
        with torch.no_grad():
            _, code = run_and_get_code(torch.compile(model), *inputs)
        (out / f"{problem.name}.txt").write_text("\n\n# ----\n\n".join(code))
        print(problem.name, sum(c.count("@triton.jit") for c in code), "kernels")


if __name__ == "__main__":
    main()
