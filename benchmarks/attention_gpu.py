"""The attention template against PyTorch's SDPA on the GPU: error and time per precision.

For each shape (batch, heads, sequence, head dim), causal and not: the strict-fp32 error of
the template with each fp32 dot precision the target accepts (checked by the judge's own
comparison against a float64 SDPA), its median time with the heuristic config and the best
of a small config sweep, and eager SDPA fp32 / torch.compile fp32 timed in the same run;
then bf16 against SDPA's flash backend. One JSON line per measurement in --out. ``--alt
FILE`` also times another version of the template (a copy of ``codegen/attention.py``, which
is self-contained) with its own heuristic config beside each heuristic row (several files:
each row names its file's stem in ``alt``); ``--no-fp32`` leaves out the fp32 rows.

Usage (repository root, a CUDA machine): python3 benchmarks/attention_gpu.py --out a.jsonl
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import json
import math
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from gpu_rows import recorder

from kernelcraft.codegen.attention import attention
from kernelcraft.measure.compare import compare_one

SHAPES = [(16, 8, 1024, 64), (8, 16, 2048, 64), (4, 16, 4096, 64),
          (16, 8, 1024, 128), (8, 16, 2048, 128), (4, 16, 4096, 128)]
PRECISIONS = ("bf16x3", "tf32x3", "bf16x6")
SWEEP = [dict(BLOCK_M=bm, BLOCK_N=bn, num_warps=w, num_stages=s)
         for bm, bn, w, s in itertools.product((64, 128), (32, 64, 128), (4, 8), (2, 3))]


SPLITS: tuple[int, ...] = (0,)
SWEEP_SHAPES: list[tuple[int, ...]] | None = None
BF16 = True
ALT: dict[str, Any] = {}  # other versions of the template's module by file stem (--alt)
FP32 = True


_SEEN: set[int] = set()


def compiled_resources() -> dict[str, int]:
    """Registers and spilled bytes of the attention kernel compiled by the last call, if
    it compiled one (a cached kernel: nothing, rather than another config's numbers)."""
    from kernelcraft.codegen.attention import _kc_attention_fwd

    out: dict[str, int] = {}
    for cache in getattr(_kc_attention_fwd, "device_caches", {}).values():
        for kernel in cache[0].values():
            regs = getattr(kernel, "n_regs", None)  # unset: never loaded (out of resources)
            if id(kernel) not in _SEEN and regs is not None:
                _SEEN.add(id(kernel))
                out = {"n_regs": int(regs), "n_spills": int(kernel.n_spills)}
    return out


def flops(b: int, h: int, s: int, d: int, causal: bool) -> float:
    return 4.0 * b * h * s * s * d * (0.5 if causal else 1.0)


def run_shape(b: int, h: int, s: int, d: int, causal: bool, timed, emit,
              sweep: bool) -> None:
    """Error and time of every variant at one shape."""
    torch.manual_seed(0)
    q, k, v = (torch.randn(b, h, s, d, device="cuda") for _ in range(3))
    scale = 1.0 / math.sqrt(d)
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)
    ref64 = torch.cat([F.scaled_dot_product_attention(
        q[i:i + 1].double(), k[i:i + 1].double(), v[i:i + 1].double(),
        is_causal=causal, scale=scale) for i in range(b)])
    ref_err = compare_one(0, ref, ref, ref64, "fp32")
    shape = dict(batch=b, heads=h, seq=s, head_dim=d, causal=causal,
                 gflop=flops(b, h, s, d, causal) / 1e9)

    def sdpa(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)

    eager = timed(sdpa, (q, k, v))
    if SPLITS != (0,):  # the split pass alone: one read of q, k, v, a write of the pieces
        from kernelcraft.codegen.attention import _KC_F16_PIECES, _kc_attention_split

        for qk, written in ((3, 16), (_KC_F16_PIECES, 12)):  # bytes per element of q, k, v
            def pieces(q, k, v, qk=qk):
                return _kc_attention_split([(q, qk), (k, qk), (v, 2)])
            ms = timed(pieces, (q, k, v))
            nbytes = q.numel() * (12 + written) + (2 * q.numel() // d * 4 if qk > 3 else 0)
            emit(shape | dict(impl="split_pass" if qk == 3 else "split_pass_f16", ms=ms,
                              bytes=nbytes, tb_per_s=nbytes / ms / 1e9))
    if FP32:
        compiled_fn = torch.compile(sdpa)
        compiled = timed(compiled_fn, (q, k, v))
        emit(shape | dict(impl="eager_sdpa_fp32", ms=eager, ref_rel_l2=ref_err.rel_l2))
        emit(shape | dict(impl="compile_sdpa_fp32", ms=compiled))
    for prec in PRECISIONS if FP32 else ():
        table = {"cuda": prec}

        def ours(q, k, v, table=table, cfg=None):
            return attention(q, k, v, scale=scale, causal=causal, precision_table=table,
                             config=cfg)
        try:
            got = ours(q, k, v)
            chk = compare_one(0, got, ref, ref64, "fp32")
            ms = timed(ours, (q, k, v))
            emit(shape | dict(impl="kc_fp32", precision=prec, config="heuristic", ms=ms,
                              ok=chk.ok, rel_l2=chk.rel_l2, tol_rel=chk.tol_rel,
                              max_abs=chk.max_abs, tol_abs=chk.tol_abs,
                              detail=chk.detail, vs_eager=eager / ms,
                              vs_compile=compiled / ms, **compiled_resources()))
        except Exception as exc:  # recorded, the sweep goes on
            emit(shape | dict(impl="kc_fp32", precision=prec, config="heuristic",
                              error=f"{type(exc).__name__}: {exc}"[:400]))
            continue
        for name, mod in ALT.items():
            def alt(q, k, v, table=table, mod=mod):
                return mod.attention(q, k, v, scale=scale, causal=causal,
                                     precision_table=table)
            chk = compare_one(0, alt(q, k, v), ref, ref64, "fp32")
            ms = timed(alt, (q, k, v))
            emit(shape | dict(impl="kc_fp32_alt", alt=name, precision=prec,
                              config="heuristic", ms=ms, ok=chk.ok, rel_l2=chk.rel_l2,
                              vs_eager=eager / ms))
        if not sweep or prec != "bf16x3" or (SWEEP_SHAPES is None and (causal or s == 2048)):
            continue
        for cfg in ({**c, "SPLIT": sp} for c in SWEEP for sp in SPLITS):
            try:
                got = ours(q, k, v, cfg=cfg)
                chk = compare_one(0, got, ref, ref64, "fp32")
                ms = timed(lambda q, k, v, cfg=cfg: ours(q, k, v, cfg=cfg), (q, k, v))
                emit(shape | dict(impl="kc_fp32", precision=prec, config=cfg, ms=ms,
                                  ok=chk.ok, rel_l2=chk.rel_l2, max_abs=chk.max_abs,
                                  tol_abs=chk.tol_abs, vs_eager=eager / ms,
                                  **compiled_resources()))
            except Exception as exc:
                emit(shape | dict(impl="kc_fp32", precision=prec, config=cfg,
                                  error=f"{type(exc).__name__}: {exc}"[:200]))
    if not BF16:
        return
    # 16-bit: against SDPA's own (flash) kernel in bf16
    qb, kb, vb = (t.bfloat16() for t in (q, k, v))
    refb = sdpa(qb, kb, vb)
    flash = timed(sdpa, (qb, kb, vb))
    got = attention(qb, kb, vb, scale=scale, causal=causal)
    chk = compare_one(0, got, refb, ref64, "bf16")
    ms = timed(lambda q, k, v: attention(q, k, v, scale=scale, causal=causal),
               (qb, kb, vb))
    emit(shape | dict(impl="kc_bf16", config="heuristic", ms=ms, sdpa_bf16_ms=flash,
                      ok=chk.ok, rel_l2=chk.rel_l2, vs_sdpa=flash / ms,
                      **compiled_resources()))
    for name, mod in ALT.items():
        chk = compare_one(0, mod.attention(qb, kb, vb, scale=scale, causal=causal), refb,
                          ref64, "bf16")
        ms = timed(lambda q, k, v, mod=mod: mod.attention(q, k, v, scale=scale,
                                                          causal=causal), (qb, kb, vb))
        emit(shape | dict(impl="kc_bf16_alt", alt=name, config="heuristic", ms=ms,
                          ok=chk.ok, rel_l2=chk.rel_l2, vs_sdpa=flash / ms))
    bf16_sweep = sweep and (SWEEP_SHAPES is not None or (s != 2048 and not causal))
    for cfg in SWEEP if bf16_sweep else []:
        try:
            got = attention(qb, kb, vb, scale=scale, causal=causal, config=cfg)
            chk = compare_one(0, got, refb, ref64, "bf16")
            ms = timed(lambda q, k, v, cfg=cfg: attention(q, k, v, scale=scale, causal=causal,
                                                          config=cfg), (qb, kb, vb))
            emit(shape | dict(impl="kc_bf16", config=cfg, ms=ms, ok=chk.ok,
                              vs_sdpa=flash / ms))
        except Exception as exc:
            emit(shape | dict(impl="kc_bf16", config=cfg,
                              error=f"{type(exc).__name__}: {exc}"[:200]))
    del q, k, v, ref, ref64, qb, kb, vb, refb, got
    torch.cuda.empty_cache()



def main() -> None:
    global BF16, FP32, SWEEP_SHAPES, SPLITS, PRECISIONS
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--sweep", action="store_true", help="time the config sweep too")
    ap.add_argument("--budget-ms", type=float, default=400.0)
    ap.add_argument("--configs", type=json.loads, default=None,
                    help="the sweep's configs as a JSON list of [BLOCK_M, BLOCK_N, warps, "
                         "stages] or [..., TMA] (default: 24 tiles)")
    ap.add_argument("--splits", type=int, nargs="+", default=[0],
                    help="SPLIT values the sweep crosses with its tiles (fp32 dot emulation: "
                         "0 Triton's input_precision, 1 bf16 pieces split in the kernel, "
                         "plus 2 / 4 / 8: K / V / Q split once beforehand, plus 16: Q and K "
                         "as scaled fp16 pieces)")
    ap.add_argument("--shapes", type=json.loads, default=None,
                    help="[[B, H, S, D, causal], ...] instead of the default 12 shapes; the "
                         "sweep then runs on each of them")
    ap.add_argument("--no-bf16", action="store_true", help="skip the bf16 rows")
    ap.add_argument("--precisions", nargs="+", default=list(PRECISIONS),
                    help="fp32 dot precisions timed with the heuristic config")
    ap.add_argument("--alt", type=Path, nargs="+", default=[],
                    help="other versions of codegen/attention.py, timed beside the heuristic")
    ap.add_argument("--no-fp32", action="store_true", help="skip the fp32 rows")
    args = ap.parse_args()
    for path in args.alt:
        spec = importlib.util.spec_from_file_location(f"kc_attention_{path.stem}", path)
        ALT[path.stem] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(ALT[path.stem])
    FP32 = not args.no_fp32
    PRECISIONS = tuple(args.precisions)
    BF16, SPLITS = not args.no_bf16, tuple(args.splits)
    if args.configs:
        SWEEP[:] = [dict(zip(("BLOCK_M", "BLOCK_N", "num_warps", "num_stages", "TMA"), c,
                                 strict=False))
                    for c in args.configs]
    emit, timed = recorder(args.out, args.budget_ms)
    if args.shapes:
        SWEEP_SHAPES = [tuple(x) for x in args.shapes]
    todo = SWEEP_SHAPES or [(*sh, c) for sh, c in itertools.product(SHAPES, (False, True))]
    for b, h, s, d, causal in todo:
        run_shape(b, h, s, d, bool(causal), timed, emit, args.sweep)

if __name__ == "__main__":
    main()
