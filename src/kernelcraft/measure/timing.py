"""GPU timing: CUDA events, warm-up, L2 flush, rotating inputs, medians.

Every timed callable (candidate, eager, torch.compile) goes through ``time_cuda`` with
the same input sets in the same process, so ratios compare like with like.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from kernelcraft.measure import gpulock

#: Bytes written between repetitions to evict the L2 (H200: 60 MB; MI300X: 256 MB).
FLUSH_BYTES = 512 << 20


@dataclass
class Timing:
    median_ms: float
    p20_ms: float
    p80_ms: float
    reps: int

    def to_json(self) -> dict[str, float]:
        return {"median_ms": self.median_ms, "p20_ms": self.p20_ms, "p80_ms": self.p80_ms,
                "reps": self.reps}


def time_cuda(
    fn: Callable[..., Any],
    input_sets: Sequence[Sequence[Any]],
    *,
    warmup_ms: float = 50.0,
    budget_ms: float = 1500.0,
    min_reps: int = 10,
    max_reps: int = 500,
    flush: bool = True,
) -> Timing:
    """Median time of ``fn(*inputs)`` with inputs rotating over ``input_sets``."""
    device = torch.device("cuda")
    cache = torch.empty(FLUSH_BYTES // 4, dtype=torch.int32, device=device) if flush else None
    # Warm-up: compilation, autotuning and allocator growth stay out of the numbers.
    # The estimate of one call's time leaves out the first calls (compilation).
    with gpulock.shared():  # no warm-up while another process times
        torch.cuda.synchronize()
        for i in range(2):
            fn(*input_sets[i % len(input_sets)])
            torch.cuda.synchronize()
        with gpulock.exclusive():  # no other process's kernels during the measurement
            start, k = time.perf_counter(), 0
            while k < 3 or (time.perf_counter() - start) * 1e3 < warmup_ms:
                fn(*input_sets[(2 + k) % len(input_sets)])
                torch.cuda.synchronize()
                k += 1
                if k >= 1000:
                    break
            est = max((time.perf_counter() - start) * 1e3 / k, 1e-3)
            reps = int(min(max_reps, max(min_reps, budget_ms / est)))
            starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
            ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
            for i in range(reps):
                if cache is not None:
                    cache.zero_()
                inputs = input_sets[i % len(input_sets)]
                starts[i].record()
                fn(*inputs)
                ends[i].record()
            torch.cuda.synchronize()
    times = sorted(s.elapsed_time(e) for s, e in zip(starts, ends, strict=True))
    q = statistics.quantiles(times, n=5) if len(times) >= 5 else [times[0]] * 4
    return Timing(statistics.median(times), q[0], q[3], reps)


def host_ms(fn: Callable[..., Any], input_sets: Sequence[Sequence[Any]], calls: int = 60
            ) -> float:
    """Median host time to enqueue one ``fn(*inputs)`` (no synchronisation inside it).

    A loop of forwards costs max(host time, device time) per call, and the events of
    ``time_cuda`` see the host time only where it exceeds the device work queued before it
    (the L2 flush hides some): a program whose Python launches cost more than eager's whole
    forward runs slower than eager in a model's loop, however fast its kernels.
    """
    with gpulock.shared():
        for i in range(3):
            fn(*input_sets[i % len(input_sets)])
        torch.cuda.synchronize()
        times = []
        for i in range(calls):
            t0 = time.perf_counter()
            fn(*input_sets[i % len(input_sets)])
            times.append((time.perf_counter() - t0) * 1e3)
            if i % 10 == 9:  # a bounded queue: a full one would block inside the timed call
                torch.cuda.synchronize()
        torch.cuda.synchronize()
    return statistics.median(times)


def device_info() -> dict[str, Any]:
    """GPU name, clocks, driver and library versions for a record."""
    import platform

    import triton

    info: dict[str, Any] = {
        "torch": torch.__version__,
        "triton": triton.__version__,
        "python": platform.python_version(),
    }
    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        info.update(
            gpu=props.name,
            sms=props.multi_processor_count,
            capability=f"{props.major}.{props.minor}",
            memory_gb=round(props.total_memory / 2**30, 1),
            cuda=torch.version.cuda,
            hip=getattr(torch.version, "hip", None),
        )
        info.update(_nvidia_smi())
    else:
        info["gpu"] = None
    return info


def _nvidia_smi() -> dict[str, Any]:
    import shutil
    import subprocess

    if shutil.which("nvidia-smi") is None:
        return {}
    fields = "driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit"
    try:
        out = subprocess.run(
            ["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=10, check=True,
        ).stdout.strip().splitlines()[0]
    except Exception:
        return {}
    vals = [v.strip() for v in out.split(",")]
    return dict(zip(["driver", "sm_clock", "max_sm_clock", "mem_clock", "power_limit"], vals,
                    strict=False))
