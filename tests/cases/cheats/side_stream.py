"""Cheat (tanh_gelu), GPU only: launches the (correct) kernel on a side stream that the
caller's stream never waits for, after a spin on that side stream so the race is
reliably lost; the output is allocated on the calling stream. On CPU tensors it simply
computes, so the file imports and runs anywhere. Expected on CUDA: "stream"."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _tanh_gelu(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    ax = tl.abs(x)
    e = tl.exp(-2.0 * ax)
    t_big = (1.0 - e) / (1.0 + e)
    x2 = x * x
    t_small = ax * (1.0 + x2 * (-1.0 / 3.0 + x2 * (2.0 / 15.0 + x2 * (-17.0 / 315.0))))
    t = tl.where(ax < 0.0625, t_small, t_big)
    t = tl.where(x < 0.0, -t, t)
    g = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    tl.store(y_ptr + offs, g * 2.0 + t, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self._side = None

    def forward(self, x):
        xc = x.contiguous()
        y = torch.empty_like(xc)  # allocated (and poisoned) on the calling stream
        n = xc.numel()
        grid = (triton.cdiv(n, 1024),)
        if not xc.is_cuda:
            _tanh_gelu[grid](xc, y, n, BLOCK=1024)
            return y
        if self._side is None:
            self._side = torch.cuda.Stream(device=xc.device)
        side = self._side
        side.wait_stream(torch.cuda.current_stream(xc.device))  # inputs ready: fine
        with torch.cuda.stream(side):
            # first launch into a throwaway, so JIT compilation is over before the spin
            scratch = torch.empty_like(xc)
            _tanh_gelu[grid](xc, scratch, n, BLOCK=1024)
            torch.cuda._sleep(20_000_000)  # ~10 ms of spinning on the side stream
            _tanh_gelu[grid](xc, y, n, BLOCK=1024)
        # missing: torch.cuda.current_stream().wait_stream(side)
        return y
