"""Honest control for group_sum_rows: atomic adds of each row into its group. Given a group
past the output, it dies as an out-of-bounds write can (os.abort stands in for the memory
corruption): only at sizes where the reference raises too, so the judge skips them."""

import os

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _group_sum(x_ptr, g_ptr, out_ptr, n, dim, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n * dim
    row = offs // dim
    g = tl.load(g_ptr + row, mask=mask, other=0)
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.atomic_add(out_ptr + g * dim + offs % dim, x, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, x, group_id):
        if group_id.numel() and int(group_id.max()) >= self.groups:
            os.abort()
        xc, g = x.contiguous(), group_id.contiguous()
        out = torch.zeros(self.groups, xc.shape[1], dtype=xc.dtype, device=xc.device)
        n, dim = xc.shape
        _group_sum[(triton.cdiv(n * dim, 256),)](xc, g, out, n, dim, BLOCK=256)
        return out
