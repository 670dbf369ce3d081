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
