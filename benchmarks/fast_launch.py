"""Host and device time of generated modules with and without the direct launch path.

Wrappers with a cached launch plan launch through ``_KcLaunch``: the first call of a plan
goes through Triton's ``kernel[grid](...)``, later ones call the compiled kernel's launcher
directly. This loads each module twice, once as emitted and once with the direct path
turned off (every launch through ``kernel[grid]``), checks both give the same outputs and
the same launch count under the judge's counter, and measures per module: the host time to
enqueue one forward (``timing.host_ms``), the judge's timer (CUDA events, L2 flushed) for
both and for eager PyTorch. Also the host time of one launch of an empty kernel with N int
arguments, both ways.
Usage: python benchmarks/fast_launch.py OUT.jsonl [PROBLEM.py MODULE.py ...]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import torch
from gpu_rows import recorder
from launch_cost import _kernel, _per_call_us

from kernelcraft.measure.instrument import LaunchCounter
from kernelcraft.measure.timing import host_ms, time_cuda
from kernelcraft.measure.worker import timed_model, timing_inputs
from kernelcraft.problem import load_module, load_problem


def launch_rows(emit) -> None:
    from kernelcraft.codegen.runtime import _KcLaunch

    x = torch.randn(1024, device="cuda")
    y = torch.empty_like(x)
    for n in (4, 32, 64, 128):
        k = _kernel(n)
        ints = [1024] + [17 + 32 * i for i in range(n - 1)]
        jit = _per_call_us(lambda k=k, ints=ints: k[(1,)](x, y, *ints, BLOCK=1024))
        launch, args, kw = _KcLaunch(k), (x, y, *ints), {"BLOCK": 1024}
        direct = _per_call_us(lambda f=launch, a=args, kw=kw: f((1,), a, kw))
        emit({"row": "launch", "int_args": n, "jit_us": jit, "direct_us": direct})


def _slow(module) -> None:
    module._KcLaunch._keep = lambda *a, **k: None  # every launch through kernel[grid]


def module_row(emit, problem_path: Path, module_path: Path) -> None:
    problem = load_problem(problem_path)
    fast_mod = load_module(module_path, "fast_candidate")
    slow_mod = load_module(module_path, "slow_candidate")
    _slow(slow_mod)
    inputs = timing_inputs(problem, "fp32", 0, 3)
    eager = timed_model(problem, "fp32", 0, None)
    models = {"fast": timed_model(problem, "fp32", 0, fast_mod.ModelNew),
              "slow": timed_model(problem, "fp32", 0, slow_mod.ModelNew)}
    row: dict = {"row": "module", "problem": problem_path.stem}
    with torch.no_grad():
        outs = {}
        for name, m in models.items():
            for _ in range(3):  # plans made, kernels compiled, direct path armed
                m(*inputs[0])
            counter = LaunchCounter()
            with counter.active():
                outs[name] = m(*inputs[1])
            torch.cuda.synchronize()
            row[f"launches_{name}"] = counter.count
        a, b = outs["fast"], outs["slow"]
        a = a if isinstance(a, (tuple, list)) else (a,)
        b = b if isinstance(b, (tuple, list)) else (b,)
        row["equal"] = all(torch.equal(x, y) for x, y in zip(a, b, strict=True))
        for name, m in (("eager", eager), *models.items()):
            row[f"host_ms_{name}"] = host_ms(m, inputs)
            row[f"ms_{name}"] = time_cuda(m, inputs).median_ms
    row["host_speedup"] = row["host_ms_slow"] / row["host_ms_fast"]
    row["speedup_vs_slow"] = row["ms_slow"] / row["ms_fast"]
    row["fast_vs_eager"] = row["ms_eager"] / row["ms_fast"]
    row["slow_vs_eager"] = row["ms_eager"] / row["ms_slow"]
    emit(row)


def main(argv: list[str]) -> None:
    emit, _ = recorder(Path(argv[0]), 1500.0)
    t0 = time.time()
    launch_rows(emit)
    pairs = list(zip(argv[1::2], argv[2::2], strict=True))
    for p, m in pairs:
        try:
            module_row(emit, Path(p), Path(m))
        except Exception as exc:  # noqa: BLE001 - one module's failure is a row
            emit({"row": "module", "problem": Path(p).stem,
                  "error": f"{type(exc).__name__}: {exc}"[:400]})
    print(f"{len(pairs)} modules in {time.time() - t0:.0f} s", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
