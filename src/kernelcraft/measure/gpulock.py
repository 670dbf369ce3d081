"""Several judges on one GPU: correctness work may share it, timing has it alone.

With ``KERNELCRAFT_GPU_LOCK`` set to a path, every process doing GPU work holds a shared
``flock`` on ``<path>.<CUDA_VISIBLE_DEVICES>`` and converts it to an exclusive one while it
times, so no other process's kernels run during a measurement; compilation and the judge's
trials still overlap. Unset (the default), nothing is locked: one judge per GPU.

``KERNELCRAFT_GPU_MEMORY_FRACTION`` caps each such process's caching allocator at that share
of the GPU's memory: a problem that asks for more fails alone (cuDNN then picks an algorithm
with a smaller workspace) instead of leaving its neighbours none.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator

_state: dict[str, int | None] = {"fd": None, "shared": 0, "capped": 0}


def _fd() -> int | None:
    base = os.environ.get("KERNELCRAFT_GPU_LOCK")
    if not base:
        return None
    if _state["fd"] is None:
        dev = os.environ.get("CUDA_VISIBLE_DEVICES", "all").replace(",", "-") or "none"
        _state["fd"] = os.open(f"{base}.{dev}", os.O_CREAT | os.O_RDWR, 0o600)
    return _state["fd"]


def _cap_memory() -> None:
    frac = os.environ.get("KERNELCRAFT_GPU_MEMORY_FRACTION")
    if not frac or _state.get("capped"):
        return
    import torch

    if torch.cuda.is_available():
        torch.cuda.set_per_process_memory_fraction(float(frac))
        _state["capped"] = 1


def hold_shared() -> None:
    """Share the GPU from now until the process exits (worker processes)."""
    _cap_memory()
    fd = _fd()
    if fd is not None and not _state["shared"]:
        fcntl.flock(fd, fcntl.LOCK_SH)
        _state["shared"] = 1


@contextlib.contextmanager
def shared() -> Iterator[None]:
    """Share the GPU inside the block (a process that later waits on a worker)."""
    _cap_memory()
    fd = _fd()
    if fd is None or _state["shared"]:
        yield
        return
    fcntl.flock(fd, fcntl.LOCK_SH)
    _state["shared"] = 1
    try:
        yield
    finally:
        _state["shared"] = 0
        fcntl.flock(fd, fcntl.LOCK_UN)


@contextlib.contextmanager
def exclusive() -> Iterator[None]:
    """The GPU alone inside the block (timing); back to the previous mode after."""
    fd = _fd()
    if fd is None:
        yield
        return
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_SH if _state["shared"] else fcntl.LOCK_UN)
