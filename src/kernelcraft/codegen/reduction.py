"""Reduction template ("row"): reductions over one set of dims of a domain, fused.

A reduction group computes, on one domain, pointwise nodes in *full* context (shape = the
domain), reductions over ``g.rdims``, and pointwise nodes in *reduced* context (shape = the
domain with the reduced dims set to 1 or removed). The domain splits into kept dims (rows,
linear index ``k < K``) and reduced dims (linear index ``r < R``); both are decomposed
into multi-indices at runtime, so any set of reduced dims and any operand layout works.

Each program takes BLOCK_K rows. A reduction whose input depends on p earlier reductions
runs in pass p + 1; every pass is one loop over R in chunks of BLOCK_R that recomputes the
full-context nodes it needs (inputs are loaded again: a row just read is mostly in cache)
and accumulates elementwise into a [BLOCK_K, BLOCK_R] fp32 tile, reduced across lanes at
the end of the pass. Reduced-context nodes run between passes on [BLOCK_K, 1] values;
full-context outputs are stored in the first pass where every value they need exists.
Knobs (chosen at runtime from the sizes): BLOCK_K, BLOCK_R, num_warps.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
import torch.fx as fx

from kernelcraft.codegen.common import (
    MAX_RANK,
    KernelSource,
    lower_pointwise,
    offset_lines,
    tl_dtype,
)
from kernelcraft.codegen.ops import REDUCTIONS, op_name
from kernelcraft.plan import Group, is_tensor_node, reduction_dims, shape_key, val

#: Triton helpers of this template (emitted with every reduction kernel; identical text,
#: so a module with several reduction groups just redefines them).
_HELPERS = '''
@triton.jit
def _kc_rmax(a, b):
    # max that propagates NaN (torch.amax semantics)
    return tl.where((a > b) | (a != a), a, b)


@triton.jit
def _kc_rmin(a, b):
    return tl.where((a < b) | (a != a), a, b)


@triton.jit
def _kc_argmax_combine(va, ia, vb, ib):
    # order: valid index first, then NaN above every number, larger value, smaller index
    a_nan = va != va
    better = (va > vb) | (a_nan & (vb == vb))
    same = (va == vb) | (a_nan & (vb != vb))
    pick = better | (same & (ia < ib))
    pick = (pick & (ia >= 0)) | (ib < 0)
    return tl.where(pick, va, vb), tl.where(pick, ia, ib)


@triton.jit
def _kc_argmin_combine(va, ia, vb, ib):
    a_nan = va != va
    better = (va < vb) | (a_nan & (vb == vb))
    same = (va == vb) | (a_nan & (vb != vb))
    pick = better | (same & (ia < ib))
    pick = (pick & (ia >= 0)) | (ib < 0)
    return tl.where(pick, va, vb), tl.where(pick, ia, ib)
'''

#: Tile policy, read by the wrapper at runtime (see runtime._kc_row_config).
CPU_TILE = 16384  # interpreter: few large programs
CPU_BLOCK_R = 4096
GPU_TILE = 4096
GPU_BLOCK_R = 4096
GPU_BLOCK_K_COLUMNS = 64  # kept dim innermost in memory: rows side by side


@dataclass
class _Op:
    """A strided view the kernel addresses: an input in one context, or an output."""

    name: str  # stride stem
    ptr: str  # kernel pointer argument
    ctx: str  # full | keep | drop
    view: str  # wrapper expression of the view


@dataclass
class _Analysis:
    ctx: dict[fx.Node, str] = field(default_factory=dict)  # member -> full | keep | drop
    ready: dict[fx.Node, int] = field(default_factory=dict)  # reduced member -> pass done
    need: dict[fx.Node, int] = field(default_factory=dict)  # full member -> first pass
    reds: list[fx.Node] = field(default_factory=list)
    npasses: int = 1
    pass_nodes: dict[int, list[fx.Node]] = field(default_factory=dict)  # full nodes per pass


def _fail(msg: str) -> None:
    raise NotImplementedError(msg)


def _analyse(g: Group) -> _Analysis:
    dom, rd = g.domain, g.rdims
    keep = tuple("1" if i in rd else s for i, s in enumerate(dom))
    drop = tuple(s for i, s in enumerate(dom) if i not in rd)
    leading = tuple(rd) == tuple(range(len(rd)))  # drop form broadcasts like keep form
    members = set(g.nodes)
    an = _Analysis()
    for n in g.nodes:
        name = op_name(n.target)
        if not isinstance(val(n), torch.Tensor):
            _fail(f"{n.name}: non-tensor member")
        s = shape_key(val(n).shape)
        if name in REDUCTIONS:
            dims, _ = reduction_dims(n)
            if dims != tuple(rd):
                _fail(f"{n.name}: reduces dims {dims}, the group reduces {tuple(rd)}")
            x = n.args[0]
            if shape_key(val(x).shape) != dom:
                _fail(f"{n.name}: reduction input is not on the domain")
            if x in members and an.ctx[x] != "full":
                _fail(f"{n.name}: reduction of a reduced value")
            an.ctx[n] = "keep" if s == keep else "drop" if s == drop else ""
            if not an.ctx[n]:
                _fail(f"{n.name}: reduction result shape {s} is not a kept shape")
            an.ready[n] = an.need[x] if x in members else 1
            an.reds.append(n)
            continue
        if s == dom:
            an.ctx[n] = "full"
        elif s == keep:
            an.ctx[n] = "keep"
        elif s == drop:
            an.ctx[n] = "drop"
        else:
            _fail(f"{n.name}: shape {s} is neither the domain nor a kept shape")
        full = an.ctx[n] == "full"
        level = 1 if full else 0
        for a in n.all_input_nodes:
            if a not in members:
                continue
            actx = an.ctx[a]
            if actx == "full":
                if not full:
                    _fail(f"{n.name}: a reduced-context node reads a full-context value")
                level = max(level, an.need[a])
                continue
            if actx == "drop" and an.ctx[n] != "drop" and not leading:
                _fail(f"{n.name}: broadcasts a reduced value without its reduced dims")
            if actx == "keep" and an.ctx[n] == "drop":
                _fail(f"{n.name}: mixes keepdim and dropped reduced values")
            level = max(level, an.ready[a] + 1 if full else an.ready[a])
        if full:
            an.need[n] = level
        else:
            an.ready[n] = level
    if not an.reds:
        _fail("a reduction group without a reduction")
    full_outs = [o for o in g.outputs if an.ctx[o] == "full"]
    an.npasses = max([an.ready[r] for r in an.reds] + [an.need[o] for o in full_outs])
    # full-context nodes each pass computes: reduction inputs and outputs stored there
    for p in range(1, an.npasses + 1):
        roots = [r.args[0] for r in an.reds if an.ready[r] == p and r.args[0] in members]
        roots += [o for o in full_outs if an.need[o] == p]
        todo, seen = list(roots), set()
        while todo:
            n = todo.pop()
            if n in seen:
                continue
            seen.add(n)
            todo += [a for a in n.all_input_nodes if a in members and an.ctx[a] == "full"]
        an.pass_nodes[p] = [n for n in g.nodes if n in seen]
    return an


def _decompose(idx: str, prefix: str, sizes: str, ndim: str, rem: str,
               indent: str) -> list[str]:
    """Linear index -> per-dim indices (innermost last); the outermost dim needs no modulo."""
    r = MAX_RANK
    lines = [f"{indent}{rem} = {idx}"]
    for d in reversed(range(r)):
        lines.append(f"{indent}if {ndim} > {r - 1 - d}:")
        lines.append(f"{indent}    if {ndim} == {r - d}:")
        lines.append(f"{indent}        {prefix}{d} = {rem}")
        lines.append(f"{indent}    else:")
        lines.append(f"{indent}        {prefix}{d} = {rem} % {sizes}{d}")
        lines.append(f"{indent}        {rem} = {rem} // {sizes}{d}")
    return lines


def _rhs(line: str) -> str:
    return line.split(" = ", 1)[1]


def emit_reduction(g: Group, target: Any = None) -> KernelSource:
    an = _analyse(g)
    dom, rd = g.domain, tuple(g.rdims)
    rank = len(dom)
    members = set(g.nodes)
    kname, wname = f"_kc_{g.name}_kernel", f"_kc_{g.name}"
    tensors = [a for a in g.inputs if is_tensor_node(a)]
    scalars = [a for a in g.inputs if not is_tensor_node(a)]
    for a in scalars:
        if not isinstance(val(a), (int, float, torch.SymInt, torch.SymFloat)):
            _fail(f"{a.name}: an input that is neither a tensor nor a number")
    in_name = {a: f"in{i}" for i, a in enumerate(tensors)}
    sc_name = {a: f"sc{i}" for i, a in enumerate(scalars)}
    outs = list(g.outputs)
    out_name = {o: f"out{j}" for j, o in enumerate(outs)}

    # ---- which (input, context) views the kernel reads
    needed: set[fx.Node] = set()  # member nodes computed somewhere
    for p in range(1, an.npasses + 1):
        needed |= set(an.pass_nodes[p])
    needed |= {n for n in g.nodes if an.ctx[n] != "full"}
    uses: dict[fx.Node, set[str]] = {a: set() for a in tensors}
    for n in g.nodes:
        if n not in needed:
            continue
        if n in an.reds:
            x = n.args[0]
            if x not in members:
                uses[x].add("full")
            continue
        for a in n.all_input_nodes:
            if a in uses:
                uses[a].add(an.ctx[n])
    full_ins = [a for a in tensors if "full" in uses[a]]
    if not full_ins:
        _fail("no full-context tensor input to derive the domain from")
    _check_domain(dom, full_ins)

    full_ops: list[_Op] = []
    red_ops: list[_Op] = []
    op_of: dict[tuple[fx.Node, str], _Op] = {}
    for a in tensors:
        nm = in_name[a]
        for ctx, view in (("full", f"{nm}.expand(shape)"), ("keep", f"{nm}.expand(keep)"),
                          ("drop", f"_kc_unsqueeze_dims({nm}.expand(drop), rdims)")):
            if ctx in uses[a]:
                op = _Op(f"{nm}{ctx[0]}", nm, ctx, view)
                op_of[(a, ctx)] = op
                (full_ops if ctx == "full" else red_ops).append(op)
    for o in outs:
        nm = out_name[o]
        ctx = an.ctx[o]
        view = f"_kc_unsqueeze_dims({nm}, rdims)" if ctx == "drop" else nm
        op = _Op(nm, nm, ctx, view)
        op_of[(o, "out")] = op
        (full_ops if ctx == "full" else red_ops).append(op)
    kept_ops = full_ops + red_ops

    # ---- kernel
    R = MAX_RANK
    params = [in_name[a] for a in tensors] + [out_name[o] for o in outs]
    params += [sc_name[a] for a in scalars] + ["K", "R"]
    params += [f"ksize{d}" for d in range(R)] + [f"rsize{d}" for d in range(R)]
    for op in kept_ops:
        params += [f"{op.name}_ks{d}" for d in range(R)]
    for op in full_ops:
        params += [f"{op.name}_rs{d}" for d in range(R)]
    params += ["KDIM: tl.constexpr", "RDIM: tl.constexpr", "BLOCK_K: tl.constexpr",
               "BLOCK_R: tl.constexpr"]
    I1 = "    "
    I2 = "        "
    body = [
        f"{I1}pid = tl.program_id(0).to(tl.int64)",
        f"{I1}rows = pid * BLOCK_K + tl.arange(0, BLOCK_K)[:, None]",
        f"{I1}rmask = rows < K",
    ]
    body += _decompose("rows", "ki", "ksize", "KDIM", "_krem", I1)
    for op in kept_ops:
        body += offset_lines(f"koff_{op.name}", "ki", f"{op.name}_ks", R, "KDIM",
                             "rows * 0", I1)

    red_val: dict[fx.Node, str] = {}  # reduced member -> [BLOCK_K, 1] variable

    def load_reduced() -> None:
        for op in red_ops:
            if op.ptr.startswith("in"):
                body.append(f"{I1}x_{op.name} = tl.load({op.ptr} + koff_{op.name}, "
                            f"mask=rmask, other=0)")

    def operand(a: Any, consumer_ctx: str, pass_vals: dict[fx.Node, str]) -> str | None:
        if a in sc_name:
            return sc_name[a]
        if a in in_name:
            return f"x_{op_of[(a, consumer_ctx)].name}"
        if a in red_val:
            return red_val[a]
        return pass_vals.get(a)

    def lower(n: fx.Node, ctx: str, pass_vals: dict[fx.Node, str], suffix: str) -> str:
        env: dict[fx.Node, str] = {}
        for a in n.all_input_nodes:
            expr = operand(a, ctx, pass_vals)
            if expr is None:
                raise AssertionError(f"{a.name} not available for {n.name}")
            if a in in_name and ctx == "full":
                expr = f"{expr}{suffix}"
            env[a] = expr
        return _rhs(lower_pointwise(n, env))

    def reduced_after(level: int) -> None:
        for n in g.nodes:
            if an.ctx[n] == "full" or n in an.reds or an.ready[n] != level:
                continue
            v = f"v_{n.name}"
            body.append(f"{I1}{v} = {lower(n, an.ctx[n], {}, '')}")
            red_val[n] = v
        for o in outs:
            if an.ctx[o] != "full" and an.ready[o] == level:
                op = op_of[(o, "out")]
                body.append(f"{I1}tl.store({op.ptr} + koff_{op.name}, "
                            f"{red_val[o]}.to({tl_dtype(o)}), mask=rmask)")

    load_reduced()
    reduced_after(0)
    for p in range(1, an.npasses + 1):
        sfx = f"_p{p}"
        reds = [r for r in an.reds if an.ready[r] == p]
        nodes = an.pass_nodes[p]
        stores = [o for o in outs if an.ctx[o] == "full" and an.need[o] == p]
        ins: list[fx.Node] = []
        for n in nodes:
            ins += [a for a in n.all_input_nodes if a in in_name and a not in ins]
        ins += [r.args[0] for r in reds if r.args[0] in in_name and r.args[0] not in ins]
        body.append(f"{I1}# pass {p}: " + ", ".join(
            [op_name(r.target) + f"({r.name})" for r in reds] + [f"store {o.name}" for o in stores]))
        for r in reds:
            kind = op_name(r.target)
            if kind in ("argmax", "argmin"):
                body.append(f"{I1}accv_{r.name} = tl.full([BLOCK_K, BLOCK_R], "
                            f"{REDUCTIONS[kind]}, tl.float32)")
                body.append(f"{I1}acci_{r.name} = tl.full([BLOCK_K, BLOCK_R], -1, tl.int64)")
            else:
                body.append(f"{I1}acc_{r.name} = tl.full([BLOCK_K, BLOCK_R], "
                            f"{REDUCTIONS[kind]}, tl.float32)")
        body.append(f"{I1}for r0{sfx} in range(0, R, BLOCK_R):")
        body.append(f"{I2}cols{sfx} = r0{sfx} + tl.arange(0, BLOCK_R)[None, :]")
        body.append(f"{I2}mask{sfx} = rmask & (cols{sfx} < R)")
        body += _decompose(f"cols{sfx}", f"rj{sfx}_", "rsize", "RDIM", f"_rrem{sfx}", I2)
        for op in [op_of[(a, "full")] for a in ins] + [op_of[(o, "out")] for o in stores]:
            body += offset_lines(f"roff_{op.name}{sfx}", f"rj{sfx}_", f"{op.name}_rs", R,
                                 "RDIM", f"(cols{sfx} * 0).to(tl.int64)", I2)
        for a in ins:
            op = op_of[(a, "full")]
            body.append(f"{I2}x_{op.name}{sfx} = tl.load({op.ptr} + (koff_{op.name} + "
                        f"roff_{op.name}{sfx}), mask=mask{sfx}, other=0)")
        pass_vals: dict[fx.Node, str] = {}
        for n in nodes:
            v = f"v_{n.name}{sfx}"
            body.append(f"{I2}{v} = {lower(n, 'full', pass_vals, sfx)}")
            pass_vals[n] = v
        for r in reds:
            x = r.args[0]
            xv = pass_vals[x] if x in members else f"x_{op_of[(x, 'full')].name}{sfx}"
            body += _accumulate(r, f"{xv}.to(tl.float32)", sfx, I2)
        for o in stores:
            op = op_of[(o, "out")]
            body.append(f"{I2}tl.store({op.ptr} + (koff_{op.name} + roff_{op.name}{sfx}), "
                        f"{pass_vals[o]}.to({tl_dtype(o)}), mask=mask{sfx})")
        for r in reds:
            body += _finish(r)
            red_val[r] = f"v_{r.name}"
        reduced_after(p)
    source = (_HELPERS.strip() + "\n\n\n@triton.jit\ndef " + kname + "(" + ", ".join(params)
              + "):\n" + "\n".join(body))

    # ---- wrapper
    args = [in_name[a] for a in tensors] + [sc_name[a] for a in scalars]
    w = [f"def {wname}({', '.join(args)}):"]
    w.append(f"    dev = {in_name[tensors[0]]}.device")
    w.append(f"    shape = _kc_row_domain([{', '.join(in_name[a] + '.shape' for a in full_ins)}],"
             f" {rank})")
    w.append(f"    rdims = {rd!r}")
    w.append("    keep = [1 if d in rdims else s for d, s in enumerate(shape)]")
    w.append("    drop = [s for d, s in enumerate(shape) if d not in rdims]")
    w.append("    K = _kc_prod(drop)")
    w.append("    R = _kc_prod(shape[d] for d in rdims)")
    for o in outs:
        shp = {"full": "shape", "keep": "keep", "drop": "drop"}[an.ctx[o]]
        w.append(f"    {out_name[o]} = torch.empty({shp}, device=dev, dtype={val(o).dtype})")
    ret = f"({', '.join(out_name[o] for o in outs)},)"
    w.append(f"    if K == 0:\n        return {ret}")
    w.append(f"    fviews = [{', '.join(op.view for op in full_ops)}]")
    w.append(f"    rviews = [{', '.join(op.view for op in red_ops)}]")
    w.append("    ksz, kst, kdim, rsz, rst, rdim = _kc_split_coalesce(shape, rdims, fviews, "
             "rviews)")
    w.append(f"    bk, br, warps = _kc_row_config(K, R, kst, kdim, rst, rdim, dev.type == 'cpu', "
             f"{_policy()!r})")
    w.append("    grid = (triton.cdiv(K, bk),)")
    kargs = [in_name[a] for a in tensors] + [out_name[o] for o in outs]
    kargs += [sc_name[a] for a in scalars] + ["K", "R", "*ksz", "*rsz"]
    w.append(f"    {kname}[grid]({', '.join(kargs)}, *[s for st in kst for s in st], "
             "*[s for st in rst for s in st], KDIM=kdim, RDIM=rdim, BLOCK_K=bk, BLOCK_R=br, "
             "num_warps=warps)")
    w.append(f"    return {ret}")

    cfg: dict[str, Any] = {"template": "row", "passes": an.npasses, **_policy()}
    cfg["at_capture_sizes"] = _capture_config(g, an)
    notes = [f"{an.npasses} pass(es) over the reduced dims; full-context inputs are loaded "
             "again in every pass"]
    return KernelSource(kname, wname, source, "\n".join(w), tensors + scalars, outs, cfg, notes)


def _accumulate(r: fx.Node, x: str, sfx: str, ind: str) -> list[str]:
    kind = op_name(r.target)
    m = f"mask{sfx}"
    if kind in ("sum", "mean"):
        return [f"{ind}acc_{r.name} = acc_{r.name} + tl.where({m}, {x}, 0.0)"]
    if kind in ("amax", "amin"):
        fn = "_kc_rmax" if kind == "amax" else "_kc_rmin"
        return [f"{ind}acc_{r.name} = tl.where({m}, {fn}(acc_{r.name}, {x}), acc_{r.name})"]
    cmp = ">" if kind == "argmax" else "<"
    v, i = f"accv_{r.name}", f"acci_{r.name}"
    return [
        f"{ind}xv_{r.name} = {x}",
        f"{ind}upd_{r.name} = {m} & ((xv_{r.name} {cmp} {v}) | ((xv_{r.name} != xv_{r.name})"
        f" & ({v} == {v})) | ({i} < 0))",
        f"{ind}{v} = tl.where(upd_{r.name}, xv_{r.name}, {v})",
        f"{ind}{i} = tl.where(upd_{r.name}, cols{sfx}.to(tl.int64), {i})",
    ]


def _finish(r: fx.Node) -> list[str]:
    kind = op_name(r.target)
    dt = tl_dtype(r)
    out = f"v_{r.name}"
    if kind == "sum":
        return [f"    {out} = tl.sum(acc_{r.name}, axis=1)[:, None].to({dt})"]
    if kind == "mean":
        return [f"    {out} = (tl.sum(acc_{r.name}, axis=1)[:, None] / R).to({dt})"]
    if kind in ("amax", "amin"):
        fn = "_kc_rmax" if kind == "amax" else "_kc_rmin"
        return [f"    {out} = tl.reduce(acc_{r.name}, 1, {fn})[:, None].to({dt})"]
    fn = f"_kc_{kind}_combine"
    return [
        f"    _, idx_{r.name} = tl.reduce((accv_{r.name}, acci_{r.name}), 1, {fn})",
        f"    {out} = idx_{r.name}[:, None].to({dt})",
    ]


def _check_domain(dom: tuple[str, ...], full_ins: list[fx.Node]) -> None:
    """Every domain size must come from a full-context input (it is derived at runtime)."""
    shapes = [shape_key(val(a).shape) for a in full_ins]
    for i in range(1, len(dom) + 1):
        if dom[-i] == "1":
            continue
        if not any(len(s) >= i and s[-i] == dom[-i] for s in shapes):
            _fail(f"domain size {dom[-i]} (dim {len(dom) - i}) comes from no full-context input")
    if any(len(s) > len(dom) for s in shapes):
        _fail("a full-context input has a larger rank than the domain")


def _policy() -> dict[str, int]:
    return {"CPU_TILE": CPU_TILE, "CPU_BLOCK_R": CPU_BLOCK_R, "GPU_TILE": GPU_TILE,
            "GPU_BLOCK_R": GPU_BLOCK_R, "GPU_BLOCK_K_COLUMNS": GPU_BLOCK_K_COLUMNS}


def _capture_config(g: Group, an: _Analysis) -> dict[str, Any]:
    """The GPU tile the wrapper would pick at the captured sizes (contiguous layout)."""
    from kernelcraft.codegen.runtime import _kc_row_config

    x = next((r.args[0] for r in an.reds), None)
    try:
        sizes = [int(s.node.hint) if isinstance(s, torch.SymInt) else int(s)
                 for s in val(x).shape]
    except (TypeError, AttributeError):
        return {}
    rd = set(g.rdims)
    K = R = 1
    for d, s in enumerate(sizes):
        if d in rd:
            R *= s
        else:
            K *= s
    kst = [[1 if (len(sizes) - 1) not in rd else 0]]
    rst = [[1 if (len(sizes) - 1) in rd else 0]]
    bk, br, warps = _kc_row_config(K, R, kst, 1, rst, 1, False, _policy())
    return {"K": K, "R": R, "BLOCK_K": bk, "BLOCK_R": br, "num_warps": warps}
