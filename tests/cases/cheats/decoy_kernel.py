"""Cheat (softmax): launches a trivial Triton kernel on a scratch buffer (satisfying a
per-forward launch count) and computes the whole answer with torch.softmax. Nothing in
the judge's listed checks rejects it yet: the test for it is an expected failure that
documents the gap (it needs a check that the output was produced by kernel stores or
that forward ran no torch compute ops)."""

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
        return torch.softmax(x, dim=-1)
