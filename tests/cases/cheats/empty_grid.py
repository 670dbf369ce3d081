"""Cheat (softmax): "launches" the real kernel, output included, with an empty grid (zero
programs, so nothing runs), then fills the output with torch.softmax. A launch counter
that counts calls into the launcher rather than programs run is fooled, and so is a
check that the output was passed to a kernel. Expected: "no-kernel"."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _softmax_rows(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(y_ptr + row * stride_y + cols, num / tl.sum(num, axis=0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        n = x.shape[-1]
        x2 = x.reshape(-1, n).contiguous()
        y = torch.empty_like(x2)
        _softmax_rows[(0,)](x2, y, n, x2.stride(0), y.stride(0), BLOCK=triton.next_power_of_2(n))
        y.copy_(torch.softmax(x2, dim=-1))
        return y.view(x.shape)
