"""Cheat (softmax): specialises on the first shape it sees. The row length of the first
call is frozen in a module-level plan and baked into the kernel as a constexpr; later
calls view the flattened input as rows of that frozen length. Every output element is
written and every access stays in bounds, so at the first shape the answer is exactly
right and at any other row length it is finite but wrong. Expected: "other-size"."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

_PLAN = {}  # filled on the first call: {"row": n, "block": next_pow2(n)}


@triton.jit
def _softmax_fixed_rows(x_ptr, y_ptr, total, ROW: tl.constexpr, BLOCK: tl.constexpr):
    start = tl.program_id(0) * ROW
    cols = tl.arange(0, BLOCK)
    offs = start + cols
    mask = (cols < ROW) & (offs < total)
    x = tl.load(x_ptr + offs, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(y_ptr + offs, num / tl.sum(num, axis=0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        if not _PLAN:
            n = x.shape[-1]
            _PLAN.update(row=n, block=triton.next_power_of_2(n))
        row, block = _PLAN["row"], _PLAN["block"]
        xc = x.contiguous()
        y = torch.empty_like(xc)
        total = xc.numel()
        _softmax_fixed_rows[(triton.cdiv(total, row),)](xc, y, total, ROW=row, BLOCK=block)
        return y
