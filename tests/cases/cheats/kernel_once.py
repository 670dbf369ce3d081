"""Cheat (softmax): launches a correct Triton kernel on the first call only (as if to
pass a one-off launch check) and uses torch.softmax on every later call.
Expected: "no-kernel"."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

_STATE = {"launched": False}


@triton.jit
def _softmax_rows(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(y_ptr + row * stride_y + cols, num / tl.sum(num, axis=0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        if _STATE["launched"]:
            return torch.softmax(x, dim=-1)
        _STATE["launched"] = True
        n = x.shape[-1]
        x2 = x.reshape(-1, n).contiguous()
        y = torch.empty_like(x2)
        _softmax_rows[(x2.shape[0],)](
            x2, y, n, x2.stride(0), y.stride(0), BLOCK=triton.next_power_of_2(n)
        )
        return y.view(x.shape)
