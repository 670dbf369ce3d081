"""The judge's launch counter sees both of Triton's launch entry points.

No GPU here: a compiled kernel's launcher is stood in by a recording function, which is
what ``CompiledKernel.run`` returns on a GPU machine (a callable taking the grid, stream,
function, metadata, hooks, then the kernel's arguments).
"""

from __future__ import annotations

import torch
from triton.compiler.compiler import CompiledKernel

from kernelcraft.measure.instrument import LaunchCounter, storage_key


def _compiled(calls: list) -> CompiledKernel:
    k = object.__new__(CompiledKernel)
    k.module = None  # (no loaded module: nothing to unload)
    k._run = lambda *args: calls.append(args)  # the launcher, as _init_handles leaves it
    return k


def test_direct_launcher_call_is_counted() -> None:
    calls: list = []
    k = _compiled(calls)
    out = torch.empty(4)
    counter = LaunchCounter()
    with counter.active():
        k.run(2, 1, 1, 0, None, None, None, None, None, out, 4)
        k.run(0, 1, 1, 0, None, None, None, None, None, out, 4)  # an empty grid runs nothing
    assert len(calls) == 2
    assert counter.count == 1
    assert storage_key(out) in counter.last_launch
    k.run(2, 1, 1, 0, None, None, None, None, None, out, 4)  # not counted once inactive
    assert counter.count == 1
    assert isinstance(CompiledKernel.__dict__["run"], property)  # restored


def test_launch_through_jit_is_counted_once() -> None:
    """JITFunction.run calls the launcher itself: one launch, one count."""
    from triton.runtime.jit import JITFunction

    calls: list = []
    k = _compiled(calls)
    original = JITFunction.run

    def run(self, *args, grid, warmup, **kwargs):
        k.run(grid[0], 1, 1, 0, None, None, None, None, None, *args)
        return k

    JITFunction.run = run
    try:
        fn = object.__new__(JITFunction)
        counter = LaunchCounter()
        with counter.active():
            fn[(3,)](torch.empty(2), 2)
        assert len(calls) == 1
        assert counter.count == 1
    finally:
        JITFunction.run = original
