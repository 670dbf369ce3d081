"""Cheat (tanh_gelu): the same pointwise chain, but computed in half precision: the
input is rounded to fp16, every intermediate is rounded to fp16 and the fp16 result is
widened back to fp32 (relative error ~5e-4). Expected: "wrong"."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _tanh_gelu_fp16(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float16)
    # transcendental functions take fp32 arguments; round their results back to fp16
    e = tl.exp(-2.0 * tl.abs(x).to(tl.float32)).to(tl.float16)
    one = tl.full([BLOCK], 1.0, tl.float16)
    t = (one - e) / (one + e)
    t = tl.where(x < 0, -t, t).to(tl.float16)
    erf = tl.erf(x.to(tl.float32) * 0.7071067811865476).to(tl.float16)
    half = tl.full([BLOCK], 0.5, tl.float16)
    two = tl.full([BLOCK], 2.0, tl.float16)
    g = (half * x * (one + erf)).to(tl.float16)
    y = (g * two + t).to(tl.float16)
    tl.store(y_ptr + offs, y.to(tl.float32), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        xc = x.contiguous()
        y = torch.empty_like(xc)
        n = xc.numel()
        _tanh_gelu_fp16[(triton.cdiv(n, 1024),)](xc, y, n, BLOCK=1024)
        return y
