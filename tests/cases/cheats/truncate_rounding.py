"""Cheat for round_rows: the right row sums, truncated toward zero instead of rounded (a
plain cast), off by one in about half the rows, nowhere near a rounding step for most."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _round_rows(x_ptr, out_ptr, rows, cols, scale, BLOCK_R: tl.constexpr,
                BLOCK_C: tl.constexpr):
    r = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    acc = tl.zeros([BLOCK_R], dtype=tl.float32)
    for c0 in range(0, cols, BLOCK_C):
        c = c0 + tl.arange(0, BLOCK_C)
        mask = (r[:, None] < rows) & (c[None, :] < cols)
        acc += tl.sum(tl.load(x_ptr + r[:, None] * cols + c[None, :], mask=mask, other=0.0),
                      axis=1)
    y = acc * scale
    q = tl.minimum(tl.maximum(y, -1073741824.0), 1073741824.0)
    tl.store(out_ptr + r, q.to(tl.int32), mask=r < rows)


class ModelNew(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        xc = x.contiguous()
        rows, cols = xc.shape
        out = torch.empty(rows, dtype=torch.int32, device=xc.device)
        _round_rows[(triton.cdiv(rows, 32),)](xc, out, rows, cols, self.scale, BLOCK_R=32,
                                              BLOCK_C=64)
        return out
