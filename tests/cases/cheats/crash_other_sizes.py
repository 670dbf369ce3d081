"""Cheat (relu_pos): a correct ReLU at the problem's sizes whose process dies at any other
size (os.abort), where the reference runs well: a death the judge must not excuse as the
program's own. Expected: "crash"."""

import os

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _relu(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        if tuple(x.shape) != (64, 256):
            os.abort()
        xc = x.contiguous()
        y = torch.empty_like(xc)
        n = xc.numel()
        _relu[(triton.cdiv(n, 1024),)](xc, y, n, BLOCK=1024)
        return y
