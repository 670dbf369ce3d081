"""Host cost of launching a Triton kernel, by number of scalar arguments, on the GPU.

Generated wrappers pass every size and stride as a scalar (six dims per view), so a kernel
can take 60-100 arguments. This measures the host time per launch (enqueue loop, no
synchronisation inside it) of an empty kernel with 2 pointers and N int arguments, through
``kernel[grid](...)``, for N in 4..128; and, for generated modules given on the command
line, the host time of one forward with launches and with Triton's launch replaced by a
no-op (the wrappers' own Python cost).
Usage: python benchmarks/launch_cost.py [PROBLEM.py MODULE.py ...]
"""

from __future__ import annotations

import importlib.util
import sys
import tempfile
import time
from pathlib import Path

import torch
import triton
from triton.runtime.jit import JITFunction

from kernelcraft.measure.worker import timed_model, timing_inputs
from kernelcraft.problem import load_module, load_problem


def _kernel(n: int):
    """An empty kernel taking two pointers and ``n`` ints (source written to a file:
    Triton reads a kernel's source through ``inspect``)."""
    args = ", ".join(f"a{i}" for i in range(n))
    src = ("import triton\nimport triton.language as tl\n\n@triton.jit\n"
           f"def k(x, y, {args}, BLOCK: tl.constexpr):\n"
           "    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
           "    tl.store(y + i, tl.load(x + i, mask=i < a0), mask=i < a0)\n")
    path = Path(tempfile.mkdtemp()) / f"k{n}.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location(f"_launch_k{n}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return mod.k


def _per_call_us(fn, n: int = 2000) -> float:
    for _ in range(20):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    dt = time.perf_counter() - t0
    torch.cuda.synchronize()
    return dt * 1e6 / n


def launch_rows() -> None:
    x = torch.randn(1024, device="cuda")
    y = torch.empty_like(x)
    for n in (4, 16, 32, 64, 96, 128):
        k = _kernel(n)
        ints = [1024] + [17 + 32 * i for i in range(n - 1)]  # not 1, not multiples of 16
        us = _per_call_us(lambda k=k, ints=ints: k[(1,)](x, y, *ints, BLOCK=1024))
        print(f"launch  int_args={n:4d}  {us:7.1f} us/launch", flush=True)


def module_rows(pairs: list[tuple[Path, Path]]) -> None:
    real = JITFunction.run
    for problem_path, module_path in pairs:
        problem = load_problem(problem_path)
        model = timed_model(problem, "fp32", 0, load_module(module_path, "candidate").ModelNew)
        inputs = timing_inputs(problem, "fp32", 0, 1)[0]
        def forward(model=model, inputs=inputs) -> None:
            model(*inputs)

        with torch.no_grad():
            try:
                full = _per_call_us(forward, 200)
            except Exception as exc:  # noqa: BLE001 - one module's failure is a row
                print(f"module  {module_path}: failed: {type(exc).__name__}", flush=True)
                continue
            JITFunction.run = lambda self, *a, **k: None
            try:
                wrappers = _per_call_us(forward, 200)
            finally:
                JITFunction.run = real
        print(f"module  {str(module_path):50s} forward {full:8.1f} us  "
              f"wrappers only {wrappers:8.1f} us", flush=True)


def main(argv: list[str]) -> None:
    print(torch.cuda.get_device_name(), "torch", torch.__version__, "triton", triton.__version__)
    launch_rows()
    module_rows([(Path(p), Path(m)) for p, m in zip(argv[::2], argv[1::2], strict=True)])


if __name__ == "__main__":
    main(sys.argv[1:])
