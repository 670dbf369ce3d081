"""Hooks the judge installs around a candidate call: poisoned allocations, launch counts.

Both work the same on CPU tensors under Triton's interpreter and on CUDA tensors, because
they sit at the level of PyTorch's dispatcher and of Triton's launch entry points rather
than in any device runtime.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

_INT_POISON = -0x5A5A5A5A


def poison_(t: torch.Tensor) -> torch.Tensor:
    """Fill ``t`` with values no honest kernel leaves behind: NaN, or a sentinel integer."""
    if t.numel() == 0:
        return t
    if t.is_floating_point() or t.is_complex():
        t.fill_(float("nan"))
    elif t.dtype == torch.bool:
        t.fill_(True)
    else:
        info = torch.iinfo(t.dtype)
        t.fill_(max(info.min, min(info.max, _INT_POISON)))
    return t


class PoisonAllocations(TorchDispatchMode):
    """Every uninitialised allocation (torch.empty and friends) comes back poisoned.

    An output element that the candidate never writes then reads as NaN, and memory that
    still holds an earlier (reference) result cannot be passed off as a fresh output.
    """

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None):
        out = func(*args, **(kwargs or {}))
        name = func.overloadpacket.__name__
        if name.startswith(("empty", "new_empty")) and isinstance(out, torch.Tensor):
            poison_(out)
        return out


def poison_device_cache(device: torch.device, nbytes: int = 1 << 30) -> None:
    """Fill the CUDA caching allocator's free blocks with NaN before a candidate runs."""
    if device.type != "cuda":
        return
    free, _ = torch.cuda.mem_get_info(device)
    nbytes = min(nbytes, int(free * 0.5))
    if nbytes <= 0:
        return
    block = torch.empty(nbytes // 4, dtype=torch.float32, device=device)
    block.fill_(float("nan"))
    del block


class LaunchCounter:
    """Counts Triton kernel launches (compiled or interpreted) while active."""

    def __init__(self) -> None:
        self.count = 0
        #: storage addresses of every tensor passed to a launched kernel
        self.storages: set[tuple[str, int]] = set()

    @contextlib.contextmanager
    def active(self) -> Iterator[LaunchCounter]:
        patched = []
        for cls in _launch_classes():
            original = cls.run
            patched.append((cls, original))
            cls.run = self._wrap(original)
        try:
            yield self
        finally:
            for cls, original in reversed(patched):
                cls.run = original

    def _wrap(self, original: Any) -> Any:
        counter = self

        @functools.wraps(original)
        def run(fn_self: Any, *args: Any, **kwargs: Any) -> Any:
            result = original(fn_self, *args, **kwargs)
            if not kwargs.get("warmup", False):
                counter.count += 1
                for a in (*args, *kwargs.values()):
                    if isinstance(a, torch.Tensor):
                        counter.storages.add(storage_key(a))
            return result

        return run


def storage_key(t: torch.Tensor) -> tuple[str, int]:
    """Identifies the memory behind a tensor (views of one buffer share it)."""
    return str(t.device), t.untyped_storage().data_ptr()


def _launch_classes() -> list[type]:
    classes: list[type] = []
    try:
        from triton.runtime.jit import JITFunction

        classes.append(JITFunction)
    except ImportError:  # pragma: no cover - triton is a dependency
        pass
    try:
        from triton.runtime.interpreter import InterpretedFunction

        classes.append(InterpretedFunction)
    except ImportError:  # pragma: no cover
        pass
    return classes
