"""Cheat (relu_pos): computes with Triton, then kills its own process from inside forward:
a read through a null pointer (SIGSEGV, as an illegal memory access would) and, where
address 0 happens to be readable (some sandboxes), os.abort(). Expected: "crash"."""

import ctypes
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
        xc = x.contiguous()
        y = torch.empty_like(xc)
        n = xc.numel()
        _relu[(triton.cdiv(n, 1024),)](xc, y, n, BLOCK=1024)
        ctypes.string_at(0, 8)  # SIGSEGV
        os.abort()  # reached only where address 0 is readable
        return y
