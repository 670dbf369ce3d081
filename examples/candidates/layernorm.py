"""LayerNorm over the last dimension (with weight and bias) in Triton.

Short rows: whole rows in registers, exact two-step mean/variance, several rows per
program. Long rows: one program per row; per-chunk mean and centred sum of squares are
merged with Chan's parallel formula (numerically stable), then one normalising pass.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _layernorm_block_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr, n_rows, n_cols, eps,
    stride_xm, stride_xn, stride_ym, stride_yn, stride_w, stride_b,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    col_ok = cols < n_cols
    mask = (rows < n_rows)[:, None] & col_ok[None, :]
    x = tl.load(x_ptr + rows[:, None] * stride_xm + cols[None, :] * stride_xn,
                mask=mask, other=0.0)
    mean = tl.sum(x, axis=1) / n_cols
    xc = tl.where(mask, x - mean[:, None], 0.0)
    var = tl.sum(xc * xc, axis=1) / n_cols
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols * stride_w, mask=col_ok, other=0.0)
    b = tl.load(b_ptr + cols * stride_b, mask=col_ok, other=0.0)
    y = xc * rstd[:, None] * w[None, :] + b[None, :]
    tl.store(y_ptr + rows[:, None] * stride_ym + cols[None, :] * stride_yn, y, mask=mask)


@triton.jit
def _chunk_stats(x_row, stride_xn, offs, n_cols):
    mask = offs < n_cols
    x = tl.load(x_row + offs * stride_xn, mask=mask, other=0.0)
    cnt = tl.sum(mask.to(tl.float32), axis=0)
    mean = tl.sum(x, axis=0) / cnt
    d = tl.where(mask, x - mean, 0.0)
    return cnt, mean, tl.sum(d * d, axis=0)


@triton.jit
def _layernorm_looped_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr, n_cols, eps,
    stride_xm, stride_xn, stride_ym, stride_yn, stride_w, stride_b,
    BLOCK_N: tl.constexpr,
):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_xm
    y_row = y_ptr + row * stride_ym
    cols = tl.arange(0, BLOCK_N)
    # Statistics of the first chunk (never empty: n_cols >= 1) start the merge.
    cnt, mean, m2 = _chunk_stats(x_row, stride_xn, cols, n_cols)
    for start in range(BLOCK_N, n_cols, BLOCK_N):
        cnt_b, mean_b, m2_b = _chunk_stats(x_row, stride_xn, start + cols, n_cols)
        total = cnt + cnt_b
        delta = mean_b - mean
        mean = mean + delta * (cnt_b / total)
        m2 = m2 + m2_b + delta * delta * (cnt * cnt_b / total)
        cnt = total
    rstd = 1.0 / tl.sqrt(m2 / n_cols + eps)
    # Second pass last chunk first: the most recently read chunks are the likeliest
    # to still be in L2.
    n_chunks = tl.cdiv(n_cols, BLOCK_N)
    for i in range(0, n_chunks):
        start = (n_chunks - 1 - i) * BLOCK_N
        offs = start + cols
        mask = offs < n_cols
        x = tl.load(x_row + offs * stride_xn, mask=mask, other=0.0)
        w = tl.load(w_ptr + offs * stride_w, mask=mask, other=0.0)
        b = tl.load(b_ptr + offs * stride_b, mask=mask, other=0.0)
        tl.store(y_row + offs * stride_yn, (x - mean) * rstd * w + b, mask=mask)


def _warps(tile):
    if tile <= 2048:
        return 4
    if tile <= 8192:
        return 8
    return 16


def layernorm_lastdim(x, weight, bias, eps):
    n_cols = x.shape[-1]
    x2 = x.reshape(-1, n_cols)
    n_rows = x2.shape[0]
    out = torch.empty((n_rows, n_cols), device=x.device, dtype=torch.float32)
    if out.numel() == 0:
        return out.view(x.shape)
    interp = x.device.type == "cpu"  # CPU tensors: Triton's interpreter
    max_whole = 128 if interp else 16384
    block_n = triton.next_power_of_2(n_cols)
    strides = (x2.stride(0), x2.stride(1), out.stride(0), out.stride(1),
               weight.stride(0), bias.stride(0))
    if block_n <= max_whole:
        tile = 32 if interp else 4096
        block_m = max(1, min(tile // block_n, triton.next_power_of_2(n_rows)))
        grid = (triton.cdiv(n_rows, block_m),)
        _layernorm_block_kernel[grid](
            x2, weight, bias, out, n_rows, n_cols, eps, *strides,
            BLOCK_M=block_m, BLOCK_N=block_n, num_warps=_warps(block_m * block_n),
        )
    else:
        chunk = 64 if interp else 8192
        _layernorm_looped_kernel[(n_rows,)](
            x2, weight, bias, out, n_cols, eps, *strides,
            BLOCK_N=chunk, num_warps=16,
        )
    return out.view(x.shape)


class _LayerNormParams(nn.Module):
    """Holds the parameters under the names nn.LayerNorm uses (weight, bias)."""

    def __init__(self, hidden, eps):
        super().__init__()
        self.eps = float(eps)
        self.weight = nn.Parameter(torch.ones(hidden))
        self.bias = nn.Parameter(torch.zeros(hidden))


class ModelNew(nn.Module):
    def __init__(self, hidden, eps):
        super().__init__()
        self.ln = _LayerNormParams(hidden, eps)

    def forward(self, x):
        return layernorm_lastdim(x.float(), self.ln.weight, self.ln.bias, self.ln.eps)
