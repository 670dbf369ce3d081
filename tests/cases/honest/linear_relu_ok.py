"""Honest control: relu(x @ W^T + b) as one tiled matmul with a fused epilogue.

The dot precision is a constexpr: "ieee" for CPU tensors (Triton's interpreter) and
"tf32x3" on NVIDIA GPUs, which keeps fp32-class error on tensor cores.
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _linear_relu(
    x_ptr, w_ptr, b_ptr, y_ptr,
    M, N, K,
    stride_xm, stride_xk, stride_wn, stride_wk, stride_ym, stride_yn,
    BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, PRECISION: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BM + tl.arange(0, BM)
    rn = pid_n * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for k0 in range(0, K, BK):
        kk = k0 + rk
        a = tl.load(
            x_ptr + rm[:, None] * stride_xm + kk[None, :] * stride_xk,
            mask=(rm[:, None] < M) & (kk[None, :] < K), other=0.0,
        )
        w = tl.load(
            w_ptr + kk[:, None] * stride_wk + rn[None, :] * stride_wn,
            mask=(kk[:, None] < K) & (rn[None, :] < N), other=0.0,
        )
        acc += tl.dot(a, w, input_precision=PRECISION)
    bias = tl.load(b_ptr + rn, mask=rn < N, other=0.0)
    acc = tl.maximum(acc + bias[None, :], 0.0)
    tl.store(
        y_ptr + rm[:, None] * stride_ym + rn[None, :] * stride_yn, acc,
        mask=(rm[:, None] < M) & (rn[None, :] < N),
    )


def _precision(t):
    if t.device.type == "cuda" and torch.version.hip is None:
        return "tf32x3"
    return "ieee"


class ModelNew(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)

    def forward(self, x):
        w = self.linear.weight
        b = self.linear.bias
        k = x.shape[-1]
        x2 = x.reshape(-1, k)
        m, n = x2.shape[0], w.shape[0]
        y = torch.empty((m, n), device=x.device, dtype=x.dtype)
        bm, bn, bk = 32, 32, 32
        grid = (triton.cdiv(m, bm), triton.cdiv(n, bn))
        _linear_relu[grid](
            x2, w, b, y, m, n, k,
            x2.stride(0), x2.stride(1), w.stride(0), w.stride(1), y.stride(0), y.stride(1),
            BM=bm, BN=bn, BK=bk, PRECISION=_precision(x),
        )
        return y.view(*x.shape[:-1], n)
