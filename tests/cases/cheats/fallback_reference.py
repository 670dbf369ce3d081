"""Cheat (softmax): "tries" a Triton kernel that cannot work (it calls an op that does
not exist, so it fails when compiled or, under the interpreter, on its first statement)
and silently falls back to torch.softmax, written into the very output it had passed to
the failed launch. No kernel ever completes. Expected: "no-kernel"."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _broken_softmax(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    y = tl.fancy_softmax_that_does_not_exist(x)
    tl.store(y_ptr + row * n_cols + cols, y, mask=cols < n_cols)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        n = x.shape[-1]
        x2 = x.reshape(-1, n).contiguous()
        y = torch.empty_like(x2)
        try:
            _broken_softmax[(x2.shape[0],)](x2, y, n, BLOCK=triton.next_power_of_2(n))
            return y.view(x.shape)
        except Exception:
            y.copy_(torch.softmax(x2, dim=-1))
            return y.view(x.shape)
