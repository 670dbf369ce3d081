"""Several judges on one GPU: correctness work may share it, timing has it alone.

With ``KERNELCRAFT_GPU_LOCK`` set to a path, every process doing GPU work holds a shared
``flock`` on ``<path>.<CUDA_VISIBLE_DEVICES>`` and converts it to an exclusive one while it
times, so no other process's kernels run during a measurement; compilation and the judge's
trials still overlap. Unset (the default), nothing is locked: one judge per GPU.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator

_state: dict[str, int | None] = {"fd": None, "shared": 0}


def _fd() -> int | None:
    base = os.environ.get("KERNELCRAFT_GPU_LOCK")
    if not base:
        return None
    if _state["fd"] is None:
        dev = os.environ.get("CUDA_VISIBLE_DEVICES", "all").replace(",", "-") or "none"
        _state["fd"] = os.open(f"{base}.{dev}", os.O_CREAT | os.O_RDWR, 0o600)
    return _state["fd"]


def hold_shared() -> None:
    """Share the GPU from now until the process exits (worker processes)."""
    fd = _fd()
    if fd is not None and not _state["shared"]:
        fcntl.flock(fd, fcntl.LOCK_SH)
        _state["shared"] = 1


@contextlib.contextmanager
def shared() -> Iterator[None]:
    """Share the GPU inside the block (a process that later waits on a worker)."""
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
