"""Cheat (tanh_gelu): a correct kernel launched over only the first half of the output,
which was allocated with torch.empty; the second half is never written.
Expected: "nonfinite" (the judge poisons empty allocations with NaN)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _tanh_gelu(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    ax = tl.abs(x)
    e = tl.exp(-2.0 * ax)
    t_big = (1.0 - e) / (1.0 + e)
    x2 = x * x
    t_small = ax * (1.0 + x2 * (-1.0 / 3.0 + x2 * (2.0 / 15.0 + x2 * (-17.0 / 315.0))))
    t = tl.where(ax < 0.0625, t_small, t_big)
    t = tl.where(x < 0.0, -t, t)
    g = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    tl.store(y_ptr + offs, g * 2.0 + t, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        xc = x.contiguous()
        y = torch.empty_like(xc)
        half = xc.numel() // 2
        _tanh_gelu[(triton.cdiv(half, 256),)](xc, y, half, BLOCK=256)
        return y
