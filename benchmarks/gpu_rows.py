"""Plumbing shared by the GPU micro-benchmarks (attention_gpu.py, conv_gpu.py): JSON lines
stamped with the GPU, library versions and date, and timing through the judge's timer."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch
import triton

from kernelcraft.measure.timing import time_cuda


def recorder(out: Path, budget_ms: float
             ) -> tuple[Callable[[dict], None], Callable[[Callable, Sequence[Any]], float]]:
    """(emit, timed): ``emit(row)`` appends the row with the environment to ``out`` and
    echoes it; ``timed(fn, inputs)`` is the median ms of ``fn(*inputs)``."""
    env = {"gpu": torch.cuda.get_device_name(), "torch": torch.__version__,
           "triton": triton.__version__, "date": dt.datetime.now(dt.UTC).isoformat()}
    fh = out.open("a")

    def emit(row: dict) -> None:
        fh.write(json.dumps(row | env) + "\n")
        fh.flush()
        print(json.dumps(row), flush=True)

    def timed(fn: Callable, inputs: Sequence[Any]) -> float:
        return time_cuda(fn, [inputs], budget_ms=budget_ms).median_ms

    return emit, timed


def versions(specs: Sequence[str]) -> dict[str, Path]:
    """``LABEL=DIR`` arguments -> {label: folder of that version's modules}."""
    return {s.split("=", 1)[0]: Path(s.split("=", 1)[1]) for s in specs}


def version_models(problem: Any, specs: Sequence[str]) -> list[tuple[str, torch.nn.Module]]:
    """(label, ``ModelNew`` on the GPU with the problem model's state) per version, from
    ``DIR/<problem name>/kernel.py``."""
    from kernelcraft.problem import load_module

    out = []
    for label, folder in versions(specs).items():
        module = load_module(folder / problem.name / "kernel.py", f"m_{label}")
        ref = problem.make_model(problem.init_inputs()).cuda().eval()
        model = module.ModelNew(*problem.init_inputs()).cuda().eval()
        model.load_state_dict(ref.state_dict())
        out.append((label, model))
    return out
