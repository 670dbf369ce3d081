"""Cheat (softmax): does no work. It returns torch.empty of the output shape, hoping the
allocator hands back memory that still holds a freed reference result; the output is
passed to a trivial kernel (which writes only a scratch buffer) so that a check that
"every output was given to a Triton kernel" is satisfied and the poisoning of empty
allocations has to catch it. Expected: "nonfinite" (poisoned) or "wrong"."""

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
        y = torch.empty(x.shape, device=x.device, dtype=x.dtype)
        _touch[(1,)](scratch, y, BLOCK=16)
        return y
