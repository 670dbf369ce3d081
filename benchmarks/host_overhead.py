"""Host-side cost of a generated module on the GPU: is a forward bound by Python?

For each (problem, module) pair: the judge's timer (``time_cuda``), the host time to enqueue
one forward (no synchronisation inside the loop), and the replay of a CUDA graph of the
forward, which has no host cost. A module whose enqueue time exceeds its graph time is
launch-bound: its wrappers, not its kernels, set the measured time.
Usage: python benchmarks/host_overhead.py PROBLEM.py MODULE.py [PROBLEM.py MODULE.py ...]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import torch

from kernelcraft.measure.timing import time_cuda
from kernelcraft.measure.worker import timed_model, timing_inputs
from kernelcraft.problem import load_module, load_problem


def measure(problem_path: Path, module_path: Path) -> dict[str, float]:
    problem = load_problem(problem_path)
    cls = load_module(module_path, "candidate").ModelNew
    model = timed_model(problem, "fp32", 0, cls)
    sets = timing_inputs(problem, "fp32", 0, 3)
    row: dict[str, float] = {}
    with torch.no_grad():
        row["judge_ms"] = time_cuda(model, sets).median_ms
        for _ in range(3):
            model(*sets[0])
        torch.cuda.synchronize()
        n = 50
        t0 = time.perf_counter()
        for i in range(n):
            model(*sets[i % len(sets)])
        row["enqueue_ms"] = (time.perf_counter() - t0) * 1e3 / n
        torch.cuda.synchronize()
        try:
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                model(*sets[0])
            g.replay()
            torch.cuda.synchronize()
            row["graph_ms"] = time_cuda(lambda: g.replay(), [[]]).median_ms
        except Exception as exc:  # noqa: BLE001 - a module that cannot be captured is reported
            row["graph_error"] = str(exc)[:120]  # type: ignore[assignment]
    return row


def main(argv: list[str]) -> None:
    for p, m in zip(argv[::2], argv[1::2], strict=True):
        print(Path(p).stem, measure(Path(p), Path(m)), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
