"""Not a cheat but a failure the judge must report: launches a kernel, then raises.
Expected: "error"."""

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
        raise RuntimeError("candidate failed on purpose")
