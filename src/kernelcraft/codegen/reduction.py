"""Reduction template ("row"): reductions over one set of dims of a domain, fused.

A reduction group computes, on one domain, pointwise nodes in *full* context (shape = the
domain), reductions over ``g.rdims``, and pointwise nodes in *reduced* context (shape = the
domain with the reduced dims set to 1 or removed). The domain splits into kept dims (rows,
linear index ``k < K``) and reduced dims (linear index ``r < R``); both are decomposed
into multi-indices at runtime, so any set of reduced dims and any operand layout works.

Each program takes BLOCK_K rows. A reduction whose input depends on p earlier reductions
runs in pass p + 1; every pass is one loop over R in chunks of BLOCK_R that recomputes the
full-context nodes it needs and accumulates elementwise into [BLOCK_K, BLOCK_R] fp32 lane
accumulators, reduced across lanes at the end of the pass (builtin tl.sum/max/min, a
tl.reduce tree for products; NaN propagation and first-index ties are handled
explicitly). Reduced-context nodes run
between passes on [BLOCK_K, 1] values; full-context outputs are stored in the first pass
where every value they need exists.

Two variants share one kernel, chosen at launch:
- ``ONE_CHUNK`` (BLOCK_R >= R): the rows stay resident; inputs are loaded once and full
  values computed once for all passes (softmax reads its input once, writes once);
- looped: longer rows are loaded again in every pass (mostly from cache);
- R may be split over a second grid axis when the rows alone would leave the GPU idle:
  each program writes partial results to a [K, SPLIT] workspace and a small combine kernel
  finishes them. One-pass groups (sums, means, max, losses) do it in one launch and
  ``*_combine``; groups of several passes launch each pass over the split (``*_s<p>``)
  and its combine (``*_c<p>``), which keeps the pass's values per row for the next.

Two second reductions are folded into their partner's pass (``_online_pair``): the sum of
``exp(x - max)`` (online softmax) and the squared deviations from the mean (Chan's merge),
so softmax, log-softmax, logsumexp, cross entropy, variance and the norms read a long row
once fewer, and logsumexp, var and std become one-pass.

Gathers on the domain (a rolled or flipped map, embedding rows; ``plan`` admits them) load
through a view of their source with stride 0 on the gathered dims, plus index x stride per
gathered dim. Their index tensors are views over the domain too: loaded, or computed from
their position (``g.positions``), once per row before the passes where they do not vary
along the reduced dims (launch flag ``<view>_RV`` false: embedding ids, a roll of kept
dims), per element otherwise. Index math is int32 for rows kept in one chunk where no
offset can pass 2**31 (launch flag ``IDX64``).

A row gather (``aten.gather`` on the kept shape, ``plan.row_gather``: cross entropy's logit at
the target) loads one value per row among the reduced-context nodes, at its source's row
offset plus index x stride; its index is a per-row input or value of the kernel.

Knobs, chosen at runtime from the sizes and layout by ``runtime._kc_row_config`` and
``_kc_row_split`` with the policy constants below: BLOCK_K, BLOCK_R, num_warps, SPLIT.
Anything else raises NotImplementedError (the group then runs through PyTorch).
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
    tl_dtype,
)
from kernelcraft.codegen.ops import REDUCTIONS, op_name
from kernelcraft.codegen.pointwise import (
    gather_canon,
    gather_ints,
    gather_shape_lines,
    gather_view_lines,
    position_lines,
    stand_in,
)
from kernelcraft.codegen.ranges import NARROW, narrowed, ni_lines
from kernelcraft.plan import (
    ROW_VIEWS,
    Group,
    broadcasts_to,
    drop_shape,
    gather_dims,
    gather_indices,
    hint,
    inline_constant,
    is_tensor_node,
    keep_shape,
    piecewise_load,
    reduction_dims,
    row_gather,
    shape_key,
    val,
)

#: Tile policy, read by the wrapper at runtime (see runtime._kc_row_config).
CPU_TILE = 16384  # interpreter: few large programs
CPU_BLOCK_R = 4096
GPU_TILE = 4096
GPU_BLOCK_R = 8192  # chunk of a longer row, 16 warps (H200 softmax 8192x16384: 0.37 ms; 4096: 0.49)
GPU_BLOCK_K_COLUMNS = 64  # kept dim innermost in memory: rows side by side
GPU_BLOCK_K_COLUMNS_MIN = 8  # ... but no fewer when shrunk to keep the rows resident
#: a reduced extent walked in columns up to this long is one resident chunk with many rows
#: side by side (RGB channels); a longer one of a one-pass group (no arg lanes) takes
#: 4096-element tiles of rows side by side in chunks of GPU_COLUMNS_CHUNK_R (twice that
#: resident), and fewer rows a program (down to 16) while the rows fill fewer than
#: GPU_COLUMNS_PROGRAMS programs; a group of several passes keeps up to 8192 resident
GPU_COLUMNS_SHORT_R = 64
GPU_COLUMNS_CHUNK_R = 64
GPU_COLUMNS_PROGRAMS = 1024
GPU_PERSIST_TILE = 8192  # largest tile kept resident (one chunk, loaded once)
#: rows of a one-pass arg reduction walk in chunks of at most this many lanes, 4 warps: its
#: finish reduces each lane array three times (NaN, value, first index in int64), and on
#: the H200 argmin over 16384 x 8192 took 0.29 ms resident in 8192 lanes against 0.14 in
#: 512-lane chunks (0.44 at 4096); argmax over 65536 x 1000 0.46 ms against 0.44
ARG_TILE = 512
#: rows at least this long take the online softmax (read once for the maximum and the sum;
#: a row the launch keeps resident takes its maximum first either way). Lanes with their own
#: running maximum in 2048-wide chunks beat two passes from 16384 on (H100, see
#: _kc_row_config); at 65536 before the lanes went plain maximum and minimum, when two
#: passes were faster below that (H200 logsumexp over 16384: 0.252 ms against 0.325)
ONLINE_SOFTMAX_MIN_R = 16384
#: the chunk of a looped online softmax (16 warps, 4 elements per thread)
ONLINE_BLOCK_R = 2048
#: the largest finite float32: an online softmax lane's floor and its shift's ceiling
FLT_MAX = "3.4028234663852886e38"
SPLIT_WAVES = 4  # one-pass groups split R until about this many programs per SM exist
#: rows shorter than this are not split on a GPU: one program walks 128 KB of fp32 in a few
#: microseconds, about what the combine kernel takes, and the second launch costs more host
#: time than that (a cross entropy's count and mean over 16384 targets: 4 launches, not 2)
SPLIT_MIN_R = 32768
MAX_SPLIT = 1024
CPU_SMS = 4  # the interpreter's pretend SM count (so small-K groups split there too)
#: suffix of the one-chunk variant's full-context names (``v_<node><sfx>``), looped passes
#: take ``_p<pass>``: no FX node name ends so, where ``_1`` is how FX renames a second
#: ``where`` (``v_where`` + ``_1`` was ``v_where_1``, a reduced value's name)
ONE_SFX = "_oc"


@dataclass
class _Op:
    """A strided view the kernel addresses: an input in one context, or an output."""

    name: str  # stride stem
    ptr: str  # kernel pointer argument
    ctx: str  # full | keep | drop
    view: str  # wrapper expression of the view


@dataclass(frozen=True)
class _Pair:
    """A second reduction folded into its partner's pass (see ``_online_pair``)."""

    mode: str  # softmax | var
    partner: fx.Node  # amax(source) | mean(source)
    source: fx.Node  # what both reduce
    shift: fx.Node  # softmax: the reduced value subtracted before exp (partner or f(partner))


@dataclass
class _Analysis:
    ctx: dict[fx.Node, str] = field(default_factory=dict)  # member -> full | keep | drop
    ready: dict[fx.Node, int] = field(default_factory=dict)  # reduced member -> pass done
    need: dict[fx.Node, int] = field(default_factory=dict)  # full member -> first pass
    reds: list[fx.Node] = field(default_factory=list)
    npasses: int = 1
    pass_nodes: dict[int, list[fx.Node]] = field(default_factory=dict)  # full nodes per pass
    online: dict[fx.Node, _Pair] = field(default_factory=dict)
    # position values read elementwise (computed per element of a chunk, not loaded)
    pos_reads: list[fx.Node] = field(default_factory=list)

    def source(self, r: fx.Node) -> fx.Node:
        """What reduction ``r`` folds in its pass: its input, or an online pair's source."""
        return self.online[r].source if r in self.online else r.args[0]

    def mode(self, r: fx.Node) -> str:
        return self.online[r].mode if r in self.online else ""


def _fail(msg: str) -> None:
    raise NotImplementedError(msg)


def _analyse(g: Group) -> _Analysis:
    dom, rd = g.domain, g.rdims
    keep, drop = keep_shape(dom, rd), drop_shape(dom, rd)
    leading = tuple(rd) == tuple(range(len(rd)))  # drop form broadcasts like keep form
    members = set(g.nodes)
    pos_nodes = {m for chain in g.positions.values() for m in chain}
    an = _Analysis()
    for n in g.nodes:
        if n in pos_nodes:  # a gather's index, computed from the element's position
            an.ctx[n] = "pos"
            continue
        if piecewise_load(n):
            _fail(f"{n.name}: a cat or padding in a reduction kernel")
        name = op_name(n.target)
        if not isinstance(val(n), torch.Tensor):
            _fail(f"{n.name}: non-tensor member")
        s = shape_key(val(n).shape)
        if inline_constant(n) and len(n.users) == 1:  # a literal: its reader's context
            s = shape_key(val(next(iter(n.users))).shape)
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
            pair = _online_pair(n, members, an)
            if pair is not None:  # folded in its partner's pass (one read fewer)
                an.online[n] = pair
                an.ready[n] = an.ready[pair.partner]
            an.reds.append(n)
            continue
        if s == dom:
            an.ctx[n] = "full"
        elif s == keep:
            an.ctx[n] = "keep"
        elif s == drop:
            an.ctx[n] = "drop"
        elif broadcasts_to(s, keep):  # (a [B, N, 1] mask of [B, N, 3] row results; a
            # per-row count cast in the kernel): constant along the reduced dims, per row
            an.ctx[n] = "keep"
        elif broadcasts_to(s, dom):  # a broadcast producer recomputed per element
            an.ctx[n] = "full"
        elif broadcasts_to(s, drop):
            an.ctx[n] = "drop"
        else:
            _fail(f"{n.name}: shape {s} is neither the domain nor a kept shape")
        full = an.ctx[n] == "full"
        level = 1 if full else 0
        if gather_dims(n) is not None and not full:
            if not row_gather(n, g):
                _fail(f"{n.name}: a gather off the reduction's domain")
            if n.args[0] in members:
                _fail(f"{n.name}: gathers from a value of its own kernel")
            for a in gather_indices(n):  # an index of this kernel: once its level is done
                if a in members:
                    if an.ctx[a] != "keep":
                        _fail(f"{n.name}: a row gather by a value off the kept shape")
                    level = max(level, an.ready[a])
            an.ready[n] = level
            continue
        for a in n.all_input_nodes:
            if a not in members:
                continue
            if a in pos_nodes:
                if gather_dims(n) is None:
                    if not full or a not in g.positions:
                        _fail(f"{n.name}: reads a position value off the domain")
                    if a not in an.pos_reads:
                        an.pos_reads.append(a)
                continue
            if gather_dims(n) is not None:
                _fail(f"{n.name}: gathers from (or by) a value of its own kernel")
            actx = an.ctx[a]
            if actx == "full":
                if not full:
                    _fail(f"{n.name}: a reduced-context node reads a full-context value")
                level = max(level, an.need[a])
                continue
            if op_name(n.target) in ROW_VIEWS and actx != "full" and an.ctx[n] != "full":
                level = max(level, an.ready[a])  # the same per-row value, re-viewed
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
        roots = [an.source(r) for r in an.reds if an.ready[r] == p and an.source(r) in members]
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


def _online_pair(r: fx.Node, members: set[fx.Node], an: _Analysis) -> _Pair | None:
    """How ``r`` can be folded in its partner's pass, if it can.

    Two second-pass reductions have exact one-pass forms, so a long row is read once
    for both instead of once each:
    - ``sum(exp(a - c))`` with ``c`` the row maximum ``amax(a)`` or a function of it only
      (logsumexp's finite maximum) ("softmax"): lanes keep a running maximum and a sum
      rescaled whenever it grows (the online softmax), brought to ``c`` at the end;
    - ``sum|mean((a - mean(a))**2)`` ("var"): Welford's mean and squared deviations per
      lane, merged across lanes and splits by Chan's formula (no cancellation, unlike
      sum(a*a)).
    """
    kind, x = op_name(r.target), r.args[0]
    if kind not in ("sum", "mean") or x not in members or an.ctx.get(x) != "full":
        return None
    xk = op_name(x.target)
    if xk == "exp" and kind == "sum" and len(x.args) == 1:
        mode, d, partner_kind = "softmax", x.args[0], "amax"
    elif (xk == "mul" and len(x.args) == 2 and x.args[0] is x.args[1]) or (
            xk == "pow" and len(x.args) == 2 and x.args[1] == 2):
        mode, d, partner_kind = "var", x.args[0], "mean"
    else:
        return None
    if (not isinstance(d, fx.Node) or d not in members or op_name(d.target) != "sub"
            or len(d.args) != 2 or d.kwargs.get("alpha", 1) != 1):
        return None
    a, c = d.args
    if not isinstance(c, fx.Node) or c not in members or an.ctx[c] == "full":
        return None
    m = c if c in an.reds else None
    if m is None and mode == "softmax":  # a function of one reduction: that is the partner
        reds = [x for x in _ancestors(c, members, stop=set(an.reds)) if x in an.reds]
        m = reds[0] if len(reds) == 1 and an.ready[c] == an.ready[reds[0]] else None
    if (m is None or m in an.online or op_name(m.target) != partner_kind or m.args[0] is not a
            or not isinstance(a, fx.Node) or val(a).dtype != torch.float32
            or val(x).dtype != torch.float32):
        return None
    if mode == "softmax" and _row_len(a, reduction_dims(m)[0]) < ONLINE_SOFTMAX_MIN_R:
        return None  # the second read hits the L2; two exps per element would cost more
    return _Pair(mode, m, a, c)


def _row_len(a: fx.Node, rdims: tuple[int, ...]) -> int:
    """The reduced extent at the captured sizes (0 if unknown)."""
    try:
        sizes = [hint(s) for s in val(a).shape]
    except (TypeError, AttributeError):
        return 0
    n = 1
    for d in rdims:
        n *= sizes[d]
    return n


def _decompose(idx: str, prefix: str, sizes: str, ndim: str, rem: str,
               indent: str, r: int = MAX_RANK) -> list[str]:
    """Linear index -> per-dim indices (innermost last) over at most ``r`` dims; the
    outermost dim needs no modulo."""
    lines = [f"{indent}{rem} = {idx}"]
    for d in reversed(range(r)):
        lines.append(f"{indent}if {ndim} > {r - 1 - d}:")
        lines.append(f"{indent}    if {ndim} == {r - d}:")
        lines.append(f"{indent}        {prefix}{d} = {rem}")
        lines.append(f"{indent}    else:")
        lines.append(f"{indent}        {prefix}{d} = {rem} % {sizes}{d}")
        lines.append(f"{indent}        {rem} = {rem} // {sizes}{d}")
    return lines


def _offsets(target: str, prefix: str, strides: str, ndim: str, base: str, indent: str,
             widen: bool, r: int = MAX_RANK) -> list[str]:
    """``target = base + sum_d idx_d * stride_d`` over the dims that exist, of at most
    ``r``; ``widen``: each index first takes the program id's type (``pz``, 0 in int64
    where ``IDX64``, else int32)."""
    lines = [f"{indent}{target} = {base}"]
    for d in range(r):
        idx = f"({prefix}{d} + pz)" if widen else f"{prefix}{d}"
        lines.append(f"{indent}if {ndim} > {r - 1 - d}:")
        lines.append(f"{indent}    {target} += {idx} * {strides}{d}")
    return lines


def _rhs(line: str) -> str:
    return line.split(" = ", 1)[1]


def emit_reduction(g: Group, target: Any = None) -> KernelSource:
    """The row template for reduction group ``g`` (see the module docstring)."""
    an = _analyse(g)
    gen = _Gen(g, an)
    with narrowed(list(g.nodes)) as narrow:
        gen.narrow = bool(narrow)
        source = gen.kernel()
    wrapper = gen.wrapper()
    cfg: dict[str, Any] = {"template": "row", "passes": an.npasses, "splittable": True,
                           **_group_policy(an)}
    cfg["at_capture_sizes"] = _capture_config(g, an, getattr(target, "sm_count", 132))
    notes = [f"{an.npasses} pass(es) over the reduced dims; a row that fits one chunk is "
             "loaded once, longer rows are loaded again in every pass"]
    at = cfg["at_capture_sizes"]
    return KernelSource(gen.kname, gen.wname, source, wrapper, gen.tensors + gen.scalars,
                        gen.outs, cfg, notes, signature=gen.signature(),
                        constexprs=gen.build_constexprs(at),
                        num_warps=int(at.get("num_warps", 4)))


class _Gen:
    """Text of one reduction kernel and its wrapper."""

    def __init__(self, g: Group, an: _Analysis) -> None:
        self.g, self.an = g, an
        self.members = set(g.nodes)
        self.kname, self.wname = f"_kc_{g.name}_kernel", f"_kc_{g.name}"
        self.narrow = False  # an int64 index computed in KC_NI (see ranges)
        self.tensors = [a for a in g.inputs if is_tensor_node(a)]
        self.scalars = [a for a in g.inputs if not is_tensor_node(a)]
        for a in self.scalars:
            if not isinstance(val(a), (int, float, torch.SymInt, torch.SymFloat)):
                _fail(f"{a.name}: an input that is neither a tensor nor a number")
        self.in_name = {a: f"in{i}" for i, a in enumerate(self.tensors)}
        self.sc_name = {a: f"sc{i}" for i, a in enumerate(self.scalars)}
        self.outs = list(g.outputs)
        self.out_name = {o: f"out{j}" for j, o in enumerate(self.outs)}
        # sizes and strides for as many kept and reduced dims as the domain has, not
        # MAX_RANK each: Triton's launcher costs ~0.45 us per int argument on the H200's
        # host, and a softmax over a 2-D input passed 38 integers where 8 do
        self.kr = max(1, min(MAX_RANK, len(g.domain) - len(set(g.rdims))))
        self.rr = max(1, min(MAX_RANK, len(set(g.rdims))))
        # gathers on the domain: a view of the source with stride 0 on the gathered dims,
        # plus index * stride per gathered dim; index tensors loaded (or computed from their
        # positions) once per row where they do not vary along the reduced dims (``*_RV``)
        self.gathers = [n for n in g.nodes
                        if gather_dims(n) is not None and an.ctx[n] == "full"]
        # one value per row (plan.row_gather): loaded once per row from its source's row
        # at the index, which is a per-row input or value of the kernel
        self.row_gathers = [n for n in g.nodes if an.ctx[n] == "keep" and row_gather(n, g)]
        self.canon = gather_canon(self.gathers)
        self.gi_node = {self.canon[(i, k)]: t for i, n in enumerate(self.gathers)
                        for k, t in enumerate(gather_indices(n))}
        self._operands()

    # ------------------------------------------------------------------ operands
    def _operands(self) -> None:
        """The strided views the kernel addresses: inputs per context of use, outputs."""
        an, members = self.an, self.members
        needed: set[fx.Node] = set()  # member nodes computed somewhere
        for p in range(1, an.npasses + 1):
            needed |= set(an.pass_nodes[p])
        needed |= {n for n in self.g.nodes if an.ctx[n] not in ("full", "pos")}
        uses: dict[fx.Node, set[str]] = {a: set() for a in self.tensors}
        for n in self.g.nodes:
            if n not in needed or n in self.gathers:  # (a gather reads through its views)
                continue
            if n in self.row_gathers:  # its source through a view of its own
                for a in gather_indices(n):
                    if a in uses:
                        uses[a].add("keep")
                continue
            if n in an.reds:
                if an.source(n) not in members:
                    uses[an.source(n)].add("full")
                continue
            for a in n.all_input_nodes:
                if a in uses:
                    uses[a].add(an.ctx[n])
        self.full_ins = [a for a in self.tensors if "full" in uses[a]]
        if not self.full_ins and not self.gathers:
            _fail("no full-context tensor input to derive the domain from")
        _check_domain(self.g.domain, self.full_ins + self.gathers)
        self.full_ops: list[_Op] = []
        self.red_ops: list[_Op] = []
        self.op_of: dict[tuple[fx.Node, str], _Op] = {}
        for a in self.tensors:
            nm = self.in_name[a]
            for ctx, view in (("full", f"{nm}.expand(shape)"), ("keep", f"{nm}.expand(keep)"),
                              ("drop", f"_kc_unsqueeze_dims({nm}.expand(drop), rdims)")):
                if ctx in uses[a]:
                    self._add_op(_Op(f"{nm}{ctx[0]}", nm, ctx, view), (a, ctx))
        for i, n in enumerate(self.gathers):  # sources first: they pick the layout
            self._add_op(_Op(f"gx{i}", self.in_name[n.args[0]], "full", f"gxv{i}"), (n, "gx"))
        for j, n in enumerate(self.row_gathers):  # offsets of the row, not loaded up front
            self._add_op(_Op(f"rg{j}", self.in_name[n.args[0]], "keep", f"rgv{j}"), (n, "rg"))
        for nm, t in self.gi_node.items():
            ptr = "" if t in self.g.positions else self.in_name[t]
            self._add_op(_Op(nm, ptr, "full", nm), (t, nm))
        stand = {t: k for k, t in enumerate(self.g.positions)}
        for t in an.pos_reads:  # no pointer: the strides of the stand-in give the position
            k = stand[t]
            self._add_op(_Op(f"pv{k}", "", "full", f"vs{k}.expand(shape)"), (t, "pv"))
        for o in self.outs:
            nm = self.out_name[o]
            ctx = an.ctx[o]
            view = f"_kc_unsqueeze_dims({nm}, rdims)" if ctx == "drop" else nm
            self._add_op(_Op(nm, nm, ctx, view), (o, "out"))

    def _add_op(self, op: _Op, key: tuple[fx.Node, str]) -> None:
        self.op_of[key] = op
        (self.full_ops if op.ctx == "full" else self.red_ops).append(op)

    # -------------------------------------------------------------------- kernel
    def kernel(self) -> str:
        """The main kernel and, for one-pass groups, the kernel combining split partials."""
        params = self._params()
        body = self._prologue()
        body += self._reduced_after(0, "    ")
        body.append("    if ONE_CHUNK:")
        body.append("        # the whole reduced extent in one tile: load once, keep values")
        body += self._passes(True, "        ")
        body.append("    else:")
        body += self._passes(False, "        ")
        text = ("@triton.jit\ndef " + self.kname + "(" + ", ".join(params) + "):\n"
                + "\n".join(body))
        if self.split:
            text += "\n\n\n" + self._combine_kernel(params)
            return text
        # several passes over few long rows: one launch per pass, R split over programs
        mparams = self._params(multi=True)
        for p in range(1, self.an.npasses + 1):
            body = self._prologue()
            body += self._reduced_after(0, "    ", store=p == 1)
            body += self._passes(False, "    ", only=p)
            text += (f"\n\n\n@triton.jit\ndef {self.kname}_s{p}(" + ", ".join(mparams) + "):\n"
                     + "\n".join(body))
            if any(self.an.ready[r] == p for r in self.an.reds):
                text += "\n\n\n" + self._combine_kernel(mparams, p)
        return text

    @property
    def split(self) -> bool:
        """One-pass groups may split R over several programs (partials, then a combine)."""
        return self.an.npasses == 1

    def signature(self) -> dict[str, str]:
        """Triton types of the main kernel's runtime parameters (for cross-compilation)."""
        from kernelcraft.codegen.common import ptr_type, scalar_type

        sig: dict[str, str] = {}
        names = {self.in_name[a]: a for a in self.tensors}
        names.update({self.out_name[o]: o for o in self.outs})
        scalars = {self.sc_name[a]: a for a in self.scalars}
        for p in self._params():
            if ":" in p:
                continue
            if p in names:
                sig[p] = ptr_type(names[p])
            elif p in scalars:
                sig[p] = scalar_type(scalars[p])
            elif p.startswith("wsi_"):
                sig[p] = "*i64"
            elif p.startswith("ws_"):
                sig[p] = "*fp32"
            else:  # sizes and strides as the launch passes them under 2**31
                sig[p] = "i32"
        return sig

    def build_constexprs(self, at: dict[str, Any]) -> dict[str, Any]:
        """A representative GPU configuration: the one picked at the captured sizes."""
        consts: dict[str, Any] = {
            "KDIM": 1, "RDIM": 1, "BLOCK_K": int(at.get("BLOCK_K", 1)),
            "BLOCK_R": int(at.get("BLOCK_R", 1024)), "ONE_CHUNK": bool(at.get("one_chunk")),
            "ALIGNED": False, "IDX64": False, **{f"{nm}_RV": False for nm in self.gi_node},
        }
        if self.split:
            consts.update(PARTIAL=int(at.get("split", 1)) > 1, BLOCK_S=1)
        return consts

    def _params(self, multi: bool = False) -> list[str]:
        """The main kernel's parameters; ``multi``: those of a split pass and its combine."""
        split = self.split or multi
        params = [self.in_name[a] for a in self.tensors] + [self.out_name[o] for o in self.outs]
        if split:
            for r in self.an.reds:
                params += [f"ws_{r.name}{w}" for w in _ws_suffixes(r, self.an)]
                if op_name(r.target) in ("argmax", "argmin"):
                    params.append(f"wsi_{r.name}")
        if multi:
            params += [f"rb_{r.name}" for r in self.an.reds]
        params += [self.sc_name[a] for a in self.scalars] + ["K", "R"]
        kr, rr = self.kr, self.rr
        params += [f"ksize{d}" for d in range(kr)] + [f"rsize{d}" for d in range(rr)]
        for op in self.full_ops + self.red_ops:
            params += [f"{op.name}_ks{d}" for d in range(kr)]
        for op in self.full_ops:
            params += [f"{op.name}_rs{d}" for d in range(rr)]
        for i, n in enumerate(self.gathers):
            params += [f"gx{i}_{x}{k}" for x in "ns" for k in range(len(gather_dims(n)))]
        params += [f"rg{j}_{x}" for j in range(len(self.row_gathers)) for x in "ns"]
        if split:
            params += ["SPLIT", "RCHUNK"]
        params += ["KDIM: tl.constexpr", "RDIM: tl.constexpr", "BLOCK_K: tl.constexpr",
                   "BLOCK_R: tl.constexpr", "ONE_CHUNK: tl.constexpr", "ALIGNED: tl.constexpr"]
        params.append("IDX64: tl.constexpr")
        params += [f"{nm}_RV: tl.constexpr" for nm in self.gi_node]
        if split:
            params += ["PARTIAL: tl.constexpr", "BLOCK_S: tl.constexpr"]
        return params

    def _prologue(self) -> list[str]:
        """Rows of this program, their kept offsets, reduced-context input loads."""
        body = [
            "    pid = tl.program_id(0)",
            "    if IDX64:  # int64 index math only where an offset needs it",
            "        pid = pid.to(tl.int64)",
            *(ni_lines() if self.narrow else []),
            "    pz = pid * 0",
            "    rows = pid * BLOCK_K + tl.arange(0, BLOCK_K)[:, None]",
            "    rmask = rows < K",
        ]
        body += _decompose("rows", "ki", "ksize", "KDIM", "_krem", "    ", self.kr)
        for op in self.full_ops + self.red_ops:
            body += _offsets(f"koff_{op.name}", "ki", f"{op.name}_ks", "KDIM", "rows * 0",
                             "    ", False, self.kr)
        for op in self.red_ops:
            if op.ptr.startswith("in") and not op.name.startswith("rg"):
                body.append(f"    x_{op.name} = tl.load({op.ptr} + koff_{op.name}, "
                            "mask=rmask, other=0)")
        self.red_val: dict[fx.Node, str] = {}
        self.early: set[fx.Node] = set()  # reduced nodes emitted ahead of their level
        return body

    def _combine_kernel(self, params: list[str], p: int = 0) -> str:
        """Partials [K, SPLIT] -> reduced values, then the reduced-context tail and stores.

        ``p``: the combine of that pass of a split multi-pass group, which also keeps its
        values in per-row buffers for the later passes.
        """
        body = self._prologue()
        body += self._reduced_after(0, "    ", store=False)
        body += self._earlier_passes(p, "    ")
        body.append("    s = tl.arange(0, BLOCK_S)[None, :]")
        body.append("    smask = rmask & (s < SPLIT)")
        for r in self.an.reds:
            if self.an.ready[r] != max(p, 1):
                continue
            kind, nm = op_name(r.target), r.name
            where = f"ws_{nm} + rows * SPLIT + s"
            if kind in ("argmax", "argmin"):
                body.append(f"    accv_{nm} = tl.load({where}, mask=smask, "
                            f"other={REDUCTIONS[kind]})")
                body.append(f"    acci_{nm} = tl.load(wsi_{nm} + rows * SPLIT + s, mask=smask, "
                            "other=-1)")
            elif self.an.mode(r) == "var":
                body += _merge_var_partials(nm, "    ")
            else:
                other = _identity(r)
                body.append(f"    acc_{nm} = tl.load({where}, mask=smask, other={other})")
            body += self._finish(r, "    ", lanes=False)
            self.red_val[r] = f"v_{nm}"
            if p:
                body.append(f"    tl.store(rb_{nm} + rows, v_{nm}, mask=rmask)")
        body += self._reduced_after(max(p, 1), "    ")
        name = f"{self.kname}_c{p}" if p else f"{self.kname}_combine"
        return f"@triton.jit\ndef {name}(" + ", ".join(params) + "):\n" + "\n".join(body)

    def _earlier_passes(self, p: int, ind: str) -> list[str]:
        """A split pass ``p`` (or its combine): the reductions of passes before it, read from
        the buffers their combines wrote, and the reduced-context values computed from them."""
        lines: list[str] = []
        for r in self.an.reds:
            if p and self.an.ready[r] < p:
                lines.append(f"{ind}v_{r.name} = tl.load(rb_{r.name} + rows, mask=rmask)")
                self.red_val[r] = f"v_{r.name}"
        for level in range(1, p):
            lines += self._reduced_after(level, ind, store=False)
        return lines

    def _full_value(self, x: fx.Node, vals: dict[fx.Node, str], sfx: str) -> str:
        """A full-context value of this chunk: computed in the group, or a loaded input."""
        return vals[x] if x in self.members else f"x_{self.op_of[(x, 'full')].name}{sfx}"

    def _operand(self, a: fx.Node, ctx: str, vals: dict[fx.Node, str], sfx: str) -> str:
        if a in self.sc_name:
            return self.sc_name[a]
        if a in self.in_name:
            op = self.op_of[(a, ctx)]
            return f"x_{op.name}{sfx}" if ctx == "full" else f"x_{op.name}"
        if a in self.red_val:
            return self.red_val[a]
        if a in vals:
            return vals[a]
        raise AssertionError(f"{a.name} is not available")

    def _lower(self, n: fx.Node, ctx: str, vals: dict[fx.Node, str], sfx: str) -> str:
        if n in self.row_gathers:  # the row's value at its index (wrapped below 0)
            j = self.row_gathers.index(n)
            ix = f"{self._operand(gather_indices(n)[0], ctx, vals, sfx)}.to(tl.int64)"
            op = self.op_of[(n, "rg")]
            return (f"tl.load({op.ptr} + koff_{op.name} + tl.where({ix} < 0, {ix} + rg{j}_n, "
                    f"{ix}) * rg{j}_s, mask=rmask, other=0)")
        if op_name(n.target) in ROW_VIEWS:  # a per-row value re-viewed (plan._row_view_home)
            return self._operand(n.args[0], ctx, vals, sfx)
        env = {a: self._operand(a, ctx, vals, sfx) for a in n.all_input_nodes}
        return _rhs(lower_pointwise(n, env))

    def _finish(self, r: fx.Node, ind: str, lanes: bool = True) -> list[str]:
        """``r``'s value per row; an online sum first needs its shift (and what that needs),
        a variance its lanes merged (``lanes``; a combine kernel has merged the splits)."""
        pair = self.an.online.get(r)
        lines = self._shift_chain(pair, ind)
        if lanes and pair is not None and pair.mode == "var":
            lines += _merge_var_lanes(r.name, ind, *self.bounds)
        shift = self.red_val[pair.shift] if pair is not None and pair.mode == "softmax" else ""
        return lines + _finish(r, ind, pair, shift, lanes)

    def _shift_chain(self, pair: _Pair | None, ind: str) -> list[str]:
        """An online sum's shift and its reduced-context ancestors, ahead of their level."""
        lines: list[str] = []
        if pair is not None and pair.mode == "softmax" and pair.shift not in self.red_val:
            chain = _ancestors(pair.shift, self.members) | {pair.shift}
            for n in self.g.nodes:  # the shift's reduced-context ancestors, in order
                if n in self.early or n in self.an.reds or self.an.ctx[n] in ("full", "pos"):
                    continue
                if n in chain:
                    v = f"v_{n.name}"
                    lines.append(f"{ind}{v} = {self._lower(n, self.an.ctx[n], {}, '')}")
                    self.red_val[n] = v
                    self.early.add(n)
        return lines

    def _reduced_after(self, level: int, ind: str, store: bool = True) -> list[str]:
        """Reduced-context nodes computable once pass ``level`` is done, and their stores."""
        an, lines = self.an, []
        for n in self.g.nodes:
            if (an.ctx[n] in ("full", "pos") or n in an.reds or an.ready[n] != level
                    or n in self.early):
                continue
            v = f"v_{n.name}"
            lines.append(f"{ind}{v} = {self._lower(n, an.ctx[n], {}, '')}")
            self.red_val[n] = v
        for o in self.outs:
            if store and an.ctx[o] != "full" and an.ready[o] == level:
                op = self.op_of[(o, "out")]
                lines.append(f"{ind}tl.store({op.ptr} + koff_{op.name}, "
                             f"{self.red_val[o]}.to({tl_dtype(o)}), mask=rmask)")
        return lines

    def _passes(self, one: bool, ind: str, only: int = 0) -> list[str]:
        """All passes, either looped over R chunks or (``one``) on a single resident tile.

        ``only``: just that pass over this program's share of R, ending in partials; the
        reductions of earlier passes come from the buffers their combine kernels wrote.
        """
        an, lines = self.an, []
        self.early = set()  # each branch (one chunk, looped) emits its own
        self.red_val = {n: v for n, v in self.red_val.items() if an.ready.get(n, 0) == 0}
        split = self.split or bool(only)
        self.bounds = ("r_lo", "r_hi") if split else ("0", "R")  # a looped pass's R range
        lines += self._earlier_passes(only, ind)
        lines += self._row_indices(ind)
        vals: dict[fx.Node, str] = {}  # full values kept across passes (one chunk only)
        loaded: set[str] = set()
        inner = ind if one else ind + "    "
        if one:
            lines += self._chunk_index(ONE_SFX, "0", ind)
        reads = {p: self._pass_inputs(p, an.pass_nodes[p]) for p in range(1, an.npasses + 1)}
        for p in range(1, an.npasses + 1):
            if only and p != only:
                continue
            sfx = ONE_SFX if one else f"_p{p}"
            reds = [r for r in an.reds if an.ready[r] == p]
            stores = [o for o in self.outs if an.ctx[o] == "full" and an.need[o] == p]
            nodes = [n for n in an.pass_nodes[p] if not (one and n in vals)]
            what = [f"{op_name(r.target)}({r.name})" for r in reds]
            lines.append(f"{ind}# pass {p}: " + ", ".join(what + [f"store {o.name}"
                                                                   for o in stores]))
            for r in reds:
                lines += _acc_init(r, ind, an.online.get(r))
            if not one:
                vals = {}
                loaded = set()
                if split:  # this program's share of R (all of it unless split)
                    lines.append(f"{ind}r_lo = tl.program_id(1) * RCHUNK")
                    lines.append(f"{ind}r_hi = tl.minimum(r_lo + RCHUNK, R)")
                    lines.append(f"{ind}for r0{sfx} in range(r_lo, r_hi, BLOCK_R):")
                else:
                    lines.append(f"{ind}for r0{sfx} in range(0, R, BLOCK_R):")
                lines += self._chunk_index(sfx, f"r0{sfx}", inner)
            for a in self._pass_inputs(p, nodes):
                op = self.op_of[(a, "full")]
                if op.name in loaded:
                    continue
                loaded.add(op.name)
                lines += self._roff(op.name, sfx, inner)
                hint = "" if one or split else _eviction(a, p, reads)
                lines.append(f"{inner}x_{op.name}{sfx} = tl.load({op.ptr} + (koff_{op.name} + "
                             f"roff_{op.name}{sfx}), mask=mask{sfx}, other=0{hint})")
            for t in an.pos_reads:
                if t not in vals and any(t in n.all_input_nodes for n in nodes):
                    lines += self._position_value(t, sfx, inner, vals)
            for n in nodes:
                v = f"v_{n.name}{sfx}"
                if n in self.gathers:
                    lines += self._gather(n, v, sfx, inner, loaded)
                else:
                    lines.append(f"{inner}{v} = {self._lower(n, 'full', vals, sfx)}")
                vals[n] = v
            done: set[fx.Node] = set()
            for r in reds:  # (an online sum keeps its own running maxima: any order)
                if one and an.mode(r) == "softmax":
                    continue  # resident: the maximum first, then one exp per element
                xv = self._full_value(an.source(r), vals, sfx)
                lines += _accumulate(r, f"{xv}.to({_acc_dtype(r)})", sfx, inner,
                                     an.online.get(r), self.bounds[0])
            for r in reds:
                pair = an.online.get(r)
                if not one or pair is None or pair.mode != "softmax":
                    continue
                xv = self._full_value(pair.source, vals, sfx)
                if pair.partner not in done:
                    lines += _finish(pair.partner, inner)
                    self.red_val[pair.partner] = f"v_{pair.partner.name}"
                    done.add(pair.partner)
                lines += self._shift_chain(pair, inner)
                lines.append(f"{inner}acc_{r.name} = tl.where(mask{sfx}, tl.exp({xv}.to(tl.float32)"
                             f" - {self.red_val[pair.shift]}), 0.0)")
                lines += _finish(r, inner)
                self.red_val[r] = f"v_{r.name}"
                done.add(r)
            for o in stores:
                op = self.op_of[(o, "out")]
                lines += self._roff(op.name, sfx, inner)
                lines.append(f"{inner}tl.store({op.ptr} + (koff_{op.name} + roff_{op.name}{sfx}),"
                             f" {vals[o]}.to({tl_dtype(o)}), mask=mask{sfx})")
            if only:
                for r in reds:
                    lines += _partial(r, ind, an.online.get(r), self.bounds)
                continue
            tail = ind
            if self.split and not one:
                lines.append(f"{ind}if PARTIAL:")
                for r in reds:
                    lines += _partial(r, ind + "    ", an.online.get(r), self.bounds)
                lines.append(f"{ind}else:")
                tail = ind + "    "
            for r in reds:
                if r not in done:
                    lines += self._finish(r, tail, lanes=not one)
                    self.red_val[r] = f"v_{r.name}"
            lines += self._reduced_after(p, tail)
        return lines

    def _pass_inputs(self, p: int, nodes: list[fx.Node]) -> list[fx.Node]:
        """The full-context inputs pass ``p`` loads for ``nodes`` and its reductions."""
        an, ins = self.an, []
        for n in nodes:
            if n in self.gathers:
                continue  # its source and indices are read through its own views
            ins += [a for a in n.all_input_nodes if a in self.in_name and a not in ins]
        ins += [an.source(r) for r in an.reds if an.ready[r] == p
                and an.source(r) in self.in_name and an.source(r) not in ins]
        return ins

    def _index_value(self, nm: str, at: str, tag: str, mask: str, ind: str) -> list[str]:
        """``giv_{tag} = `` index view ``nm``'s values at offsets ``at`` (in the index
        math's type: int32 unless ``IDX64``, where an index is below its dim's size): loaded,
        or computed from the position (the offset into its contiguous stand-in)."""
        t = self.gi_node[nm]
        if t in self.g.positions:
            lines, value = self._computed(t, at, tag, ind)
        else:
            lines, value = [], f"tl.load({self.op_of[(t, nm)].ptr} + {at}, mask={mask}, other=0)"
        return lines + [f"{ind}if IDX64:", f"{ind}    giv_{tag} = {value}.to(tl.int64)",
                        f"{ind}else:", f"{ind}    giv_{tag} = {value}.to(tl.int32)"]

    def _position_value(self, t: fx.Node, sfx: str, ind: str, vals: dict[fx.Node, str]
                        ) -> list[str]:
        """Position value ``t`` at each element of a chunk into ``vals``: computed from the
        element's offset into its contiguous stand-in (``vs{k}``, viewed over the domain)."""
        nm = self.op_of[(t, "pv")].name
        more, vals[t] = self._computed(t, f"koff_{nm} + roff_{nm}{sfx}", nm + sfx, ind)
        return self._roff(nm, sfx, ind) + more

    def _computed(self, t: fx.Node, at: str, tag: str, ind: str) -> tuple[list[str], str]:
        """Lines computing position value ``t`` at offsets ``at`` into its stand-in, and
        the expression of the value."""
        lines, value = position_lines(self.g.positions[t], f"gp_{tag}", tag,
                                      dict(self.sc_name), ind)
        return [f"{ind}gp_{tag} = {at}", *lines], value

    def _row_indices(self, ind: str) -> list[str]:
        """Index views constant along the reduced dims: once per row, before the passes."""
        lines: list[str] = []
        for nm in self.gi_node:
            lines.append(f"{ind}if not {nm}_RV:")
            lines += self._index_value(nm, f"koff_{nm}", nm, "rmask", ind + "    ")
        return lines

    def _roff(self, name: str, sfx: str, ind: str) -> list[str]:
        """``roff_{name}{sfx}``: view ``name``'s offsets along the reduced dims of a chunk."""
        return _offsets(f"roff_{name}{sfx}", f"rj{sfx}_", f"{name}_rs", "RDIM",
                        f"(cols{sfx} * 0 + pz)", ind, True, self.rr)

    def _gather(self, n: fx.Node, v: str, sfx: str, ind: str, loaded: set[str]) -> list[str]:
        """Lines loading gather ``n``'s values of this chunk into ``v``."""
        i = self.gathers.index(n)
        lines: list[str] = []
        off = f"koff_gx{i} + roff_gx{i}{sfx}"
        for k in range(len(gather_dims(n))):
            nm = self.canon[(i, k)]
            if f"gi:{nm}" not in loaded:
                loaded.add(f"gi:{nm}")
                lines += self._roff(nm, sfx, ind)
                lines.append(f"{ind}if {nm}_RV:")
                lines += self._index_value(nm, f"koff_{nm} + roff_{nm}{sfx}", nm + sfx,
                                           f"mask{sfx}", ind + "    ")
                lines += [f"{ind}else:", f"{ind}    giv_{nm}{sfx} = giv_{nm}"]
            ix = f"giv_{nm}{sfx}"
            lines.append(f"{ind}ix_{n.name}{k}{sfx} = tl.where({ix} < 0, {ix} + gx{i}_n{k}, {ix})")
            off += f" + ix_{n.name}{k}{sfx} * gx{i}_s{k}"
        lines += self._roff(f"gx{i}", sfx, ind)
        lines.append(f"{ind}{v} = tl.load({self.op_of[(n, 'gx')].ptr} + ({off}), "
                     f"mask=mask{sfx}, other=0)")
        return lines

    def _chunk_index(self, sfx: str, start: str, ind: str) -> list[str]:
        """Chunk positions and their per-dim indices. ``ALIGNED`` (the innermost reduced
        extent a multiple of BLOCK_R): a chunk lies in one innermost run, so only its start
        is divided into indices, not every element (batch norm's (N, H*W) walk)."""
        lines = [f"{ind}cols{sfx} = {start} + tl.arange(0, BLOCK_R)[None, :]",
                 f"{ind}mask{sfx} = rmask & (cols{sfx} < R)"]
        per_elem = _decompose(f"cols{sfx}", f"rj{sfx}_", "rsize", "RDIM", f"_rrem{sfx}", ind,
                              self.rr)
        if start == "0":
            return lines + per_elem
        last = f"rj{sfx}_{self.rr - 1}"
        return lines + [f"{ind}if ALIGNED:"] + _decompose(
            start, f"rj{sfx}_", "rsize", "RDIM", f"_rrem{sfx}", ind + "    ", self.rr) + [
            f"{ind}    {last} = {last} + tl.arange(0, BLOCK_R)[None, :]",
            f"{ind}else:"] + ["    " + ln for ln in per_elem]

    # ------------------------------------------------------------------- wrapper
    def wrapper(self) -> str:
        """The launch wrapper: a plan (output shapes, grid, integer arguments, constexprs)
        cached per signature of the arguments (``_kc_signature``) for the groups that launch
        one kernel; split launches (partials, combines) take the whole path, whose sizes,
        strides and config are cached per signature too."""
        in_name, out_name = self.in_name, self.out_name
        args = ", ".join([in_name[a] for a in self.tensors]
                         + [self.sc_name[a] for a in self.scalars])
        kargs = [in_name[a] for a in self.tensors] + [out_name[o] for o in self.outs]
        first = in_name[self.tensors[0]]
        ws = self._workspaces()
        if self.split:
            kargs += [first] * len(ws)  # not read unless split
        kargs += [self.sc_name[a] for a in self.scalars]
        ints = "[K, R, *ksz, *rsz, *[s for st in kst for s in st], *[s for st in rst for s in st]"
        common = "KDIM=kdim, RDIM=rdim, BLOCK_R=br, ALIGNED=aligned, IDX64=far"
        if self.gathers or self.row_gathers:
            ints += ", *gx"
        if self.gathers:
            common += ", **rv"
        w = [f"def {self.wname}_plan({args}):", *self._preamble("'meta'")]
        w.append(f"    shapes = [{', '.join(self._out_shape(o) for o in self.outs)}]")
        w.append("    if K == 0:\n        return shapes, None, None, None")
        w += self._split_choice()
        w.append("    if split != 1:\n        return None")
        if self.split:
            w.append(f"    return shapes, (triton.cdiv(K, bk), 1), {ints}, split, rchunk], "
                     f"dict({common}, BLOCK_K=bk, ONE_CHUNK=br >= R, PARTIAL=False, "
                     "BLOCK_S=1, num_warps=warps)")
        else:
            w.append(f"    return shapes, (triton.cdiv(K, bk),), {ints}], dict({common}, "
                     "BLOCK_K=bk, ONE_CHUNK=br >= R, num_warps=warps)")
        w += ["", "", f"{self.wname}_plans = {{}}", "", "",
              f"def {self.wname}({args}):",
              f"    key = _kc_signature(({args},))",
              f"    plan = {self.wname}_plans.get(key, False)",
              "    if plan is False:",
              f"        plan = {self.wname}_plans[key] = {self.wname}_plan({args})",
              "    if plan is None:",
              f"        return {self.wname}_whole({args}, key)",
              "    shapes, grid, ints, kw = plan",
              f"    dev = {first}.device"]
        for i, o in enumerate(self.outs):
            w.append(f"    {out_name[o]} = torch.empty(shapes[{i}], device=dev, "
                     f"dtype={val(o).dtype})")
        ret = f"({', '.join(out_name[o] for o in self.outs)},)"
        w.append(f"    if grid is not None:\n        {self.kname}[grid]({', '.join(kargs)}, "
                 "*ints, **kw)")
        w.append(f"    return {ret}")
        cached = ("shape, keep, drop, K, R, ints0, kdim, rdim, bk, br, warps, aligned, far, "
                  "split, rchunk" + (", rv" if self.gathers else ""))
        w += ["", "", f"def {self.wname}_whole_plan({args}):", *self._preamble("'meta'"),
              f"    ints0 = {ints}]",
              "    if K == 0:",
              "        split, rchunk = 1, R",
              "    else:",
              *["    " + ln for ln in self._split_choice()],
              f"    return {cached}",
              "", "", f"{self.wname}_wholes = {{}}", "", "",
              f"def {self.wname}_whole({args}, key):",
              f"    p = {self.wname}_wholes.get(key)",
              "    if p is None:",
              f"        p = {self.wname}_wholes[key] = {self.wname}_whole_plan({args})",
              f"    {cached} = p",
              f"    dev = {first}.device"]
        for o in self.outs:
            w.append(f"    {out_name[o]} = torch.empty({self._out_shape(o)}, device=dev, "
                     f"dtype={val(o).dtype})")
        w.append(f"    if K == 0:\n        return {ret}")
        kargs = [in_name[a] for a in self.tensors] + [out_name[o] for o in self.outs]
        if self.split:
            kargs += ["*ws"]
        kargs += [self.sc_name[a] for a in self.scalars] + ["*ints0"]
        if not self.split:
            w.append("    if split == 1:")
            w.append(f"        {self.kname}[(triton.cdiv(K, bk),)]({', '.join(kargs)}, {common}, "
                     "BLOCK_K=bk, ONE_CHUNK=br >= R, num_warps=warps)")
            w.append(f"        return {ret}")
            w += self._split_passes_launch(kargs, common)
        else:
            # R split over several programs when the rows alone leave the GPU idle
            w.append("    if split > 1:")
            w.append(f"        ws = [{', '.join(ws)}]")
            w.append("    else:")
            w.append(f"        ws = [{', '.join([first] * len(ws))}]  # not read")
            w.append(f"    {self.kname}[(triton.cdiv(K, bk), split)]({', '.join(kargs)}, "
                     f"split, rchunk, {common}, BLOCK_K=bk, ONE_CHUNK=br >= R, "
                     "PARTIAL=split > 1, BLOCK_S=1, num_warps=warps)")
            w.append("    if split > 1:")
            w.append("        bs = _kc_next_pow2(split)")
            w.append("        bk2 = max(1, min(_kc_next_pow2(K), 4096 // bs))")
            w.append(f"        {self.kname}_combine[(triton.cdiv(K, bk2),)]({', '.join(kargs)}, "
                     f"split, rchunk, {common}, BLOCK_K=bk2, ONE_CHUNK=False, PARTIAL=False, "
                     "BLOCK_S=bs, num_warps=4)")
        w.append(f"    return {ret}")
        return "\n".join(w)

    def _out_shape(self, o: fx.Node) -> str:
        return {"full": "shape", "keep": "keep", "drop": "drop"}[self.an.ctx[o]]

    def _preamble(self, out_device: str) -> list[str]:
        """Wrapper lines up to the launch config: the domain, K and R, the outputs (on
        ``out_device``: 'meta' where only their strides are needed), the coalesced views and
        the row config."""
        pol = _group_policy(self.an)
        in_name, out_name = self.in_name, self.out_name
        shapes = ", ".join([in_name[a] + ".shape" for a in self.full_ins]
                           + [f"gs{i}" for i in range(len(self.gathers))])
        arg = dict(in_name)
        w = [f"    dev = {in_name[self.tensors[0]]}.device"]
        for k, t in enumerate(self.g.positions):  # stand-ins: the index values' shapes
            w.append(f"    vs{k} = {stand_in(t, self.g.positions[t], self.sc_name)}")
            arg[t] = f"vs{k}"
        for i, n in enumerate(self.gathers):
            w += gather_shape_lines(i, n, arg)
        w += [f"    shape = _kc_row_domain([{shapes}], {len(self.g.domain)})",
             f"    rdims = {tuple(self.g.rdims)!r}",
             "    keep = [1 if d in rdims else s for d, s in enumerate(shape)]",
             "    drop = [s for d, s in enumerate(shape) if d not in rdims]",
             "    K = _kc_prod(drop)",
             "    R = _kc_prod(shape[d] for d in rdims)"]
        for o in self.outs:
            w.append(f"    {out_name[o]} = torch.empty({self._out_shape(o)}, "
                     f"device={out_device}, dtype={val(o).dtype})")
        gx: list[str] = []
        for i, n in enumerate(self.gathers):
            view, lines, _ = gather_view_lines(i, n, arg, "shape", self.canon)
            w += [f"    gxv{i} = {view}", *lines]
            gx += gather_ints(n, arg)
        for j, n in enumerate(self.row_gathers):  # the source's rows over the kept shape
            d, src = n.args[1] % val(n).dim(), arg[n.args[0]]
            w.append(f"    rgv{j} = _kc_gather_view({src}, {d}, 1, keep, keep, True)")
            gx += [f"{src}.shape[{d}]", f"{src}.stride({d})"]
        if self.gathers or self.row_gathers:
            w.append(f"    gx = [{', '.join(gx)}]")
        w.append(f"    fviews = [{', '.join(op.view for op in self.full_ops)}]")
        w.append(f"    rviews = [{', '.join(op.view for op in self.red_ops)}]")
        w.append("    ksz, kst, kdim, rsz, rst, rdim = _kc_split_coalesce(shape, rdims, fviews, "
                 f"rviews, {self.kr}, {self.rr})")
        w.append("    bk, br, warps = _kc_row_config(K, R, kst, kdim, rst, rdim, "
                 f"dev.type == 'cpu', {pol!r})")
        w.append(f"    bk, br, warps = _kc_split_tile(K, R, bk, br, warps, dev, {pol!r})")
        w.append(f"    t = _kc_tuned('{self.wname}', dev, (K, R))")
        w.append("    if t is not None:")
        w.append("        bk, br, warps = t['BLOCK_K'], t['BLOCK_R'], t['num_warps']")
        w.append(f"    aligned = rdim >= 2 and rsz[{self.rr - 1}] % br == 0")
        # int32 index math for resident rows unless an offset (a gather's source included)
        # or a row can pass 2**31. Measured on the H200: rows kept in one chunk gain (a
        # rolled LayerNorm 0.33 -> 0.14 ms, BERT's embeddings + LayerNorm 0.17 -> 0.08,
        # softmax over dim 1 of a 3-D tensor 0.22 -> 0.20), looped rows lose (a mean over
        # dim 1 0.135 -> 0.158, group norm 0.46 -> 0.52), so they keep int64
        srcs = "".join(f", {self.in_name[n.args[0]]}"
                       for n in self.gathers + self.row_gathers)
        w.append(f"    far = br < R or K >= 2**30 or _kc_far([*fviews, *rviews{srcs}])")
        if self.gathers:  # index views that vary along the reduced dims
            at = {op.name: j for j, op in enumerate(self.full_ops)}
            w.append("    rv = dict(" + ", ".join(f"{nm}_RV=any(rst[{at[nm]}])"
                                               for nm in self.gi_node) + ")")
        return w

    def _split_choice(self) -> list[str]:
        pol = _group_policy(self.an)
        w = [f"    split, rchunk = _kc_row_split(K, R, bk, br, dev, {pol!r})"]
        if self.split:
            w += ["    if t is not None:",
                  "        split, rchunk = _kc_row_split_n(R, br, t['SPLIT'])"]
        else:
            w += ["    if t is not None and 'SPLIT' in t:",
                  "        split, rchunk = _kc_row_split_n(R, br, t['SPLIT'])"]
        return w

    def _workspaces(self) -> list[str]:
        """Wrapper expressions of the [K, split] partials, in the kernels' parameter order."""
        ws: list[str] = []
        for r in self.an.reds:
            wdt = "torch.int64" if _int_lanes(r) else "torch.float32"
            ws += [f"torch.empty((K, split), device=dev, dtype={wdt})"
                   for _ in _ws_suffixes(r, self.an)]
            if op_name(r.target) in ("argmax", "argmin"):
                ws.append("torch.empty((K, split), device=dev, dtype=torch.int64)")
        return ws

    def _split_passes_launch(self, kargs: list[str], common: str) -> list[str]:
        """Wrapper lines of a multi-pass group split over R: each pass, then its combine."""
        ws = self._workspaces()
        rb = [f"torch.empty((K,), device=dev, dtype={val(r).dtype})" for r in self.an.reds]
        n_io = len(self.tensors) + len(self.outs)
        margs = kargs[:n_io] + ["*ws", "*rb"] + kargs[n_io:]
        w = [f"    ws = [{', '.join(ws)}]", f"    rb = [{', '.join(rb)}]",
             "    bs = _kc_next_pow2(split)",
             "    bk2 = max(1, min(_kc_next_pow2(K), 4096 // bs))"]
        for p in range(1, self.an.npasses + 1):
            w.append(f"    {self.kname}_s{p}[(triton.cdiv(K, bk), split)]({', '.join(margs)}, "
                     f"split, rchunk, {common}, BLOCK_K=bk, ONE_CHUNK=False, PARTIAL=True, "
                     "BLOCK_S=1, num_warps=warps)")
            if any(self.an.ready[r] == p for r in self.an.reds):
                w.append(f"    {self.kname}_c{p}[(triton.cdiv(K, bk2),)]({', '.join(margs)}, "
                         f"split, rchunk, {common}, BLOCK_K=bk2, ONE_CHUNK=False, "
                         "PARTIAL=False, BLOCK_S=bs, num_warps=4)")
        return w


def _ancestors(n: fx.Node, members: set[fx.Node],
               stop: set[fx.Node] | None = None) -> set[fx.Node]:
    """``n``'s ancestors among ``members``, not walking past the nodes in ``stop``."""
    out: set[fx.Node] = set()
    todo = [a for a in n.all_input_nodes if a in members]
    while todo:
        x = todo.pop()
        if x not in out:
            out.add(x)
            if stop is None or x not in stop:
                todo += [a for a in x.all_input_nodes if a in members]
    return out


def _ws_suffixes(r: fx.Node, an: _Analysis) -> list[str]:
    """Workspaces of ``r``'s split partials: Chan's merge needs count and mean beside M2."""
    return ["", "_n", "_mu"] if an.mode(r) == "var" else [""]


def _eviction(a: fx.Node, p: int, reads: dict[int, list[fx.Node]]) -> str:
    """A looped row's cache hint for input ``a`` in pass ``p``: kept in L2 (evict_last)
    where a later pass reads it again, first out (evict_first) at its last read after an
    earlier one, none for an input read once. The rows in flight fit L2 between passes
    unless the epilogue's stores and the other programs' streams push them out."""
    later = any(a in reads[q] for q in reads if q > p)
    if later:
        return ", eviction_policy='evict_last'"
    if any(a in reads[q] for q in reads if q < p):
        return ", eviction_policy='evict_first'"
    return ""


def _acc_init(r: fx.Node, ind: str, online: _Pair | None = None) -> list[str]:
    if online is not None and online.mode == "var":  # per lane: mean, squared deviations
        return [f"{ind}{v}_{r.name} = tl.zeros([BLOCK_K, BLOCK_R], tl.float32)"
                for v in ("lmu", "lm2")]
    if online is not None:  # lanes of sums, and the running maxima they are shifted by
        return [f"{ind}acc_{r.name} = tl.zeros([BLOCK_K, BLOCK_R], tl.float32)",
                f"{ind}rm_{r.name} = tl.full([BLOCK_K, BLOCK_R], -{FLT_MAX}, tl.float32)"]
    kind = op_name(r.target)
    if kind in ("argmax", "argmin"):
        return [f"{ind}accv_{r.name} = tl.full([BLOCK_K, BLOCK_R], {REDUCTIONS[kind]}, "
                "tl.float32)",
                f"{ind}acci_{r.name} = tl.full([BLOCK_K, BLOCK_R], -1, tl.int32)"]
    return [f"{ind}acc_{r.name} = tl.full([BLOCK_K, BLOCK_R], {_identity(r)}, "
            f"{_acc_dtype(r)})"]


#: an arg reduction's index lanes are int32 (a row's index: R < 2**31 - 1), half the
#: registers and integer work of int64; this marks a row's lanes holding no candidate
_NO_INDEX = str(2**31 - 1)
#: an int64 lane's identity for amax and amin
_INT64_LIMITS = {"amax": str(-2**63), "amin": str(2**63 - 1)}


def _int_lanes(r: fx.Node) -> bool:
    """A sum (a count), amax or amin of integers or booleans: exact in int64 lanes, not
    fp32 (a histogram's cumulative counts, a hash's minimum)."""
    return (op_name(r.target) in ("sum", "amax", "amin")
            and not val(r.args[0]).dtype.is_floating_point)


def _acc_dtype(r: fx.Node) -> str:
    return "tl.int64" if _int_lanes(r) else "tl.float32"


def _identity(r: fx.Node) -> str:
    """What an empty lane holds: the reduction's identity in its lanes' dtype."""
    kind = op_name(r.target)
    if _int_lanes(r):
        return _INT64_LIMITS.get(kind, "0")
    return REDUCTIONS[kind]


def _accumulate(r: fx.Node, x: str, sfx: str, ind: str,
                online: _Pair | None = None, lo: str = "0") -> list[str]:
    """Fold one chunk into the lane accumulators (padded lanes keep their value)."""
    kind = op_name(r.target)
    m = f"mask{sfx}"
    if online is not None:
        return _accumulate_online(r, x, sfx, ind, online, lo)
    if kind in ("sum", "mean"):
        zero = _identity(r)
        return [f"{ind}acc_{r.name} = acc_{r.name} + tl.where({m}, {x}, {zero})"]
    if kind == "prod":
        return [f"{ind}acc_{r.name} = acc_{r.name} * tl.where({m}, {x}, 1.0)"]
    if kind in ("amax", "amin"):
        # lane-wise max/min that keeps a NaN once seen (torch.amax propagates NaN): a
        # select and one NaN-propagating maximum per element
        fn = "maximum" if kind == "amax" else "minimum"
        acc = f"acc_{r.name}"
        return [f"{ind}{acc} = tl.{fn}({acc}, tl.where({m}, {x}, {_identity(r)}), "
                "propagate_nan=tl.PropagateNan.ALL)"]
    # arg reductions: a lane's later elements have larger indices, so only a strictly
    # better value (or a first NaN) replaces the lane's candidate: first index wins
    cmp = ">" if kind == "argmax" else "<"
    v, i, nm = f"accv_{r.name}", f"acci_{r.name}", r.name
    return [
        f"{ind}xv_{nm} = {x}",
        f"{ind}upd_{nm} = {m} & ((xv_{nm} {cmp} {v}) | ((xv_{nm} != xv_{nm}) & ({v} == {v}))"
        f" | ({i} < 0))",
        f"{ind}{v} = tl.where(upd_{nm}, xv_{nm}, {v})",
        f"{ind}{i} = tl.where(upd_{nm}, cols{sfx}.to(tl.int32), {i})",
    ]


def _safe_shift(v: str) -> str:
    """A lane's shift: its running maximum, or 0 where that is infinite (as logsumexp does)."""
    return f"tl.where(tl.abs({v}) == float('inf'), 0.0, {v})"


def _accumulate_online(r: fx.Node, x: str, sfx: str, ind: str, online: _Pair,
                       lo: str) -> list[str]:
    """One chunk of an online pair's second reduction (see ``_online_pair``)."""
    m, nm = f"mask{sfx}", r.name
    if online.mode == "softmax":
        # lanes: each its running maximum and its sum of exp(x - that maximum), in plain
        # maximum and minimum (no NaN or infinity tests per element: a NaN skips the lane's
        # maximum but reaches its sum; the partner's own lanes keep it). A lane starts at
        # -FLT_MAX, so an all -inf lane stays exp(0) * 0; an infinite maximum shifts by
        # FLT_MAX (a +inf element's exp is inf, as unshifted)
        rm = f"rm_{nm}"
        return [
            f"{ind}xo_{nm} = tl.where({m}, {x}, float('-inf'))",
            f"{ind}mn_{nm} = tl.maximum({rm}, xo_{nm})",
            f"{ind}ms_{nm} = tl.minimum(mn_{nm}, {FLT_MAX})",
            f"{ind}acc_{nm} = acc_{nm} * tl.exp({rm} - ms_{nm}) + tl.exp(xo_{nm} - ms_{nm})",
            f"{ind}{rm} = ms_{nm}",
        ]
    if sfx == ONE_SFX:  # the row resident in one chunk: its count, mean, squared deviations
        return [
            f"{ind}xo_{nm} = tl.where({m}, {x}, 0.0)",
            f"{ind}n_{nm} = tl.sum({m}.to(tl.float32), axis=1)[:, None]",
            f"{ind}mu_{nm} = tl.sum(xo_{nm}, axis=1)[:, None] / tl.maximum(n_{nm}, 1.0)",
            f"{ind}cd_{nm} = tl.where({m}, xo_{nm} - mu_{nm}, 0.0)",
            f"{ind}acc_{nm} = tl.sum(cd_{nm} * cd_{nm}, axis=1)[:, None]",
        ]
    # lanes: Welford's update, one element each per chunk (no cross-lane work in the loop);
    # a lane's count is the chunk's number (only the last chunk has masked lanes)
    return [
        f"{ind}xo_{nm} = {x}",
        f"{ind}inv_{nm} = 1.0 / ((r0{sfx} - {lo}) // BLOCK_R + 1).to(tl.float32)",
        f"{ind}dl_{nm} = tl.where({m}, xo_{nm} - lmu_{nm}, 0.0)",
        f"{ind}lmu_{nm} = lmu_{nm} + dl_{nm} * inv_{nm}",
        f"{ind}lm2_{nm} = lm2_{nm} + dl_{nm} * tl.where({m}, xo_{nm} - lmu_{nm}, 0.0)",
    ]


def _merge_var_lanes(nm: str, ind: str, lo: str, end: str) -> list[str]:
    """Chan's merge of the lanes' (count, mean, M2) into each row's, [BLOCK_K, 1]; lane j
    saw the chunks starting at lo, lo + BLOCK_R, ... whose element j is below ``end``.

    The row's count is the scalar ``end - lo`` (every row of the program walks the same
    range), not the lanes' counts summed: cheaper, and a [BLOCK_K, 1] count both stored and
    divided by crashed Triton 3.6's layout pass ("operand does not dominate this use")."""
    return [
        f"{ind}ln_{nm} = tl.maximum(({end} - {lo} - tl.arange(0, BLOCK_R)[None, :] + BLOCK_R - 1)"
        " // BLOCK_R, 0).to(tl.float32)",
        f"{ind}n_{nm} = tl.maximum({end} - {lo}, 0).to(tl.float32)",
        f"{ind}mu_{nm} = tl.sum(ln_{nm} * lmu_{nm}, axis=1)[:, None] / tl.maximum(n_{nm}, 1.0)",
        f"{ind}ld_{nm} = lmu_{nm} - mu_{nm}",
        f"{ind}acc_{nm} = tl.sum(lm2_{nm} + ln_{nm} * ld_{nm} * ld_{nm}, axis=1)[:, None]",
    ]


def _merge_var_partials(nm: str, ind: str) -> list[str]:
    """Chan's merge of the splits' (count, mean, M2) of a variance pair, [BLOCK_K, 1]."""
    w = f"ws_{nm}{{}} + rows * SPLIT + s"
    return [
        f"{ind}pn_{nm} = tl.load({w.format('_n')}, mask=smask, other=0.0)",
        f"{ind}pmu_{nm} = tl.load({w.format('_mu')}, mask=smask, other=0.0)",
        f"{ind}n_{nm} = tl.sum(pn_{nm}, axis=1)[:, None]",
        f"{ind}mu_{nm} = tl.sum(pn_{nm} * pmu_{nm}, axis=1)[:, None] / tl.maximum(n_{nm}, 1.0)",
        f"{ind}pd_{nm} = pmu_{nm} - mu_{nm}",
        f"{ind}acc_{nm} = tl.sum(tl.load({w.format('')}, mask=smask, other=0.0) + "
        f"pn_{nm} * pd_{nm} * pd_{nm}, axis=1)[:, None]",
    ]


def _partial(r: fx.Node, ind: str, online: _Pair | None = None,
             bounds: tuple[str, str] = ("r_lo", "r_hi")) -> list[str]:
    """This program's partial result of ``r`` over its share of R, into the workspace."""
    kind, nm = op_name(r.target), r.name
    where = "rows * SPLIT + tl.program_id(1)"
    if online is not None and online.mode == "var":
        return _merge_var_lanes(nm, ind, *bounds) + [
            f"{ind}tl.store(ws_{nm}{w} + {where}, {v}, mask=rmask)"
            for w, v in (("", f"acc_{nm}"), ("_n", f"tl.zeros([BLOCK_K, 1], tl.float32) + n_{nm}"),
                         ("_mu", f"mu_{nm}"))]
    if online is not None:  # the sum relative to this program's maximum (stored beside it)
        shift = _safe_shift(f"v_{online.partner.name}")
        return [ln.replace(f".to({tl_dtype(r)})", "")
                for ln in _finish(r, ind, online, shift)] + [
            f"{ind}tl.store(ws_{nm} + {where}, v_{nm}, mask=rmask)"]
    if kind in ("sum", "mean"):
        return [f"{ind}tl.store(ws_{nm} + {where}, tl.sum(acc_{nm}, axis=1)[:, None], "
                "mask=rmask)"]
    if kind == "prod":
        return [f"{ind}tl.store(ws_{nm} + {where}, tl.reduce(acc_{nm}, 1, _kc_mul)[:, None], "
                "mask=rmask)"]
    lines = [ln.replace(f".to({tl_dtype(r)})", "") for ln in _finish(r, ind)]
    if kind in ("amax", "amin"):
        return lines + [f"{ind}tl.store(ws_{nm} + {where}, v_{nm}, mask=rmask)"]
    big = _NO_INDEX
    return lines + [
        f"{ind}tl.store(ws_{nm} + {where}, tl.where(nan_{nm}, float('nan'), best_{nm}), "
        "mask=rmask)",
        f"{ind}tl.store(wsi_{nm} + {where}, tl.where(v_{nm} == {big}, -1, v_{nm}), mask=rmask)",
    ]


def _finish(r: fx.Node, ind: str, online: _Pair | None = None, shift: str = "",
            lanes: bool = True) -> list[str]:
    """Lanes -> one value per row, [BLOCK_K, 1]; only builtin reductions (fast everywhere).
    The value is rounded to the reduction's dtype; a 16-bit float's then computes on in fp32,
    as the full-context values do (``tl.sqrt`` and the other math functions take fp32 only).

    An online sum's lanes are each relative to their running maximum (``rm_``);
    ``lanes=False``: they are a combine's partial sums of the splits, each relative to its
    split's maximum."""
    kind = op_name(r.target)
    dt = "KC_NI" if r.meta.get(NARROW) else tl_dtype(r)  # an index in int32 (ranges)
    cast = f".to({dt})" + (".to(tl.float32)" if dt in ("tl.float16", "tl.bfloat16") else "")
    out, acc, nm = f"v_{r.name}", f"acc_{r.name}", r.name
    if online is not None and online.mode == "var":
        return [f"{ind}{out} = ({acc}{' / R' if kind == 'mean' else ''}){cast}"]
    if online is not None and lanes:  # each lane's sum brought from its maximum
        return [f"{ind}{out} = tl.sum({acc} * tl.exp(rm_{nm} - ({shift})), axis=1)"
                f"[:, None]{cast}"]
    if online is not None:  # splits, each with its maximum, brought to ``shift``
        lm = f"acc_{online.partner.name}"
        return [f"{ind}{out} = tl.sum(tl.where({lm} == float('-inf'), 0.0, {acc} * "
                f"tl.exp({_safe_shift(lm)} - ({shift}))), axis=1)[:, None]{cast}"]
    if kind == "sum":
        return [f"{ind}{out} = tl.sum({acc}, axis=1)[:, None]{cast}"]
    if kind == "mean":
        return [f"{ind}{out} = (tl.sum({acc}, axis=1)[:, None] / R){cast}"]
    if kind == "prod":  # no builtin: a reduction tree over the combine function
        return [f"{ind}{out} = tl.reduce({acc}, 1, _kc_mul)[:, None]{cast}"]
    if kind in ("amax", "amin"):  # one reduction tree that keeps NaN
        fn = "_kc_max_nan" if kind == "amax" else "_kc_min_nan"
        return [f"{ind}{out} = tl.reduce({acc}, 1, {fn})[:, None]{cast}"]
    # arg reductions: the best value (NaN above all), then the smallest index holding it
    v, i = f"accv_{nm}", f"acci_{nm}"
    fn = "tl.max" if kind == "argmax" else "tl.min"
    worst = "float('-inf')" if kind == "argmax" else "float('inf')"
    return [
        f"{ind}valid_{nm} = {i} >= 0",
        f"{ind}isnan_{nm} = valid_{nm} & ({v} != {v})",
        f"{ind}nan_{nm} = tl.max(isnan_{nm}.to(tl.int32), axis=1)[:, None] > 0",
        f"{ind}best_{nm} = {fn}(tl.where(valid_{nm} & ~isnan_{nm}, {v}, {worst}), axis=1)"
        "[:, None]",
        f"{ind}hit_{nm} = tl.where(nan_{nm}, isnan_{nm}, valid_{nm} & ({v} == best_{nm}))",
        f"{ind}{out} = tl.min(tl.where(hit_{nm}, {i}, {_NO_INDEX}), axis=1)[:, None]"
        f"{cast}",
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


def _lanes(an: _Analysis) -> int:
    """Register arrays of BLOCK_K x BLOCK_R a looped pass keeps: one per reduction, three
    for an arg reduction (value, int64 index), two for a variance (mean, M2)."""
    return sum(3 if op_name(r.target) in ("argmax", "argmin") else 2 if an.mode(r) == "var"
               else 1 for r in an.reds)


def _group_policy(an: _Analysis) -> dict[str, int]:
    """The launch policy of a group: ``_policy`` with its lanes, and the arg-reduction tile
    where a one-pass group holds an argmax or argmin."""
    arg = an.npasses == 1 and any(op_name(r.target) in ("argmax", "argmin") for r in an.reds)
    var = any(an.mode(r) == "var" for r in an.reds)
    online = any(an.mode(r) == "softmax" for r in an.reds)
    return {**_policy(_lanes(an)), "ARG_TILE": ARG_TILE if arg else 0, "VAR": int(var),
            "ONLINE": int(online), "ONLINE_BLOCK_R": ONLINE_BLOCK_R, "PASSES": an.npasses}


def _policy(lanes: int = 1) -> dict[str, int]:
    return {"LANES": lanes, "CPU_TILE": CPU_TILE, "CPU_BLOCK_R": CPU_BLOCK_R, "GPU_TILE": GPU_TILE,
            "GPU_BLOCK_R": GPU_BLOCK_R, "GPU_BLOCK_K_COLUMNS": GPU_BLOCK_K_COLUMNS,
            "GPU_BLOCK_K_COLUMNS_MIN": GPU_BLOCK_K_COLUMNS_MIN,
            "GPU_COLUMNS_SHORT_R": GPU_COLUMNS_SHORT_R,
            "GPU_COLUMNS_CHUNK_R": GPU_COLUMNS_CHUNK_R,
            "GPU_COLUMNS_PROGRAMS": GPU_COLUMNS_PROGRAMS,
            "GPU_PERSIST_TILE": GPU_PERSIST_TILE, "SPLIT_WAVES": SPLIT_WAVES,
            "SPLIT_MIN_R": SPLIT_MIN_R, "MAX_SPLIT": MAX_SPLIT, "CPU_SMS": CPU_SMS}


def _capture_config(g: Group, an: _Analysis, sms: int) -> dict[str, Any]:
    """The GPU tile the wrapper would pick at the captured sizes (contiguous layout)."""
    from kernelcraft.codegen.runtime import _kc_row_config, _kc_row_split_on, _kc_split_tile_on

    x = next((r.args[0] for r in an.reds), None)
    try:
        sizes = [hint(s) for s in val(x).shape]
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
    policy = _group_policy(an)  # the runtime asks the device for its SM count; here the target's
    bk, br, warps = _kc_row_config(K, R, kst, 1, rst, 1, False, policy)
    bk, br, warps = _kc_split_tile_on(K, R, bk, br, warps, sms, policy)
    split = _kc_row_split_on(K, R, bk, br, sms, True, policy)[0]
    return {"K": K, "R": R, "BLOCK_K": bk, "BLOCK_R": br, "num_warps": warps,
            "one_chunk": br >= R, "split": split}
