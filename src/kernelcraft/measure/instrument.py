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
    """Poisons uninitialised allocations and records which memory PyTorch ops write.

    Every torch.empty-style allocation comes back poisoned, so an output element the
    candidate never writes reads as NaN, and memory still holding an earlier result cannot
    pass as a fresh output. Writes by PyTorch ops (in-place, out=, or a new result) are
    stamped with the launch counter's clock, so the judge can tell an output that a Triton
    kernel wrote last from one that PyTorch computed after a decoy launch.
    """

    def __init__(self, counter: LaunchCounter | None = None) -> None:
        super().__init__()
        self.counter = counter
        self.last_write: dict[tuple[str, int], int] = {}

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        name = func.overloadpacket.__name__
        if name.startswith(("empty", "new_empty")):
            if isinstance(out, torch.Tensor):
                poison_(out)
            return out
        if self.counter is not None:
            self._stamp(func, args, kwargs, out)
        return out

    def _stamp(self, func: Any, args: Any, kwargs: Any, out: Any) -> None:
        tick = self.counter.tick()
        schema = func._schema
        for i, arg in enumerate(schema.arguments):
            info = arg.alias_info
            if info is None or not info.is_write:
                continue
            value = args[i] if i < len(args) else kwargs.get(arg.name)
            for t in _tensors_in(value):
                self.last_write[storage_key(t)] = tick
        rets = out if isinstance(out, (tuple, list)) else (out,)
        for ret, info in zip(rets, schema.returns, strict=False):
            if info.alias_info is None:
                for t in _tensors_in(ret):
                    self.last_write[storage_key(t)] = tick


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
    """Counts Triton kernel launches (compiled or interpreted) while active.

    Two entry points launch a Triton kernel: ``JITFunction.run`` (``kernel[grid](...)``,
    which binds and specialises the arguments, compiles on a miss, then launches) and the
    launcher of an already compiled kernel (``CompiledKernel.run``), which a caller holding
    the compiled kernel may call directly to skip the per-call binding. Both are counted; a
    launch through the first is counted once, not again by the launcher it calls.
    """

    def __init__(self) -> None:
        self.count = 0
        self.clock = 0
        #: storage -> clock of the last launch that was handed that memory
        self.last_launch: dict[tuple[str, int], int] = {}
        self._depth = 0  # > 0 inside a counted JITFunction.run

    def tick(self) -> int:
        self.clock += 1
        return self.clock

    def reset_trace(self) -> None:
        self.last_launch.clear()

    @contextlib.contextmanager
    def active(self) -> Iterator[LaunchCounter]:
        patched = []
        for cls in _launch_classes():
            original = cls.run
            patched.append((cls, original))
            cls.run = self._wrap(original)
        compiled = _compiled_kernel_class()
        if compiled is not None:
            prop = compiled.__dict__["run"]
            patched.append((compiled, prop))
            compiled.run = property(self._wrap_launcher(prop.fget))
        try:
            yield self
        finally:
            for cls, original in reversed(patched):
                cls.run = original

    def _record(self, grid: Any, args: Any) -> None:
        if _empty_grid(grid):
            return
        self.count += 1
        tick = self.tick()
        for a in args:
            if isinstance(a, torch.Tensor):
                self.last_launch[storage_key(a)] = tick

    def _wrap(self, original: Any) -> Any:
        counter = self

        @functools.wraps(original)
        def run(fn_self: Any, *args: Any, **kwargs: Any) -> Any:
            counter._depth += 1
            try:
                result = original(fn_self, *args, **kwargs)
            finally:
                counter._depth -= 1
            if not kwargs.get("warmup", False):
                counter._record(kwargs.get("grid"), (*args, *kwargs.values()))
            return result

        return run

    def _wrap_launcher(self, fget: Any) -> Any:
        """``CompiledKernel.run`` is a property returning the launcher, called as
        ``launcher(grid_x, grid_y, grid_z, stream, function, metadata, launch_metadata,
        enter_hook, exit_hook, *kernel_args)``."""
        counter = self

        def get(kernel_self: Any) -> Any:
            launcher = fget(kernel_self)

            def launch(*args: Any) -> Any:
                result = launcher(*args)
                if counter._depth == 0:
                    counter._record(tuple(args[:3]), args[9:])
                return result

            return launch

        return get


def _empty_grid(grid: Any) -> bool:
    """A grid of zero programs runs nothing (callable grids cannot be told apart)."""
    if isinstance(grid, int):
        return grid <= 0
    if isinstance(grid, (tuple, list)):
        return any(isinstance(g, int) and g <= 0 for g in grid)
    return False


def _tensors_in(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [v for v in value if isinstance(v, torch.Tensor)]
    return []


def storage_key(t: torch.Tensor) -> tuple[str, int]:
    """Identifies the memory behind a tensor (views of one buffer share it)."""
    return str(t.device), t.untyped_storage().data_ptr()


def _compiled_kernel_class() -> type | None:
    try:
        from triton.compiler.compiler import CompiledKernel
    except ImportError:  # pragma: no cover - triton is a dependency
        return None
    return CompiledKernel if isinstance(CompiledKernel.__dict__.get("run"), property) else None


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
