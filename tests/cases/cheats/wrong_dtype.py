"""Cheat (tanh_gelu): computes the chain in float64 with Triton and returns the float64
tensor (more accurate, but not the reference's dtype). Expected: "shape"."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _tanh_gelu_f64(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float64)
    ax = tl.abs(x)
    e = tl.exp(-2.0 * ax)
    t = (1.0 - e) / (1.0 + e)
    t = tl.where(x < 0.0, -t, t)
    g = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    tl.store(y_ptr + offs, g * 2.0 + t, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        xc = x.contiguous()
        y = torch.empty(xc.shape, device=xc.device, dtype=torch.float64)
        n = xc.numel()
        _tanh_gelu_f64[(triton.cdiv(n, 1024),)](xc, y, n, BLOCK=1024)
        return y
