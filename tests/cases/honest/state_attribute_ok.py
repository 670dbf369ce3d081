"""Honest control for state_attribute: adds its own attribute (drawn in the constructor
like the reference's) in a Triton kernel."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _add_row(x_ptr, o_ptr, y_ptr, n, dim, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    o = tl.load(o_ptr + offs % dim, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x + o, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.offset = torch.randn(dim)

    def forward(self, x):
        self.offset = self.offset.to(x.device)
        xc = x.contiguous()
        y = torch.empty_like(xc)
        n = xc.numel()
        _add_row[(triton.cdiv(n, 1024),)](xc, self.offset, y, n, xc.shape[-1], BLOCK=1024)
        return y
