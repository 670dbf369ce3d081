"""Vectorised reductions and scans for Triton's CPU interpreter.

The interpreter runs a ``tl.reduce`` or ``tl.associative_scan`` whose combine function is
not one of Triton's own (a NaN-propagating max, a product, an arg-max lane pair, a
log-add-exp scan) element by element in Python, which made such reductions most of a CPU
judgement. Here the combine function runs on whole numpy blocks: a reduction combines
neighbours (element 2i with 2i + 1) level by level, a scan doubles its stride
(Hillis-Steele); log2(n) calls either way. The left operand always holds the lower
indices, so any associative combine, commutative or not, gives its result; where a
combine adds floats, the additions group as a GPU's tree groups them rather than left to
right.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_INSTALLED = False


def install() -> bool:
    """Replace the interpreter's element-by-element fallbacks (once per process); False
    where this Triton's interpreter does not have them (it is then left as it is)."""
    global _INSTALLED
    if _INSTALLED:
        return True
    try:
        from triton.runtime import interpreter
    except ImportError:
        return False
    reduce_ops = getattr(interpreter, "ReduceOps", None)
    scan_ops = getattr(interpreter, "ScanOps", None)
    needed = [(reduce_ops, "generic_reduce"), (reduce_ops, "unravel"),
              (reduce_ops, "to_tensor"), (scan_ops, "generic_scan"), (scan_ops, "to_tensor")]
    if any(cls is None or not hasattr(cls, name) for cls, name in needed):
        return False
    reduce_ops.generic_reduce = _tree_reduce
    scan_ops.generic_scan = _doubling_scan
    _INSTALLED = True
    return True


def _combine(op: Any, left: list[np.ndarray], right: list[np.ndarray],
             dtypes: list[Any]) -> list[np.ndarray]:
    """``op.combine_fn`` applied to two blocks of every operand, as numpy arrays of the
    operands' own dtypes and the blocks' shape."""
    def blocks(arrays: list[np.ndarray]) -> list[Any]:
        return [op.to_tensor(np.ascontiguousarray(a), dt)
                for a, dt in zip(arrays, dtypes, strict=True)]

    ret = op.combine_fn.fn(*blocks(left), *blocks(right))
    ret = ret if isinstance(ret, tuple) else (ret,)
    out = []
    for r, a in zip(ret, left, strict=True):
        data = r.handle.data if hasattr(r, "handle") else np.asarray(r)
        out.append(np.broadcast_to(data, a.shape).astype(a.dtype))
    return out


def _tree_reduce(self: Any, input: tuple[Any, ...]) -> list[Any]:
    original_axis = self.axis
    input, axis = self.unravel(input, self.axis)
    dtypes = [arg.dtype for arg in input]
    shape = input[0].handle.data.shape
    data = [np.moveaxis(arg.handle.data, axis, -1) for arg in input]
    while data[0].shape[-1] > 1:
        n = data[0].shape[-1]
        half = n // 2
        merged = _combine(self, [d[..., 0:2 * half:2] for d in data],
                          [d[..., 1:2 * half:2] for d in data], dtypes)
        if n % 2:  # the last element has no neighbour: it stays last
            merged = [np.concatenate([m, d[..., n - 1:]], axis=-1)
                      for m, d in zip(merged, data, strict=True)]
        data = merged
    ret = []
    for d, arg in zip(data, input, strict=True):
        out = d[..., 0].copy()  # (ascontiguousarray would make a 0-d result 1-d)
        if self.keep_dims:
            if original_axis is not None:
                out = np.expand_dims(out, axis)
            else:
                for _ in range(len(shape)):
                    out = np.expand_dims(out, 0)
        elif original_axis is None:
            out = out.item()
        ret.append(self.to_tensor(out, arg.dtype))
    return ret


def _doubling_scan(self: Any, input: tuple[Any, ...]) -> list[Any]:
    axis = self.axis
    dtypes = [arg.dtype for arg in input]
    data = [np.moveaxis(arg.handle.data, axis, -1) for arg in input]
    n = data[0].shape[-1]
    step = 1
    while step < n:  # element i combines with the running result ending at i - step
        # whole blocks (the interpreter's blocks are powers of two): the first ``step``
        # elements combine with themselves, and keep their value
        left = [np.concatenate([d[..., :step], d[..., : n - step]], axis=-1) for d in data]
        merged = _combine(self, left, data, dtypes)
        data = [np.concatenate([d[..., :step], m[..., step:]], axis=-1)
                for d, m in zip(data, merged, strict=True)]
        step *= 2
    return [self.to_tensor(np.ascontiguousarray(np.moveaxis(d, -1, axis)), arg.dtype)
            for d, arg in zip(data, input, strict=True)]
