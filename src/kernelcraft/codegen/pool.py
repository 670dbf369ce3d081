"""Pooling template: max and average windows over 1-3 spatial dims, fixed or adaptive.

A pooling window is a small reduction per output element, so each program takes BLOCK
consecutive output elements and walks the window's taps (unrolled when the window is
small and fixed, a loop otherwise), each tap one masked load per operand. The pointwise
ops that feed only the pool (the prologue, e.g. ``x ** 2`` of an Lp pool or an activation
before a max pool) are recomputed at each tap from the operands they read, so their result
never goes to memory; the pointwise ops on the pooled output (the epilogue) run before the
store. Padding follows PyTorch: padded taps are -inf for max and count in the divisor of
an average only with ``count_include_pad``; NaN propagates through max.

The output is walked in the input's memory order: channels innermost when the input is
channels-last (the output is allocated the same way, as eager does), else rows. Sizes are
runtime arguments (fixed windows are constexprs, adaptive windows derive their bounds
from the sizes), so one kernel serves every input size. Knobs: BLOCK, num_warps.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from typing import Any

import torch
import torch.fx as fx

from kernelcraft.codegen.common import (
    KernelSource,
    compute_dtype,
    emit_epilogue,
    external_operands,
    lower_pointwise,
    opmath,
    ptr_type,
    scalar_type,
    tl_dtype,
    var,
)
from kernelcraft.codegen.ops import op_name
from kernelcraft.plan import Group, hint, is_tensor_node, val

#: anchor ops -> (reduction, spatial dims, adaptive)
POOLS: dict[str, tuple[str, int, bool]] = {
    "max_pool2d_with_indices": ("max", 2, False),
    "max_pool3d_with_indices": ("max", 3, False),
    "avg_pool2d": ("avg", 2, False),
    "avg_pool3d": ("avg", 3, False),
    "_adaptive_avg_pool2d": ("avg", 2, True),
    "_adaptive_avg_pool3d": ("avg", 3, True),
    "adaptive_max_pool2d": ("max", 2, True),
    "adaptive_max_pool3d": ("max", 3, True),
}
#: fixed windows up to this many taps are unrolled in full (all their loads in flight);
#: larger ones loop over their outer dims and unroll only rows of up to UNROLL_TAPS taps
#: (a 5x5 window unrolled in full spilled on AMD and took minutes to build)
UNROLL_TAPS = 16
#: 2 outputs per thread: on the H200, 4 per thread measured 1.3-1.8x slower over 3x3, 5x5,
#: 1x4, 3x3x3 and adaptive windows; 2-D tiles (columns by rows, dividing per row, not per
#: element) measured slower still (3x3/s2 over 32x64x256x256: 0.258 ms at best vs 0.229)
GPU_BLOCK, GPU_WARPS = 256, 4
#: channels-last (channels innermost): 4 outputs per thread measured best there (0.176 ms
#: against 0.209 with 2, 3x3/s2 over 32x64x256x256)
GPU_BLOCK_CL = 512
CPU_BLOCK = 4096  # interpreter: few large programs
_FLOATS = (torch.float32, torch.float16, torch.bfloat16)


@dataclass(frozen=True)
class PoolSpec:
    """What a pooling node computes; per-dim lists have ``dims`` entries."""

    kind: str  # max | avg
    dims: int
    adaptive: bool
    kernel: tuple[int, ...] = ()
    stride: tuple[int, ...] = ()
    padding: tuple[int, ...] = ()
    dilation: tuple[int, ...] = ()
    ceil_mode: bool = False
    count_include_pad: bool = True
    divisor: int = 0  # divisor_override, 0 when none
    output_size: tuple[int, ...] = ()  # adaptive pools

    def describe(self) -> str:
        if self.adaptive:
            return f"adaptive {self.kind} to {list(self.output_size)}"
        parts = [f"{self.kind} {'x'.join(map(str, self.kernel))}",
                 f"stride {list(self.stride)}", f"pad {list(self.padding)}"]
        if any(d != 1 for d in self.dilation):
            parts.append(f"dilation {list(self.dilation)}")
        if self.ceil_mode:
            parts.append("ceil")
        if self.kind == "avg" and not self.count_include_pad:
            parts.append("pad not counted")
        if self.divisor:
            parts.append(f"divisor {self.divisor}")
        return ", ".join(parts)


def _per_dim(v: Any, dims: int, default: int | None = None) -> tuple[int, ...]:
    if v is None or (isinstance(v, (list, tuple)) and len(v) == 0):
        if default is None:
            raise ValueError("missing")
        return (default,) * dims
    if isinstance(v, int):
        return (v,) * dims
    if not all(isinstance(x, int) for x in v):
        raise ValueError("a symbolic window")
    v = tuple(int(x) for x in v)
    if len(v) == 1:
        return v * dims
    if len(v) != dims:
        raise ValueError("wrong length")
    return v


def pool_spec(n: fx.Node) -> PoolSpec:
    """The pooling a node computes; ValueError when the template cannot take it."""
    name = op_name(n.target)
    if name not in POOLS:
        raise ValueError(f"{name} is not a pooling op")
    kind, dims, adaptive = POOLS[name]
    x = n.args[0]
    if not is_tensor_node(x) or val(x).dtype not in _FLOATS:
        raise ValueError("pooling of a non-float tensor")
    if val(x).dim() not in (dims + 1, dims + 2):
        raise ValueError(f"{val(x).dim()}-d input to a {dims}-d pool")
    args = list(n.args[1:])
    try:
        if adaptive:
            out = _per_dim(args[0] if args else n.kwargs.get("output_size"), dims)
            if min(out) < 1:
                raise ValueError("an empty output")
            return PoolSpec(kind, dims, True, output_size=out)
        get = lambda i, key, default: args[i] if len(args) > i else n.kwargs.get(key, default)  # noqa: E731
        k = _per_dim(get(0, "kernel_size", None), dims)
        s = _per_dim(get(1, "stride", None), dims, default=-1)
        s = k if s == (-1,) * dims else s
        p = _per_dim(get(2, "padding", 0), dims)
        if kind == "max":
            d = _per_dim(get(3, "dilation", 1), dims)
            ceil = bool(get(4, "ceil_mode", False))
            spec = PoolSpec(kind, dims, False, k, s, p, d, ceil)
        else:
            ceil = bool(get(3, "ceil_mode", False))
            cip = bool(get(4, "count_include_pad", True))
            div = get(5, "divisor_override", None)
            if div is not None and not isinstance(div, int):
                raise ValueError("a symbolic divisor")
            spec = PoolSpec(kind, dims, False, k, s, p, (1,) * dims, ceil, cip, int(div or 0))
    except (ValueError, TypeError, IndexError) as exc:
        raise ValueError(f"window arguments the template does not take ({exc})") from None
    if min(spec.kernel) < 1 or min(spec.stride) < 1 or min(spec.dilation) < 1:
        raise ValueError("a window, stride or dilation below 1")
    if any(2 * p > k for p, k in zip(spec.padding, spec.kernel, strict=True)):
        raise ValueError("padding over half the window")
    return spec


def pool_supported(n: fx.Node) -> str | None:
    """Why the template cannot take pooling node ``n`` (None: it can)."""
    try:
        pool_spec(n)
    except ValueError as exc:
        return str(exc)
    if isinstance(val(n), (tuple, list)):  # max pools also return indices: only values here
        for u in n.users:
            if u.target is not operator.getitem or u.args[1] != 0:
                return "the pooling indices are used (the template computes values only)"
    return None


def value_node(n: fx.Node) -> fx.Node | None:
    """The node holding the pooled values: ``n`` itself, or its ``getitem(n, 0)``."""
    if not isinstance(val(n), (tuple, list)):
        return n
    for u in n.users:
        if u.target is operator.getitem and u.args[1] == 0:
            return u
    return None


def emit_pool(g: Group, target: Any = None) -> KernelSource:
    """One pooling kernel with g's prologue and epilogue fused, and its launching wrapper."""
    anchor = g.anchor
    if anchor is None:
        raise NotImplementedError("pool group without an anchor")
    why = pool_supported(anchor)
    if why:
        raise NotImplementedError(why)
    spec = pool_spec(anchor)
    pooled = value_node(anchor)
    if pooled is None or pooled not in g.nodes:
        raise NotImplementedError("the pooled values are not used")
    members = set(g.nodes)
    order = {m: i for i, m in enumerate(g.nodes)}
    prologue = [m for m in g.nodes if order[m] < order[anchor]]
    epilogue = [m for m in g.nodes if order[m] > order[pooled]]
    x = anchor.args[0]
    ishape = tuple(val(x).shape)
    oshape = tuple(val(pooled).shape)
    # a 1-D pool runs as a 2-D one over unsqueeze(x, -2): the unsqueeze and the squeeze
    # after it are views here (operands and outputs are viewed the same way)
    unsq = x if x in members and op_name(x.target) == "unsqueeze" else None
    sq = next((m for m in epilogue if op_name(m.target) == "squeeze"), None)
    if sq is not None and sq.args[0] is not pooled:
        raise NotImplementedError(f"{sq.name} does not squeeze the pooled values")
    prologue = [m for m in prologue if m is not unsq]
    epilogue = [m for m in epilogue if m is not sq]
    pshape = tuple(val(unsq.args[0]).shape) if unsq is not None else ishape
    qshape = tuple(val(sq).shape) if sq is not None else oshape
    udim = int(unsq.args[1]) % len(ishape) if unsq is not None else -1
    sdim = next((i for i in range(len(oshape)) if oshape[:i] + oshape[i + 1:] == qshape),
                -1) if sq is not None else -1
    for m in prologue:
        if tuple(val(m).shape) != pshape or m.target is operator.getitem:
            raise NotImplementedError(f"prologue node {m.name} is not on the pool's input")
    for m in epilogue:
        if tuple(val(m).shape) != qshape:
            raise NotImplementedError(f"epilogue node {m.name} is not on the pool's output")
    for o in g.outputs:
        if o is not pooled and o is not sq and o not in epilogue:
            raise NotImplementedError(f"output {o.name} is not the pool's or an epilogue's")
    if sq is not None and sdim < 0:
        raise NotImplementedError(f"{sq.name}: not a squeeze of one dim")
    S = spec.dims
    L = len(ishape) - S
    rank = L + S

    pro_in, pro_sc = external_operands(prologue, members)
    pool_in = unsq.args[0] if unsq is not None else x  # read even with no prologue
    if pool_in not in members and pool_in not in pro_in:
        pro_in.append(pool_in)
    epi_in, epi_sc = external_operands(epilogue, members)
    for a in pro_in:
        if val(a).dim() > rank:
            raise NotImplementedError(f"prologue input {a.name} has a higher rank")
    for a in epi_in:
        if val(a).dim() > rank:
            raise NotImplementedError(f"epilogue input {a.name} has a higher rank")
    scalars = pro_sc + [s for s in epi_sc if s not in pro_sc]
    outs = list(g.outputs)
    kname, wname = f"_kc_{g.name}_kernel", f"_kc_{g.name}"
    P = [f"p{i}" for i in range(len(pro_in))]
    E = [f"e{i}" for i in range(len(epi_in))]
    OUT = [f"o{i}" for i in range(len(outs))]
    SC = [f"sc{i}" for i in range(len(scalars))]
    lead = [f"n{i}" for i in range(L)]
    isz = [f"I{j}" for j in range(S)]
    osz = [f"O{j}" for j in range(S)]
    fixed_taps = math.prod(spec.kernel) if not spec.adaptive else 0
    # per dim: unrolled (compile-time extent) or a loop with a runtime bound, so that no
    # backend unrolls a long window in full (LLVM did on AMD: 175 VGPRs and spills)
    if spec.adaptive:
        static = [False] * S
    elif fixed_taps <= UNROLL_TAPS:
        static = [True] * S
    else:
        static = [False] * (S - 1) + [spec.kernel[-1] <= UNROLL_TAPS]
    consts = [f"K{j}" for j in range(S) if static[j]]
    if not spec.adaptive:
        consts += [f"{c}{j}" for c in ("ST", "PD", "DL") for j in range(S)]
    consts += ["CL", "IDX64", "FASTDIV", "BLOCK"]
    params = P + E + OUT + SC + ["numel"] + lead + isz + osz
    params += [f"{n}_{x}" for n in lead + osz for x in "ms"]  # _kc_magic of each size
    params += [f"{t}_s{d}" for t in P + E + OUT for d in range(rank)]
    params += [f"K{j}" for j in range(S) if not static[j]]  # passed by keyword
    params += [f"{c}: tl.constexpr" for c in consts]

    # ---- kernel: decompose the output index (memory order), walk the window, epilogue
    li = [f"l{i}" for i in range(L)]
    si = [f"s{j}" for j in range(S)]
    body = ["    pid = tl.program_id(0)",
            "    if IDX64:",  # int64 index math only where an offset needs it
            "        pid = pid.to(tl.int64)",
            "    lin = pid * BLOCK + tl.arange(0, BLOCK)",
            "    mask = lin < numel",
            "    _r = lin"]

    def peel(dims: list[tuple[str, str]], indent: str, fast: bool) -> list[str]:
        lines = []
        for k, (idx, size) in enumerate(reversed(dims)):
            if k == len(dims) - 1:
                lines.append(f"{indent}{idx} = _r")
            elif fast:  # multiply-high by the host's magic number instead of dividing
                lines += [f"{indent}_q = _kc_udiv(_r, {size}, {size}_m, {size}_s)",
                          f"{indent}{idx} = _r - _q * {size}", f"{indent}_r = _q"]
            else:
                lines += [f"{indent}{idx} = _r % {size}", f"{indent}_r = _r // {size}"]
        return lines

    rows = list(zip(li, lead, strict=True)) + list(zip(si, osz, strict=True))
    chans = ([(li[0], lead[0])] if L > 1 else []) + list(zip(si, osz, strict=True)) \
        + [(li[-1], lead[-1])]
    for cond, dims in (("if CL:", chans), ("else:", rows)):
        body += [f"    {cond}", "        if FASTDIV:"] + peel(dims, " " * 12, True)
        body += ["        else:"] + peel(dims, " " * 12, False)
    for j in range(S):  # window bounds per dim
        if spec.adaptive:
            body += [f"    w{j} = (s{j} * I{j}) // O{j}",
                     f"    end{j} = ((s{j} + 1) * I{j} + O{j} - 1) // O{j}"]
        else:
            body.append(f"    w{j} = s{j} * ST{j} - PD{j}")
    if spec.kind == "avg":
        if spec.adaptive:
            div = " * ".join(f"(end{j} - w{j})" for j in range(S))
        elif spec.divisor:
            div = str(spec.divisor)
        else:
            for j in range(S):
                body.append(f"    z{j} = tl.minimum(w{j} + K{j}, I{j} + PD{j})")
            if spec.count_include_pad:
                div = " * ".join(f"(z{j} - w{j})" for j in range(S))
            else:
                div = " * ".join(f"(tl.minimum(z{j}, I{j}) - tl.maximum(w{j}, 0))"
                                 for j in range(S))
        body.append(f"    div = ({div}) + lin * 0")
        body.append("    acc = tl.zeros([BLOCK], dtype=tl.float32)")
    else:
        body.append("    acc = tl.full([BLOCK], float('-inf'), tl.float32)")
    for t in P:
        terms = " + ".join(f"{li[i]} * {t}_s{i}" for i in range(L))
        body.append(f"    {t}_base = {terms}")
    indent = "    "
    for j in range(S):
        rng = "tl.static_range" if static[j] else "range"
        body.append(f"{indent}for k{j} in {rng}(K{j}):")
        indent += "    "
        if spec.adaptive:
            body += [f"{indent}i{j} = w{j} + k{j}",
                     f"{indent}ok{j} = i{j} < end{j}"]
        else:
            body += [f"{indent}i{j} = w{j} + k{j} * DL{j}",
                     f"{indent}ok{j} = (i{j} >= 0) & (i{j} < I{j})"]
        prev = f"ok{j - 1}" if j else "mask"
        body.append(f"{indent}ok{j} = {prev} & ok{j}")
    ok = f"ok{S - 1}"
    env: dict[fx.Node, str] = {}
    for t, a in zip(P, pro_in, strict=True):
        off = " + ".join([f"{t}_base"] + [f"i{j} * {t}_s{L + j}" for j in range(S)])
        body.append(f"{indent}{var(a)} = tl.load({t} + {off}, mask={ok}, other=0)"
                    f".to({compute_dtype(a)})")
        env[a] = var(a)
    env.update({s: SC[i] for i, s in enumerate(scalars)})
    for m in prologue:
        body.append(indent + lower_pointwise(m, env))
        env[m] = var(m)
    if unsq is not None:
        env[unsq] = env[unsq.args[0]]
    body.append(f"{indent}v = {env[x]}.to(tl.float32)")
    if spec.kind == "max":
        body.append(f"{indent}acc = tl.maximum(acc, tl.where({ok}, v, float('-inf')), "
                    "propagate_nan=tl.PropagateNan.ALL)")  # a NaN in the window wins
    else:
        body.append(f"{indent}acc += tl.where({ok}, v, 0.0)")
    if spec.kind == "avg":
        body.append("    acc = tl.where(div > 0, acc / tl.maximum(div, 1).to(tl.float32), 0.0)")
    body.append(f"    {var(pooled)} = acc.to({tl_dtype(pooled)})")
    env = {pooled: opmath(pooled)}
    env.update({s: SC[i] for i, s in enumerate(scalars)})

    def at(t: str) -> str:
        return " + ".join([f"{li[i]} * {t}_s{i}" for i in range(L)]
                          + [f"{si[j]} * {t}_s{L + j}" for j in range(S)])

    def store(o: fx.Node, i: int) -> str:
        t = OUT[outs.index(o)]
        return f"    tl.store({t} + {at(t)}, {var(o)}.to({tl_dtype(o)}), mask=mask)"

    if sq is not None:
        env[sq] = env[pooled]
        if sq in outs:
            body += [f"    {var(sq)} = {var(pooled)}", store(sq, 0)]
    emit_epilogue(body, pooled, epilogue, epi_in, [o for o in outs if o is not sq], env,
                  lambda a, i: f"tl.load({E[i]} + {at(E[i])}, mask=mask, other=0)", store)
    source = f"@triton.jit\ndef {kname}({', '.join(params)}):\n" + "\n".join(body)

    # ---- wrapper
    tensors = pro_in + [a for a in epi_in if a not in pro_in]
    in_name = {a: f"in{i}" for i, a in enumerate(tensors)}
    def in_view(t: str) -> str:  # an operand of the prologue, over the pool's input
        return (f"{t}.expand(ishape)" if unsq is None
                else f"{t}.expand(pshape).unsqueeze({udim})")

    # the operand the pool's input is laid out like (itself, or the largest prologue input)
    X = in_name[x] if x in in_name else in_name[max(
        pro_in, key=lambda a: math.prod(hint(d) for d in val(a).shape))]
    w = [f"def {wname}({', '.join([in_name[a] for a in tensors] + SC)}):",
         f"    dev = {X}.device",
         "    pshape = tuple(_kc_broadcast("
         f"{', '.join(in_name[a] + '.shape' for a in pro_in)}))",
         "    ishape = pshape" + ("" if unsq is None
                                 else f"[:{udim}] + (1,) + pshape[{udim}:]"),
         f"    if len(ishape) != {rank}:",
         f"        raise ValueError(f'kernelcraft: a {S}-d pool over a {rank}-d input, got "
         "{len(ishape)}-d')",
         f"    isp = ishape[{L}:]"]
    if spec.adaptive:
        w.append(f"    osp = {list(spec.output_size)!r}")
        w.append("    win = [_kc_adaptive_window(i, o) for i, o in zip(isp, osp)]")
    else:
        w.append(f"    osp = [_kc_pool_size(i, k, s, p, d, {spec.ceil_mode}) for i, k, s, p, d "
                 f"in zip(isp, {list(spec.kernel)!r}, {list(spec.stride)!r}, "
                 f"{list(spec.padding)!r}, {list(spec.dilation)!r})]")
        w.append(f"    win = {list(spec.kernel)!r}")
    w += [f"    oshape = ishape[:{L}] + tuple(osp)",
          f"    cl = _kc_channels_last({in_view(X)}, {L})",
          f"    ost = _kc_pool_strides(oshape, {L}, cl)"]
    for i, o in enumerate(outs):
        w.append(f"    o{i} = torch.empty_strided(oshape, ost, device=dev, dtype={val(o).dtype})")
    w.append("    numel = _kc_prod(oshape)")
    rets = ", ".join(t if o is pooled or sq is None else f"{t}.squeeze({sdim})"
                     for t, o in zip(OUT, outs, strict=True))
    w.append(f"    if numel == 0:\n        return ({rets},)")
    if sq is not None:
        w.append(f"    qshape = oshape[:{sdim}] + oshape[{sdim + 1}:]")
    views = [in_view(in_name[a]) for a in pro_in]
    views += [f"{in_name[a]}.expand(oshape)" if sq is None
              else f"{in_name[a]}.expand(qshape).unsqueeze({sdim})" for a in epi_in] + OUT
    w += [f"    views = [{', '.join(views)}]",
          "    block, warps = (" + str(CPU_BLOCK) + ", 4) if dev.type == 'cpu' else "
          f"(({GPU_BLOCK_CL} if cl else {GPU_BLOCK}), {GPU_WARPS})",
          f"    t = _kc_tuned('{wname}', dev, (numel,))",
          "    if t is not None:",
          "        block, warps = t['BLOCK'], t['num_warps']"]
    window = ["*win"]
    if not spec.adaptive:
        window += [f"*{list(spec.stride)!r}", f"*{list(spec.padding)!r}",
                   f"*{list(spec.dilation)!r}"]
    kw_consts = [f"K{j}=win[{j}]" for j in range(S)]
    if not spec.adaptive:
        kw_consts += [f"{c}{j}={v[j]}" for c, v in (("ST", spec.stride), ("PD", spec.padding),
                                                     ("DL", spec.dilation)) for j in range(S)]
    w += ["    grid = (triton.cdiv(numel, block),)",
          "    far = _kc_far(views)",
          "    fast = not far and t is not None and t.get('FASTDIV', False)",
          f"    {kname}[grid](*views, {''.join(s + ', ' for s in SC)}numel, *oshape[:{L}], "
          "*isp, *osp,",
          f"        *[v for n in (*oshape[:{L}], *osp) for v in _kc_magic(n)],",
          "        *[s for v in views for s in v.stride()],",
          f"        {', '.join(kw_consts)}, CL=cl, IDX64=far, FASTDIV=fast, BLOCK=block, "
          "num_warps=warps)",
          f"    return ({rets},)"]
    wrapper = "\n".join(w)

    sig = {t: ptr_type(a) for t, a in zip(P, pro_in, strict=True)}
    sig.update({t: ptr_type(a) for t, a in zip(E, epi_in, strict=True)})
    sig.update({t: ptr_type(o) for t, o in zip(OUT, outs, strict=True)})
    sig.update({t: scalar_type(a) for t, a in zip(SC, scalars, strict=True)})
    for p in params:
        if ":" not in p and p not in sig:
            sig[p] = "i32"
    cexpr: dict[str, Any] = {"CL": False, "IDX64": False, "FASTDIV": False, "BLOCK": GPU_BLOCK}
    cexpr.update({f"K{j}": spec.kernel[j] for j in range(S) if static[j]})
    if not spec.adaptive:
        cexpr.update({f"{c}{j}": v[j] for c, v in (("ST", spec.stride), ("PD", spec.padding),
                                                    ("DL", spec.dilation)) for j in range(S)})
    numel = math.prod(hint(d) for d in oshape)
    cfg = {"template": "pool", "pool": spec.describe(), "BLOCK": GPU_BLOCK,
           "num_warps": GPU_WARPS, "at": {"numel": numel}}
    notes = [f"pool: {spec.describe()}"]
    if prologue:
        notes.append(f"prologue recomputed per tap: {', '.join(m.name for m in prologue)}")
    return KernelSource(kname, wname, source, wrapper, tensors + scalars, outs, cfg, notes,
                        signature=sig, constexprs=cexpr, num_warps=GPU_WARPS)

