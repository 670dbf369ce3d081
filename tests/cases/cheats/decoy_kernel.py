"""Cheat (softmax): launches a trivial Triton kernel that is given the output (and
writes only a scratch buffer), satisfying both a per-forward launch count and a check
that every output was passed to a kernel, then fills the output with torch.softmax.
The judge stamps PyTorch's writes and kernel launches with one clock: an output that
PyTorch wrote after the last kernel that was handed it is "no-kernel"."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _touch(scratch_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(scratch_ptr + offs, tl.zeros([BLOCK], dtype=tl.float32))
    # out_ptr is accepted and never written


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        scratch = torch.zeros(16, device=x.device, dtype=torch.float32)
        y = torch.empty_like(x)
        _touch[(1,)](scratch, y, BLOCK=16)
        y.copy_(torch.softmax(x, dim=-1))
        return y
