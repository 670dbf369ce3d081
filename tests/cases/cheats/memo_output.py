"""Cheat (softmax): computes the right answer with Triton on the first call, then keeps
returning a clone of that first output, whatever the input. Expected: "repeat"."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _softmax_rows(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(y_ptr + row * stride_y + cols, num / tl.sum(num, axis=0), mask=mask)


def _softmax(x):
    n = x.shape[-1]
    x2 = x.reshape(-1, n).contiguous()
    y = torch.empty_like(x2)
    _softmax_rows[(x2.shape[0],)](
        x2, y, n, x2.stride(0), y.stride(0), BLOCK=triton.next_power_of_2(n)
    )
    return y.view(x.shape)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._memo = {}

    def forward(self, x):
        key = tuple(x.shape)
        if key not in self._memo:
            self._memo[key] = _softmax(x)
            return self._memo[key].clone()
        # Still launch the (correct) kernel so a launch counter is satisfied, but return
        # the memoised first answer.
        _softmax(x)
        return self._memo[key].clone()
