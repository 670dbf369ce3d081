"""Host time of one generated forward, call by call: is it steady, and what moves it?

Prints the machine's CPU limits (cgroup quota, throttling, threads), then per (problem,
module) pair the host time to enqueue one forward (no synchronisation inside; percentiles
over many calls), before and after CPU tensor work of the size a judge does (building
inputs), under the process's default intra-op threads and with one thread, and the top of
a profile of the enqueue loop.
Usage: python benchmarks/host_jitter.py PROBLEM.py MODULE.py [PROBLEM.py MODULE.py ...]
"""

from __future__ import annotations

import cProfile
import io
import json
import os
import pstats
import statistics
import sys
import time
from pathlib import Path

import torch

from kernelcraft.measure.judge import JudgeOptions, judge_files
from kernelcraft.measure.worker import timed_model, timing_inputs
from kernelcraft.problem import load_module, load_problem


def machine() -> dict[str, object]:
    out: dict[str, object] = {"nproc": os.cpu_count(), "affinity": len(os.sched_getaffinity(0)),
                              "torch_threads": torch.get_num_threads()}
    for f in ("/sys/fs/cgroup/cpu.max", "/sys/fs/cgroup/cpu.stat",
              "/sys/fs/cgroup/cpu/cpu.cfs_quota_us"):
        try:
            out[f] = Path(f).read_text().strip().replace("\n", "; ")
        except OSError:
            pass
    return out


def enqueue(model: object, sets: list, calls: int = 400) -> dict[str, float]:
    times = []
    for i in range(calls):
        t0 = time.perf_counter()
        model(*sets[i % len(sets)])
        times.append((time.perf_counter() - t0) * 1e3)
        if i % 20 == 19:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    q = statistics.quantiles(times, n=10)
    return {"p10_ms": q[0], "median_ms": statistics.median(times), "p90_ms": q[-1],
            "max_ms": max(times)}


def measure(problem_path: Path, module_path: Path) -> dict[str, object]:
    problem = load_problem(problem_path)
    cls = load_module(module_path, "candidate").ModelNew
    row: dict[str, object] = {"problem": problem_path.stem}
    with torch.no_grad():
        new = timed_model(problem, "fp32", 0, cls)
        sets = timing_inputs(problem, "fp32", 0, 3)
        for _ in range(5):
            new(*sets[0])
        torch.cuda.synchronize()
        row["enqueue"] = enqueue(new, sets)
        problem.sample_inputs(7)  # CPU tensors, as a judge's trials build them
        row["enqueue_after_cpu_work"] = enqueue(new, sets)
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        problem.sample_inputs(8)
        row["enqueue_one_thread"] = enqueue(new, sets)
        torch.set_num_threads(threads)
        prof = cProfile.Profile()
        prof.enable()
        enqueue(new, sets, calls=200)
        prof.disable()
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(12)
        row["profile"] = s.getvalue()[-2500:]
    res = judge_files(module_path, problem_path, JudgeOptions(device="cuda",
                                                              compile_baseline=False))
    row["judge"] = {"correct": res.correct, "reason": res.reason, "detail": res.detail[:600],
                    "new_ms": res.ms("candidate"), "eager_ms": res.ms("eager"),
                    "candidate": res.timing.get("candidate")}
    return row


def main(argv: list[str]) -> int:
    if len(argv) % 2:
        print(__doc__)
        return 2
    print(json.dumps(machine()), flush=True)
    for i in range(0, len(argv), 2):
        row = measure(Path(argv[i]), Path(argv[i + 1]))
        prof = row.pop("profile")
        print(json.dumps(row), flush=True)
        print(prof, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
