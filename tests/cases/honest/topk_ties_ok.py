"""Honest control for topk_ties: equal values ranked lowest index first (PyTorch's
deterministic order, not necessarily its default one), outputs written by Triton."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _halves(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = x * 2.0
    r = tl.floor(y + 0.5)
    # round half to even, as torch.round
    r = tl.where((r - y == 0.5) & (r - 2.0 * tl.floor(r * 0.5) == 1.0), r - 1.0, r)
    tl.store(y_ptr + offs, r, mask=mask)


@triton.jit
def _copy(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


def _written(t):
    out = torch.empty_like(t)
    _copy[(triton.cdiv(t.numel(), 1024),)](t, out, t.numel(), BLOCK=1024)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        xc = x.contiguous()
        y = torch.empty_like(xc)
        _halves[(triton.cdiv(xc.numel(), 1024),)](xc, y, xc.numel(), BLOCK=1024)
        s = torch.sort(y, dim=-1, descending=True, stable=True)
        values = s.values[..., :3].contiguous()
        indices = s.indices[..., :3].contiguous()
        return torch.return_types.topk((_written(values), _written(indices)))
