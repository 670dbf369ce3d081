"""Value ranges of a kernel's integer values, for int64 values that int32 registers hold.

ATen computes every index in int64: ``arange``, ``one_hot``'s comparison and cast,
upsampling's source rows and columns, a label clamped into its classes. On NVIDIA GPUs an
int64 add is two instructions, a multiply three or more, and a conversion between int64 and
fp32 a slow path, so an index chain can make a memory-bound kernel issue-bound (bilinear
upsampling's four gathers, argmax's one-hot). A node whose every value provably fits int32
computes in ``KC_NI``: int32 in a launch whose offsets fit int32 (``IDX64`` off, so every
position is below 2**31), int64 otherwise. Stores still write the node's own dtype.

The ranges are intervals propagated from literals, positions (``arange`` of literal start
and step), dtypes narrower than int64, clamps and casts from bool; anything else (a loaded
int64 tensor, a size passed at run time) is unknown and stays int64.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterable, Iterator
from typing import Any

import torch
import torch.fx as fx

from kernelcraft.codegen.common import wide_literal
from kernelcraft.codegen.ops import op_name
from kernelcraft.plan import is_arange, val

Range = tuple[float, float]

#: a position (an element's index along a dim) in a launch whose offsets fit int32
POSITION: Range = (0, 2**31 - 2)
INT32: Range = (-(2**31), 2**31 - 1)
#: a fp32 value's interval endpoints are computed in float64: widen them by this share
#: (and one) before a conversion to an integer trusts them
FLOAT_SLACK = 2.0**-20

_DTYPE_RANGE: dict[torch.dtype, Range] = {
    torch.bool: (0, 1), torch.uint8: (0, 255), torch.int8: (-128, 127),
    torch.int16: (-(2**15), 2**15 - 1), torch.int32: INT32,
}

#: the meta key of a node computed in KC_NI (set only while its kernel is emitted)
NARROW = "kc_narrow"


def _dtype(n: fx.Node) -> torch.dtype | None:
    v = val(n)
    return getattr(v, "dtype", None)


def _lit(a: Any) -> Range | None:
    if isinstance(a, bool):
        return (int(a), int(a))
    if isinstance(a, (int, float)) and math.isfinite(a):
        return (a, a)
    return None


def _hull(*rs: Range | None) -> Range | None:
    if any(r is None for r in rs):
        return None
    return (min(r[0] for r in rs), max(r[1] for r in rs))  # type: ignore[index]


def _mul(a: Range, b: Range) -> Range:
    ps = [x * y for x in a for y in b]
    return (min(ps), max(ps))


def _to_int(r: Range) -> Range:
    """A float interval truncated to integers, widened for fp32 rounding."""
    lo, hi = r
    pad = max(abs(lo), abs(hi)) * FLOAT_SLACK + 1
    return (math.floor(lo - pad), math.ceil(hi + pad))


def _clamp(r: Range, lo: Any, hi: Any) -> Range:
    a, b = r
    if lo is not None:
        a, b = max(a, lo), max(b, lo)
    if hi is not None:
        a, b = min(a, hi), min(b, hi)
    return (a, b)


def value_ranges(nodes: Iterable[fx.Node]) -> dict[fx.Node, Range]:
    """The interval of every node of ``nodes`` (in order) whose values are bounded."""
    out: dict[fx.Node, Range] = {}

    def rng(a: Any) -> Range | None:
        if isinstance(a, fx.Node):
            if a in out:
                return out[a]
            return _DTYPE_RANGE.get(_dtype(a))  # type: ignore[arg-type]
        return _lit(a)

    for n in nodes:
        if n.op != "call_function":
            continue
        name, args = op_name(n.target), n.args
        dt = _dtype(n)
        r: Range | None = None
        if dt in _DTYPE_RANGE and dt != torch.int32:
            r = _DTYPE_RANGE[dt]
        elif is_arange(n):
            a = list(args)
            start, step = (0, 1) if len(a) == 1 else (a[0], a[2] if len(a) > 2 else 1)
            s, t = _lit(start), _lit(step)
            if s is not None and t is not None:
                r = _hull((s[0], s[0]), (s[0] + t[0] * POSITION[1], s[0] + t[0] * POSITION[1]))
        elif name in ("_to_copy", "clone", "lift_fresh_copy", "alias") and args:
            r = rng(args[0])
            src = _dtype(args[0]) if isinstance(args[0], fx.Node) else None
            if r is not None and src is not None and src.is_floating_point and dt is not None \
                    and not dt.is_floating_point:
                r = _to_int(r)
        elif name in ("add", "sub", "rsub") and len(args) >= 2:
            a, b = rng(args[0]), rng(args[1])
            alpha = args[2] if len(args) > 2 else n.kwargs.get("alpha", 1)
            if a is not None and b is not None and _lit(alpha) is not None:
                if name == "rsub":
                    a, b = b, a
                b = _mul(b, (alpha, alpha))
                r = (a[0] + b[0], a[1] + b[1]) if name == "add" else (a[0] - b[1], a[1] - b[0])
        elif name == "mul" and len(args) == 2:
            a, b = rng(args[0]), rng(args[1])
            if a is not None and b is not None:
                r = _mul(a, b)
        elif name == "neg":
            a = rng(args[0])
            r = None if a is None else (-a[1], -a[0])
        elif name == "abs":
            a = rng(args[0])
            if a is not None:
                r = (0 if a[0] <= 0 <= a[1] else min(abs(a[0]), abs(a[1])),
                     max(abs(a[0]), abs(a[1])))
        elif name in ("clamp", "clamp_min", "clamp_max"):
            lo = args[1] if len(args) > 1 else n.kwargs.get("min")
            hi = args[2] if len(args) > 2 else n.kwargs.get("max")
            if name == "clamp_max":
                lo, hi = None, lo
            a = rng(args[0])
            lo_r, hi_r = _lit(lo), _lit(hi)
            if (lo is None or lo_r is not None) and (hi is None or hi_r is not None):
                if a is not None:
                    r = _clamp(a, lo, hi)
                elif lo is not None and hi is not None:
                    r = (lo, hi)
        elif name in ("maximum", "minimum") and len(args) == 2:
            a, b = rng(args[0]), rng(args[1])
            if a is not None and b is not None:
                f = max if name == "maximum" else min
                r = (f(a[0], b[0]), f(a[1], b[1]))
        elif name == "where" and len(args) == 3:
            r = _hull(rng(args[1]), rng(args[2]))
        elif name in ("floor", "ceil", "trunc", "round"):
            a = rng(args[0])
            r = None if a is None else (math.floor(a[0]), math.ceil(a[1]))
        elif name in ("argmax", "argmin"):  # an index along a dim: a position
            r = POSITION
        elif name in ("scalar_tensor", "full") and args:  # a literal the plan put here
            r = _lit(args[-1])
        elif name == "full_like" and len(args) >= 2:
            r = _lit(args[1])
        elif name in ("zeros_like", "ones_like"):
            r = (0, 0) if name == "zeros_like" else (1, 1)
        elif name == "remainder" and len(args) == 2:
            d = _lit(args[1])
            if d is not None and d[0] > 0 and float(d[0]).is_integer():
                r = (0, d[0] - 1)
        elif name == "div" and len(args) == 2 and n.kwargs.get("rounding_mode") in (
                "floor", "trunc"):
            a, d = rng(args[0]), _lit(args[1])
            if a is not None and d is not None and d[0] > 0:
                r = (math.floor(a[0] / d[0]), math.ceil(a[1] / d[0]))
        if r is not None and not all(math.isfinite(x) for x in r):
            r = None
        if r is not None:
            out[n] = r
    return out


def narrow_nodes(nodes: list[fx.Node]) -> set[fx.Node]:
    """The int64 nodes of ``nodes`` whose values fit int32 when positions do."""
    ranges = value_ranges(nodes)
    return {n for n, r in ranges.items() if _dtype(n) == torch.int64
            and INT32[0] <= r[0] and r[1] <= INT32[1] and not wide_literal(n)}


@contextlib.contextmanager
def narrowed(nodes: list[fx.Node]) -> Iterator[set[fx.Node]]:
    """Mark ``nodes``' narrowable int64 values (``compute_dtype`` gives them KC_NI) while
    one kernel is emitted; the marks go with it, as a node can be lowered elsewhere too."""
    marked = narrow_nodes(nodes)
    for n in marked:
        n.meta[NARROW] = True
    try:
        yield marked
    finally:
        for n in marked:
            n.meta.pop(NARROW, None)


def ni_lines(ind: str = "    ") -> list[str]:
    """Kernel lines defining KC_NI from the launch flag IDX64."""
    return [f"{ind}if IDX64:", f"{ind}    KC_NI: tl.constexpr = tl.int64",
            f"{ind}else:", f"{ind}    KC_NI: tl.constexpr = tl.int32"]
