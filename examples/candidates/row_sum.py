"""Sum over the middle dimension of a 3-D tensor (B, R, N) -> (B, N) in Triton.

The reduced dimension is strided; the innermost one is contiguous, so each program
loads coalesced BLOCK_R x BLOCK_N tiles, accumulates them elementwise and reduces over
rows once at the end. When B * N alone gives too few programs to fill the GPU, the
reduced dimension is split: each split writes a partial row, and a second small kernel
adds the partials in a fixed order (deterministic, no atomics).
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _sum_mid_kernel(
    x_ptr, out_ptr, B, R, N, rows_per_split,
    stride_xb, stride_xr, stride_xn, stride_os, stride_ob, stride_on,
    BLOCK_R: tl.constexpr, BLOCK_N: tl.constexpr,
):
    # Programs are numbered (split, batch, column block), column blocks fastest.
    pid = tl.program_id(0)
    num_nb = tl.cdiv(N, BLOCK_N)
    pid_n = pid % num_nb
    rest = pid // num_nb
    pid_b = rest % B
    pid_s = rest // B

    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    col_ok = cols < N
    r_lo = pid_s * rows_per_split
    r_hi = tl.minimum(r_lo + rows_per_split, R)
    base = x_ptr + pid_b.to(tl.int64) * stride_xb + cols[None, :] * stride_xn
    acc = tl.zeros((BLOCK_R, BLOCK_N), dtype=tl.float32)
    for r0 in range(r_lo, r_hi, BLOCK_R):
        rr = r0 + tl.arange(0, BLOCK_R)
        mask = (rr < r_hi)[:, None] & col_ok[None, :]
        acc += tl.load(base + rr.to(tl.int64)[:, None] * stride_xr, mask=mask, other=0.0)
    total = tl.sum(acc, axis=0)
    dst = out_ptr + pid_s.to(tl.int64) * stride_os + pid_b.to(tl.int64) * stride_ob
    tl.store(dst + cols * stride_on, total, mask=col_ok)


@triton.jit
def _sum_partials_kernel(p_ptr, out_ptr, n_splits, n, BLOCK: tl.constexpr):
    # partials: (n_splits, n) contiguous -> out: (n,), summed in split order.
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    ptrs = p_ptr + offs
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for _ in range(0, n_splits):
        acc += tl.load(ptrs, mask=mask, other=0.0)
        ptrs += n  # pointer arithmetic is 64-bit
    tl.store(out_ptr + offs, acc, mask=mask)


def sum_dim1(x):
    orig_shape = x.shape
    out_shape = (orig_shape[0],) + tuple(orig_shape[2:])
    if x.dim() != 3:  # fold trailing dims into one (a view when possible)
        x = x.reshape(orig_shape[0], orig_shape[1], -1)
    if x.stride(2) != 1:  # keep the innermost loads coalesced
        x = x.contiguous()
    B, R, N = x.shape
    out = torch.empty((B, N), device=x.device, dtype=torch.float32)
    if out.numel() == 0:
        return out.view(out_shape)
    if x.device.type == "cpu":  # Triton's interpreter: small tiles
        block_n = min(32, triton.next_power_of_2(N))
        block_r = 8
        target_programs = 8
    else:
        block_n = min(128, triton.next_power_of_2(N))
        block_r = max(1, min(4096 // block_n, triton.next_power_of_2(max(R, 1))))
        sms = torch.cuda.get_device_properties(x.device).multi_processor_count
        target_programs = 4 * sms
    base_programs = B * triton.cdiv(N, block_n)
    max_splits = max(1, triton.cdiv(R, block_r))
    splits = min(max_splits, max(1, triton.cdiv(target_programs, base_programs)))
    # Rows per split: a multiple of block_r; recompute the split count from it.
    rows_per_split = triton.cdiv(triton.cdiv(max(R, 1), splits), block_r) * block_r
    splits = max(1, triton.cdiv(R, rows_per_split))
    if splits == 1:
        dst = out
        strides = (0, out.stride(0), out.stride(1))
    else:
        dst = torch.empty((splits, B, N), device=x.device, dtype=torch.float32)
        strides = (dst.stride(0), dst.stride(1), dst.stride(2))
    grid = (splits * base_programs,)
    _sum_mid_kernel[grid](
        x, dst, B, R, N, rows_per_split,
        x.stride(0), x.stride(1), x.stride(2), *strides,
        BLOCK_R=block_r, BLOCK_N=block_n, num_warps=4,
    )
    if splits > 1:
        n = B * N
        block = 256 if x.device.type == "cpu" else 1024
        _sum_partials_kernel[(triton.cdiv(n, block),)](dst, out, splits, n, BLOCK=block,
                                                       num_warps=4)
    return out.view(out_shape)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return sum_dim1(x.float())
