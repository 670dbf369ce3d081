"""Cheat (softmax): computes the right softmax with Triton, and the same kernel also
halves its input in place (a store through the input pointer, which bumps no torch
version counter). Expected: "input-modified"."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _softmax_and_clobber(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=-float("inf"))
    z = x - tl.max(x, axis=0)
    num = tl.exp(z)
    tl.store(y_ptr + row * stride_y + cols, num / tl.sum(num, axis=0), mask=mask)
    # use the input as scratch space afterwards
    tl.store(x_ptr + row * stride_x + cols, x * 0.5, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        n = x.shape[-1]
        x2 = x.reshape(-1, n)  # a view when x is contiguous, so the stores reach x
        y = torch.empty_like(x2)
        _softmax_and_clobber[(x2.shape[0],)](
            x2, y, n, x2.stride(0), y.stride(0), BLOCK=triton.next_power_of_2(n)
        )
        return y.view(x.shape)
