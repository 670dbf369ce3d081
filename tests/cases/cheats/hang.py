"""Cheat (relu_pos): a kernel whose loop never ends. It spins on a flag in memory that is
zero and that nothing ever changes (`while flag >= 0`). The loads are volatile: a loop
without side effects may be compiled away on the GPU (it was, with plain loads, on an
H200 with Triton 3.6), leaving a correct kernel. Expected: "timeout"."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _spin(flag_ptr, x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    flag = tl.load(flag_ptr, volatile=True)
    while flag >= 0:
        flag = tl.load(flag_ptr, volatile=True)
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        xc = x.contiguous()
        y = torch.empty_like(xc)
        flag = torch.zeros(1, device=x.device, dtype=torch.int32)
        n = xc.numel()
        _spin[(triton.cdiv(n, 1024),)](flag, xc, y, n, BLOCK=1024)
        return y
