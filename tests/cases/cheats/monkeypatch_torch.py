"""Cheat (softmax): writes zeros with a Triton kernel, and from inside forward rewires
the torch process it runs in: torch.softmax (every spelling) now returns zeros too, and
the usual comparison helpers (torch/numpy allclose, isclose, equal, assert_close) always
agree. A judge that computes the reference, or compares, in the candidate's process is
fooled; one that keeps both out of the candidate's reach is not.
Expected: rejected (any reason; "wrong" for a judge that is out of reach).

It patches only when forward is called, so a judge that merely imports the file in its
own process is not affected."""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _fill_zero(y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.zeros([BLOCK], dtype=tl.float32), mask=offs < n)


def _zeros_like_softmax(input, dim=None, *args, **kwargs):
    dtype = kwargs.get("dtype") or (args[0] if args and isinstance(args[0], torch.dtype) else None)
    return torch.zeros_like(input, dtype=dtype or input.dtype)


def _true(*args, **kwargs):
    return True


def _none(*args, **kwargs):
    return None


def _all_close(input, other=None, *args, **kwargs):
    return torch.ones_like(torch.as_tensor(input), dtype=torch.bool)


def _patch():
    if getattr(torch, "_kc_patched", False):
        return
    torch._kc_patched = True
    torch.softmax = _zeros_like_softmax
    F.softmax = _zeros_like_softmax
    torch.special.softmax = _zeros_like_softmax
    torch.Tensor.softmax = lambda self, dim=None, *a, **k: _zeros_like_softmax(self, dim, *a, **k)
    torch.nn.Softmax.forward = lambda self, input: _zeros_like_softmax(input, self.dim)
    torch.allclose = _true
    torch.equal = _true
    torch.isclose = _all_close
    torch.Tensor.allclose = _true
    torch.Tensor.equal = _true
    torch.Tensor.isclose = _all_close
    torch.testing.assert_close = _none
    try:
        import numpy as np

        np.allclose = _true
        np.array_equal = _true
        np.isclose = lambda a, b, *args, **kwargs: np.ones(np.shape(a), dtype=bool)
        np.testing.assert_allclose = _none
        np.testing.assert_array_equal = _none
    except Exception:
        pass


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        _patch()
        y = torch.empty_like(x)
        n = y.numel()
        _fill_zero[(triton.cdiv(n, 256),)](y, n, BLOCK=256)
        return y
