"""The implicit-GEMM convolution template against cuDNN on the GPU: where its time goes.

Per layer (3x3 layers of several widths, 1x1 layers, a strided 3x3, a depthwise 3x3, 3-D
layers, an RGB stem, strided transposed layers):
cuDNN fp32 (TF32 off, as the strict judge runs it) with NCHW and channels-last inputs, and
the template with the heuristic config, with TF32 dots (which says whether the dots or the
loads bound it), with channels-last input, with the dot walks where the heuristic takes the
direct one, with the gather over every tap where the phase walk takes a transposed layer,
and over a config sweep (direct layers: outputs per program and warps); the
judge's comparison against a float64 convolution for each. One JSON line per measurement.

Usage (repository root, a CUDA machine): python3 benchmarks/conv_gpu.py --out c.jsonl
"""

from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path

import torch
import torch.nn.functional as F
from gpu_rows import recorder

from kernelcraft.codegen import conv as conv_mod
from kernelcraft.codegen.conv import conv
from kernelcraft.measure.compare import compare_one

#: name: (x shape, weight shape, stride, padding, groups[, output padding: transposed])
LAYERS = {
    "3x3_64_128": ((32, 64, 128, 128), (128, 64, 3, 3), 1, 1, 1),
    "1x1_256_256": ((32, 256, 56, 56), (256, 256, 1, 1), 1, 0, 1),
    "1x1_256_512": ((32, 256, 56, 56), (512, 256, 1, 1), 1, 0, 1),
    "1x1_64_256_56": ((32, 64, 56, 56), (256, 64, 1, 1), 1, 0, 1),
    "1x1_1024_256_14": ((32, 1024, 14, 14), (256, 1024, 1, 1), 1, 0, 1),
    "1x1_512_2048_7": ((32, 512, 7, 7), (2048, 512, 1, 1), 1, 0, 1),
    "1x1_s2_256_512": ((32, 256, 56, 56), (512, 256, 1, 1), 2, 0, 1),
    "3x3_s2_128_256": ((32, 128, 64, 64), (256, 128, 3, 3), 2, 1, 1),
    "dw3x3_256": ((32, 256, 56, 56), (256, 1, 3, 3), 1, 1, 256),
    "3d_3x3x3_32_64": ((8, 32, 16, 64, 64), (64, 32, 3, 3, 3), 1, 1, 1),
    "3x3_64_64": ((64, 64, 56, 56), (64, 64, 3, 3), 1, 1, 1),
    "3x3_32_128_valid": ((32, 32, 128, 128), (128, 32, 3, 3), 1, 0, 1),
    "stem7x7_s2_3_64": ((32, 3, 224, 224), (64, 3, 7, 7), 2, 3, 1),
    "3d_3x3x3_3_16": ((16, 3, 32, 128, 128), (16, 3, 3, 3, 3), 1, 0, 1),
    "dw5x5_256_112": ((16, 256, 112, 112), (256, 1, 5, 5), 1, 2, 256),
    "dw3x3_s2_512": ((32, 512, 56, 56), (512, 1, 3, 3), 2, 1, 512),
    "dw3x3_1024_7": ((64, 1024, 7, 7), (1024, 1, 3, 3), 1, 1, 1024),
    # transposed (weight [C_in, C_out, *k]): x2 upsampling layers
    "t4x4_s2_128_64": ((16, 128, 64, 64), (128, 64, 4, 4), 2, 1, 1, 0),
    "t3x3_s2_64_32": ((16, 64, 128, 128), (64, 32, 3, 3), 2, 1, 1, 1),
    "t2x2_s2_64_32": ((16, 64, 128, 128), (64, 32, 2, 2), 2, 0, 1, 0),
    "t3d_3_s2_32_16": ((8, 32, 32, 32, 32), (32, 16, 3, 3, 3), 2, 1, 1, 1),
}
SWEPT = ("3x3_64_128", "1x1_256_256", "3x3_s2_128_256", "3x3_64_64", "3x3_32_128_valid",
         "1x1_256_512", "1x1_64_256_56", "1x1_1024_256_14")
SWEEP = [dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=w, num_stages=s)
         for bm, bn, bk, w, s in itertools.product((64, 128, 256), (64, 128), (32, 64), (4, 8),
                                                   (2, 3))]
#: unstrided 1x1 layers (the PLANE walk: a GEMM, no index math to spill)
PLANE_SWEEP = [dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=w, num_stages=3)
               for bm, bn, bk, w in itertools.product((64, 128, 256), (64, 128), (32, 64), (4, 8))]
#: strided transposed layers (the PHASE walk)
PHASE_SWEEP = [dict(BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk, num_warps=w, num_stages=3)
               for bm, bn, bk, w in itertools.product((64, 128), (16, 32, 64), (32, 64), (4, 8))]
#: direct (depthwise) layers: outputs per program and warps
DIRECT_SWEEP = [dict(BLOCK_M=bm, num_warps=w)
                for bm, w in itertools.product((256, 512, 1024, 2048), (2, 4, 8))]


def run_layer(name: str, spec: tuple, timed, emit, sweep: bool) -> None:
    xs, ws, stride, pad, groups = spec[:5]
    transposed = len(spec) > 5
    extra = dict(output_padding=spec[5]) if transposed else {}
    torch.manual_seed(0)
    x = torch.randn(xs, device="cuda")
    w = torch.randn(ws, device="cuda") / (ws[1] * ws[2] ** (len(ws) - 2)) ** 0.5
    cout = ws[1] * groups if transposed else ws[0]
    b = torch.randn(cout, device="cuda")
    if transposed:
        fn = F.conv_transpose3d if len(xs) == 5 else F.conv_transpose2d
    else:
        fn = F.conv3d if len(xs) == 5 else F.conv2d
    torch.backends.cudnn.allow_tf32 = False
    ref = fn(x, w, b, stride=stride, padding=pad, groups=groups, **extra)
    ref64 = fn(x.double(), w.double(), b.double(), stride=stride, padding=pad, groups=groups,
               **extra)
    # useful MACs: per output pixel (transposed: per input pixel) every tap and channel pair
    pixels = (x if transposed else ref)[0, 0].numel() * xs[0]
    flop = 2.0 * pixels * ws[0] * ws[1] * (ws[2] ** (len(ws) - 2))
    base = dict(layer=name, x=list(xs), w=list(ws), stride=stride, padding=pad, groups=groups,
                gflop=flop / 1e9, gbytes=4 * (x.numel() + w.numel() + ref.numel()) / 1e9)
    xcl = x.contiguous(memory_format=torch.channels_last if len(xs) == 4
                       else torch.channels_last_3d)

    def cudnn(x):
        return fn(x, w, b, stride=stride, padding=pad, groups=groups, **extra)

    eager = timed(cudnn, (x,))
    emit(base | dict(impl="cudnn_fp32", ms=eager, tflops=flop / eager / 1e9))
    emit(base | dict(impl="cudnn_fp32_channels_last", ms=timed(cudnn, (xcl,))))

    def ours(x, prec="bf16x3", cfg=None):
        return conv(x, w, b, stride=stride, padding=pad, groups=groups, transposed=transposed,
                    precision_table={"cuda": prec}, config=cfg, **extra)

    # NCHW input: the template copies it channels-innermost first (counted in the time)
    variants = [("heuristic", x, "bf16x3", None), ("channels_last", xcl, "bf16x3", None),
                ("tf32", x, "tf32", None)]
    cin_g = xs[1] // groups
    direct_layer = conv_mod._kc_conv_direct(cin_g, cout // groups)
    if direct_layer:  # the dot walks, for comparison
        variants.append(("dot_walk", x, "bf16x3", None))
    phase = transposed and conv_mod._phase(True, (stride,) * (len(xs) - 2),
                                           (1,) * (len(xs) - 2), direct_layer)
    if phase:  # the gather over every tap, for comparison
        variants.append(("gather", x, "bf16x3", None))
    plane = conv_mod._plane(list(xs), list(x.stride()), list(ws), (stride,) * (len(xs) - 2),
                            (pad,) * (len(xs) - 2), groups, transposed)
    if sweep and name in SWEPT:
        variants += [(json.dumps(c), x, "bf16x3", c) for c in (PLANE_SWEEP if plane else SWEEP)]
    if sweep and phase:
        variants += [(json.dumps(c), x, "bf16x3", c) for c in PHASE_SWEEP
                     if c["BLOCK_N"] <= max(16, cout // groups)]
    if sweep and direct_layer:
        variants += [(json.dumps(c), x, "bf16x3", c) for c in DIRECT_SWEEP]
    for label, inp, prec, cfg in variants:
        direct, phase_fn = conv_mod._kc_conv_direct, conv_mod._phase
        if label == "dot_walk":
            conv_mod._kc_conv_direct = lambda cin, cout: False
        if label == "gather":
            conv_mod._phase = lambda *a: False
        try:
            got = ours(inp, prec, cfg)
            chk = compare_one(0, got, ref, ref64, "fp32")
            ms = timed(lambda x, prec=prec, cfg=cfg: ours(x, prec, cfg), (inp,))
            emit(base | dict(impl="kc", variant=label, precision=prec, ms=ms, ok=chk.ok,
                             rel_l2=chk.rel_l2, vs_cudnn=eager / ms,
                             tflops=flop / ms / 1e9))
        except Exception as exc:  # recorded, the sweep goes on
            emit(base | dict(impl="kc", variant=label, error=f"{type(exc).__name__}: {exc}"[:200]))
        finally:
            conv_mod._kc_conv_direct, conv_mod._phase = direct, phase_fn
    del x, xcl, ref, ref64
    torch.cuda.empty_cache()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--sweep", action="store_true")
    ap.add_argument("--budget-ms", type=float, default=300.0)
    ap.add_argument("--layers", nargs="*", default=None, choices=list(LAYERS),
                    help="only these layers")
    args = ap.parse_args()
    emit, timed = recorder(args.out, args.budget_ms)
    for name, spec in LAYERS.items():
        if args.layers is None or name in args.layers:
            run_layer(name, spec, timed, emit, args.sweep)


if __name__ == "__main__":
    main()
