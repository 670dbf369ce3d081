"""tanh(x * w + b) + y with per-column w, b: one fused 2-D tiled Triton kernel.

Each program owns a BLOCK_M x BLOCK_N tile, loads the w and b slice once and reuses it
for every row of the tile. tanh is computed from exp with a short odd Taylor series
near zero so that it keeps fp32 relative accuracy for small arguments.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _tanh(z):
    a = tl.abs(z)
    # |z| >= 0.55: 1 - 2 / (exp(2|z|) + 1), no cancellation there; tanh(20) rounds to 1
    # in fp32, so the argument is clamped (no overflow) and NaN is passed through below.
    big = 1.0 - 2.0 / (tl.exp(2.0 * tl.minimum(a, 20.0)) + 1.0)
    big = tl.where(z < 0.0, -big, big)
    # |z| < 0.55: odd Taylor series through z^17 (truncation < 1e-8 relative);
    # evaluated on the signed z so that tanh(-0.0) = -0.0.
    z2 = z * z
    p = 6404582.0 / 10854718875.0
    p = p * z2 - 929569.0 / 638512875.0
    p = p * z2 + 21844.0 / 6081075.0
    p = p * z2 - 1382.0 / 155925.0
    p = p * z2 + 62.0 / 2835.0
    p = p * z2 - 17.0 / 315.0
    p = p * z2 + 2.0 / 15.0
    p = p * z2 - 1.0 / 3.0
    small = z * (1.0 + z2 * p)
    t = tl.where(a < 0.55, small, big)
    return tl.where(z == z, t, z)  # NaN in, NaN out (the clamp above would drop it)


@triton.jit
def _scale_residual_kernel(
    x_ptr, y_ptr, w_ptr, b_ptr, out_ptr, n_rows, n_cols,
    stride_xm, stride_xn, stride_ym, stride_yn, stride_w, stride_b, stride_om, stride_on,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    rows = tl.program_id(0).to(tl.int64) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_ok = cols < n_cols
    mask = (rows < n_rows)[:, None] & col_ok[None, :]
    w = tl.load(w_ptr + cols * stride_w, mask=col_ok, other=0.0)
    b = tl.load(b_ptr + cols * stride_b, mask=col_ok, other=0.0)
    x = tl.load(x_ptr + rows[:, None] * stride_xm + cols[None, :] * stride_xn,
                mask=mask, other=0.0)
    y = tl.load(y_ptr + rows[:, None] * stride_ym + cols[None, :] * stride_yn,
                mask=mask, other=0.0)
    out = _tanh(x * w[None, :] + b[None, :]) + y
    tl.store(out_ptr + rows[:, None] * stride_om + cols[None, :] * stride_on, out, mask=mask)


def scale_residual(x, y, w, b):
    shape = x.shape
    if y.shape != shape or w.shape != shape[-1:] or b.shape != shape[-1:]:
        # Broadcast views (stride 0 where broadcast); the kernel takes the strides.
        shape = torch.broadcast_shapes(x.shape, y.shape, w.shape, b.shape)
        x, y = x.expand(shape), y.expand(shape)
        w, b = w.expand(shape[-1:]), b.expand(shape[-1:])
    n_cols = shape[-1]
    x2 = x.reshape(-1, n_cols)
    y2 = y.reshape(-1, n_cols)
    w1, b1 = w, b
    n_rows = x2.shape[0]
    out = torch.empty((n_rows, n_cols), device=x.device, dtype=torch.float32)
    if out.numel() == 0:
        return out.view(shape)
    interp = x.device.type == "cpu"  # CPU tensors: Triton's interpreter
    max_n = 64 if interp else 1024
    tile = 1024 if interp else 4096
    block_n = min(max_n, triton.next_power_of_2(n_cols))
    block_m = max(1, min(tile // block_n, triton.next_power_of_2(n_rows)))
    grid = (triton.cdiv(n_rows, block_m), triton.cdiv(n_cols, block_n))
    _scale_residual_kernel[grid](
        x2, y2, w1, b1, out, n_rows, n_cols,
        x2.stride(0), x2.stride(1), y2.stride(0), y2.stride(1),
        w1.stride(0), b1.stride(0), out.stride(0), out.stride(1),
        BLOCK_M=block_m, BLOCK_N=block_n, num_warps=8,
    )
    return out.view(shape)


class ModelNew(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.w = nn.Parameter(torch.ones(hidden))
        self.b = nn.Parameter(torch.zeros(hidden))

    def forward(self, x, y):
        return scale_residual(x.float(), y.float(), self.w, self.b)
