"""Core ATen pointwise and reduction ops -> Triton expressions.

Each pointwise lowering takes its operands as Triton expression strings (tensor operands
already loaded, scalars as literals) and returns an expression. Math the Triton core has
no accurate primitive for (tanh, log1p, expm1) is written out here so that strict fp32
holds on every backend.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch

aten = torch.ops.aten

#: torch dtype -> Triton dtype name
TL_DTYPE = {
    torch.float32: "tl.float32",
    torch.float16: "tl.float16",
    torch.bfloat16: "tl.bfloat16",
    torch.float64: "tl.float64",
    torch.int64: "tl.int64",
    torch.int32: "tl.int32",
    torch.int16: "tl.int16",
    torch.int8: "tl.int8",
    torch.uint8: "tl.uint8",
    torch.bool: "tl.int1",
}


def literal(value: Any) -> str:
    """A Python scalar as Triton source."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        if math.isinf(value):
            return "float('inf')" if value > 0 else "float('-inf')"
        if math.isnan(value):
            return "float('nan')"
        return repr(value)
    return repr(value)


def _bin(op: str) -> Callable[..., str]:
    return lambda a, b, **_: f"({a} {op} {b})"


def _add(a: str, b: str, alpha: Any = 1, **_: Any) -> str:
    return f"({a} + {b})" if alpha in (1, 1.0) else f"({a} + {literal(alpha)} * {b})"


def _sub(a: str, b: str, alpha: Any = 1, **_: Any) -> str:
    return f"({a} - {b})" if alpha in (1, 1.0) else f"({a} - {literal(alpha)} * {b})"


def _div(a: str, b: str, rounding_mode: str | None = None, **_: Any) -> str:
    if rounding_mode == "floor":
        return f"tl.floor({a} / {b})"
    if rounding_mode == "trunc":
        return f"_kc_trunc({a} / {b})"
    return f"({a} / {b})"


def _clamp(a: str, lo: Any = None, hi: Any = None, **_: Any) -> str:
    out = a
    if lo is not None:
        out = f"tl.where({out} < {lo}, {lo}, {out})"
    if hi is not None:
        out = f"tl.where({out} > {hi}, {hi}, {out})"
    return out


def _pow(a: str, exp: Any, **_: Any) -> str:
    """``exp``: a Python number (small powers become products and roots), or the
    expression of a tensor exponent."""
    if isinstance(exp, str):
        return f"_kc_pow({_operand(a)}, {exp})"
    if exp == 2:
        return f"({a} * {a})"
    if exp == 3:
        return f"({a} * {a} * {a})"
    if exp == 1:
        return a
    if exp == 0.5:
        return f"tl.sqrt({a})"
    if exp == -1:
        return f"(1.0 / {a})"
    if exp == -0.5:
        return f"tl.rsqrt({a})"
    if isinstance(exp, (int, float)) and not isinstance(exp, bool):
        return f"_kc_pow({_operand(a)}, {_operand(literal(float(exp)))})"
    raise NotImplementedError(f"pow with exponent {exp}")


def _operand(expr: str) -> str:
    """A number literal as a 0-d fp32 tensor (the math helpers take tensors); else as is."""
    try:
        float(expr.replace("float(", "").replace(")", "").strip("'"))
    except ValueError:
        return expr
    return f"tl.full([], {expr}, tl.float32)"


def _maximum(a: str, b: str, **_: Any) -> str:
    return f"tl.maximum({a}, {b}, propagate_nan=tl.PropagateNan.ALL)"


def _minimum(a: str, b: str, **_: Any) -> str:
    return f"tl.minimum({a}, {b}, propagate_nan=tl.PropagateNan.ALL)"


def _nan_ignoring(fn: str, a: str, b: str) -> str:
    """torch.fmax / fmin: a NaN operand yields the other one (NaN only when both are)."""
    return f"tl.where({a} != {a}, {b}, tl.where({b} != {b}, {a}, {fn}({a}, {b})))"


#: ops the vendor's math library computes (CUDA libdevice, ROCm ocml: the same function name
#: in both): aten overload packet name -> (libdevice function, operand count). Each becomes
#: a helper ``_kc_m_<name>`` (``libm_helpers``) that the exported module defines only when a
#: kernel calls it.
LIBM: dict[str, tuple[str, int]] = {
    "atan2": ("atan2", 2),
    "hypot": ("hypot", 2),
    "copysign": ("copysign", 2),
    "nextafter": ("nextafter", 2),
    "atan": ("atan", 1),
    "asin": ("asin", 1),
    "acos": ("acos", 1),
    "tan": ("tan", 1),
    "sinh": ("sinh", 1),
    "cosh": ("cosh", 1),
    "asinh": ("asinh", 1),
    "acosh": ("acosh", 1),
    "atanh": ("atanh", 1),
    "log10": ("log10", 1),
    "erfc": ("erfc", 1),
    "erfinv": ("erfinv", 1),
    "lgamma": ("lgamma", 1),
    "i0": ("cyl_bessel_i0", 1),
    "special_erfcx": ("erfcx", 1),
    "signbit": ("signbit", 1),
}


def _libm(name: str, arity: int) -> Callable[..., str]:
    def lower(*xs: str, **_: Any) -> str:
        return f"_kc_m_{name}(" + ", ".join(_operand(x) for x in xs[:arity]) + ")"
    return lower


def libm_helpers(names: set[str]) -> str:
    """The ``_kc_m_<name>`` helpers for the LIBM ops in ``names``. On a GPU each calls the
    vendor library in fp32 (fp64 kept); under Triton's interpreter, which has no vendor
    library, torch computes the op on the host: the interpreter checks the kernel's loads,
    masks and stores there, and the GPU judge checks the library's values."""
    out = []
    for name in sorted(names & LIBM.keys()):
        fn, arity = LIBM[name]
        xs = ", ".join("ab"[:arity])
        casts = ", ".join(f"_kc_libm_arg({x})" for x in "ab"[:arity])
        out += ["if _kc_interpreting():",
                f"    _kc_m_{name} = _kc_host_math(torch.ops.aten.{name})",
                "else:",
                "    @triton.jit",
                f"    def _kc_m_{name}({xs}):",
                f"        return _kc_libdevice.{fn}({casts})",
                ""]
    return LIBM_BASE + "\n" + "\n".join(out) if out else ""


LIBM_BASE = '''
if _kc_interpreting():
    def _kc_host_math(op):
        # runs as Python inside the interpreter: the operands' arrays through torch's op
        import numpy as np
        from triton.runtime.interpreter import TensorHandle

        def apply(*xs):
            xs = [x if isinstance(x, tl.tensor) else tl.full([], x, tl.float32) for x in xs]
            if len(xs) == 2:
                xs = list(tl.broadcast(xs[0], xs[1]))
            wide = any(x.dtype == tl.float64 for x in xs)
            dt, tdt = (tl.float64, torch.float64) if wide else (tl.float32, torch.float32)
            args = [torch.from_numpy(np.array(x.handle.data)).to(tdt) for x in xs]
            out = np.ascontiguousarray(op(*args).to(tdt).numpy())
            shape = list(xs[0].shape)
            return tl.tensor(TensorHandle(out, dt), tl.block_type(dt, shape) if shape else dt)

        return apply
else:
    @triton.jit
    def _kc_libm_arg(x):
        # the vendor functions take fp32 or fp64: narrower floats and integers widen to fp32
        if x.dtype == tl.float64:
            return x
        else:
            return x.to(tl.float32)
'''


#: aten overload packet name -> lowering(*operands, **kwargs) -> expression
POINTWISE: dict[str, Callable[..., str]] = {
    "add": _add,
    "sub": _sub,
    "rsub": lambda a, b, alpha=1, **_: _sub(b, a, alpha),
    "mul": _bin("*"),
    "div": _div,
    "remainder": lambda a, b, **_: f"_kc_mod({a}, {b})",
    "fmod": lambda a, b, **_: f"_kc_fmod({a}, {b})",
    "neg": lambda a, **_: f"(-{a})",
    "exp": lambda a, **_: f"tl.exp({a})",
    "exp2": lambda a, **_: f"tl.exp2({a})",
    "log": lambda a, **_: f"tl.log({a})",
    "log2": lambda a, **_: f"tl.log2({a})",
    "log1p": lambda a, **_: f"_kc_log1p({a})",
    "expm1": lambda a, **_: f"_kc_expm1({a})",
    "sqrt": lambda a, **_: f"tl.sqrt({a})",
    "rsqrt": lambda a, **_: f"tl.rsqrt({a})",
    "reciprocal": lambda a, **_: f"(1.0 / {a})",
    "abs": lambda a, **_: f"tl.abs({a})",
    "sin": lambda a, **_: f"tl.sin({a})",
    "cos": lambda a, **_: f"tl.cos({a})",
    "tanh": lambda a, **_: f"_kc_tanh({a})",
    "erf": lambda a, **_: f"tl.math.erf({a})",
    "sigmoid": lambda a, **_: f"tl.sigmoid({a})",
    "relu": lambda a, **_: f"tl.where({a} > 0, {a}, 0.0)",
    "floor": lambda a, **_: f"tl.floor({a})",
    "round": lambda a, **_: f"_kc_round_even({a})",
    "ceil": lambda a, **_: f"tl.ceil({a})",
    "sign": lambda a, **_: f"tl.where({a} > 0, 1.0, tl.where({a} < 0, -1.0, 0.0))",
    "clamp": _clamp,
    "clamp_min": lambda a, lo, **_: _clamp(a, lo, None),
    "clamp_max": lambda a, hi, **_: _clamp(a, None, hi),
    "pow": _pow,
    "maximum": _maximum,
    "minimum": _minimum,
    "where": lambda c, a, b, **_: f"tl.where({c}, {a}, {b})",
    "gt": _bin(">"),
    "lt": _bin("<"),
    "ge": _bin(">="),
    "le": _bin("<="),
    "eq": _bin("=="),
    "ne": _bin("!="),
    "logical_and": _bin("&"),
    "logical_or": _bin("|"),
    "logical_not": lambda a, **_: f"({a} == 0)",
    "bitwise_not": lambda a, **_: f"(~{a})",
    "bitwise_and": _bin("&"),  # integer and boolean operands (a floating one fails capture)
    "bitwise_or": _bin("|"),
    "bitwise_xor": _bin("^"),
    # integer shifts with torch's rule for counts outside [0, width): see _kc_shift
    "bitwise_left_shift": lambda a, b, **_: f"_kc_shift({a}, {b}, 0)",
    "__lshift__": lambda a, b, **_: f"_kc_shift({a}, {b}, 0)",
    "bitwise_right_shift": lambda a, b, **_: f"_kc_shift({a}, {b}, 1)",
    "__rshift__": lambda a, b, **_: f"_kc_shift({a}, {b}, 1)",
    "isnan": lambda a, **_: f"({a} != {a})",
    "isinf": lambda a, **_: f"(tl.abs({a}) == float('inf'))",
    # a constant shaped like its operand (the caller casts it to the node's dtype); only
    # the operand's shape is read, so the compiler drops its load
    "full_like": lambda a, v, **_: f"tl.where(tl.zeros_like({a}) == 0, {v}, {v})",
    "zeros_like": lambda a, **_: f"tl.where(tl.zeros_like({a}) == 0, 0.0, 0.0)",
    "ones_like": lambda a, **_: f"tl.where(tl.zeros_like({a}) == 0, 1.0, 1.0)",
    "trunc": lambda a, **_: f"_kc_trunc({a})",
    "fmax": lambda a, b, **_: _nan_ignoring("tl.maximum", a, b),
    "fmin": lambda a, b, **_: _nan_ignoring("tl.minimum", a, b),
    "logical_xor": lambda a, b, **_: f"(({a} != 0) ^ ({b} != 0))",
    "signbit": lambda a, **_: f"(_kc_m_signbit({a}) != 0)",
    "clone": lambda a, **_: a,
    "_to_copy": lambda a, **_: a,  # the cast to the node's dtype is applied by the caller
    "lift_fresh_copy": lambda a, **_: a,
}

POINTWISE.update({name: _libm(name, arity) for name, (_, arity) in LIBM.items()
                  if name not in POINTWISE})

#: reductions the row template computes, with the identity padding lanes take
REDUCTIONS: dict[str, str] = {
    "sum": "0.0",
    "mean": "0.0",
    "amax": "float('-inf')",
    "amin": "float('inf')",
    "argmax": "float('-inf')",
    "argmin": "float('inf')",
    "prod": "1.0",
}

#: Triton helpers the lowerings above refer to; emitted once per module.
HELPERS = '''
@triton.jit
def _kc_tanh_portable(x):
    # tanh with fp32-class accuracy: odd Taylor series near 0, exp form elsewhere.
    ax = tl.abs(x)
    z = ax * ax
    small = ax * (1.0 + z * (-1.0 / 3.0 + z * (2.0 / 15.0 + z * (-17.0 / 315.0 + z * (
        62.0 / 2835.0 + z * (-1382.0 / 155925.0 + z * (21844.0 / 6081075.0)))))))
    e = tl.exp(-2.0 * tl.minimum(ax, 30.0))
    large = (1.0 - e) / (1.0 + e)
    r = tl.where(ax < 0.25, small, large)
    r = tl.where(x < 0, -r, r)
    return tl.where(x != x, x, r)


@triton.jit
def _kc_log1p_portable(x):
    u = 1.0 + x
    d = u - 1.0
    safe = tl.where(d == 0.0, 1.0, d)
    r = tl.log(u) * (x / safe)
    return tl.where(d == 0.0, x, tl.where(u == float('inf'), u, r))


@triton.jit
def _kc_expm1_portable(x):
    u = tl.exp(x)
    lu = tl.log(u)
    safe = tl.where(lu == 0.0, 1.0, lu)
    r = (u - 1.0) * (x / safe)
    r = tl.where(u == 1.0, x, r)
    r = tl.where(x > 20.0, u - 1.0, r)
    return tl.where(x < -20.0, -1.0 + 0.0 * x, r)


@triton.jit
def _kc_pow_portable(a, b):
    # torch.pow for floats from exp2/log2: |a| ** b, a negative base signed by an odd
    # integer exponent (NaN for any other, as torch), pow(x, 0) == pow(1, y) == 1
    r = tl.exp2(b * tl.log2(tl.abs(a)))
    bi = tl.floor(b)
    whole = bi == b
    odd = whole & ((bi - 2.0 * tl.floor(bi * 0.5)) == 1.0)
    neg = tl.where(a == 0, 1.0 / a < 0, a < 0)  # -0.0 too: pow(-0.0, -3) == -inf
    r = tl.where(neg, tl.where(odd, -r, r), r)
    r = tl.where(a < 0, tl.where(whole, r, float('nan')), r)
    r = tl.where(b == 0, 1.0, r)
    return tl.where(a == 1, 1.0, r)


if _kc_interpreting():
    # Triton's interpreter has no libdevice: fp32-accurate forms built from exp and log.
    _kc_tanh, _kc_log1p, _kc_expm1 = _kc_tanh_portable, _kc_log1p_portable, _kc_expm1_portable
    _kc_pow = _kc_pow_portable
else:
    # The vendor math library (CUDA libdevice, ROCm ocml): accurate and fewer instructions
    # than the portable forms, whose divisions made long activation chains compute-bound.
    from triton.language.extra import libdevice as _kc_libdevice

    @triton.jit
    def _kc_tanh(x):
        return _kc_libdevice.tanh(x)

    @triton.jit
    def _kc_log1p(x):
        return _kc_libdevice.log1p(x)

    @triton.jit
    def _kc_expm1(x):
        return _kc_libdevice.expm1(x)

    @triton.jit
    def _kc_pow(a, b):
        return _kc_libdevice.pow(a, b)


@triton.jit
def _kc_mod(a, b):
    # torch.remainder: the sign of the divisor (Python's %), for integers and floats, from
    # whichever convention the backend's % has
    r = a % b
    return tl.where((r != 0) & ((r < 0) != (b < 0)), r + b, r)


@triton.jit
def _kc_fmod(a, b):
    # torch.fmod: the sign of the dividend (C's fmod)
    r = a % b
    return tl.where((r != 0) & ((r < 0) != (a < 0)), r - b, r)


@triton.jit
def _kc_shift(a, b, right: tl.constexpr):
    # torch's integer shifts: a count below 0 or at least the width gives 0, or for a
    # right shift of a signed type the sign (a >> width - 1); the count is clamped first,
    # since such a shift is undefined in the compiler
    W: tl.constexpr = a.dtype.primitive_bitwidth
    out = (b < 0) | (b >= W)
    s = tl.where(out, W - 1, b).to(a.dtype)
    if right:
        r = a >> s
        if a.dtype.is_int_unsigned():
            r = tl.where(out, 0, r)
    else:
        r = tl.where(out, 0, a << s)
    return r


@triton.jit
def _kc_cummax_combine(va, ia, vb, ib):
    # (running max, its latest index) of a segment then a later one: the later wins when
    # its max is at least the earlier's, or is NaN (torch.cummax's rule element by element)
    later = (vb != vb) | ((va == va) & (vb >= va))
    return tl.where(later, vb, va), tl.where(later, ib, ia)


@triton.jit
def _kc_cummin_combine(va, ia, vb, ib):
    later = (vb != vb) | ((va == va) & (vb <= va))
    return tl.where(later, vb, va), tl.where(later, ib, ia)


@triton.jit
def _kc_logaddexp(a, b):
    # log(exp(a) + exp(b)) without overflow (combine function of logcumsumexp); -inf with
    # -inf stays -inf and +inf with +inf stays +inf (no NaN from inf - inf)
    hi = tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)
    lo = tl.minimum(a, b, propagate_nan=tl.PropagateNan.ALL)
    r = hi + _kc_log1p(tl.exp(lo - hi))
    return tl.where((lo == float('-inf')) | (hi == float('inf')), hi, r)


@triton.jit
def _kc_max_nan(a, b):
    # combine function of amax (tl.reduce): one max.NaN instruction where the GPU has it;
    # torch.amax propagates NaN, tl.max does not
    return tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def _kc_min_nan(a, b):
    return tl.minimum(a, b, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def _kc_mul(a, b):
    # combine function of product reductions (tl.reduce)
    return a * b


@triton.jit
def _kc_udiv(n, d, m, s):
    # n // d for 0 <= n < 2**31 without a hardware division (about 20 instructions on a
    # GPU; this is 3): the high half of n * m shifted, with (m, s) = _kc_magic(d) from
    # the host (s is stored plus 16 so that no argument is ever the constant 1)
    q = tl.umulhi(n.to(tl.uint32, bitcast=True), m.to(tl.uint32, bitcast=True)) >> (s - 16)
    return tl.where(d == 1, n, q.to(tl.int32, bitcast=True))


@triton.jit
def _kc_round_even(x):
    # torch.round: halves to the even neighbour; |x| >= 2**23 is already whole (x + 0.5
    # would round there)
    r = tl.floor(x + 0.5)
    odd = r - 2.0 * tl.floor(r * 0.5)
    r = tl.where(r - x == 0.5, tl.where(odd != 0.0, r - 1.0, r), r)
    return tl.where(tl.abs(x) >= 8388608.0, x, r)


@triton.jit
def _kc_trunc(x):
    return tl.where(x < 0, tl.ceil(x), tl.floor(x))
'''


def op_name(target: Any) -> str:
    """The overload packet name of an aten op (``aten.add.Tensor`` -> ``add``)."""
    packet = getattr(target, "overloadpacket", None)
    if packet is not None:
        return packet.__name__
    return getattr(target, "__name__", str(target))


def is_pointwise(target: Any) -> bool:
    return isinstance(target, torch._ops.OpOverload) and op_name(target) in POINTWISE


def is_reduction(target: Any) -> bool:
    return isinstance(target, torch._ops.OpOverload) and op_name(target) in REDUCTIONS


MATMULS = {"mm", "addmm", "bmm"}


def is_matmul(target: Any) -> bool:
    return isinstance(target, torch._ops.OpOverload) and op_name(target) in MATMULS


VIEWS = {
    "view", "_unsafe_view", "reshape", "permute", "expand", "unsqueeze", "squeeze", "t",
    "transpose", "slice", "select", "split_with_sizes", "split", "alias", "as_strided",
    "unbind", "detach", "unfold",
}


def is_view(target: Any) -> bool:
    import operator

    if target is operator.getitem:
        return True
    return isinstance(target, torch._ops.OpOverload) and op_name(target) in VIEWS
