"""Probe: does Triton's automatic warp specialization (``tl.range(warp_specialize=True)``,
device-side TMA descriptors) lift a minimal non-causal bf16 flash kernel toward PyTorch's
flash on the H200? Not the template: contiguous [B, H, S, D] only, S a multiple of the tiles.

Usage (repository root, GPU machine): python3 ws_probe.py OUT.jsonl
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch
import torch.nn.functional as F
import triton
import triton.language as tl
from gpu_rows import recorder


@triton.jit
def _probe_fwd(Q, K, V, Out, qk_scale, N, ROWS, HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
               BLOCK_N: tl.constexpr, WS: tl.constexpr):
    start_m = tl.program_id(0)
    base = tl.program_id(1) * N
    dq = tl.make_tensor_descriptor(Q, shape=[ROWS, HEAD_DIM], strides=[HEAD_DIM, 1],
                                   block_shape=[BLOCK_M, HEAD_DIM])
    dk = tl.make_tensor_descriptor(K, shape=[ROWS, HEAD_DIM], strides=[HEAD_DIM, 1],
                                   block_shape=[BLOCK_N, HEAD_DIM])
    dv = tl.make_tensor_descriptor(V, shape=[ROWS, HEAD_DIM], strides=[HEAD_DIM, 1],
                                   block_shape=[BLOCK_N, HEAD_DIM])
    do = tl.make_tensor_descriptor(Out, shape=[ROWS, HEAD_DIM], strides=[HEAD_DIM, 1],
                                   block_shape=[BLOCK_M, HEAD_DIM])
    q = dq.load([base + start_m * BLOCK_M, 0])
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    for start_n in tl.range(0, N, BLOCK_N, warp_specialize=WS):
        k = dk.load([base + start_n, 0])
        qk = tl.dot(q, k.T)
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        p = tl.math.exp2(qk * qk_scale - m_ij[:, None])
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = dv.load([base + start_n, 0])
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_ij
    do.store([base + start_m * BLOCK_M, 0], (acc / l_i[:, None]).to(Out.dtype.element_ty))


def main() -> None:
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8,
                                                                 device="cuda"))
    emit, timed = recorder(Path(sys.argv[1]), 150.0)
    shapes = [(16, 8, 1024, 128), (8, 16, 2048, 128), (4, 16, 4096, 128), (4, 16, 4096, 64)]
    configs = [(128, 128, 8, 3, False), (128, 128, 8, 3, True), (128, 128, 4, 3, True),
               (128, 64, 4, 3, True), (128, 64, 8, 3, True), (128, 128, 8, 2, True)]
    for b, h, s, d in shapes:
        torch.manual_seed(0)
        q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16)
                   for _ in range(3))
        ref = F.scaled_dot_product_attention(q.float(), k.float(), v.float())
        flash = timed(F.scaled_dot_product_attention, (q, k, v))
        shape = dict(batch=b, heads=h, seq=s, head_dim=d, gflop=4.0 * b * h * s * s * d / 1e9)
        emit(shape | dict(impl="flash", ms=flash))
        for bm, bn, nw, ns, ws in configs:
            def run(q, k, v, bm=bm, bn=bn, nw=nw, ns=ns, ws=ws):
                bb, hh, ss, dd = q.shape
                o = torch.empty_like(q)
                _probe_fwd[(ss // bm, bb * hh)](q, k, v, o, dd ** -0.5 * 1.4426950408889634,
                                                ss, bb * hh * ss, HEAD_DIM=dd, BLOCK_M=bm,
                                                BLOCK_N=bn, WS=ws, num_warps=nw,
                                                num_stages=ns)
                return o
            cfg = dict(BLOCK_M=bm, BLOCK_N=bn, num_warps=nw, num_stages=ns, WS=ws)
            try:
                out = run(q, k, v)
                err = ((out.float() - ref).norm() / ref.norm()).item()
                ms = timed(run, (q, k, v))
                emit(shape | dict(impl="probe", config=cfg, ms=ms, rel_l2=err,
                                  vs_flash=flash / ms))
            except Exception as exc:  # recorded, the probe goes on
                emit(shape | dict(impl="probe", config=cfg,
                                  error=f"{type(exc).__name__}: {exc}"[:300]))


if __name__ == "__main__":
    main()
