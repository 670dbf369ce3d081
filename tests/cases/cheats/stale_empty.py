"""Cheat (softmax): does no work; launches a trivial kernel on a scratch buffer and
returns torch.empty of the output shape, hoping the allocator hands back memory that
still holds a freed reference result. Expected: "nonfinite" (poisoned) or "wrong"."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _touch(p, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(p + offs, tl.zeros([BLOCK], dtype=tl.float32))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        scratch = torch.zeros(16, device=x.device, dtype=torch.float32)
        _touch[(1,)](scratch, BLOCK=16)
        return torch.empty(x.shape, device=x.device, dtype=x.dtype)
