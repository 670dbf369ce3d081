"""Top-k template: the k largest (or smallest) entries along one dim, values and indices.

Each entry becomes one 64-bit key that orders as ``topk`` ranks: the high half is the value
mapped to an order-preserving integer (NaN above +inf, as PyTorch ranks it; ``-0.0`` equal
to ``0.0``; negated bitwise for the smallest), the low half ``2**32 - 1 - index``, so equal
values rank by lowest index first (PyTorch's deterministic mode's tie order; its default
order of ties is the library's). Keys are distinct, so selecting is a max and removing an
equality test.

The domain splits into rows (every dim but the selected one, decomposed at runtime as the
scan template does) and the selected dim. Each program takes BLOCK_K rows, keeps the best
k keys seen so far in registers (KP = next power of two of k lanes) and walks the dim in
chunks of BLOCK_R: only entries above the buffer's worst are candidates, and a chunk with
none (most of a long row once the buffer is full) costs one comparison per entry. The end
sorts the buffer by k more selections. The pointwise ops that feed only the top-k (its
prologue) run on the chunk in registers, rounded to the input's dtype before ranking.

Knobs, chosen by the wrapper from the layout or tuned: BLOCK_K, BLOCK_R, num_warps.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import torch
import torch.fx as fx

from kernelcraft.codegen.common import (
    KernelSource,
    compute_dtype,
    launch_signature,
    lower_pointwise,
    row_walk_head,
    row_walk_launch,
    row_walk_params,
    tl_dtype,
    var,
)
from kernelcraft.codegen.ops import op_name
from kernelcraft.codegen.runtime import _kc_next_pow2, _kc_topk_config
from kernelcraft.plan import Group, hint, inline_constant, is_tensor_node, val

#: largest k the template takes (its buffer lives in registers; beyond, the library's
#: radix select wins)
MAX_K = 256
_FLOATS = (torch.float32, torch.float16, torch.bfloat16)
#: integer values map to keys as they are (int64 would not leave room for the index)
_INTS = (torch.int32, torch.int16, torch.int8, torch.uint8)


#: the ops the template takes: ``sort`` is a top-k of the whole dim (its order of ties,
#: lowest index first, is the stable sort's); ``kthvalue`` and ``median`` (over a dim) are
#: the last of a smallest-k, stored alone
SELECTS = ("topk", "sort", "kthvalue", "median")
#: longest dim a sort (median) kernel takes at run time (beyond, the wrapper calls torch)
MAX_SORT = 1024


def topk_args(n: fx.Node) -> tuple[Any, int, bool, bool]:
    """(k, dim, largest, sorted) of a ``topk`` or ``sort`` node, defaults filled in (a
    sort's k is its dim's size)."""
    rank = max(val(n.args[0]).dim(), 1)
    mode = op_name(n.target)
    if mode == "kthvalue":
        args = dict(zip(("self", "k", "dim"), n.args, strict=False)) | dict(n.kwargs)
        return args["k"], int(args.get("dim", -1)) % rank, False, True
    if mode == "median":  # the lower median: the ((size + 1) // 2)-th smallest
        args = dict(zip(("self", "dim"), n.args, strict=False)) | dict(n.kwargs)
        d = int(args.get("dim", -1)) % rank
        size = val(n.args[0]).shape[d] if val(n.args[0]).dim() else 1
        return (size + 1) // 2, d, False, True
    if mode == "sort":
        args = dict(zip(("self", "dim", "descending"), n.args, strict=False)) | dict(n.kwargs)
        d = int(args.get("dim", -1)) % rank
        size = val(n.args[0]).shape[d] if val(n.args[0]).dim() else 1
        return size, d, bool(args.get("descending", False)), True
    names = ("self", "k", "dim", "largest", "sorted")
    args = dict(zip(names, n.args, strict=False)) | dict(n.kwargs)
    return (args["k"], int(args.get("dim", -1)) % rank, bool(args.get("largest", True)),
            bool(args.get("sorted", True)))


def topk_supported(n: fx.Node) -> str | None:
    """Why the template cannot take node ``n`` (one of SELECTS) (None: it can)."""
    x = n.args[0]
    mode = op_name(n.target)
    what = {"topk": "top-k"}.get(mode, mode)
    if mode == "median" and len(n.args) < 2 and "dim" not in n.kwargs:
        return "a median over all elements"
    if not is_tensor_node(x) or val(x).dtype not in _FLOATS + _INTS:
        return f"{what} of a {val(x).dtype if is_tensor_node(x) else 'non-tensor'} value"
    if val(x).dim() == 0:
        return f"{what} of a scalar"
    k, _, _, ordered = topk_args(n)
    if mode in ("sort", "median"):
        if hint(k) > MAX_K:
            return f"a {mode} of rows of {hint(val(x).shape[topk_args(n)[1]])} (over {MAX_K} "\
                   "keys a row: the library's)"
        return None
    if mode == "kthvalue":
        if not isinstance(k, int) or k > MAX_K:
            return f"kthvalue with k = {k} (a literal up to {MAX_K} is the template's)"
        return None
    if isinstance(k, fx.Node):  # a size computed at run time: the wrapper reads it
        if not isinstance(val(k), (int, torch.SymInt)):
            return "top-k with a k that is not an integer"
        return None if ordered else "unsorted top-k (the order of its results is the library's)"
    if not isinstance(k, int):
        return "top-k with a k computed at run time"
    if k > MAX_K:
        return f"top-k with k = {k} > {MAX_K} (the library's radix select)"
    if not ordered:
        return "unsorted top-k (the order of its results is the library's)"
    return None


def _ranked(x: str, dtype: torch.dtype, largest: bool) -> list[str]:
    """Lines turning chunk values ``x`` (masked by ``m``, positions ``p``) into keys ``c``."""
    if dtype in _FLOATS:
        lines = [f"xf = tl.where(m, {x}, 0.0)",
                 "xf = tl.where(xf == 0.0, 0.0, xf)",  # -0.0 ranks as 0.0
                 "bits = xf.to(tl.int32, bitcast=True)",
                 "key = tl.where(bits < 0, bits ^ 0x7FFFFFFF, bits)",
                 "key = tl.where(xf != xf, 0x7FFFFFFF, key)"]  # every NaN above +inf
    else:
        lines = [f"key = tl.where(m, {x}, 0).to(tl.int32)"]
    if not largest:
        lines.append("key = ~key")
    lines += ["c = (key.to(tl.int64) << 32) | (0xFFFFFFFF - p.to(tl.int64))[None, :]",
              "c = tl.where(m, c, LOW)"]
    return lines


def keepdim(n: fx.Node) -> bool:
    """Whether a kthvalue or median keeps its reduced dim."""
    pos = 3 if op_name(n.target) == "kthvalue" else 2
    return bool(n.args[pos] if len(n.args) > pos else n.kwargs.get("keepdim", False))


def _unranked(dtype: torch.dtype, largest: bool) -> list[str]:
    """Lines turning sorted keys ``sel`` back into indices ``oi`` and values ``ov``."""
    lines = ["oi = 0xFFFFFFFF - (sel & 0xFFFFFFFF)",
             "key = (sel >> 32).to(tl.int32)"]
    if not largest:
        lines.append("key = ~key")
    if dtype in _FLOATS:
        lines += ["bits = tl.where(key < 0, key ^ 0x7FFFFFFF, key)",
                  "ov = bits.to(tl.float32, bitcast=True)"]
    else:
        lines.append("ov = key")
    return lines


def emit_topk(g: Group, target: Any = None) -> KernelSource:
    """One top-k kernel with g's prologue fused, and its wrapper."""
    n = g.anchor
    if n is None:
        raise NotImplementedError("top-k group without an anchor")
    why = topk_supported(n)
    if why:
        raise NotImplementedError(why)
    k, d, largest, _ = topk_args(n)
    mode = op_name(n.target)
    is_sort = mode == "sort"
    runtime_k = isinstance(k, fx.Node)  # read from its scalar argument; over MAX_K: torch's
    if runtime_k and g.nodes.index(n) != 0:
        raise NotImplementedError("a top-k of a run-time k with a fused prologue")
    single = mode in ("kthvalue", "median")  # one value and index per row
    if mode != "topk" and g.nodes.index(n) != 0:
        raise NotImplementedError(f"a {mode} with a fused prologue")  # the fallback reads x
    x = n.args[0]
    dom = tuple(val(x).shape)
    members = set(g.nodes)
    order = {m: i for i, m in enumerate(g.nodes)}
    prologue = [m for m in g.nodes if order[m] < order[n]]
    for m in prologue:
        if tuple(val(m).shape) != dom and not inline_constant(m):
            raise NotImplementedError(f"{m.name} is not on the top-k's input domain")
    picks = {m.args[1]: m for m in g.nodes if m.target is operator.getitem and m.args[0] is n}
    outs = list(g.outputs)
    if any(o not in picks.values() for o in outs):
        raise NotImplementedError("a top-k group whose outputs are not its values or indices")
    loads: list[fx.Node] = []
    scalars: list[fx.Node] = []
    for m in prologue + [n]:
        for a in m.all_input_nodes:
            if a in members:
                continue
            if is_tensor_node(a):
                if val(a).dim() > len(dom):
                    raise NotImplementedError(f"operand {a.name} has a higher rank")
                if a not in loads:
                    loads.append(a)
            elif a not in scalars:
                scalars.append(a)
    kname, wname = f"_kc_{g.name}_kernel", f"_kc_{g.name}"
    IN = [f"in{i}" for i in range(len(loads))]
    OUT = [f"out{i}" for i in range(len(outs))]
    SC = [f"sc{i}" for i in range(len(scalars))]
    params = row_walk_params(IN, OUT, SC, ["KTOP", "KP", "BLOCK_K", "BLOCK_R"])
    body = row_walk_head(IN + OUT)
    body += [
        "    kk = tl.arange(0, KP)",
        "    slot = (kk < KTOP)[None, :]",
        "    LOW = tl.full([BLOCK_K, BLOCK_R], -2**63, tl.int64)",
        "    LOWK = tl.full([BLOCK_K, KP], -2**63, tl.int64)",
        "    HIGHK = tl.full([BLOCK_K, KP], 2**63 - 1, tl.int64)",
        "    buf = LOWK + kk[None, :]",  # distinct empties below every key
        "    nan_i = tl.full([BLOCK_K], 2**62, tl.int64)",
        "    for c0 in range(0, R, BLOCK_R):",
        "        p = c0 + tl.arange(0, BLOCK_R)",
        "        m = rmask[:, None] & (p < R)[None, :]",
    ]
    ind = "        "
    env: dict[fx.Node, str] = {s: SC[i] for i, s in enumerate(scalars)}
    for i, a in enumerate(loads):
        body.append(f"{ind}{var(a)} = tl.load({IN[i]} + {IN[i]}_off + (p * {IN[i]}_sr)"
                    f"[None, :], mask=m, other=0).to({compute_dtype(a)})")
        env[a] = var(a)
    for m in prologue:
        body.append(ind + lower_pointwise(m, env))
        env[m] = var(m)
    dtype = val(x).dtype
    xv = f"{env[x]}.to({tl_dtype(x)})"
    if dtype in _FLOATS:  # ranked as the value PyTorch would hold
        xv += ".to(tl.float32)"
    body += [ind + line for line in _ranked(xv, dtype, largest)]
    nan_first = mode == "median" and dtype in _FLOATS  # a row with a NaN: its first NaN
    if nan_first:
        body.append(f"{ind}nan_i = tl.minimum(nan_i, tl.min(tl.where(m & (xf != xf), "
                    "p[None, :].to(tl.int64), 2**62), axis=1))")
    body += [
        f"{ind}worst = tl.min(tl.where(slot, buf, HIGHK), axis=1)",
        f"{ind}c = tl.where(c > worst[:, None], c, LOW)",
        f"{ind}n = tl.minimum(tl.max(tl.sum((c > LOW).to(tl.int32), axis=1)), KTOP)",
        f"{ind}for _ in range(n):",  # the chunk's best candidates, into the buffer's worst
        f"{ind}    best = tl.max(c, axis=1)",
        f"{ind}    worst = tl.min(tl.where(slot, buf, HIGHK), axis=1)",
        f"{ind}    into = (buf == worst[:, None]) & slot & (best > worst)[:, None]",
        f"{ind}    buf = tl.where(into, best[:, None], buf)",
        f"{ind}    c = tl.where(c == best[:, None], LOW, c)",
        "    sel = LOWK",
        "    for j in range(KTOP):",  # the buffer in rank order
        "        best = tl.max(tl.where(slot, buf, LOWK), axis=1)",
        "        sel = tl.where(kk[None, :] == j, best[:, None], sel)",
        "        buf = tl.where(buf == best[:, None], LOWK, buf)",
    ]
    body += ["    " + line for line in _unranked(dtype, largest)]
    if nan_first:
        body += ["    has_nan = (nan_i < 2**62)[:, None]",
                 "    ov = tl.where(has_nan, float('nan'), ov)",
                 "    oi = tl.where(has_nan, nan_i[:, None], oi)"]
    body.append("    om = rmask[:, None] & slot")
    at = "kk"
    if single:  # only the last of the k, at position 0 of a size-1 dim
        body.append("    om = om & (kk == KTOP - 1)[None, :]")
        at = "(kk - (KTOP - 1))"
    for i, o in enumerate(outs):
        v = "ov" if o.args[1] == 0 else "oi"
        body.append(f"    tl.store({OUT[i]} + {OUT[i]}_off + ({at} * {OUT[i]}_sr)[None, :], "
                    f"{v}.to({tl_dtype(o)}), mask=om)")
    source = f"@triton.jit\ndef {kname}({', '.join(params)}):\n" + "\n".join(body)

    # ---- wrapper: the selected dim last in every view, rows coalesced
    w = [f"def {wname}({', '.join(IN + SC)}):",
         f"    dom = _kc_broadcast({', '.join(a + '.shape' for a in IN)})",
         f"    d = {d}",
         "    k = " + {"sort": "dom[d]", "median": "(dom[d] + 1) // 2"}.get(
             mode, f"int({SC[scalars.index(k)]})" if runtime_k else str(k)),
         f"    if len(dom) != {len(dom)}:",
         f"        raise ValueError(f'kernelcraft: a top-k over a {len(dom)}-d domain, got "
         "{len(dom)}-d')",
         "    if k > dom[d]:",
         "        raise RuntimeError(f'kernelcraft: top-k of {k} along a dim of {dom[d]}')",
         "    oshape = list(dom)",
         f"    oshape[d] = {'1' if single else 'k'}",
         f"    dev = {IN[0]}.device"]
    if is_sort:  # rows too long for a buffer in registers: the library's sort
        picks = ", ".join(f"s[{o.args[1]}]" for o in outs)
        w += [f"    if k > {MAX_SORT}:",
              f"        s = torch.sort({IN[0]}, dim=d, descending={largest}, stable=True)",
              f"        return ({picks},)"]
    if runtime_k:  # past the register buffer: the library's radix select
        picks = ", ".join(f"s[{o.args[1]}]" for o in outs)
        w += [f"    if k > {MAX_K}:",
              f"        s = torch.topk({IN[0]}, k, dim=d, largest={largest}, sorted=True)",
              f"        return ({picks},)"]
    if mode == "median":
        picks = ", ".join(f"s[{o.args[1]}]" for o in outs)
        w += [f"    if k > {MAX_SORT}:",
              f"        s = torch.median({IN[0]}, dim=d, keepdim={keepdim(n)})",
              f"        return ({picks},)"]
    for i, o in enumerate(outs):
        w.append(f"    {OUT[i]} = torch.empty(oshape, dtype={val(o).dtype}, device=dev)")
    ret = "(" + "".join((o if not single or keepdim(n) else f"{o}.squeeze(d)") + ", "
                        for o in OUT) + ")"
    w += [f"    if _kc_prod(oshape) == 0:\n        return {ret}",
          f"    views = [{', '.join([f'{t}.expand(dom)' for t in IN] + OUT)}]",
          "    kp = _kc_next_pow2(k)"]
    w += row_walk_launch(kname, wname, SC,
                         "_kc_topk_config(nrows, rsz, kp, inner, dev.type == 'cpu')", "dev",
                         "views[0]", "KTOP=k, KP=kp, ")
    w.append(f"    return {ret}")
    sig = launch_signature(params, dict(zip(IN + OUT, loads + outs, strict=True)),
                           dict(zip(SC, scalars, strict=True)))
    nrows = math.prod(hint(s) for i, s in enumerate(dom) if i != d)
    khint = min(hint(val(k)), MAX_K) if runtime_k else hint(k)
    kp = _kc_next_pow2(khint)
    inner = d == len(dom) - 1  # as captured: contiguous
    bk, br, warps = _kc_topk_config(nrows, hint(dom[d]), kp, inner, False)
    cfg = {"template": "topk",
           "topk": (f"sort {'descending' if largest else 'ascending'} along dim {d}" if is_sort
                    else f"{mode} along dim {d}" if single
                    else f"{k} {'largest' if largest else 'smallest'} along dim {d}"),
           "BLOCK_K": bk, "BLOCK_R": br, "num_warps": warps,
           "at": {"key": [nrows, hint(dom[d])], "inner": inner, "KP": kp}}
    return KernelSource(kname, wname, source, "\n".join(w), loads + scalars, outs, cfg, [],
                        signature=sig,
                        constexprs={"NDIM": 2, "KTOP": khint, "KP": kp, "BLOCK_K": bk,
                                    "BLOCK_R": br},
                        num_warps=warps)
