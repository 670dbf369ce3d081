"""The implicit-GEMM convolution kernel (codegen/conv.py) against torch, under the interpreter.

Triton decides when a kernel is decorated whether it is interpreted, and its own library
functions (tl.sigmoid, tl.cdiv) are decorated when triton is first imported: a process
either interprets every kernel or none. So the kernels run in one worker subprocess that
imports this module with TRITON_INTERPRET=1 from its start and serves the ``_check_*``
functions below (started once per test process, each test sends only its own case); the
pytest process itself never sets the variable, so cross-compiling tests elsewhere are
unaffected. Argument validation and the launch heuristic are tested in-process.
"""

from __future__ import annotations

import os
import pickle
import select
import struct
import subprocess
import sys
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.nn.functional as F
import triton

from kernelcraft.codegen import conv

ROOT = Path(__file__).resolve().parents[1]
_TIMEOUT_S = 300


# ---- the interpreter worker ----------------------------------------------------------------

def _serve() -> None:
    """Worker loop: read (check name, args) requests, reply ("ok", value) or ("err", text)."""
    requests = sys.stdin.buffer
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # stray prints (warnings, debug) go to stderr, not into the protocol
    mod = sys.modules[__name__]
    while True:
        head = requests.read(8)
        if len(head) < 8:
            return
        name, args = pickle.loads(requests.read(struct.unpack("<Q", head)[0]))
        try:
            reply = ("ok", getattr(mod, name)(*args))
        except Exception:  # every failure goes back to the test, with its traceback
            reply = ("err", traceback.format_exc())
        data = pickle.dumps(reply)
        replies.write(struct.pack("<Q", len(data)) + data)
        replies.flush()


class _Worker:
    """A Python subprocess running this module's checks under TRITON_INTERPRET=1."""

    def __init__(self) -> None:
        env = dict(os.environ, TRITON_INTERPRET="1")
        self.proc = subprocess.Popen(
            [sys.executable, "-c", f"import {__name__} as t; t._serve()"],
            cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def __call__(self, name: str, *args: Any) -> Any:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        data = pickle.dumps((name, args))
        self.proc.stdin.write(struct.pack("<Q", len(data)) + data)
        self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], _TIMEOUT_S)
        if not ready:
            self.close()
            pytest.fail(f"{name}{args}: no reply from the interpreter worker in {_TIMEOUT_S} s")
        head = self.proc.stdout.read(8)
        if len(head) < 8:
            code = self.proc.wait()
            pytest.fail(f"{name}{args}: the interpreter worker died (exit code {code})")
        status, value = pickle.loads(self.proc.stdout.read(struct.unpack("<Q", head)[0]))
        if status == "err":
            pytest.fail(f"{name}{args} in the interpreter worker:\n{value}", pytrace=False)
        return value

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture(scope="module")
def interp() -> Iterator[_Worker]:
    worker = _Worker()
    yield worker
    worker.close()


# ---- helpers (both processes) --------------------------------------------------------------

def _rel(a: torch.Tensor, ref: torch.Tensor) -> float:
    ref = ref.double()
    return ((a.double() - ref).norm() / ref.norm().clamp_min(1e-300)).item()


_ACT: dict[str | None, Callable[[torch.Tensor], torch.Tensor]] = {
    None: lambda t: t,
    "relu": F.relu,
    "gelu": F.gelu,  # erf form
    "silu": F.silu,
    "tanh": torch.tanh,
}


def _reference(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None, dim: int,
               act: str | None, scale: float | None, **kw: Any) -> torch.Tensor:
    f = F.conv2d if dim == 2 else F.conv1d
    y = _ACT[act](f(x, w, b, **kw))
    return y * scale if scale is not None else y


def _inputs(n: int, cin: int, cout: int, hw: tuple[int, ...], k: tuple[int, ...], groups: int,
            bias: bool, seed: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """Inputs ~N(0, 1) and weights scaled by 1/sqrt(fan-in): pre-activations of order 1,
    so tanh/gelu/silu are tested where they bend, not only where they saturate."""
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(n, cin, *hw, generator=gen)
    fan_in = cin // groups
    for s in k:
        fan_in *= s
    w = torch.randn(cout, cin // groups, *k, generator=gen) / fan_in ** 0.5
    b = torch.randn(cout, generator=gen) if bias else None
    return x, w, b


def _strict(y: torch.Tensor, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None, dim: int,
            act: str | None, scale: float | None, **kw: Any) -> tuple[float, float]:
    """(error, tolerance): rel L2 vs float64 within 32x the fp32 reference's own, floor 2e-5."""
    ref64 = _reference(x.double(), w.double(), None if b is None else b.double(), dim, act,
                       scale, **kw)
    ref32 = _reference(x, w, b, dim, act, scale, **kw)
    assert y.shape == ref64.shape, (tuple(y.shape), tuple(ref64.shape))
    assert y.dtype == x.dtype
    return _rel(y, ref64), max(32 * _rel(ref32, ref64), 2e-5)


# ---- conv2d vs torch -----------------------------------------------------------------------

# id: (N, C_in, C_out, (H, W), (KH, KW), conv kwargs, extra: bias/act/scale/layouts)
CASES: dict[str, tuple[Any, ...]] = {
    "1x1": (2, 8, 12, (9, 9), (1, 1), {}, {}),
    "3x3": (2, 8, 12, (9, 9), (3, 3), {"padding": 1}, {}),
    "5x5": (1, 6, 10, (11, 11), (5, 5), {"padding": 2}, {}),
    "stride2": (2, 5, 7, (13, 11), (3, 3), {"stride": 2, "padding": 1}, {}),
    "stride_pair": (1, 4, 6, (12, 15), (3, 3), {"stride": (2, 3)}, {}),
    "pad_asym": (2, 4, 6, (9, 8), (3, 3), {"padding": (1, 2)}, {}),
    "dilation2": (1, 4, 8, (13, 13), (3, 3), {"dilation": 2, "padding": 2}, {}),
    "dilation_stride_mixed": (2, 3, 5, (11, 14), (3, 2),
                              {"stride": (2, 1), "dilation": (1, 2), "padding": (1, 0)}, {}),
    "groups2": (2, 8, 12, (9, 10), (3, 3), {"groups": 2, "padding": 1}, {}),
    "depthwise": (2, 8, 8, (9, 9), (3, 3), {"groups": 8, "padding": 1}, {}),
    "depthwise_x2": (1, 6, 12, (10, 7), (5, 5), {"groups": 6, "padding": 2}, {}),
    "nonsquare": (2, 5, 9, (7, 17), (3, 5), {"padding": (1, 2)}, {}),
    "ragged": (1, 3, 5, (5, 6), (2, 3), {}, {}),
    "same": (1, 4, 6, (8, 9), (3, 3), {"padding": "same"}, {}),
    # total padding 3 in both dims: torch pads the extra row/column at the end
    "same_even_kernel": (2, 4, 6, (8, 9), (4, 2), {"padding": "same", "dilation": (1, 3)}, {}),
    "valid": (1, 4, 6, (8, 9), (3, 3), {"padding": "valid"}, {}),
    "long_k": (1, 16, 16, (8, 8), (5, 5), {"padding": 2}, {}),
    "bias": (2, 8, 12, (9, 9), (3, 3), {"padding": 1}, {"bias": True}),
    "channels_last_in": (2, 8, 12, (9, 11), (3, 3), {"padding": 1}, {"cl_in": True}),
    "channels_last_out": (2, 8, 12, (9, 11), (3, 3), {"padding": 1}, {"cl_out": True}),
    "channels_last_both_groups": (2, 8, 12, (9, 11), (3, 3), {"padding": 1, "groups": 4},
                                  {"cl_in": True, "cl_out": True, "bias": True}),
    "channels_last_depthwise": (1, 8, 16, (7, 9), (3, 3), {"padding": 1, "groups": 8},
                                {"cl_in": True}),
    "strided_views": (2, 6, 10, (9, 10), (3, 3), {"padding": 1}, {"views": True}),
    "relu": (2, 8, 12, (9, 9), (3, 3), {"padding": 1}, {"bias": True, "act": "relu"}),
    "gelu": (2, 8, 12, (9, 9), (3, 3), {"padding": 1}, {"bias": True, "act": "gelu"}),
    "silu": (2, 8, 12, (9, 9), (3, 3), {"padding": 1}, {"bias": True, "act": "silu"}),
    "tanh": (2, 8, 12, (9, 9), (3, 3), {"padding": 1}, {"bias": True, "act": "tanh"}),
    "scale": (2, 8, 12, (9, 9), (3, 3), {"padding": 1}, {"scale": 0.37}),
    "gelu_scale_cl": (1, 8, 12, (9, 9), (3, 3), {"padding": 1},
                      {"bias": True, "act": "gelu", "scale": -1.5, "cl_in": True,
                       "cl_out": True}),
}


def _check_conv2d(case: str) -> tuple[float, float]:
    n, cin, cout, hw, k, kw, extra = CASES[case]
    x, w, b = _inputs(n, cin, cout, hw, k, kw.get("groups", 1), extra.get("bias", False),
                      seed=len(case))
    if extra.get("cl_in"):
        x = x.to(memory_format=torch.channels_last)
    if extra.get("views"):
        # arbitrary strides: x a transposed view, w a permuted view of a KH,KW,Cin,Cout block
        x = x.transpose(2, 3).contiguous().transpose(2, 3)
        w = w.permute(2, 3, 1, 0).contiguous().permute(3, 2, 0, 1)
        assert not x.is_contiguous() and not w.is_contiguous()
    act, scale = extra.get("act"), extra.get("scale")
    y = conv.conv2d(x, w, b, activation=act, scale=scale,
                    out_channels_last=extra.get("cl_out", False), **kw)
    if extra.get("cl_out"):
        assert y.is_contiguous(memory_format=torch.channels_last)
    else:
        assert y.is_contiguous()
    return _strict(y, x, w, b, 2, act, scale, **kw)


@pytest.mark.parametrize("case", list(CASES))
def test_conv2d_matches_torch(interp: _Worker, case: str) -> None:
    err, tol = interp("_check_conv2d", case)
    assert err <= tol, f"{case}: rel L2 {err:.3g} > {tol:.3g}"


# ---- conv1d --------------------------------------------------------------------------------

CASES_1D: dict[str, tuple[Any, ...]] = {
    "k3_pad1": (2, 5, 7, 17, 3, {"padding": 1}, {}),
    "stride2_dil2": (1, 4, 6, 16, 3, {"stride": 2, "dilation": 2}, {"bias": True}),
    "depthwise": (2, 6, 12, 11, 5, {"groups": 6, "padding": (2,)}, {}),
    "same_act": (1, 4, 8, 9, 4, {"padding": "same"}, {"act": "silu", "scale": 2.0}),
    "channels_last_out": (2, 8, 8, 13, 3, {"padding": 1}, {"cl_out": True}),
}


def _check_conv1d(case: str) -> tuple[float, float]:
    n, cin, cout, length, k, kw, extra = CASES_1D[case]
    x, w, b = _inputs(n, cin, cout, (length,), (k,), kw.get("groups", 1),
                      extra.get("bias", False), seed=7)
    act, scale = extra.get("act"), extra.get("scale")
    y = conv.conv1d(x, w, b, activation=act, scale=scale,
                    out_channels_last=extra.get("cl_out", False), **kw)
    if extra.get("cl_out"):
        assert y.stride(1) == 1
    return _strict(y, x, w, b, 1, act, scale, **kw)


@pytest.mark.parametrize("case", list(CASES_1D))
def test_conv1d_matches_torch(interp: _Worker, case: str) -> None:
    err, tol = interp("_check_conv1d", case)
    assert err <= tol, f"{case}: rel L2 {err:.3g} > {tol:.3g}"


def _check_unbatched_and_empty() -> None:
    x, w, b = _inputs(1, 4, 6, (7, 8), (3, 3), 1, True, seed=3)
    y = conv.conv2d(x[0], w, b, padding=1)
    assert y.shape == (6, 7, 8)
    assert _rel(y, F.conv2d(x[0].double(), w.double(), b.double(), padding=1)) < 2e-5
    y1 = conv.conv1d(x[0, :, 0], w[:, :, 0], b, padding=1)
    assert y1.shape == (6, 8)
    assert _rel(y1, F.conv1d(x[0, :, 0].double(), w[:, :, 0].double(), b.double(),
                             padding=1)) < 2e-5
    assert conv.conv2d(x[:0], w, b, padding=1).shape == (0, 6, 7, 8)


def test_unbatched_and_empty(interp: _Worker) -> None:
    interp("_check_unbatched_and_empty")


# ---- 16-bit inputs -------------------------------------------------------------------------

def _check_half(dtype_name: str, layout: str) -> float:
    dtype = getattr(torch, dtype_name)
    groups = 1 if layout == "nchw" else 2
    x, w, b = _inputs(2, 8, 12, (9, 10), (3, 3), groups, True, seed=11)
    assert b is not None
    x, w, b = x.to(dtype), w.to(dtype), b.to(dtype)
    if layout != "nchw":
        x = x.to(memory_format=torch.channels_last)
    y = conv.conv2d(x, w, b, padding=1, groups=groups, activation="gelu", scale=0.5,
                    out_channels_last=layout != "nchw")
    assert y.dtype == dtype
    ref = F.gelu(F.conv2d(x.double(), w.double(), b.double(), padding=1, groups=groups)) * 0.5
    return _rel(y, ref)


@pytest.mark.parametrize("dtype,tol", [("float16", 2e-3), ("bfloat16", 1e-2)])
@pytest.mark.parametrize("layout", ["nchw", "channels_last_groups"])
def test_half_precision(interp: _Worker, dtype: str, tol: float, layout: str) -> None:
    err = interp("_check_half", dtype, layout)
    assert err < tol, f"{dtype}: rel L2 {err:.3g}"


# ---- explicit config -----------------------------------------------------------------------

class _Spy:
    """Stands in for the kernel: records each launch's grid and keywords, then runs it."""

    def __init__(self, kernel: Any) -> None:
        self.kernel = kernel
        self.launches: list[tuple[tuple[int, ...], dict[str, Any]]] = []

    def __getitem__(self, grid: tuple[int, ...]) -> Callable[..., Any]:
        def launch(*args: Any, **kw: Any) -> Any:
            self.launches.append((grid, kw))
            return self.kernel[grid](*args, **kw)

        return launch


def _check_config() -> None:
    kernel = conv._kc_conv2d_kernel
    spy = _Spy(kernel)
    conv._kc_conv2d_kernel = spy
    try:
        # M = 2 * 9 * 11 = 198, C_out = 40, K = 6 * 9 = 54: several tiles per axis at 16^3
        x, w, b = _inputs(2, 6, 40, (9, 11), (3, 3), 1, True, seed=5)
        assert b is not None
        small = {"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16, "num_warps": 2, "num_stages": 1}
        y_small = conv.conv2d(x, w, b, padding=1, activation="relu", config=small)
        y_big = conv.conv2d(x, w, b, padding=1, activation="relu",
                            config={"BLOCK_M": 64, "BLOCK_N": 32, "BLOCK_K": 64})
        y_part = conv.conv2d(x, w, b, padding=1, activation="relu", config={"BLOCK_K": 16})
    finally:
        conv._kc_conv2d_kernel = kernel
    (g1, kw1), (g2, kw2), (g3, kw3) = spy.launches
    assert {k: kw1[k] for k in small} == small
    assert g1 == (13 * 3, 1)  # cdiv(198, 16) * cdiv(40, 16) tiles, one group
    assert (kw2["BLOCK_M"], kw2["BLOCK_N"], kw2["BLOCK_K"]) == (64, 32, 64)
    assert g2 == (4 * 2, 1)
    heur = conv._kc_conv_config(198, 40, 54, 4, "cpu")
    assert (kw3["BLOCK_M"], kw3["BLOCK_N"], kw3["BLOCK_K"]) == (heur[0], heur[1], 16)
    assert kw1["PREC"] == "ieee" and kw1["NATIVE"] is False
    ref = F.relu(F.conv2d(x.double(), w.double(), b.double(), padding=1))
    for y in (y_small, y_big, y_part):
        assert _rel(y, ref) < 2e-5
    assert _rel(y_small, y_big.double()) < 2e-5


def test_explicit_config_is_honoured(interp: _Worker) -> None:
    interp("_check_config")


# ---- in-process: validation, heuristic, precision ------------------------------------------

def _bad(**over: Any) -> dict[str, Any]:
    x, w, b = _inputs(1, 8, 6, (7, 7), (3, 3), 1, True, seed=0)
    args: dict[str, Any] = {"x": x, "weight": w, "bias": b}
    args.update(over)
    return args


BAD: dict[str, tuple[dict[str, Any], str]] = {
    "channels": (_bad(weight=torch.randn(6, 5, 3, 3)), "input channels per group"),
    "cin_groups": (_bad(groups=3), "C_in=8 is not divisible by groups=3"),
    "cout_groups": (_bad(weight=torch.randn(6, 2, 3, 3), groups=4),
                    "C_out=6 is not divisible by groups=4"),
    "groups_zero": (_bad(groups=0), "groups must be a positive int"),
    "padding_mode": (_bad(padding="circular"), "padding must be an int, a pair"),
    "same_strided": (_bad(padding="same", stride=2), "not supported for strided"),
    "padding_negative": (_bad(padding=-1), "padding must be >= 0"),
    "padding_triple": (_bad(padding=(1, 1, 1)), "padding must be an int or a pair"),
    "stride_zero": (_bad(stride=(1, 0)), "stride must be >= 1"),
    "dilation_float": (_bad(dilation=1.5), "dilation must be an int or a pair"),
    "bias_shape": (_bad(bias=torch.randn(5)), r"bias must have shape \(6,\)"),
    "activation": (_bad(activation="swish"), "activation 'swish' is not one of"),
    "scale": (_bad(scale="2"), "scale must be a float"),
    "dtype_mix": (_bad(weight=torch.randn(6, 8, 3, 3, dtype=torch.float64)),
                  "must share a dtype"),
    "dtype_int": (_bad(x=torch.ones(1, 8, 7, 7, dtype=torch.int32),
                       weight=torch.ones(6, 8, 3, 3, dtype=torch.int32), bias=None),
                  "not supported"),
    "rank": (_bad(x=torch.randn(8, 7)), r"x must be \[N, C_in, H, W\]"),
    "too_small": (_bad(weight=torch.randn(6, 8, 9, 9)), "output size .* is too small"),
    "config_key": (_bad(config={"BM": 32}), "unknown config key 'BM'"),
    "config_block": (_bad(config={"BLOCK_N": 24}), "power of two >= 16"),
    "precision": (_bad(precision_table={"cuda": "fast"}), "precision_table"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_arguments(case: str) -> None:
    args, match = BAD[case]
    with pytest.raises(ValueError, match=match):
        conv.conv2d(**args)


def test_conv1d_bad_arguments() -> None:
    x, w = torch.randn(1, 4, 9), torch.randn(6, 4, 3)
    with pytest.raises(ValueError, match=r"weight must be \[C_out, C_in/groups, K\]"):
        conv.conv1d(x, w[..., None])
    with pytest.raises(ValueError, match="stride must be an int or a 1-tuple"):
        conv.conv1d(x, w, stride=(1, 2))


def test_launch_heuristic() -> None:
    for backend in ("cpu", "cuda", "hip"):
        for m, n, k, size in [(1, 1, 1, 4), (100_352, 64, 576, 4), (3136, 256, 2304, 2),
                              (50, 1, 9, 2)]:
            bm, bn, bk, warps, stages = conv._kc_conv_config(m, n, k, size, backend)
            for blk in (bm, bn, bk):
                assert blk >= 16 and blk & (blk - 1) == 0
            assert warps >= 1 and stages >= 1
    assert conv._kc_conv_config(1, 1, 1, 4, "cpu")[:3] == (16, 16, 16)
    assert conv._kc_conv_config(100_352, 64, 576, 4, "cuda")[:3] == (128, 64, 32)
    assert conv._kc_conv_config(100_352, 64, 576, 4, "hip")[:3] == (64, 64, 32)


def test_dot_precision_choice() -> None:
    assert conv._precision(None, "cpu") == "ieee"
    assert conv._precision({"cuda": "tf32"}, "cpu") == "ieee"
    assert conv._precision(None, "cuda") == "bf16x3"
    assert conv._precision(None, "hip") == "bf16x3"
    assert conv._precision({"cuda": "tf32x3"}, "cuda") == "tf32x3"
    assert conv._precision({"cuda": "tf32x3"}, "hip") == "bf16x3"


@pytest.mark.skipif(not isinstance(conv._kc_conv2d_kernel, triton.runtime.JITFunction),
                    reason="this process interprets kernels (TRITON_INTERPRET=1)")
def test_cpu_without_interpreter_is_refused() -> None:
    x, w, _ = _inputs(1, 2, 2, (5, 5), (3, 3), 1, False, seed=1)
    with pytest.raises(RuntimeError, match="TRITON_INTERPRET=1"):
        conv.conv2d(x, w)


# ---- cross-compiled for GPUs (no GPU needed): the paths the interpreter cannot run ----------

def _cross_compile(arch: str, dtype_name: str, channels_last: bool, act: str) -> Any:
    from kernelcraft.target import resolve

    dtype = getattr(torch, dtype_name)
    target = resolve(arch)
    kernel = conv._kc_conv2d_kernel
    size = torch.empty((), dtype=dtype).element_size()
    # a ResNet-like 3x3 layer: 64 -> 64 channels on 2 x 56 x 56 x ... pixels
    bm, bn, bk, warps, stages = conv._kc_conv_config(100_352, 64, 576, size, target.backend)
    consts: dict[str, Any] = {
        "BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "CIN_INNER": channels_last,
        "HAS_BIAS": True, "ACT": act, "HAS_SCALE": True, "NATIVE": dtype != torch.float32,
        "PREC": conv._precision(None, target.backend),
    }
    ty = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16"}[dtype]
    sig = {n: ("constexpr" if n in consts else f"*{ty}" if n.endswith("_ptr")
               else "fp32" if n == "scale" else "i32") for n in kernel.arg_names}
    src = triton.compiler.ASTSource(fn=kernel, signature=sig, constexprs=consts)
    return triton.compile(src, target=target.gpu_target(),
                          options={"num_warps": warps, "num_stages": stages})


@pytest.mark.skipif(not isinstance(conv._kc_conv2d_kernel, triton.runtime.JITFunction),
                    reason="@triton.jit functions are not compilable under TRITON_INTERPRET=1")
@pytest.mark.parametrize(("arch", "dtype", "channels_last", "act"), [
    ("sm_90", "float32", False, "gelu"),
    ("sm_90", "float16", True, "tanh"),
    ("gfx942", "float32", True, "silu"),
])
def test_cross_compiles(arch: str, dtype: str, channels_last: bool, act: str,
                        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import re

    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "triton"))
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "1")
    compiled = _cross_compile(arch, dtype, channels_last, act)
    if arch.startswith("sm_"):
        ptx = compiled.asm["ptx"]
        # fp32 as bf16x3 on tensor cores; fp16 natively
        operand = "bf16" if dtype == "float32" else "f16"
        assert re.search(rf"wgmma\.mma_async\S*{operand}", ptx)
    else:
        gcn = compiled.asm["amdgcn"]
        assert "v_mfma" in gcn
        spills = re.findall(r"\.(?:s|v)gpr_spill_count:\s+(\d+)", gcn)
        assert spills and all(int(s) == 0 for s in spills), spills
