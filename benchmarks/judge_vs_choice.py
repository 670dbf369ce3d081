"""Why a generated module can time slower in the judge than in generate's choice.

For each (problem, module) pair, times ``ModelNew`` against the problem's ``Model`` the way
``choose_program`` does (same process, the two alternating) in four states of one process:
fresh; after the judge's candidate trials (``run_candidate``: other sizes, the stream trial,
poisoned allocations, the launch counter); the same without the L2 flush; and finally
the real judge (two worker processes). A state that moves the candidate's time and not
eager's names the cause.
Usage: python benchmarks/judge_vs_choice.py PROBLEM.py MODULE.py [PROBLEM.py MODULE.py ...]
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
from pathlib import Path

import torch

from kernelcraft.measure.judge import JudgeOptions, judge_files
from kernelcraft.measure.timing import time_cuda
from kernelcraft.measure.verify import VerifyOptions, plan_trials, precision_mode, run_candidate
from kernelcraft.measure.worker import timed_model, timing_inputs
from kernelcraft.problem import load_module, load_problem


def alternate(new: object, ref: object, sets: list, rounds: int = 3, flush: bool = True
              ) -> dict[str, float]:
    n, e = [], []
    for _ in range(rounds):
        n.append(time_cuda(new, sets, flush=flush).median_ms)
        e.append(time_cuda(ref, sets, flush=flush).median_ms)
    return {"new_ms": statistics.median(n), "eager_ms": statistics.median(e),
            "new_spread": max(n) / min(n)}


def measure(problem_path: Path, module_path: Path) -> dict[str, object]:
    problem = load_problem(problem_path)
    cls = load_module(module_path, "candidate").ModelNew
    row: dict[str, object] = {"problem": problem_path.stem}
    with torch.no_grad(), precision_mode("fp32"):
        new = timed_model(problem, "fp32", 0, cls)
        ref = timed_model(problem, "fp32", 0, None)
        sets = timing_inputs(problem, "fp32", 0, 3)
        row["fresh"] = alternate(new, ref, sets)
        row["fresh_noflush"] = alternate(new, ref, sets, flush=False)
    opts = VerifyOptions(device="cuda", reduce=False)
    specs, _ = plan_trials(problem, opts)
    with tempfile.TemporaryDirectory() as tmp, precision_mode("fp32"):
        run_candidate(problem, cls, opts, specs, Path(tmp))
    torch.cuda.synchronize()
    with torch.no_grad(), precision_mode("fp32"):
        row["after_trials"] = alternate(new, ref, sets)
        new2 = timed_model(problem, "fp32", 0, cls)
        row["after_trials_new_instance"] = alternate(new2, ref, sets)
    res = judge_files(module_path, problem_path,
                      JudgeOptions(device="cuda", compile_baseline=False))
    row["judge"] = {"correct": res.correct, "new_ms": res.ms("candidate"),
                    "eager_ms": res.ms("eager")}
    return row


def main(argv: list[str]) -> int:
    if len(argv) % 2:
        print(__doc__)
        return 2
    for i in range(0, len(argv), 2):
        print(json.dumps(measure(Path(argv[i]), Path(argv[i + 1]))), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
