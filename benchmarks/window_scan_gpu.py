"""The pooling and scan templates against eager PyTorch and torch.compile on the GPU, and
pointwise layers that broadcast (their index splitting is the pool's: per-dim divisions).

Per layer: the module ``kernelcraft generate`` emits (heuristic launch config, no tuning,
no kernel-or-eager choice), eager and ``torch.compile`` (default mode) of the same model,
each timed with the judge's timer, checked against a float64 run with the judge's strict
comparison; with ``--sweep`` the template's launch knobs too (through the module's tuned
table, so every config runs the same kernel). Bandwidth counts each input read and each
output written once (% of the measured 4.25 TB/s). One JSON line per measurement.

Usage (repository root, a CUDA machine): python3 benchmarks/window_scan_gpu.py --out w.jsonl
"""

from __future__ import annotations

import argparse
import importlib.util
import itertools
import math
import sys
import tempfile
import textwrap
from pathlib import Path

import torch
from gpu_rows import recorder

from kernelcraft.export import _rename
from kernelcraft.generate import GenerateOptions, generate
from kernelcraft.measure.compare import compare_one

ROOFLINE_TBS = 4.25
#: name: (forward body over x (and y), input shape, channels-last input[, y's shape])
LAYERS = {
    "max2d_k3s2p1": ("F.max_pool2d(x, 3, 2, 1)", (32, 64, 256, 256), False),
    "max2d_k3s2p1_cl": ("F.max_pool2d(x, 3, 2, 1)", (32, 64, 256, 256), True),
    "stem_max2d_relu": ("torch.relu(F.max_pool2d(x, 3, 2, 1))", (64, 64, 112, 112), False),
    "avg2d_k5s2p2": ("F.avg_pool2d(x, 5, 2, 2)", (32, 128, 128, 128), False),
    "max1d_k4s2p1": ("F.max_pool1d(x, 4, 2, 1)", (64, 128, 16384), False),
    "adaptive_avg_56_7": ("F.adaptive_avg_pool2d(x, 7)", (64, 512, 56, 56), False),
    "max3d_k3s2p1": ("F.max_pool3d(x, 3, 2, 1)", (16, 32, 32, 64, 64), False),
    "gelu_avg1d_k4": ("F.avg_pool1d(F.gelu(x), 4) * 1.5", (64, 256, 8192), False),
    "cumsum_rows": ("torch.cumsum(x, 1)", (8192, 8192), False),
    "cumsum_cols": ("torch.cumsum(x, 0)", (8192, 8192), False),
    "suffix_sum_mid": ("torch.flip(torch.cumsum(torch.flip(x, [1]), 1), [1])",
                       (16, 4096, 1024), False),
    "cumsum_short_rows": ("torch.cumsum(x, -1)", (262144, 64), False),
    "prelu_nchw": ("torch.where(x > 0, x, x * y)", (64, 128, 56, 56), False, (1, 128, 1, 1)),
    "bias_gelu_nchw": ("F.gelu(x + y)", (32, 256, 28, 28), False, (1, 256, 1, 1)),
    "rowscale_3d": ("x * y", (64, 512, 1024), False, (64, 1, 1024)),
}
POOL_SWEEP = [dict(BLOCK=b, num_warps=w, FASTDIV=f)
              for (b, w), f in itertools.product(((128, 2), (256, 4), (256, 8), (512, 4),
                                                  (512, 8), (1024, 8)), (True, False))]
POINTWISE_SWEEP = [dict(BLOCK=b, num_warps=w, FASTDIV=f)
                   for (b, w), f in itertools.product(((512, 4), (1024, 4), (2048, 8)),
                                                      (True, False))]
SCAN_ROW_SWEEP = [dict(BLOCK_K=k, BLOCK_R=r, num_warps=w)
                  for (k, r), w in itertools.product(
                      ((1, 256), (1, 512), (1, 1024), (1, 2048), (2, 512), (4, 256)), (2, 4, 8))
                  if k * r // (32 * w) >= 4]
SCAN_COL_SWEEP = [dict(BLOCK_K=k, BLOCK_R=r, num_warps=w)
                  for (k, r), w in itertools.product(
                      ((8, 32), (16, 16), (16, 32), (32, 8), (32, 16), (64, 8), (64, 16)),
                      (1, 2, 4))
                  if k * r // (32 * w) >= 2]

PROBLEM = """
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def forward(self, x, y=None):
        return {body}


def get_inputs():
    return [torch.randn({shape})]{extra}


def get_init_inputs():
    return []
"""


def _module(name: str, body: str, shape: tuple[int, ...], yshape: tuple[int, ...] | None,
            work: Path):
    path = work / f"{name}.py"
    extra = f" + [torch.randn({', '.join(map(str, yshape))})]" if yshape else ""
    path.write_text(textwrap.dedent(PROBLEM.format(body=body, shape=", ".join(map(str, shape)),
                                                   extra=extra)))
    gen = generate(path, GenerateOptions(out_dir=work / "out", device="cuda", judge=False,
                                         build=False, choose=False, tune=None))
    spec = importlib.util.spec_from_file_location(f"kc_{name}", gen.module_path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return gen, mod


def run_layer(name: str, body: str, shape: tuple[int, ...], cl: bool, work: Path, timed,
              emit, sweep: bool, yshape: tuple[int, ...] | None = None) -> None:
    gen, mod = _module(name, body, shape, yshape, work)
    torch.manual_seed(0)
    x = torch.randn(shape, device="cuda")
    if cl:
        x = x.contiguous(memory_format=torch.channels_last if x.dim() == 4
                         else torch.channels_last_3d)
    xs = (x,) if yshape is None else (x, torch.randn(yshape, device="cuda"))
    model = mod.Model().cuda()
    ours = mod.ModelNew().cuda()
    ref = model(*xs)
    ref64 = model(*(t.double() for t in xs))
    nbytes = 4 * (sum(t.numel() for t in xs) + ref.numel())
    kinds = [g.kind for g in gen.plan.groups if g.kind != "glue"]
    base = dict(layer=name, body=body, shape=list(shape), channels_last=cl, kinds=kinds,
                mbytes=nbytes / 1e6)

    def row(impl: str, fn, **extra) -> float | None:
        try:
            got = fn(*xs)
            chk = compare_one(0, got, ref, ref64, "fp32")
            ms = timed(fn, xs)
            emit(base | dict(impl=impl, ms=ms, ok=chk.ok, rel_l2=chk.rel_l2,
                             roofline=nbytes / ms / 1e9 / ROOFLINE_TBS) | extra)
            return ms
        except Exception as exc:  # recorded, the run goes on
            emit(base | dict(impl=impl, error=f"{type(exc).__name__}: {exc}"[:300]) | extra)
            return None

    eager = row("eager", model)
    compiled = row("compile", torch.compile(model))
    mine = row("kc", ours, variant="heuristic", config=gen.kernels and next(
        iter(gen.kernels.values())).config)
    if eager and compiled and mine:
        emit(base | dict(impl="summary", vs_eager=eager / mine, vs_compile=compiled / mine))
    if sweep and len(gen.kernels) == 1:
        (gid, k), = gen.kernels.items()
        g = next(g for g in gen.plan.groups if g.id == gid)
        wname = _rename(k.wrapper_name, 0)
        arch = mod._kc_arch(x.device)
        if g.kind in ("pool", "pointwise"):
            key = (math.prod(ref.shape),)
            configs = POOL_SWEEP if g.kind == "pool" else POINTWISE_SWEEP
        else:
            d = g.rdims[0]
            rows = math.prod(s for i, s in enumerate(shape) if i != d)
            key = (rows, shape[d])
            configs = SCAN_ROW_SWEEP if d == x.dim() - 1 else SCAN_COL_SWEEP
        for cfg in configs:
            mod._KC_TUNED.clear()
            mod._KC_TUNED[(wname, arch, key)] = dict(cfg)
            row("kc", ours, variant="sweep", config=cfg)
        mod._KC_TUNED.clear()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--sweep", action="store_true")
    ap.add_argument("--budget-ms", type=float, default=300.0)
    ap.add_argument("--layers", nargs="*", default=None, choices=list(LAYERS))
    args = ap.parse_args()
    emit, timed = recorder(args.out, args.budget_ms)
    with tempfile.TemporaryDirectory() as tmp:
        for name, (body, shape, cl, *y) in LAYERS.items():
            if args.layers is None or name in args.layers:
                run_layer(name, body, shape, cl, Path(tmp), timed, emit, args.sweep,
                          y[0] if y else None)
                torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
