"""Scan template: cumulative sums and products along one dim, with their neighbours fused.

The domain splits into rows (every dim but the scanned one, linear index ``k < K``,
decomposed at runtime so any layout works) and the scanned dim (``p < R``). Each program
takes BLOCK_K rows and walks R in chunks of BLOCK_R: ``tl.cumsum`` (``tl.cumprod``) of a
chunk plus the carry of the chunks before it, so one pass reads each input and writes each
output once. The pointwise ops that feed only the scan (the prologue) and those on its
output (the epilogue) run on the chunk in registers.

A ``flip`` along the scanned dim right before the scan, and one right after it, join the
group as a reversed index (``R - 1 - p``) on the loads and stores they affect: a suffix sum
written ``flip(cumsum(flip(x)))`` is one kernel that never materialises a flipped copy.

Knobs, chosen by the wrapper from the layout: BLOCK_K, BLOCK_R, num_warps (rows side by
side when the scanned dim is not innermost in memory, long chunks when it is).
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
    opmath,
    row_walk_head,
    row_walk_launch,
    row_walk_params,
    tl_dtype,
    var,
)
from kernelcraft.codegen.ops import op_name
from kernelcraft.codegen.runtime import _kc_scan_config
from kernelcraft.plan import Group, hint, inline_constant, is_tensor_node, val

#: scan op -> its combine: sums, products, log-sum-exp (``logcumsumexp``, whose combine
#: is ``_kc_logaddexp``), and running max / min with their indices (``cummax``, ``cummin``)
SCANS = {"cumsum": "sum", "cumprod": "prod", "logcumsumexp": "logsumexp", "cummax": "max",
         "cummin": "min"}
#: scans returning (values, indices): their results are read through getitem members
PAIRED = ("max", "min")
_FLOATS = (torch.float32, torch.float16, torch.bfloat16)
#: integer and bool scans accumulate in int64, as PyTorch's (position ids, offsets)
_INTS = (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool)


def scan_dim(n: fx.Node) -> int:
    d = n.args[1] if len(n.args) > 1 else n.kwargs["dim"]
    return int(d) % max(val(n.args[0]).dim(), 1)


def scan_supported(n: fx.Node) -> str | None:
    """Why the template cannot take scan node ``n`` (None: it can)."""
    x = n.args[0]
    if not is_tensor_node(x) or val(x).dtype not in _FLOATS + _INTS:
        return f"a scan of a {val(x).dtype if is_tensor_node(x) else 'non-tensor'} value"
    if SCANS[op_name(n.target)] in PAIRED and val(x).dtype not in _FLOATS + _INTS[:-1]:
        return f"{op_name(n.target)} of a {val(x).dtype} tensor"
    if n.kwargs.get("dtype") is not None or len(n.args) > 2:
        return "a scan with an output dtype"
    if val(x).dim() == 0:
        return "a scan of a scalar"
    if SCANS[op_name(n.target)] == "logsumexp" and val(x).dtype not in _FLOATS:
        return "logcumsumexp of an integer tensor"
    return None


def is_flip_along(n: Any, dim: int) -> bool:
    """Whether ``n`` is ``flip`` along exactly ``dim`` (of a tensor of n's rank)."""
    if not isinstance(n, fx.Node) or n.op != "call_function" or op_name(n.target) != "flip":
        return False
    dims = n.args[1] if len(n.args) > 1 else n.kwargs.get("dims")
    rank = val(n).dim()
    return [int(d) % rank for d in dims] == [dim]


def _lower(m: fx.Node, env: dict[fx.Node, str]) -> str:
    """A member's statement: a flip only moves values (its indices are the loads' and
    stores'), anything else is a pointwise op."""
    if op_name(m.target) == "flip":
        return f"{var(m)} = {env[m.args[0]]}"
    return lower_pointwise(m, env)


def _store(ind: str, ptr: str, o: fx.Node, reverse: bool) -> str:
    return (f"{ind}tl.store({ptr} + {ptr}_off + ({'pf' if reverse else 'p'} * {ptr}_sr)"
            f"[None, :], {var(o)}.to({tl_dtype(o)}), mask=m)")


def emit_scan(g: Group, target: Any = None) -> KernelSource:
    """One scan kernel with g's flips, prologue and epilogue fused, and its wrapper."""
    n = g.anchor
    if n is None:
        raise NotImplementedError("scan group without an anchor")
    why = scan_supported(n)
    if why:
        raise NotImplementedError(why)
    d = scan_dim(n)
    kind = SCANS[op_name(n.target)]
    paired = kind in PAIRED
    dom = tuple(val(n.args[0]).shape)
    members = set(g.nodes)
    order = {m: i for i, m in enumerate(g.nodes)}
    x = n.args[0]
    in_flip = x if x in members and is_flip_along(x, d) else None
    out_flip = next((m for m in g.nodes if order[m] > order[n] and is_flip_along(m, d)), None)
    # tensor index of each member's values at scan position p: reversed before an input
    # flip and after an output flip
    if paired and (in_flip is not None or out_flip is not None):
        raise NotImplementedError(f"{op_name(n.target)} next to a flip")
    rev: dict[fx.Node, bool] = {}
    for m in g.nodes:
        if m is n and paired:
            rev[m] = False
            continue
        if tuple(val(m).shape) != dom and not inline_constant(m):  # (literals broadcast)
            raise NotImplementedError(f"{m.name} is not on the scanned domain")
        if order[m] < order[n]:
            rev[m] = in_flip is not None and m is not in_flip
        else:
            rev[m] = out_flip is not None and order[m] >= order[out_flip]
        if op_name(m.target) == "flip" and m not in (in_flip, out_flip):
            raise NotImplementedError(f"{m.name}: a flip the template does not fuse")
    prologue = [m for m in g.nodes if order[m] < order[n]]
    epilogue = [m for m in g.nodes if order[m] > order[n]]
    loads: list[fx.Node] = []
    scalars: list[fx.Node] = []
    load_rev: dict[fx.Node, bool] = {}
    for m in g.nodes:
        for a in m.all_input_nodes:
            if a in members:
                continue
            if is_tensor_node(a):
                r = True if m is in_flip else rev[m]
                if a in load_rev and load_rev[a] != r:
                    raise NotImplementedError(f"{a.name} is read in both directions")
                load_rev[a] = r
                if a not in loads:
                    loads.append(a)
            elif a not in scalars:
                scalars.append(a)
    for a in loads:
        if val(a).dim() > len(dom):
            raise NotImplementedError(f"operand {a.name} has a higher rank")
    outs = list(g.outputs)
    kname, wname = f"_kc_{g.name}_kernel", f"_kc_{g.name}"
    IN = [f"in{i}" for i in range(len(loads))]
    OUT = [f"out{i}" for i in range(len(outs))]
    SC = [f"sc{i}" for i in range(len(scalars))]
    params = row_walk_params(IN, OUT, SC, ["BLOCK_K", "BLOCK_R"])
    body = row_walk_head(IN + OUT)
    integer = val(x).dtype in _INTS
    acc = "tl.int64" if integer else "tl.float32"
    ident = ("0" if kind == "sum" else "1") if integer else (
        {"sum": "0.0", "prod": "1.0"}.get(kind, "float('-inf')"))
    if paired:  # values as they are (ints exact); masked lanes never win
        acc = compute_dtype(x)
        ident = "0"
    body += [f"    carry = tl.full([BLOCK_K], {ident}, {acc})",
             "    carry_i = tl.full([BLOCK_K], -1, tl.int64)",
             "    for c in range(0, R, BLOCK_R):",
             "        p = c + tl.arange(0, BLOCK_R)",
             "        m = rmask[:, None] & (p < R)[None, :]",
             "        pf = R - 1 - p"]

    def pos(t: str, reverse: bool) -> str:
        return f"{t}_off + ({'pf' if reverse else 'p'} * {t}_sr)[None, :]"

    env: dict[fx.Node, str] = {s: SC[i] for i, s in enumerate(scalars)}
    ind = "        "
    pro_loads = [a for a in loads if any(a in m.all_input_nodes for m in prologue + [n])]
    for a in pro_loads:
        i = loads.index(a)
        body.append(f"{ind}{var(a)} = tl.load({IN[i]} + {pos(IN[i], load_rev[a])}, mask=m, "
                    f"other={ident}).to({compute_dtype(a)})")
        env[a] = var(a)
    for m in prologue:
        body.append(ind + _lower(m, env))
        env[m] = var(m)
    if kind == "logsumexp":  # the chunk's running log-sum-exp, then the carry in
        scan = ("_kc_logaddexp(tl.associative_scan(s, 1, _kc_logaddexp), "
                "carry[:, None])")
    else:
        scan = (f"{'tl.cumsum' if kind == 'sum' else 'tl.cumprod'}(s, axis=1) "
                f"{'+' if kind == 'sum' else '*'} carry[:, None]")
    zero = "0" if integer else "0.0"
    if paired:  # the chunk's running (value, index), then the carry's pair in front of it
        comb = f"_kc_cum{kind}_combine"
        body += [f"{ind}s = {env[x]}.to({acc})",
                 f"{ind}si = tl.broadcast_to(p[None, :], s.shape)",
                 f"{ind}y, yi = tl.associative_scan((s, si), 1, {comb})",
                 f"{ind}cv = tl.broadcast_to(carry[:, None], s.shape)",
                 f"{ind}ci = tl.broadcast_to(carry_i[:, None], s.shape)",
                 f"{ind}fy, fyi = {comb}(cv, ci, y, yi)",
                 f"{ind}y = tl.where(ci >= 0, fy, y)",  # no carry before the first chunk
                 f"{ind}yi = tl.where(ci >= 0, fyi, yi)",
                 f"{ind}last = tl.minimum(c + BLOCK_R, R) - 1",
                 f"{ind}at = (p == last)[None, :]",
                 f"{ind}carry = tl.sum(tl.where(at, y, {zero}), axis=1).to({acc})",
                 f"{ind}carry_i = tl.sum(tl.where(at, yi, 0), axis=1)"]
        for m in g.nodes:  # the getitems: values, indices
            if m.target is operator.getitem and m.args[0] is n:
                body.append(f"{ind}{var(m)} = {'y' if m.args[1] == 0 else 'yi'}"
                            f".to({tl_dtype(m)})")
                env[m] = opmath(m)
    body += [] if paired else [f"{ind}s = tl.where(m, {env[x]}.to({acc}), {ident})",
             f"{ind}y = {scan}",
             f"{ind}last = tl.minimum(c + BLOCK_R, R) - 1",
             f"{ind}carry = tl.sum(tl.where((p == last)[None, :], y, {zero}), axis=1)",
             f"{ind}{var(n)} = y.to({tl_dtype(n)})"]
    if not paired:
        env[n] = opmath(n)
    epi_loads = [a for a in loads if a not in pro_loads]
    for o in outs:
        if o in prologue:
            body.append(_store(ind, OUT[outs.index(o)], o, rev[o]))
    if n in outs:
        body.append(_store(ind, OUT[outs.index(n)], n, False))
    for m in epilogue:  # operands loaded right before their first use
        if m.target is operator.getitem and m.args[0] is n:  # computed with the scan
            if m in outs:
                body.append(_store(ind, OUT[outs.index(m)], m, rev[m]))
            continue
        for a in m.all_input_nodes:
            if a in epi_loads and a not in env:
                i = loads.index(a)
                body.append(f"{ind}{var(a)} = tl.load({IN[i]} + {pos(IN[i], load_rev[a])}, "
                            "mask=m, other=0)")
                env[a] = opmath(a)
        body.append(ind + _lower(m, env))
        env[m] = opmath(m)
        if m in outs:
            body.append(_store(ind, OUT[outs.index(m)], m, rev[m]))
    source = f"@triton.jit\ndef {kname}({', '.join(params)}):\n" + "\n".join(body)

    # ---- wrapper: scanned dim last in every view, rows coalesced
    w = [f"def {wname}({', '.join(IN + SC)}):",
         f"    dom = _kc_broadcast({', '.join(a + '.shape' for a in IN)})",
         f"    d = {d}",
         f"    if len(dom) != {len(dom)}:",
         f"        raise ValueError(f'kernelcraft: a scan over a {len(dom)}-d domain, got "
         "{len(dom)}-d')",
         f"    ref = {IN[loads.index(x)] if x in loads else IN[0]}.expand(dom)"]
    for i, o in enumerate(outs):
        w.append(f"    {OUT[i]} = torch.empty_like(ref, dtype={val(o).dtype})")
    w += [f"    if ref.numel() == 0:\n        return ({', '.join(OUT)},)",
          f"    views = [{', '.join([f'{t}.expand(dom)' for t in IN] + OUT)}]"]
    w += row_walk_launch(kname, wname, SC,
                         "_kc_scan_config(nrows, rsz, inner, ref.device.type == 'cpu')",
                         "ref.device", "ref")
    w.append(f"    return ({', '.join(OUT)},)")
    sig = launch_signature(params, dict(zip(IN + OUT, loads + outs, strict=True)),
                           dict(zip(SC, scalars, strict=True)))
    nrows = math.prod(hint(s) for i, s in enumerate(dom) if i != d)
    rsz = hint(dom[d])
    inner = len(dom) - 1 == d  # as captured: contiguous
    bk, br, warps = _kc_scan_config(nrows, rsz, inner, False)
    cfg = {"template": "scan", "scan": f"{kind} along dim {d}"
           + (", reversed" if in_flip is not None or out_flip is not None else ""),
           "BLOCK_K": bk, "BLOCK_R": br, "num_warps": warps,
           "at": {"key": [nrows, rsz], "inner": inner}}
    notes = []
    if in_flip is not None or out_flip is not None:
        notes.append("flip along the scanned dim fused as reversed indexing")
    return KernelSource(kname, wname, source, "\n".join(w), loads + scalars, outs, cfg, notes,
                        signature=sig, constexprs={"NDIM": 2, "BLOCK_K": bk, "BLOCK_R": br},
                        num_warps=warps)
