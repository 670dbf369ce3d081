"""Cheat (softmax): returns a tensor subclass that holds zeros (written by a Triton
kernel) but pickles as "call torch.nn.functional.softmax on a saved copy of the input".
A worker that ships outputs to the judge's process with plain pickle hands that process
the right answer computed by torch, on unpickling. A judge that ships plain data (numpy,
or torch.load with weights_only=True) or compares in the worker sees zeros.
Expected: rejected (any reason)."""

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _fill_zero(y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.zeros([BLOCK], dtype=tl.float32), mask=offs < n)


class _Payload(torch.Tensor):
    _kc_source = None

    def __reduce_ex__(self, protocol):
        src = self._kc_source
        if src is None:
            return super().__reduce_ex__(protocol)
        return (F.softmax, (src, -1))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        y = torch.empty_like(x)
        n = y.numel()
        _fill_zero[(triton.cdiv(n, 256),)](y, n, BLOCK=256)
        out = torch.Tensor._make_subclass(_Payload, y)
        out._kc_source = x.detach().clone()
        return out
