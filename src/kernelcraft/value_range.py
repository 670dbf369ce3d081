"""Bounds of the values of integer and boolean tensors in a captured graph.

Used to prove device-side checks true before planning (``rewrite.drop_proven_asserts``):
``F.one_hot(x, C)`` exports two whole-tensor reductions and ``_assert_async`` calls
(``x >= 0``, ``x < C``); where ``x`` is an argmax over C classes, a clamp to [0, C - 1], a
remainder by C or a top-k index, both hold by construction and cost two kernels and two
launches for nothing.

A bound is ``(lo, hi)`` with every element in ``[lo, hi]`` (Python numbers, possibly
infinite), or None where nothing is known. Only integer and boolean nodes get bounds
(floating values may be NaN, which no interval describes); a boolean is ``(0, 1)``, and
``(1, 1)`` is a proof that it is true everywhere. Results that could leave their integer
dtype's range get None (no wrap-around is assumed away).
"""

from __future__ import annotations

import math
import operator
from typing import Any

import torch
import torch.fx as fx

from kernelcraft.codegen.ops import op_name
from kernelcraft.plan import val

Bound = tuple[float, float] | None

_INF = math.inf
#: ops whose values are some of their first operand's values (views, copies, selections)
_SUBSET = frozenset({
    "view", "_unsafe_view", "reshape", "unsqueeze", "squeeze", "expand", "permute", "clone",
    "alias", "slice", "select", "index", "gather", "index_select", "take", "t", "transpose",
    "contiguous", "flatten", "amax", "amin", "max", "min", "roll", "flip", "repeat",
    "narrow", "detach", "lift_fresh_copy", "cat",
})
#: ops that may wrap around their integer dtype
_ARITH = frozenset({"add", "sub", "rsub", "mul", "neg", "abs", "floor_divide", "div"})
_CASTS = frozenset({"_to_copy", "to", "convert_element_type", "type_as"})
_COMPARE = frozenset({"ge", "gt", "le", "lt", "eq", "ne"})
#: ops returning (values, indices): the indices bounded by the size of the dim they index
_INDEXED = frozenset({"topk", "sort", "max", "min", "kthvalue", "mode", "median", "cummax",
                      "cummin"})


def _is_int(dtype: Any) -> bool:
    return isinstance(dtype, torch.dtype) and not dtype.is_floating_point \
        and not dtype.is_complex


def _dtype_limits(dtype: torch.dtype) -> tuple[float, float]:
    if dtype == torch.bool:
        return 0, 1
    info = torch.iinfo(dtype)
    return info.min, info.max


def _static(x: Any) -> int | None:
    """``x`` as a Python int when it is one (a size that varies between variants is not)."""
    if isinstance(x, torch.SymInt):
        x = x.node.maybe_as_int()
    return x if isinstance(x, int) and not isinstance(x, bool) else None


class ValueRanges:
    """Bounds of a graph's nodes, computed on demand and remembered."""

    def __init__(self) -> None:
        self._memo: dict[fx.Node, Bound] = {}

    def of(self, a: Any) -> Bound:
        """The bound of a node or a literal operand."""
        if isinstance(a, bool):
            return (int(a), int(a))
        if isinstance(a, (int, float)):
            return (a, a) if not math.isnan(a) else None
        if not isinstance(a, fx.Node):
            return None
        if a not in self._memo:
            self._memo[a] = None  # a cycle (never expected) stays unknown
            self._memo[a] = self._compute(a)
        return self._memo[a]

    def always_true(self, a: Any) -> bool:
        b = self.of(a)
        return b is not None and (b[0] > 0 or b[1] < 0)

    def _compute(self, n: fx.Node) -> Bound:
        v = n.meta.get("val")
        dtype = getattr(v, "dtype", None)
        if n.op == "call_function" and n.target is operator.getitem:
            return self._getitem(n)
        if isinstance(dtype, torch.dtype) and dtype.is_floating_point:
            return self._float(n) if n.op == "call_function" else None
        if not _is_int(dtype):
            return None
        if dtype == torch.bool:
            b = self._bool(n) if n.op == "call_function" else None
            return b if b is not None else (0, 1)
        if n.op != "call_function":
            return None
        b = self._int(n, dtype)
        if b is None:
            return None
        if math.isinf(b[0]) or math.isinf(b[1]):
            # an open side is known not to wrap only where no arithmetic made it, and no
            # cast to a narrower integer (an index cast to int8)
            name = op_name(n.target)
            narrowed = name in _CASTS and dtype != torch.int64
            return None if name in _ARITH or narrowed else b
        lo, hi = _dtype_limits(dtype)
        return b if lo <= b[0] and b[1] <= hi else None

    def _float(self, n: fx.Node) -> Bound:
        """Floating values known only as exact copies of bounded integers (a one-hot's
        ``.float()``) or selections and clamps of those: no arithmetic (rounding), and
        nothing from an input (NaN)."""
        name = op_name(n.target)
        if name in _CASTS:
            src = self.of(n.args[0]) if _is_int(getattr(val(n.args[0]), "dtype", None)) \
                else None
            exact = 2 / torch.finfo(val(n).dtype).eps  # integers held exactly
            return src if src is not None and -exact <= src[0] and src[1] <= exact else None
        if name in ("clamp", "clamp_min", "clamp_max") and self.of(n.args[0]) is None:
            return None  # NaN passes a clamp
        if name in _SUBSET or name in ("where", "clamp", "clamp_min", "clamp_max",
                                       "scalar_tensor", "full", "full_like"):
            return self._int(n, val(n).dtype)
        return None

    def _getitem(self, n: fx.Node) -> Bound:
        src, i = n.args
        if not isinstance(src, fx.Node) or src.op != "call_function":
            return None
        name = op_name(src.target)
        if name not in _INDEXED or i not in (0, 1):
            return None
        if i == 0:  # the values: some of the input's
            return self.of(src.args[0]) if _is_int(getattr(val(n), "dtype", None)) else None
        x = val(src.args[0]) if src.args else None
        if x is None:
            return None
        at = 2 if name in ("topk", "kthvalue") else 1  # (x, k, dim) or (x, dim)
        dim = src.args[at] if len(src.args) > at else src.kwargs.get("dim", -1)
        return _index_range(x, dim)

    def _bool(self, n: fx.Node) -> Bound:
        name = op_name(n.target)
        args = n.args
        if name in _COMPARE and len(args) == 2:
            return _compare(name, self.of(args[0]), self.of(args[1]))
        if name in ("logical_and", "bitwise_and", "mul") and len(args) == 2:
            a, b = self.of(args[0]), self.of(args[1])
            if a == (1, 1) and b == (1, 1):
                return (1, 1)
            if a == (0, 0) or b == (0, 0):
                return (0, 0)
            return None
        if name in ("logical_or", "bitwise_or") and len(args) == 2:
            a, b = self.of(args[0]), self.of(args[1])
            if a == (1, 1) or b == (1, 1):
                return (1, 1)
            if a == (0, 0) and b == (0, 0):
                return (0, 0)
            return None
        if name in ("logical_not", "bitwise_not") and args:
            a = self.of(args[0])
            return None if a is None or a[0] != a[1] else (1 - a[0], 1 - a[0])
        if name in _CASTS:
            a = self.of(args[0])
            if a is None:
                return None
            if a[0] > 0 or a[1] < 0:
                return (1, 1)
            return (0, 0) if a == (0, 0) else (0, 1)
        if name in _SUBSET or name in ("where", "scalar_tensor", "full", "full_like", "fill"):
            return self._int(n, torch.bool)
        return None

    def _int(self, n: fx.Node, dtype: torch.dtype) -> Bound:
        name = op_name(n.target)
        args, kw = n.args, n.kwargs
        if name in ("argmax", "argmin"):
            x = val(args[0])
            dim = args[1] if len(args) > 1 else kw.get("dim")
            if dim is None:
                size = _static(x.numel()) if x is not None else None
                return (0, size - 1) if size else (0, _INF)
            return _index_range(x, dim)
        if name == "arange":
            return _arange(n)
        if name in ("scalar_tensor", "full", "fill"):
            fill = args[-1] if name != "scalar_tensor" else args[0]
            return self.of(fill)
        if name in ("full_like",):
            return self.of(args[1])
        if name in ("zeros", "zeros_like", "new_zeros"):
            return (0, 0)
        if name in ("ones", "ones_like", "new_ones"):
            return (1, 1)
        if name in ("maximum", "minimum", "max", "min") and len(args) == 2 \
                and isinstance(args[1], fx.Node):  # elementwise, not a reduction over a dim
            a, b = self.of(args[0]), self.of(args[1])
            if a is None or b is None:
                return None
            f = max if name in ("maximum", "max") else min
            return (f(a[0], b[0]), f(a[1], b[1]))
        if name in _SUBSET:
            if name == "cat":
                parts = [self.of(t) for t in args[0]]
                return _union(*parts)
            return self.of(args[0])
        if name in _CASTS:
            src = val(args[0])
            return self.of(args[0]) if _is_int(getattr(src, "dtype", None)) else None
        if name == "where":
            return _union(self.of(args[1]), self.of(args[2]))
        if name in ("clamp", "clamp_min", "clamp_max"):
            return self._clamp(n, name)
        if name in ("add", "sub", "rsub") and len(args) == 2:
            a, b = self.of(args[0]), self.of(args[1])
            alpha = kw.get("alpha", 1)
            if a is None or b is None or not isinstance(alpha, (int, float)):
                return None
            if name == "rsub":  # b - alpha * a
                a, b = b, _scale(a, alpha)
            else:
                b = _scale(b, alpha)
            return (a[0] + b[0], a[1] + b[1]) if name == "add" else (a[0] - b[1], a[1] - b[0])
        if name == "mul" and len(args) == 2:
            a, b = self.of(args[0]), self.of(args[1])
            if a is None or b is None:
                return None
            ps = [x * y for x in a for y in b]
            return None if any(math.isnan(p) for p in ps) else (min(ps), max(ps))
        if name == "neg":
            a = self.of(args[0])
            return None if a is None else (-a[1], -a[0])
        if name == "abs":
            a = self.of(args[0])
            if a is None:
                return None
            if a[0] >= 0:
                return a
            if a[1] <= 0:
                return (-a[1], -a[0])
            return (0, max(-a[0], a[1]))
        if name in ("remainder", "fmod") and len(args) == 2:
            a, c = self.of(args[0]), self.of(args[1])
            if c is None or c[0] != c[1] or c[0] <= 0 or math.isinf(c[0]):
                return None
            if name == "remainder":
                return (0, c[0] - 1)
            if a is not None and a[0] >= 0:
                return (0, c[0] - 1)
            return None
        if name in ("floor_divide", "div") and len(args) == 2:
            if name == "div" and kw.get("rounding_mode") != "floor":
                return None
            a, c = self.of(args[0]), self.of(args[1])
            if a is None or c is None or c[0] != c[1] or c[0] <= 0:
                return None
            return (_floordiv(a[0], c[0]), _floordiv(a[1], c[0]))
        return None

    def _clamp(self, n: fx.Node, name: str) -> Bound:
        args = n.args
        if name == "clamp":
            lo = args[1] if len(args) > 1 else n.kwargs.get("min")
            hi = args[2] if len(args) > 2 else n.kwargs.get("max")
        elif name == "clamp_min":
            lo, hi = args[1], None
        else:
            lo, hi = None, args[1]
        a = self.of(args[0]) or (-_INF, _INF)
        bl = (-_INF, -_INF) if lo is None else self.of(lo)  # no bound: max(x, -inf) = x
        bh = (_INF, _INF) if hi is None else self.of(hi)
        if bl is None or bh is None:
            return None
        # clamp(x, lo, hi) = min(max(x, lo), hi)
        low = (max(a[0], bl[0]), max(a[1], bl[1]))
        out = (min(low[0], bh[0]), min(low[1], bh[1]))
        return None if math.isinf(out[0]) and math.isinf(out[1]) else out


def _index_range(x: Any, dim: Any) -> Bound:
    if x is None or not isinstance(dim, int) or not hasattr(x, "shape"):
        return None
    if x.dim() == 0:
        return (0, 0)
    size = _static(x.shape[dim])
    return (0, size - 1) if size else (0, _INF)


def _arange(n: fx.Node) -> Bound:
    args = list(n.args)
    start, end, step = (0, args[0], 1) if len(args) == 1 else (*args[:2], 1) \
        if len(args) == 2 else args[:3]
    if not isinstance(start, (int, float)) or not isinstance(step, (int, float)) or step == 0:
        return None
    if not isinstance(end, (int, float)):  # a size that varies
        return (start, _INF) if step > 0 else (-_INF, start)
    count = max(0, math.ceil((end - start) / step))
    if count == 0:
        return None
    last = start + (count - 1) * step
    return (min(start, last), max(start, last))


def _union(*bs: Bound) -> Bound:
    if not bs or any(b is None for b in bs):
        return None
    return (min(b[0] for b in bs), max(b[1] for b in bs))  # type: ignore[index]


def _scale(b: tuple[float, float], k: float) -> tuple[float, float]:
    if k == 1:
        return b
    x, y = b[0] * k, b[1] * k
    return (min(x, y), max(x, y))


def _floordiv(a: float, c: float) -> float:
    return a if math.isinf(a) else a // c


def _compare(name: str, a: Bound, b: Bound) -> Bound:
    """Bound of ``a <op> b`` as a boolean: (1, 1) proven, (0, 0) disproven, else (0, 1)."""
    if a is None or b is None:
        return (0, 1)
    true = {"ge": a[0] >= b[1], "gt": a[0] > b[1], "le": a[1] <= b[0], "lt": a[1] < b[0],
            "eq": a[0] == a[1] == b[0] == b[1],
            "ne": a[1] < b[0] or b[1] < a[0]}[name]
    false = {"ge": a[1] < b[0], "gt": a[1] <= b[0], "le": a[0] > b[1], "lt": a[0] >= b[1],
             "eq": a[1] < b[0] or b[1] < a[0],
             "ne": a[0] == a[1] == b[0] == b[1]}[name]
    return (1, 1) if true else (0, 0) if false else (0, 1)
