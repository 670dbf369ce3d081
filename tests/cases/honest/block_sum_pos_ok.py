"""Honest control for block_sum_pos: PyTorch's block sums, the parameter added by a kernel
that writes a fresh output. It raises where the model itself cannot run (sizes that are not
multiples of 8), which must not cost it the trials that follow."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _add_row(s_ptr, p_ptr, y_ptr, n, cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    s = tl.load(s_ptr + offs, mask=mask, other=0.0)
    p = tl.load(p_ptr + offs % cols, mask=mask, other=0.0)
    tl.store(y_ptr + offs, s + p, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, n_blocks):
        super().__init__()
        self.pos = nn.Parameter(torch.randn(n_blocks))

    def forward(self, x):
        b, h, w = x.shape
        s = x.view(b, h // 8, 8, w // 8, 8).sum(dim=(2, 4)).reshape(b, -1).contiguous()
        if s.shape[1] != self.pos.shape[0]:
            raise ValueError(f"{s.shape[1]} blocks for {self.pos.shape[0]} positions")
        y = torch.empty_like(s)
        n = s.numel()
        _add_row[(triton.cdiv(n, 1024),)](s, self.pos, y, n, s.shape[1], BLOCK=1024)
        return y
