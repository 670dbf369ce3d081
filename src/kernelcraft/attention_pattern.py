"""Attention in a captured graph: softmax(Q K^T * scale + mask) V, recognised by structure.

After capture, ``F.scaled_dot_product_attention`` (routed through its math form on every
device, see capture.py) and hand-written attention are both plain core ATen ops: a bmm of
Q and K^T (4-D operands merged to [B*H, S, D] by expand/view, K transposed by a permute),
scalar multiplies or divides (on the scores, or on Q and K as SDPA's math applies
sqrt(scale) to each), an optional mask (``where(c, -inf, s)`` from masked_fill, or
``s + A``), a softmax over the last dim (amax, sub, exp, sum, div; SDPA adds a guard that
turns fully masked rows into zeros) and a bmm with V. Node names and op counts vary, so
the matcher walks back from every bmm through these roles and accepts only what it can
prove equal to the flash kernel's semantics:

- a mask computed from sizes alone (tril/triu of ones, arange comparisons, SDPA's
  ``is_causal``) is evaluated at two small sizes; the top-left causal triangle at both
  becomes the kernel's causal flag and its nodes are not computed at all;
- a boolean mask read from a tensor (a registered tril buffer, SDPA's boolean attn_mask)
  is handed to the kernel as a mask operand, which is exact for any values;
- an additive float tensor of the scores' dtype (a relative-position or ALiBi bias, a
  padding mask of large negatives), computed or read, is handed over as an additive mask
  operand when it is the innermost mask and no scale follows it (the kernel adds it to the
  scaled scores, then applies the causal mask);
- one causal mask and one mask operand may be combined;
- K and V with their heads repeated to the query's (grouped-query attention as
  ``repeat_interleave`` or HF's ``repeat_kv`` writes it: unsqueeze, expand, reshape) are
  read from the unrepeated tensors, each K/V head serving its group of query heads;
- dropout, a fill other than -inf, two mask operands, scores or probabilities also used
  elsewhere: no match, the reason goes to the plan's notes, and the ops keep their
  matmul/reduction kernels.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import sympy
import torch
import torch.fx as fx

from kernelcraft.codegen.ops import op_name
from kernelcraft.plan import hint, whole_slice

_FLOATS = (torch.float32, torch.float16, torch.bfloat16)
_MERGES = ("view", "_unsafe_view", "reshape")

#: a size-only mask is evaluated at plan time when it has at most this many elements
_MAX_EVAL = 1 << 22

#: small query/key lengths a size-only mask is evaluated at (M < N, then M > N)
_PROBE = ((7, 11), (12, 5))


class _NotAttention(Exception):
    """The bmm is not P @ V of a softmax: nothing to report."""


class _Rejected(Exception):
    """An attention pattern the template does not take; the message says why."""


@dataclass
class Operand:
    """A tensor the kernel reads: ``base``, transposed in the last two dims if ``swap``;
    ``grouped``: K or V [B, Hk, S, D] whose heads the program repeated to q's H (read at
    head h // (H / Hk), never copied)."""

    base: fx.Node
    swap: bool
    grouped: bool = False


@dataclass
class AttentionMatch:
    """One matched attention: what the group computes and the nodes it replaces."""

    q: Operand
    k: Operand
    v: Operand
    rank: int  # 4: [B, H, S, D] operands merged for the bmm; 3: [B*H, S, D] operands
    #: scale of the scores: (a number or a scalar node, divides by it)
    factors: list[tuple[Any, bool]]
    causal: bool
    mask: fx.Node | None  # a mask operand (broadcast to the scores): boolean or additive
    mask_keeps: bool  # scores are kept where ``mask`` is True (else where it is False)
    safe: bool  # a fully masked row gives zeros (SDPA's guard) rather than NaN
    output: fx.Node
    dtype: torch.dtype
    causal_root: fx.Node | None = None  # the causal mask the kernel applies (never computed)
    nodes: set[fx.Node] = field(default_factory=set)
    additive: bool = False  # ``mask`` is a float tensor added to the scaled scores
    #: a boolean ``mask`` fills with the dtype's lowest finite value, not -inf (a row with
    #: every key masked averages V rather than giving zeros or NaN)
    fill_min: bool = False

    @property
    def scalars(self) -> list[fx.Node]:
        out: list[fx.Node] = []
        for f, _ in self.factors:
            if isinstance(f, fx.Node) and f not in out:
                out.append(f)
        return out

    @property
    def inputs(self) -> list[fx.Node]:
        """The group's operands in wrapper order: q, k, v, [mask], scalars."""
        ops = [self.q.base, self.k.base, self.v.base]
        return ops + ([self.mask] if self.mask is not None else []) + self.scalars


def find_attention(graph: fx.Graph, extern_ops: frozenset[str] = frozenset()
                   ) -> tuple[list[AttentionMatch], list[str]]:
    """Every attention the template takes, and a note for each one it does not."""
    matches: list[AttentionMatch] = []
    notes: list[str] = []
    taken: set[fx.Node] = set()
    for n in graph.nodes:
        if _op(n) != "bmm":
            continue
        try:
            m = _match(n)
        except _NotAttention:
            continue
        except _Rejected as exc:
            notes.append(f"attention at {n.name} left to the matmul/reduction path: {exc}")
            continue
        forced = sorted({_op(x) for x in m.nodes} & set(extern_ops))
        if forced:
            notes.append(f"attention at {n.name} left to PyTorch: {', '.join(forced)} forced "
                         "extern by the fusion options")
            continue
        if m.nodes & taken:
            continue
        matches.append(m)
        taken |= m.nodes
    for m in matches:  # a causal mask shared by several layers: now only they use it
        if m.causal_root is not None:
            more = set(taken)
            _absorb_ancestors(m.causal_root, more)
            m.nodes |= more - taken
            taken |= more
    return matches, notes


# ------------------------------------------------------------------ helpers
def _op(n: Any) -> str | None:
    if not isinstance(n, fx.Node) or n.op != "call_function":
        return None
    return op_name(n.target)


def _val(n: Any) -> Any:
    return n.meta.get("val") if isinstance(n, fx.Node) else n


def _tensor(n: Any) -> bool:
    return isinstance(n, fx.Node) and isinstance(_val(n), torch.Tensor)


def _expr(d: Any) -> sympy.Expr:
    return d.node.expr if isinstance(d, torch.SymInt) else sympy.Integer(int(d))


def _eq(a: Any, b: Any) -> bool:
    """Two captured sizes equal for every value of their symbols."""
    return sympy.simplify(_expr(a) - _expr(b)) == 0


def _last_dim(dims: Any, rank: int) -> bool:
    if isinstance(dims, int):
        dims = [dims]
    return isinstance(dims, (list, tuple)) and len(dims) == 1 and dims[0] % rank == rank - 1


def _is_fill(a: Any, scores: fx.Node) -> bool:
    """-inf, or the scores dtype's lowest finite value (HF's GPT-2 and others write
    ``torch.finfo(dtype).min``): under a causal mask every row keeps its diagonal, so the
    filled scores' exp underflows to exactly 0 either way."""
    v = _const(a)
    dtype = _val(scores).dtype
    return v == -math.inf or (v is not None and dtype.is_floating_point
                              and v == torch.finfo(dtype).min)


def _const(a: Any) -> float | None:
    """The value of a number, or of a node that is one (``scalar_tensor``, a 0-d ``full``)."""
    if isinstance(a, (int, float)) and not isinstance(a, bool):
        return float(a)
    name = _op(a)
    if name == "scalar_tensor":
        return _const(a.args[0])
    if name in ("full", "full_like") and len(a.args) > 1:  # the same value everywhere
        return _const(a.args[1])
    return None


def _scalar(a: Any) -> bool:
    """A Python number or a node holding one (a size expression such as 1/sqrt(D))."""
    if isinstance(a, (int, float)) and not isinstance(a, bool):
        return True
    v = _val(a)
    return isinstance(a, fx.Node) and isinstance(v, (int, float, torch.SymInt,
                                                     torch.SymFloat)) and not isinstance(v, bool)


def _scale_of(n: fx.Node) -> tuple[fx.Node, Any, bool] | None:
    """(tensor operand, scalar, divides) of ``x * s``, ``s * x`` or ``x / s``."""
    name = _op(n)
    if name not in ("mul", "div") or len(n.args) != 2 or n.kwargs:
        return None
    a, b = n.args
    if _tensor(a) and _scalar(b):
        return a, b, name == "div"
    if name == "mul" and _tensor(b) and _scalar(a):
        return b, a, False
    return None


def _float_cast(n: fx.Node) -> bool:
    return (_op(n) == "_to_copy" and not set(n.kwargs) - {"dtype"} and _tensor(n.args[0])
            and _val(n.args[0]).dtype in _FLOATS and _val(n).dtype in _FLOATS)


def _exclusive(n: fx.Node, pat: set[fx.Node]) -> bool:
    return all(u in pat for u in n.users)


def _swaps_last_two(perm: Any) -> bool:
    r = len(perm)
    p = [d % r for d in perm]
    return r >= 2 and p[:-2] == list(range(r - 2)) and p[-2:] == [r - 1, r - 2]


def _merge_source(n: fx.Node) -> fx.Node | None:
    """x of ``view(x, [B*H, S, E])`` with x of shape [B, H, S, E]."""
    if _op(n) not in _MERGES or not _tensor(n.args[0]):
        return None
    src = n.args[0]
    s, d = _val(src).shape, _val(n).shape
    if len(s) == 4 and len(d) == 3 and _eq(s[0] * s[1], d[0]) and _eq(s[2], d[1]) \
            and _eq(s[3], d[2]):
        return src
    return None


# ------------------------------------------------------------------ matcher
def _match(b2: fx.Node) -> AttentionMatch:
    """The attention whose P @ V is ``b2``, or why there is none."""
    if len(b2.args) != 2 or b2.kwargs or not all(_tensor(a) for a in b2.args):
        raise _NotAttention
    pat: set[fx.Node] = {b2}
    out, rank = b2, 3
    users = list(b2.users)
    if len(users) == 1 and _merge_source_of_output(users[0], b2):
        out, rank = users[0], 4
        pat.add(out)
    users = list(out.users)
    cast = None
    if len(users) == 1 and _float_cast(users[0]) and _val(users[0]).dtype in (
            torch.float16, torch.bfloat16) and _val(out).dtype == torch.float32:
        # SDPA's math on 16-bit inputs: upcast, fp32 attention, cast back
        cast, out = out, users[0]
        pat.add(out)
    dtype = _val(out).dtype
    half = dtype if cast is not None else None
    frame = _val(out).shape[:2] if rank == 4 else None

    # P: a softmax over the last dim, possibly behind SDPA's fully-masked-row guard
    p = _chain(b2.args[0], rank, pat, frame, casts=True)
    if p.swap:
        raise _NotAttention
    x, safe = _softmax(p.base, pat)

    # from here on the pattern is attention: every failure is reported
    v = _chain(b2.args[1], rank, pat, frame, upcast=half)
    factors: list[tuple[Any, bool]] = []
    b1, causal_root, mask, keeps, additive, fill_min = _scores(x, rank, pat, factors)
    if rank == 4 and not all(_eq(a, b) for a, b in zip(_val(b1).shape[:1],
                                                        _val(b2).shape[:1], strict=True)):
        raise _Rejected("the two bmms have different batch sizes")
    q = _chain(b1.args[0], rank, pat, frame, factors=factors, upcast=half)
    kt = _chain(b1.args[1], rank, pat, frame, factors=factors, upcast=half)
    k = Operand(kt.base, not kt.swap)  # the bmm reads K^T: the kernel wants K
    if rank == 4:
        k, v = _ungroup(k, v, frame, pat)
    if cast is not None and all(_val(o.base).dtype == torch.float32 for o in (q, k, v)):
        pat.discard(out)  # fp32 operands: the kernel runs fp32 and the cast stays outside
        out, dtype = cast, torch.float32
    for name, o in (("q", q), ("k", k), ("v", v)):
        vb = _val(o.base)
        if vb.dtype != dtype:
            raise _Rejected(f"{name} is {vb.dtype}, the result {dtype}")
        if vb.dim() < 2 or vb.dim() > rank:
            raise _Rejected(f"{name} has {vb.dim()} dims")
    for n in pat:
        if n is not out and not _exclusive(n, pat):
            others = ", ".join(u.name for u in n.users if u not in pat)
            raise _Rejected(f"{n.name} ({_op(n)}) is also used by {others}: the scores or "
                            "probabilities are needed outside the kernel")
    return AttentionMatch(q, k, v, rank, factors, causal_root is not None, mask, keeps, safe,
                          out, dtype, causal_root=causal_root, nodes=pat, additive=additive,
                          fill_min=fill_min)


def _ungroup(k: Operand, v: Operand, frame: Any, pat: set[fx.Node]
             ) -> tuple[Operand, Operand]:
    """K and V read from before a head repeat both went through (their [B, Hk, S, D]
    tensors, ``grouped``); else as they are."""
    rk, rv = _repeat_source(k.base, frame), _repeat_source(v.base, frame)
    if rk is None or rv is None or not _eq(_val(rk[0]).shape[1], _val(rv[0]).shape[1]):
        return k, v
    trial = set(pat)
    for walked in (rk[1], rv[1]):
        for n in walked:  # from the repeat's result back to its source
            if not _exclusive(n, trial):
                return k, v
            trial.add(n)
    pat |= trial
    return Operand(rk[0], k.swap, True), Operand(rv[0], v.swap, True)


def _repeat_source(n: fx.Node, frame: Any) -> tuple[fx.Node, list[fx.Node]] | None:
    """x [B, Hk, S, D] and the nodes walked, where ``n`` = x with a unit dim inserted at 2,
    expanded to [B, Hk, G, S, D] and reshaped to [B, Hk * G, S, D] (q's heads): query head
    h reads x's head h // G. Full-range slices on the way are skipped. A repeat along
    another dim (``Tensor.repeat`` tiles heads: h % Hk) does not match."""
    walked = [n]
    if _op(n) not in _MERGES or not _tensor(n.args[0]):
        return None
    out = _val(n).shape
    e = n.args[0]
    if _op(e) == "clone" and not set(e.kwargs) - {"memory_format"}:
        walked.append(e)
        e = e.args[0]
    if _op(e) != "expand" or not _tensor(e.args[0]):
        return None
    walked.append(e)
    big = _val(e).shape
    if len(out) != 4 or len(big) != 5 or not all(
            _eq(a, b) for a, b in zip(out[:2], frame, strict=True)):
        return None
    if not (_eq(big[0], out[0]) and _eq(big[1] * big[2], out[1]) and _eq(big[3], out[2])
            and _eq(big[4], out[3])):
        return None
    u = _skip_full_slices(e.args[0], walked)
    us = _val(u).shape
    if len(us) != 5 or not _eq(us[2], 1):
        return None
    if not (_op(u) == "unsqueeze" and u.args[1] in (2, -3) or _op(u) in _MERGES):
        return None
    x = u.args[0]
    if not _tensor(x):
        return None
    walked.append(u)
    x = _skip_full_slices(x, walked)
    xs = _val(x).shape
    if len(xs) != 4 or not all(_eq(a, b) for a, b in zip(xs, [*us[:2], *us[3:]],
                                                          strict=True)):
        return None
    if _val(x).dtype != _val(n).dtype:
        return None
    return x, walked


def _skip_full_slices(n: fx.Node, walked: list[fx.Node]) -> fx.Node:
    """The tensor under slices that keep every element (``x[:, :]``), those joining
    ``walked``."""
    while _op(n) == "slice" and whole_slice(n):
        walked.append(n)
        n = n.args[0]
    return n


def _merge_source_of_output(n: fx.Node, b2: fx.Node) -> bool:
    """n = view(b2, [B, H, M, Dv]) with b2 of shape [B*H, M, Dv]."""
    if _op(n) not in _MERGES or n.args[0] is not b2:
        return False
    s, d = _val(b2).shape, _val(n).shape
    return (len(d) == 4 and _eq(d[0] * d[1], s[0]) and _eq(d[2], s[1])
            and _eq(d[3], s[2]))


def _chain(a: fx.Node, rank: int, pat: set[fx.Node], frame: Any, *,
           factors: list[tuple[Any, bool]] | None = None, upcast: torch.dtype | None = None,
           casts: bool = False) -> Operand:
    """The tensor a bmm operand is read from, through the merge view, broadcasts, copies,
    a last-two-dims transposition, scalar factors (into ``factors``) and casts; the
    nodes walked join ``pat`` (each only if nothing else uses it). ``casts``: any float
    cast (the probabilities; failures are then silent), else only ``upcast`` -> fp32."""
    node, swap = a, False
    fail = _NotAttention if casts else _Rejected
    if rank == 4:
        src = _merge_source(node)
        if src is None or not _exclusive(node, pat):
            raise fail(f"{node.name}: a bmm operand that is not a [B, H, S, D] tensor merged "
                       "to [B*H, S, D]")
        if not all(_eq(a_, b_) for a_, b_ in zip(_val(src).shape[:2], frame, strict=True)):
            raise fail(f"{node.name}: batch and head dims differ from the result's")
        pat.add(node)
        node = src
    while node.op == "call_function" and _exclusive(node, pat):
        name, nxt = _op(node), node.args[0]
        if name == "expand":
            vin, vout = _val(nxt).shape, _val(node).shape
            if len(vin) < 2 or not (_eq(vin[-1], vout[-1]) and _eq(vin[-2], vout[-2])):
                break  # a broadcast over S or D: not a layout the kernel reads
        elif name == "clone":
            if set(node.kwargs) - {"memory_format"}:
                break
        elif name == "permute":
            if not _swaps_last_two(node.args[1]):
                break
            swap = not swap
        elif name in ("mul", "div"):
            sc = _scale_of(node) if factors is not None else None
            if sc is None:
                break
            nxt = sc[0]
            factors.append((sc[1], sc[2]))
        elif name == "_to_copy":
            ok = _float_cast(node) and (casts or (
                upcast is not None and _val(nxt).dtype == upcast
                and _val(node).dtype == torch.float32))
            if not ok:
                break
        else:
            break
        if not _tensor(nxt):
            break
        pat.add(node)
        node = nxt
    if not _tensor(node) or _val(node).dtype not in _FLOATS:
        raise fail(f"{node.name}: not a float tensor")
    return Operand(node, swap)


def _softmax(p: fx.Node, pat: set[fx.Node]) -> tuple[fx.Node, bool]:
    """(softmax input, guarded) of p = softmax(x, -1) as captured, its nodes into ``pat``."""
    if _op(p) == "getitem" and _op(p.args[0]) == "native_dropout":
        raise _Rejected("dropout between the softmax and P @ V (training mode)")
    guard: list[fx.Node] = []
    safe = False
    if _op(p) == "where" and len(p.args) == 3:
        cond, zero, div = p.args
        if not (_const(zero) == 0 and _op(div) == "div"):
            raise _NotAttention
        guard = [p, cond] + ([zero] if isinstance(zero, fx.Node) else [])
        p, safe = div, True
    if _op(p) != "div" or len(p.args) != 2:
        raise _NotAttention
    e, s = p.args
    rank = _val(p).dim() if _tensor(p) else 0
    if not (_op(e) == "exp" and _op(s) == "sum" and s.args[0] is e
            and _last_dim(s.args[1], rank) and len(s.args) > 2 and s.args[2]):
        raise _NotAttention
    sub = e.args[0]
    if _op(sub) != "sub" or len(sub.args) != 2:
        raise _NotAttention
    x, mx = sub.args
    if not (_op(mx) == "amax" and mx.args[0] is x and _last_dim(mx.args[1], rank)
            and len(mx.args) > 2 and mx.args[2]):
        raise _NotAttention
    if safe:
        chain = _guard_nodes(guard[1], x, rank)
        if chain is None:
            raise _Rejected("the softmax's output passes through a where that is not the "
                            "fully-masked-row guard")
        guard += chain
    pat.update([p, e, s, sub, mx, *guard])
    return x, safe


def _guard_nodes(cond: fx.Node, x: fx.Node, rank: int) -> list[fx.Node] | None:
    """SDPA's guard ``all(x == -inf, -1, keepdim)``'s nodes: as core ATen writes it,
    ``logical_not(any(logical_not(.)))``, or as kernelcraft decomposes ``all``,
    ``amin((. != 0).float(), -1, keepdim) > 0``."""
    if _op(cond) == "gt" and _const(cond.args[1]) == 0:
        mn = cond.args[0]
        if not (_op(mn) == "amin" and len(mn.args) > 2 and mn.args[2]
                and _last_dim(mn.args[1], rank)):
            return None
        cast = mn.args[0]
        ne = cast.args[0] if _op(cast) == "_to_copy" else None
        eq = ne.args[0] if _op(ne) == "ne" and _const(ne.args[1]) == 0 else None
        if _op(eq) != "eq" or eq.args[0] is not x or _const(eq.args[1]) != -math.inf:
            return None
        return [cond, mn, cast, ne, eq]
    n1 = cond
    n2 = n1.args[0] if _op(n1) == "logical_not" else None
    if _op(n2) != "any" or not (len(n2.args) > 2 and n2.args[2]) \
            or not _last_dim(n2.args[1], rank):
        return None
    n3 = n2.args[0]
    n4 = n3.args[0] if _op(n3) == "logical_not" else None
    if _op(n4) != "eq" or n4.args[0] is not x or _const(n4.args[1]) != -math.inf:
        return None
    return [n1, n2, n3, n4]


def _scores(x: fx.Node, rank: int, pat: set[fx.Node], factors: list[tuple[Any, bool]]
            ) -> tuple[fx.Node, fx.Node | None, fx.Node | None, bool, bool, bool]:
    """Walk from the softmax input back to the Q K^T bmm: (bmm, causal root, mask operand,
    keeps, additive, finite fill). At most two mask steps: one causal, one operand."""
    fill_min = False
    node = x
    #: scale factors between mask steps: segs[i] is applied after i steps of the walk, so
    #: segs[-1] scales the raw scores and the others follow a mask
    segs: list[list[tuple[Any, bool]]] = [[]]
    steps: list[tuple[str, fx.Node | None, bool]] = []  # (causal | bool | add, node, keeps)
    while True:
        pat.add(node)
        name = _op(node)
        sc = _scale_of(node)
        if sc is not None:
            segs[-1].append((sc[1], sc[2]))
            node = sc[0]
        elif _float_cast(node):
            node = node.args[0]
        elif name == "where" and len(steps) < 2 and len(node.args) == 3:
            c, a, b = node.args
            if _is_fill(a, x) and _tensor(b):
                keep, node, fill = False, b, _const(a)
            elif _is_fill(b, x) and _tensor(a):
                keep, node, fill = True, a, _const(b)
            else:
                raise _Rejected(f"{x.name}: scores filled with a value other than -inf")
            _absorb_consts([a, b], pat)
            if not _same_shape(node, x):
                raise _Rejected("the mask broadcasts the scores to a larger shape")
            causal, mask, keeps = _bool_mask(c, keep, _val(x), pat)
            # a causal mask keeps every row's diagonal: the fill's exp is 0 either way; a
            # mask operand may empty a row, which then averages V (the kernel's fill_min)
            fill_min = fill_min or (fill != -math.inf and not causal)
            steps.append(("causal" if causal else "bool", mask, keeps))
            segs.append([])
        elif name == "add" and len(steps) < 2 and len(node.args) == 2 and not node.kwargs:
            a, b = node.args
            t, m = (a, b) if _leads_to_bmm(a) else (b, a)
            if not (_tensor(t) and _tensor(m) and _same_shape(t, x)):
                raise _Rejected("the scores plus a tensor of another shape")
            causal, mask, keeps, additive = _additive_mask(m, _val(x), _val(t).dtype, pat)
            steps.append(("causal" if causal else "add" if additive else "bool", mask, keeps))
            segs.append([])
            node = t
        elif name == "bmm" and rank == 3:
            break
        elif rank == 4 and name in _MERGES and _op(node.args[0]) == "bmm":
            s, d = _val(node.args[0]).shape, _val(node).shape
            if not (len(d) == 4 and _eq(d[0] * d[1], s[0]) and _eq(d[2], s[1])
                    and _eq(d[3], s[2])):
                raise _Rejected(f"{node.name}: scores reshaped unlike [B*H, M, N] -> "
                                "[B, H, M, N]")
            node = node.args[0]
            pat.add(node)
            break
        else:
            raise _Rejected(f"{node.name} ({name}) between Q @ K^T and the softmax")
        if not _tensor(node):
            raise _Rejected(f"{node} is not a tensor")
    kinds = [k for k, _, _ in steps]
    if fill_min and "causal" in kinds:
        raise _Rejected("a finfo.min fill together with a causal mask (which rows empty "
                        "depends on their order)")
    if kinds.count("causal") > 1 or len(kinds) - kinds.count("causal") > 1:
        raise _Rejected("two mask operands (the kernel reads one, and a causal mask)")
    if "add" in kinds and kinds[-1] != "add":
        raise _Rejected("an additive bias applied after a mask (the kernel adds it first)")
    for seg in segs[:-1]:  # after a mask: must commute with it
        for f, _ in seg:
            if not (isinstance(f, (int, float)) and f > 0):
                raise _Rejected("a scale applied after the mask that is not a positive "
                                "constant")
            if "add" in kinds:
                raise _Rejected("a scale applied after an additive bias (it would scale "
                                "the bias too)")
    for seg in segs:
        factors.extend(seg)
    if len(node.args) != 2 or node.kwargs:
        raise _Rejected(f"{node.name}: unexpected bmm arguments")
    causal_root = next((n for k, n, _ in steps if k == "causal"), None)
    operand = next(((n, keeps, k == "add") for k, n, keeps in steps if k != "causal"), None)
    if operand is None:
        return node, causal_root, None, True, False, False
    return node, causal_root, operand[0], operand[1], operand[2], fill_min


def _leads_to_bmm(n: Any, depth: int = 8) -> bool:
    """n is computed from a bmm through scales, casts, masks and reshapes (the scores)."""
    for _ in range(depth):
        name = _op(n)
        if name == "bmm":
            return True
        sc = _scale_of(n) if name else None
        if sc is not None:
            n = sc[0]
        elif name in (*_MERGES, "_to_copy", "add"):
            n = n.args[0]
        elif name == "where":
            n = n.args[2] if _tensor(n.args[2]) and _const(n.args[2]) is None else n.args[1]
        else:
            return False
    return False


def _same_shape(a: fx.Node, b: fx.Node) -> bool:
    sa, sb = _val(a).shape, _val(b).shape
    return len(sa) == len(sb) and all(_eq(x, y) for x, y in zip(sa, sb, strict=True))


def _broadcasts(m: fx.Node, shape: Any) -> bool:
    """Whether the mask ``m`` broadcasts to the scores' ``shape``. Sizes are compared as
    expressions, else at the captured values: the ``add`` / ``where`` combining them has the
    scores' shape, so wherever the program runs they broadcast (a Swin window's n and the
    bias table's view of (2w-1)^2 are equal expressions sympy cannot prove: 7*7 windows of
    H // (H // 7) rows), and the kernel's wrapper expands the mask at run time."""
    sm = _val(m).shape
    if len(sm) > len(shape):
        return False
    pairs = list(zip(sm, shape[len(shape) - len(sm):], strict=True))
    if all(_eq(d, 1) or _eq(d, s) for d, s in pairs):
        return True
    return all(hint(d) == 1 or hint(d) == hint(s) for d, s in pairs)


def _absorb_consts(args: list[Any], pat: set[fx.Node]) -> None:
    for a in args:
        if isinstance(a, fx.Node) and _const(a) is not None and _exclusive(a, pat):
            pat.add(a)


def _bool_mask(c: Any, keep: bool, scores: torch.Tensor, pat: set[fx.Node]
               ) -> tuple[bool, fx.Node | None, bool]:
    """(causal, mask, keeps) of scores kept where ``c == keep``; a causal mask is returned
    as the root of its nodes, else it is the kernel's mask operand."""
    if not _tensor(c) or _val(c).dtype != torch.bool:
        raise _Rejected("a where whose condition is not a boolean tensor")
    if not _broadcasts(c, scores.shape):
        raise _Rejected("a mask that does not broadcast to the scores")
    if _is_causal(c, scores, lambda t: t if keep else ~t):
        _absorb_ancestors(c, pat)
        return True, c, True
    return False, c, keep


def _additive_mask(m: fx.Node, scores: torch.Tensor, dtype: torch.dtype, pat: set[fx.Node]
                   ) -> tuple[bool, fx.Node | None, bool, bool]:
    """(causal, mask, keeps, additive) of scores + m, as ``_bool_mask``; a 0 / -inf mask of a
    boolean tensor is read as that tensor, any other float tensor of the scores' ``dtype``
    is an additive operand (computed outside the kernel if it is computed)."""
    if not _broadcasts(m, scores.shape):
        raise _Rejected("an additive mask that does not broadcast to the scores")

    def keep_of(t: torch.Tensor) -> torch.Tensor:
        if not bool(((t == 0) | (t == -math.inf)).all()):
            return torch.zeros(1, dtype=torch.bool)  # not causal: compares unequal
        return t == 0

    if _size_only(m) and _is_causal(m, scores, keep_of):
        _absorb_ancestors(m, pat)
        return True, m, True, False
    w = m.args[0] if _float_cast(m) else m
    if _op(w) == "where" and len(w.args) == 3:
        c, a, b = w.args
        vals = (_const(a), _const(b))
        if vals in ((0.0, -math.inf), (-math.inf, 0.0)) and _tensor(c):
            for x in (m, w):  # a mask shared by several layers stays computed outside
                if _exclusive(x, pat):
                    pat.add(x)
            _absorb_consts([a, b], pat)
            return (*_bool_mask(c, vals[0] == 0.0, scores, pat), False)
    if _val(m).dtype != dtype:
        raise _Rejected(f"an additive mask of {_val(m).dtype} on {dtype} scores")
    return False, m, True, True


# ----------------------------------------------------- masks computed from sizes
def _ancestors(n: fx.Node) -> list[fx.Node]:
    """The tensor nodes n is computed from (n too); sizes are leaves, not followed."""
    seen: dict[fx.Node, None] = {}
    todo = [n]
    while todo:
        x = todo.pop()
        if x in seen or not isinstance(_val(x), torch.Tensor):
            continue
        seen[x] = None
        todo.extend(x.all_input_nodes)
    return list(seen)


def _size_only(n: fx.Node) -> bool:
    """n's value depends on sizes only: every tensor it reads is computed, none is an input,
    a parameter, a buffer or a constant."""
    return all(x.op == "call_function" for x in _ancestors(n))


def _is_causal(n: fx.Node, scores: torch.Tensor, keep_of: Any) -> bool:
    """n, evaluated at small sizes, at the captured sizes and at sizes past every constant
    its arithmetic uses, keeps exactly the top-left causal triangle. A sliding window
    (``j > i - 256``) keeps that triangle at every size up to its width: only sizes past
    the constant tell it apart, and where they are too large to evaluate it is not causal."""
    if not _size_only(n):
        return False
    m_dim, n_dim = scores.shape[-2], scores.shape[-1]
    probes = _probes(m_dim, n_dim, _constant_bound(n))
    if not probes:
        return False
    for subs, (mm, nn) in probes:
        try:
            t = _evaluate(n, subs, {})
        except Exception:  # anything the probe cannot run: not provably causal
            return False
        if not isinstance(t, torch.Tensor):
            return False
        keep = keep_of(t)
        try:
            full = torch.broadcast_shapes(keep.shape, (mm, nn))
        except RuntimeError:
            return False
        if tuple(full[-2:]) != (mm, nn):
            return False
        tri = torch.ones(mm, nn, dtype=torch.bool).tril()
        if not torch.equal(keep.broadcast_to(full), tri.broadcast_to(full)):
            return False
    return True


#: ops whose numeric arguments offset or compare positions (a window's width, a diagonal),
#: not fill values (``finfo.min``), dims or slice ends
_POSITION_OPS = frozenset({"add", "sub", "rsub", "remainder", "floor_divide", "ge", "gt", "le",
                           "lt", "eq", "ne", "clamp", "clamp_min", "clamp_max", "maximum",
                           "minimum", "arange", "tril", "triu"})


def _constant_bound(n: fx.Node) -> int:
    """The largest magnitude of a number n's position arithmetic uses (a window's width, a
    diagonal offset), 0 if none."""
    best = 0.0

    def scan(a: Any) -> None:
        nonlocal best
        if isinstance(a, (list, tuple)):
            for x in a:
                scan(x)
        elif isinstance(a, (int, float)) and not isinstance(a, bool) and math.isfinite(a):
            best = max(best, abs(float(a)))

    for x in _ancestors(n):
        if _op(x) in _POSITION_OPS:
            scan(list(x.args))
            scan(list(x.kwargs.values()))
    return int(math.ceil(best))


def _probes(m_dim: Any, n_dim: Any, bound: int = 0
            ) -> list[tuple[dict[Any, Any], tuple[int, int]]]:
    """Symbol values at which to evaluate a mask, and the (M, N) each gives: two small
    sizes, the captured ones, and sizes past ``bound``; none (not provable) where one is too
    large to evaluate."""
    syms = set()
    env: Any = None
    for d in (m_dim, n_dim):
        if isinstance(d, torch.SymInt):
            syms |= d.node.expr.free_symbols
            env = d.node.shape_env
    if not syms:  # static sizes: evaluate once, at them
        mm, nn = int(m_dim), int(n_dim)
        return [({}, (mm, nn))] if mm * nn <= _MAX_EVAL else []
    hints = getattr(env, "backed_var_to_val", None) or env.var_to_val  # renamed in 2.12
    base = {s: sympy.Integer(int(v)) for s, v in hints.items()}
    out = []
    ms = _expr(m_dim).free_symbols
    for sizes in (*_PROBE, None, (bound + 3, bound + 5)):
        subs = dict(base)  # None: the captured sizes
        if sizes is not None:
            for s in syms:
                subs[s] = sympy.Integer(sizes[0] if s in ms else sizes[1])
        mm, nn = int(_expr(m_dim).xreplace(subs)), int(_expr(n_dim).xreplace(subs))
        if mm < 1 or nn < 1:
            return []
        if mm * nn > _MAX_EVAL:
            if sizes is None:  # large captured sizes: the other probes decide
                continue
            return []
        out.append((subs, (mm, nn)))
    return out


def _evaluate(n: Any, subs: dict[Any, Any], memo: dict[fx.Node, Any]) -> Any:
    """n's value with the size symbols set to ``subs``, on the CPU."""
    if not isinstance(n, fx.Node):
        if isinstance(n, torch.device):
            return torch.device("cpu")
        if isinstance(n, (list, tuple)):
            return type(n)(_evaluate(a, subs, memo) for a in n)
        return n
    if n in memo:
        return memo[n]
    v = _val(n)
    if isinstance(v, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        e = v.node.expr.xreplace(subs)
        if not e.is_number:
            raise ValueError(f"{n.name}: unresolved size {e}")
        out: Any = (int(e) if isinstance(v, torch.SymInt)
                    else float(e) if isinstance(v, torch.SymFloat) else bool(e))
    elif isinstance(v, (int, float, bool)):
        out = v
    elif n.op == "call_function" and isinstance(v, torch.Tensor):
        args = _evaluate(list(n.args), subs, memo)
        kwargs = {k: _evaluate(a, subs, memo) for k, a in n.kwargs.items()}
        out = n.target(*args, **kwargs)
        if isinstance(out, torch.Tensor) and out.numel() > _MAX_EVAL:
            raise ValueError("too large to evaluate")
    else:
        raise ValueError(f"{n.name}: not computed from sizes")
    memo[n] = out
    return out


def _absorb_ancestors(n: fx.Node, pat: set[fx.Node]) -> None:
    """n and the tensor ops it is computed from, where only the pattern uses them (a causal
    mask the kernel applies by itself is never computed)."""
    order = {x: i for i, x in enumerate(n.graph.nodes)}
    for x in sorted(_ancestors(n), key=order.__getitem__, reverse=True):
        if x.op == "call_function" and _exclusive(x, pat):
            pat.add(x)
