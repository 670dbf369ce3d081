"""RMSNorm over the last dimension in Triton: x * rsqrt(mean(x^2) + eps) * weight.

Short rows: whole rows in registers, several rows per program. Long rows: one program
per row, a pass accumulating the sum of squares per lane, then a normalising pass.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _rmsnorm_block_kernel(
    x_ptr, w_ptr, y_ptr, n_rows, n_cols, eps,
    stride_xm, stride_xn, stride_ym, stride_yn, stride_w,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    col_ok = cols < n_cols
    mask = (rows < n_rows)[:, None] & col_ok[None, :]
    x = tl.load(x_ptr + rows[:, None] * stride_xm + cols[None, :] * stride_xn,
                mask=mask, other=0.0)
    ms = tl.sum(x * x, axis=1) / n_cols
    r = 1.0 / tl.sqrt(ms + eps)
    w = tl.load(w_ptr + cols * stride_w, mask=col_ok, other=0.0)
    y = x * r[:, None] * w[None, :]
    tl.store(y_ptr + rows[:, None] * stride_ym + cols[None, :] * stride_yn, y, mask=mask)


@triton.jit
def _rmsnorm_looped_kernel(
    x_ptr, w_ptr, y_ptr, n_cols, eps,
    stride_xm, stride_xn, stride_ym, stride_yn, stride_w,
    BLOCK_N: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_xm
    y_row = y_ptr + row * stride_ym
    cols = tl.arange(0, BLOCK_N)
    acc = tl.zeros([BLOCK_N], tl.float32)
    for start in range(0, n_cols, BLOCK_N):
        offs = start + cols
        x = tl.load(x_row + offs * stride_xn, mask=offs < n_cols, other=0.0)
        acc += x * x
    r = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)
    # Second pass last chunk first: the most recently read chunks are the likeliest
    # to still be in L2.
    n_chunks = tl.cdiv(n_cols, BLOCK_N)
    for i in range(0, n_chunks):
        start = (n_chunks - 1 - i) * BLOCK_N
        offs = start + cols
        mask = offs < n_cols
        x = tl.load(x_row + offs * stride_xn, mask=mask, other=0.0)
        w = tl.load(w_ptr + offs * stride_w, mask=mask, other=0.0)
        tl.store(y_row + offs * stride_yn, x * r * w, mask=mask)


def _warps(tile):
    if tile <= 2048:
        return 4
    if tile <= 8192:
        return 8
    return 16


def rmsnorm_lastdim(x, weight, eps):
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols)
    n_rows = x2.shape[0]
    out = torch.empty((n_rows, n_cols), device=x.device, dtype=torch.float32)
    if out.numel() == 0:
        return out.view(x.shape)
    interp = x.device.type == "cpu"  # CPU tensors: Triton's interpreter
    max_whole = 128 if interp else 16384
    block_n = triton.next_power_of_2(n_cols)
    strides = (x2.stride(0), x2.stride(1), out.stride(0), out.stride(1), weight.stride(0))
    if block_n <= max_whole:
        tile = 32 if interp else 4096
        block_m = max(1, min(tile // block_n, triton.next_power_of_2(n_rows)))
        grid = (triton.cdiv(n_rows, block_m),)
        _rmsnorm_block_kernel[grid](
            x2, weight, out, n_rows, n_cols, eps, *strides,
            BLOCK_M=block_m, BLOCK_N=block_n, num_warps=_warps(block_m * block_n),
        )
    else:
        chunk = 64 if interp else 8192
        _rmsnorm_looped_kernel[(n_rows,)](
            x2, weight, out, n_cols, eps, *strides,
            BLOCK_N=chunk, num_warps=16,
        )
    return out.view(x.shape)


class ModelNew(nn.Module):
    def __init__(self, hidden, eps):
        super().__init__()
        self.eps = float(eps)
        self.weight = nn.Parameter(torch.ones(hidden))

    def forward(self, x):
        return rmsnorm_lastdim(x.float(), self.weight, self.eps)
