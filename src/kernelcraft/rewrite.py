"""Graph rewrites before planning: exact, local, and only where they save memory traffic
or launches.

``sink_gathers``: ``gather(f(a, b), dim, idx)`` with ``f`` pointwise becomes
``f(gather(a, dim, idx), b)`` when every operand of ``f`` either has ``f``'s full shape
(gathered in turn) or is constant along ``dim`` (a per-row value such as a row maximum or a
log-sum-exp). Cross entropy is the case in point: it gathers the target's entry of the
whole log-softmax, which then has to be written out in full; after the rewrite only the
row statistics and one logit per row are needed, so the logits are read once.

``eliminate_common``: a node that computes what an earlier node computes (the same op on the
same operands: ``softmax(x)`` and ``log_softmax(x)`` both take ``amax(x)``) becomes that
node, so the value is computed, and its input read, once.

``sink_views``: ``f(view(mm), b)`` with ``f`` pointwise becomes ``view(f(mm, b'))`` when the
view only splits the matmul's leading dim (a Linear on a [B, S, K] input computes on
[B*S, K] and views the result back) and every other operand is broadcast along the split
dims or has the full shape in memory order (viewed alike): the activation, scale or
residual after a Linear becomes the matmul's epilogue instead of a second pass. The same
for a ``bmm`` viewed back to a 4-D ``matmul``'s [B, H, M, N], unless its values reach a
softmax (attention scores: the attention matcher reads their views as written).

``unmerge_views``: ``f(view(c), b)`` with ``f`` pointwise and ``c`` a ``clone`` (the copy
``.contiguous()`` makes of a permuted tensor) becomes ``view(f(c, b'))`` when the view only
merges runs of ``c``'s dims and every other operand is broadcast along a merged run or
static (viewed split alike): channel shuffle's ``view(n, g, c/g, h, w).transpose(1, 2)
.contiguous().view(n, c, h, w)`` followed by a per-channel affine and ReLU computes on the
unmerged shape, so the copy and the ops after it are one kernel, not a copy written and
read back.

``follow_views``: ``f(view(a), view(b), c)`` with ``f`` pointwise becomes
``view(f(a, b, c))`` when every tensor operand is a reshape of a value of one shape (looked
through chains of reshapes) or a single element: a reshape keeps the row-major order of
the elements, so an elementwise op commutes with it. GroupNorm computes on ``[N, G, C/G,
H*W]`` and views the result back to ``[N, C, H, W]``: the activation after it then joins
the norm's kernel instead of reading and writing the whole tensor again.

``complex_products``: ``view_as_real(view_as_complex(a) * z)`` (rotary embeddings as Meta's
Llama code writes them: query pairs times a complex ``freqs_cis`` buffer) becomes the real
arithmetic on the pairs, ``(ar*zr - ai*zi, ar*zi + ai*zr)`` stacked on the last dim, which
the pointwise template fuses; complex tensors have no template (they ran in PyTorch).

``drop_expands``: ``f(expand(t), b)`` with ``f`` pointwise reads ``t`` itself where ``f``'s
result keeps its shape: broadcasting gives the same values, and the planner sees the
producer of ``t`` (``F.normalize`` divides by ``norm.expand_as(x)``: the divide joins the
norm's kernel instead of a second pass over ``x``).

``lift_cat_pieces``: ``cat([f(a), b], d)`` with ``f`` a one-operand pointwise op read only
by the cat becomes ``where(i_d < len(a), f(c), c)`` with ``c = cat([a, b], d)`` and ``i_d``
the element's index along ``d`` (computed from its position in the kernel): the cat loads
its sources inside the kernel that reads it, so ``f(a)`` is no longer written out and read
back (rotate_half's ``cat((-x2, x1))`` in rotary embeddings: one pass over q, not two).

``fold_scatter_bases``: ``add(x, s)`` with ``s`` a scatter that adds (an accumulating
``index_put``, ``scatter_add``, a sum's ``scatter_reduce``) into a fill of zeros that
nothing else reads becomes the scatter into ``x``: the sums are the same (the order of the
additions is free, as the atomics' is), and the zeros are neither written nor read back by
a second pass (a mixture-of-experts combine added to its residual, a message aggregation
added to the node's own features).

``scatter_reduce_identity``: ``scatter_reduce(base, d, idx, src, r, include_self=False)``
(``r`` a sum, amax or amin) becomes ``scatter_reduce(scatter(base, d, idx, e), d, idx, src,
r)`` with ``e`` the identity of ``r`` (0, -inf, +inf): the indexed elements start from ``e``
(every write of ``e`` stores the same number, so duplicates agree), the others keep the
base, as the flag asks. Both are scatters the template takes, atomics instead of PyTorch's
whole op, and the second takes the messages' computation (a GNN's max aggregation gathers
and transforms its neighbours' features in the scattering kernel, never storing them).

``fold_unit_layouts``: a chain of ``unsqueeze`` / ``permute`` / ``squeeze`` / unit-dim views
and copies between a tensor and a view that merges or splits its leading dims becomes one
``permute`` (and the copy, if the chain made one) and that view, when the chain passed
through a unit dim: ``einsum("bhqd,bhkd->bhqk")`` lowers each operand through a
5-D detour with a unit dim (``q.unsqueeze(4).permute(0, 1, 2, 4, 3)...view(B*H, Q, D)``,
the bmm's result ``view(B, H, Q, 1, K).permute(...).view(B, H, Q, K)``), which hides the
[B, H, S, D] operands and the [B*H, ...] merge the attention template looks for.

``diagonal_matmuls``: ``mm(diag(v), b)`` (``torch.diag`` / ``diag_embed`` of a vector: a
``where`` of the identity pattern ``arange(n) == arange(n)[:, None]``, else zero) becomes
``v[:, None] * b``, and ``mm(b, diag(v))`` becomes ``b * v[None, :]``: every output
element is the one nonzero product the matmul would sum with zeros (the same rounding),
n^2 work instead of n^3 and no n x n matrix. Only non-finite values of ``b`` differ: the
matmul also multiplied them by the zeros (0 * inf = NaN across the row).

``thin_matmuls``: ``bmm(a, b)`` (``mm``) whose output has one row and a few columns
(``most``, 16: a matmul tile's narrowest side) becomes ``sum(a^T * b, k)`` (one column: ``sum(a
* b^T, k)``): a batched matvec into 3 coordinates (N-body forces, einsum "bij,bijk->bik")
ran as 16 x 16 tiles holding 3 useful values; as a product and a sum it is a reduction kernel
that computes its operands in place (the pairwise separations never stored). Each product
is exact and the sum runs in fp32, as the matmul's.

``slice_assignments``: ``x[:, a:b] = y`` exports as ``copy(slice, y)`` into a
``slice_scatter`` (and one of the whole dim 0 around it): a copy of ``y`` already of the
slice's shape and dtype is ``y``, a slice scatter over all of ``x`` is its source, and one over
part of a dim (step 1) is ``cat([x[:a], y, x[b:]], d)``, a load of the pointwise template
(a packed sequence's document starts, a cache row written in place) where PyTorch copied.

``scatter_lines``: ``scatter(base, d, idx, v)`` (a value, or a tensor of ``idx``'s shape)
with one index per line along ``d`` (``idx`` of extent 1 there, the base's elsewhere) becomes
``where(idx == i_d, v, base)``, ``i_d`` the element's index along ``d``: the one-hot of an
argmax (``zeros_like(y).scatter_(1, y.argmax(1, keepdim=True), 1.0)``, straight-through
Gumbel-softmax, hard attention) is then a pointwise op fused with its neighbours, where it
ran in PyTorch (a fill and a scatter, each a pass).

``literal_fills``: ``full_like(x, v)`` read only by pointwise ops whose other operands
already give the result its shape and dtype becomes a literal ``scalar_tensor(v)`` per
reader, computed in place by the reader's kernel (no fill written out and read back). So
does a view of a literal (``t[0] = True`` reads ``scalar_tensor(1)[None]``).

``split_row_reductions``: ``r(f(x, q), R)`` (``r`` a sum, mean, amax or amin over dims ``R``)
becomes ``r(r(f(x, q), Q, keepdim), R)`` when the pointwise ops ``f`` broadcast keepdim
reductions ``q`` over dims ``Q``, part of ``R``, of tensors of their shape: a loss summed over
every element of a log-softmax (KL divergence, a label-smoothing term) is then summed per row
in the kernel that computes the row statistics, and only the rows' parts are left for a
second, small reduction, where the whole log-softmax was written out and read back. The
result is the same reduction in another order (fp32 sums of row sums, a mean of equal-sized
row means).

``drop_proven_asserts``: an ``_assert_async`` whose condition holds for every value the
graph can compute (``value_range``) is erased with the reductions feeding it: the range
checks of ``F.one_hot`` of an argmax, a clamp to the classes or a top-k index cost two
whole-tensor reductions and two launches that can never fail.

``hoist_unit_views``: ``unsqueeze(f(x))`` (or a view that only inserts size-1 dims) with
``f`` a chain of pointwise ops on graph inputs read by nothing else becomes
``f(unsqueeze(x))``: the chain then computes on a shape that broadcasts to its reader's,
which recomputes it in place (``plan._absorb_broadcast_producers``): a per-row count or
coordinate cast to float and unsqueezed against the features (PointPillars' pillar
centres, a mean over valid points) is no longer a launch and a buffer of its own. Only
chains on inputs move: one on a value a kernel produces joins that kernel instead
(``follow_views`` moves views the other way for it).

``split_constants``: a ``scalar_tensor`` of a literal read by several pointwise ops becomes
one copy per reader, so that the planner can put each into its reader's kernel as a literal
(``plan.inline_constant``): no fill launched on every forward, no kernel argument.
"""

from __future__ import annotations

import operator
from typing import Any

import torch
import torch.fx as fx

from kernelcraft.codegen.ops import is_matmul, is_pointwise, is_view, op_name
from kernelcraft.plan import (
    _CAT_DTYPES,
    _simple_pointwise,
    broadcasts_to,
    hint,
    is_tensor_node,
    piecewise_load,
    shape_key,
    slice_args,
    val,
    whole_slice,
)

_FLOATS = (torch.float32, torch.float16, torch.bfloat16)


def _pure(n: fx.Node) -> bool:
    """An op worth computing once whose result depends only on its operands: not mutating,
    not random, not an uninitialised allocation, not a view."""
    if n.op != "call_function":
        return False
    t = n.target
    if t is operator.getitem:
        return True
    if not isinstance(t, torch._ops.OpOverload):
        return False
    if t._schema.is_mutable or torch.Tag.nondeterministic_seeded in t.tags:
        return False
    # views cost nothing to repeat, and templates claim view chains as their own
    # (an attention reads K through its transpose)
    return not (is_view(t) or op_name(t).startswith(("empty", "new_empty")))


def _frozen(a: Any) -> Any:
    """A hashable form of an op argument; scalars keep their type (``x + 1`` on an integer
    tensor is not ``x + 1.0``)."""
    if isinstance(a, (list, tuple)):
        return (type(a).__name__, *(_frozen(v) for v in a))
    if isinstance(a, dict):
        return tuple(sorted((k, _frozen(v)) for k, v in a.items()))
    if isinstance(a, (bool, int, float, complex)):
        return (type(a).__name__, a)
    hash(a)  # nodes, dtypes, devices, layouts, memory formats, None, strings
    return a


def _same_shape_view(n: fx.Node) -> bool:
    """A view or reshape to the sizes its input already has, or a slice keeping all of it
    (``x[:, q] = y`` exports ``x[:]`` around its scatter): an alias of its input."""
    if n.op != "call_function" or not n.args or not is_tensor_node(n.args[0]):
        return False
    if op_name(n.target) == "slice":
        return whole_slice(n)
    return (op_name(n.target) in _RESHAPES and is_tensor_node(n)
            and shape_key(val(n).shape) == shape_key(val(n.args[0]).shape))


def eliminate_common(gm: fx.GraphModule) -> int:
    """Merge nodes computing the same pure op on the same operands, and drop views to the
    shape their input already has (a matmul's ``view(bmm, same sizes)`` otherwise stands
    between it and the bias add of its epilogue); the number removed."""
    first: dict[Any, fx.Node] = {}
    removed = 0
    for n in list(gm.graph.nodes):
        if n.op != "call_function" or any(u.op == "output" for u in n.users):
            continue  # returned: stays its own tensor
        if _same_shape_view(n):
            n.replace_all_uses_with(n.args[0])  # the same sizes: the same strides, an alias
            gm.graph.erase_node(n)
            removed += 1
            continue
        if not _pure(n):
            continue
        try:
            key = (n.target, _frozen(n.args), _frozen(n.kwargs))
            earlier = first.setdefault(key, n)
        except TypeError:  # an argument without a hashable form: leave the node alone
            continue
        if earlier is not n:
            n.replace_all_uses_with(earlier)
            gm.graph.erase_node(n)
            removed += 1
    if removed:
        gm.recompile()
    return removed


def drop_expands(gm: fx.GraphModule, keep: set[fx.Node] | None = None) -> int:
    """Pointwise readers of an ``expand`` read its input (see above); the number of reads
    rewired. Nodes in ``keep`` (claimed by a template's pattern) are left alone."""
    keep = keep or set()
    made = 0
    for n in list(gm.graph.nodes):
        if (n.op != "call_function" or op_name(n.target) != "expand" or n in keep
                or not is_tensor_node(n.args[0])):
            continue
        for u in list(n.users):
            if (u.op != "call_function" or not is_pointwise(u.target) or u in keep
                    or not isinstance(val(u), torch.Tensor)
                    or shape_key(val(u).shape) != shape_key(val(n).shape)):
                continue
            # another operand has the full shape: broadcasting alone gives it back (a
            # clone of the expand alone would shrink to its input's shape)
            if not any(a is not n and is_tensor_node(a)
                       and shape_key(val(a).shape) == shape_key(val(u).shape)
                       for a in u.all_input_nodes):
                continue
            u.replace_input_with(n, n.args[0])
            made += 1
        if not n.users:
            gm.graph.erase_node(n)
    if made:
        gm.recompile()
    return made


def literal_fills(gm: fx.GraphModule) -> int:
    """``full_like(x, v)`` (``zeros_like``, ``ones_like``) or ``full(sizes, v)`` read only
    by pointwise ops whose other operands already give the result its shape and dtype, as
    a literal 0-d ``scalar_tensor(v)`` per reader: the reader's kernel computes it in place
    (``plan.inline_constant``) instead of a kernel writing the fill out for it to read back
    (a one-hot's zeros, a ``where``'s fill). Returns the number of readers changed."""
    from torch._guards import detect_fake_mode

    from kernelcraft.plan import inline_constant

    changed = 0
    for n in list(gm.graph.nodes):
        like = n.op == "call_function" and op_name(n.target) == "full_like"
        value = n.args[1] if len(n.args) == 2 else None
        # a view of a literal (``is_token[0] = True`` reads ``scalar_tensor(1)[None]``)
        viewed = (n.op == "call_function" and op_name(n.target) in _LITERAL_VIEWS
                  and inline_constant(n.args[0]) and not isinstance(_literal(n.args[0]), fx.Node)
                  and not set(n.kwargs))
        if viewed:
            value = _literal(n.args[0])
        if not ((viewed or like or (n.op == "call_function" and op_name(n.target) == "full"))
                and isinstance(value, (int, float, bool))
                and not set(n.kwargs) - {"dtype", "layout", "device", "pin_memory",
                                         "memory_format"}
                and n.kwargs.get("layout") in (None, torch.strided) and n.users
                and all(_fill_reader(u, n, viewed) or (like and _size_of(u))
                        for u in n.users)):
            continue
        insert = _inserter(gm.graph, detect_fake_mode([val(n)]))
        for u in list(n.users):
            if _size_of(u):  # the fill's sizes are its model's (``x`` of ``full_like(x)``)
                u.replace_input_with(n, n.args[0])
                changed += 1
                continue
            with gm.graph.inserting_before(u):
                lit = insert(torch.ops.aten.scalar_tensor.default, (value,),
                             {"dtype": val(n).dtype, "device": val(n).device})
            u.replace_input_with(n, lit)
            changed += 1
        like = n.args[0]  # (``full``: its sizes; a view: the literal it viewed)
        gm.graph.erase_node(n)
        if viewed and not like.users:
            gm.graph.erase_node(like)
            continue
        if (isinstance(like, fx.Node) and not like.users and like.op == "call_function"
                and op_name(like.target) in ("empty", "empty_like", "empty_permuted")):
            gm.graph.erase_node(like)  # an allocation that only gave the fill its sizes
    if changed:
        gm.recompile()
    return changed


#: views that keep a literal a literal (any shape: a pointwise reader broadcasts it)
_LITERAL_VIEWS = ("unsqueeze", "view", "_unsafe_view", "reshape", "expand", "squeeze")


def _literal(n: fx.Node) -> Any:
    """The number of an ``inline_constant`` node (``scalar_tensor(v)``, ``full(s, v)``)."""
    return n.args[0] if op_name(n.target) == "scalar_tensor" else n.args[1]


def _size_of(u: fx.Node) -> bool:
    return u.op == "call_function" and op_name(u.target) == "sym_size"


def _fill_reader(u: fx.Node, fill: fx.Node, broadcast: bool = False) -> bool:
    """Whether pointwise ``u`` computes the same with ``fill`` as a 0-d tensor: the fill has
    u's shape (or, with ``broadcast``, a shape that broadcasts to it), u's other operands
    give it that shape and share the fill's dtype (a 0-d tensor would not take part in
    type promotion alike); ``where``'s condition is exempt."""
    if not (u.op == "call_function" and is_pointwise(u.target) and _simple_pointwise(u)
            and is_tensor_node(u) and not piecewise_load(u)):
        return False
    shape = shape_key(val(u).shape)
    mine = shape_key(val(fill).shape)
    if broadcast:
        mine = ("1",) * (len(shape) - len(mine)) + mine
    if mine != shape and not (broadcast and broadcasts_to(mine, shape)):
        return False
    cond = u.args[0] if op_name(u.target) == "where" else None
    others = [a for a in u.all_input_nodes if a is not fill and is_tensor_node(a)]
    if any(a is not cond and val(a).dtype != val(fill).dtype for a in others):
        return False
    rank = len(shape)
    full = ["1"] * rank
    for a in others:
        s = shape_key(val(a).shape)
        if len(s) > rank:
            return False
        for d, size in enumerate(s, start=rank - len(s)):
            if size != "1":
                if full[d] not in ("1", size):
                    return False
                full[d] = size
    return tuple(full) == shape


def split_constants(gm: fx.GraphModule) -> int:
    """One copy of each literal ``scalar_tensor`` per pointwise reader; the number of copies
    made. The copies compute the same value, so the graph means what it meant."""
    from kernelcraft.plan import inline_constant

    made = 0
    for n in list(gm.graph.nodes):
        users = list(n.users)
        if (n.op != "call_function" or not inline_constant(n) or len(users) < 2
                or not all(u.op == "call_function" and is_pointwise(u.target) for u in users)):
            continue
        for u in users[1:]:
            with gm.graph.inserting_before(u):
                copy = gm.graph.node_copy(n)
            copy.meta = dict(n.meta)
            u.replace_input_with(n, copy)
            made += 1
    if made:
        gm.recompile()
    return made


def sink_gathers(gm: fx.GraphModule) -> int:
    """Move ``aten.gather`` below the pointwise ops that feed it; the number of moves."""
    moved = 0
    changed = True
    while changed:
        changed = False
        for n in list(gm.graph.nodes):
            if n.op == "call_function" and op_name(n.target) == "gather" and _sink(gm, n):
                moved += 1
                changed = True
    if moved:
        gm.graph.eliminate_dead_code()
        gm.recompile()
    return moved


def _sink(gm: fx.GraphModule, g: fx.Node) -> bool:
    if len(g.args) != 3 or g.kwargs.get("sparse_grad"):
        return False
    src, dim, idx = g.args
    if (not isinstance(src, fx.Node) or src.op != "call_function" or not is_pointwise(src.target)
            or not isinstance(dim, int) or not is_tensor_node(idx)
            or not isinstance(val(src), torch.Tensor) or val(src).dtype not in _FLOATS):
        return False
    full = shape_key(val(src).shape)
    ishape = shape_key(val(idx).shape)
    rank = len(full)
    if len(ishape) != rank or rank == 0:
        return False
    dim %= rank
    plan: list[str] = []  # per tensor argument: "gather" or "keep"
    for a in src.args:
        if not is_tensor_node(a):
            if isinstance(a, fx.Node | list | tuple):
                return False
            continue
        s = shape_key(val(a).shape)
        if s == full:
            plan.append("gather")
            continue
        if len(s) > rank:
            return False
        s = ("1",) * (rank - len(s)) + s
        for d in range(rank):
            if s[d] == "1":
                continue
            # a value that varies along the gathered dim, or along a dim the index does not
            # cover whole, cannot be broadcast against the gathered values
            if d == dim or s[d] != full[d] or ishape[d] != full[d]:
                return False
        plan.append("keep")
    if "gather" not in plan:
        return False
    graph = gm.graph
    with graph.inserting_before(g):
        new_args: list[object] = []
        made: list[fx.Node] = []
        it = iter(plan)
        for a in src.args:
            if not is_tensor_node(a):
                new_args.append(a)
                continue
            if next(it) == "gather":
                na = graph.call_function(g.target, (a, dim, idx), dict(g.kwargs))
                na.meta["val"] = g.target(val(a), dim, val(idx), **g.kwargs)
                new_args.append(na)
                made.append(na)
            else:
                new_args.append(a)
        out = graph.call_function(src.target, tuple(new_args), dict(src.kwargs))
        vals = [val(a) if isinstance(a, fx.Node) else a for a in new_args]
        out.meta["val"] = src.target(*vals, **src.kwargs)
    if shape_key(val(out).shape) != shape_key(val(g).shape) or val(out).dtype != val(g).dtype:
        for x in [out, *made]:  # a broadcast that would change the result: undo
            graph.erase_node(x)
        return False
    g.replace_all_uses_with(out)
    graph.erase_node(g)
    return True


_RESHAPES = ("view", "_unsafe_view", "reshape")


def _is_reshape(v: Any) -> bool:
    """A view, ``_unsafe_view`` or reshape of a tensor."""
    return (isinstance(v, fx.Node) and v.op == "call_function" and is_view(v.target)
            and op_name(v.target) in _RESHAPES and is_tensor_node(v.args[0]))


def _split_view(v: Any) -> tuple[int, int] | None:
    """(leading dims of the view's output, trailing dims it keeps) when ``v`` reshapes a
    tensor by splitting its first dim only ([M, N] -> [B, S, N]), else None."""
    if not _is_reshape(v):
        return None
    src, out = shape_key(val(v.args[0]).shape), shape_key(val(v).shape)
    k = len(src) - 1
    if k < 1 or len(out) <= len(src) or out[len(out) - k:] != src[1:]:
        return None
    return len(out) - k, k


def sink_views(gm: fx.GraphModule, protected: set[fx.Node] | None = None) -> int:
    """``f(view(mm), b)`` -> ``view(f(mm, b'))`` (see the module docstring) for ``f`` not in
    ``protected`` (an attention pattern's scale stays where the pattern has it); returns the
    number of pointwise ops moved. Values this pass moved sink again, so a chain after a
    Linear (bias, activation, residual) moves whole."""
    from torch._guards import detect_fake_mode

    graph = gm.graph
    moved: set[fx.Node] = set()
    count = 0
    for n in list(graph.nodes):
        if not _movable(n, protected):
            continue
        views = [a for a in n.args if _split_view(a) is not None
                 and (_linear(a.args[0]) or a.args[0] in moved
                      or _plain_bmm(a.args[0]) and a.args[0] not in (protected or ()))
                 and shape_key(val(a).shape) == shape_key(val(n).shape)]
        if not views:
            continue
        v = views[0]
        lead, keep = _split_view(v)
        out = shape_key(val(v).shape)
        plan = _sunk_args(n, v, lead, keep, out)
        if plan is None:
            continue
        insert = _inserter(graph, detect_fake_mode([val(v.args[0])]))
        with graph.inserting_before(n):
            args = []
            for a, how in zip(n.args, plan, strict=True):
                if how == "source":
                    args.append(a.args[0])
                elif how == "squeeze":
                    args.append(insert(torch.ops.aten.squeeze.dims,
                                       (a, list(range(val(a).dim() - keep)))))
                elif how == "flatten":
                    args.append(insert(torch.ops.aten.view.default,
                                       (a, [-1, *[int(d) for d in out[lead:]]])))
                else:
                    args.append(a)
            f = insert(n.target, tuple(args), dict(n.kwargs))
            back = insert(torch.ops.aten.view.default, (f, v.args[1]))
        _replace_moved(n, back, views)
        moved.add(f)
        count += 1
    if count:
        gm.recompile()
    return count


def unmerge_views(gm: fx.GraphModule, protected: set[fx.Node] | None = None) -> int:
    """``f(view(c), b)`` -> ``view(f(c, b'))`` (see the module docstring) for ``c`` a
    ``clone`` (or a value this pass moved) and ``f`` not in ``protected``; returns the number
    of pointwise ops moved."""
    from torch._guards import detect_fake_mode

    graph = gm.graph
    moved: set[fx.Node] = set()
    count = 0
    for n in list(graph.nodes):
        if not _movable(n, protected):
            continue
        out = shape_key(val(n).shape)
        views = [(a, r) for a in n.args if (r := _merged_runs(a)) is not None
                 and (op_name(a.args[0].target) == "clone" or a.args[0] in moved)
                 and shape_key(val(a).shape) == out]
        if not views:
            continue
        v, runs = views[0]
        src = v.args[0]
        shapes = [_unmerged_arg(a, v, runs, out) for a in n.args]
        if None in shapes:
            continue
        insert = _inserter(graph, detect_fake_mode([val(src)]))
        with graph.inserting_before(n):
            args = []
            for a, how in zip(n.args, shapes, strict=True):
                if how == "source":
                    args.append(src)
                elif how == "same":
                    args.append(a)
                else:
                    args.append(insert(torch.ops.aten.view.default, (a, how)))
            f = insert(n.target, tuple(args), dict(n.kwargs))
            back = insert(torch.ops.aten.view.default, (f, v.args[1]))
        _replace_moved(n, back, [a for a in n.args if isinstance(a, fx.Node)])
        moved.add(f)
        count += 1
    if count:
        gm.recompile()
    return count


def _reshape_base(a: Any) -> fx.Node | None:
    """The value a chain of reshapes starts from, for a reshape; else None."""
    if not _is_reshape(a):
        return None
    while _is_reshape(a):
        a = a.args[0]
    return a


def follow_views(gm: fx.GraphModule, protected: set[fx.Node] | None = None) -> int:
    """``f(view(a), view(b), c)`` -> ``view(f(a, b, c))`` (see the module docstring) for
    ``f`` not in ``protected``; returns the number of pointwise ops moved. Only where a
    reshaped operand is computed (a kernel's output the op can join), not an input."""
    from torch._guards import detect_fake_mode

    graph = gm.graph
    count = 0
    for n in list(graph.nodes):
        if not _movable(n, protected) or piecewise_load(n):
            continue
        out = shape_key(val(n).shape)
        bases: dict[fx.Node, fx.Node] = {}
        ok = True
        for a in n.args:
            if not is_tensor_node(a):
                continue
            b = _reshape_base(a)
            if b is not None and shape_key(val(a).shape) == out:
                bases[a] = b
            elif val(a).dim() > 0:  # (no numel test: a 0-d tensor has one element, and
                # a data-dependent size, rows of x[mask], cannot be compared)
                ok = False  # (a one-element operand of any rank would change the result's)
        src = {shape_key(val(b).shape) for b in bases.values()}
        # (a matmul's reshaped result is left as written: a Linear's views are sink_views',
        # and a bmm's feed attention patterns, which the planner matches as written)
        if (not ok or len(src) != 1 or src == {out}
                or not any(b.op == "call_function" for b in bases.values())
                or any(b.op == "call_function" and is_matmul(b.target)
                       for b in bases.values())):
            continue
        v = next(iter(bases))  # its sizes give the shape back
        insert = _inserter(graph, detect_fake_mode([val(v)]))
        with graph.inserting_before(n):
            f = insert(n.target, tuple(bases.get(a, a) for a in n.args), dict(n.kwargs))
            back = insert(torch.ops.aten.view.default, (f, v.args[1]))
        _replace_moved(n, back, list(bases))
        count += 1
    if count:
        gm.recompile()
    return count


def _movable(n: fx.Node, protected: set[fx.Node] | None) -> bool:
    """A pointwise op the view rewrites may move (not one an attention pattern claims)."""
    return (n.op == "call_function" and is_pointwise(n.target) and is_tensor_node(n)
            and _simple_pointwise(n) and n not in (protected or ()))


def _replace_moved(n: fx.Node, back: fx.Node, read: list[fx.Node]) -> None:
    """``n``'s readers read ``back`` (its moved computation viewed back); ``n`` and the views
    in ``read`` (what it read) that nothing reads any more leave the graph: left unread, a
    view would still be a value, and an output of the kernel computing its source."""
    read = list(dict.fromkeys(read))  # before erase_node clears n.args
    n.replace_all_uses_with(back)
    n.graph.erase_node(n)
    for a in read:
        if a.op == "call_function" and is_view(a.target) and not a.users:
            a.graph.erase_node(a)


def _merged_runs(v: Any) -> list[tuple[int, int]] | None:
    """For a reshape that only merges runs of consecutive dims of its input (at least one
    run of two or more: [N, C/g, g, H, W] -> [N, C, H, W]), each output dim's run ``[i, j)``
    of input dims, else None. Merged dims must be static; a symbolic dim stays itself."""
    if not _is_reshape(v):
        return None
    src, out = shape_key(val(v.args[0]).shape), shape_key(val(v).shape)
    runs: list[tuple[int, int]] = []
    i = 0
    for o in out:
        if i < len(src) and src[i] == o:
            runs.append((i, i + 1))
            i += 1
            continue
        if not o.isdigit():
            return None
        prod, j = 1, i
        while j < len(src) and src[j].isdigit() and prod < int(o):
            prod *= int(src[j])
            j += 1
        if prod != int(o) or j == i:
            return None
        runs.append((i, j))
        i = j
    if not runs or any(d != "1" for d in src[i:]):
        return None
    runs[-1] = (runs[-1][0], len(src))  # trailing size-1 dims join the last run
    if all(j - i == 1 for i, j in runs):
        return None
    return runs


def _unmerged_arg(a: Any, v: fx.Node, runs: list[tuple[int, int]], out: tuple[str, ...]
                  ) -> str | list[int] | None:
    """How argument ``a`` of an op reading view ``v`` reaches the unmerged shape: "source" (a
    view like ``v`` of its source), its new shape (``_unmerged_shape``), or "same" (a
    scalar); None when it cannot."""
    src = v.args[0]
    if a is v or (isinstance(a, fx.Node) and _merged_runs(a) == runs and a.args[0] is src
                  and shape_key(val(a).shape) == out):
        return "source"
    if is_tensor_node(a):
        return _unmerged_shape(shape_key(val(a).shape), out, runs, shape_key(val(src).shape))
    return "same"


def _unmerged_shape(s: tuple[str, ...], out: tuple[str, ...], runs: list[tuple[int, int]],
                    sizes: tuple[str, ...]) -> list[int] | None:
    """An operand of shape ``s`` (broadcast to ``out``) viewed over the unmerged dims: a
    broadcast dim becomes ones, a full one its run's sizes (splitting a dim is a view
    whatever its stride); None when a size is symbolic or the operand has more dims."""
    if len(s) > len(out):
        return None
    padded = ("1",) * (len(out) - len(s)) + s
    shape: list[str] = []
    for d, (i, j) in zip(padded, runs, strict=True):
        shape += ["1"] * (j - i) if d == "1" else ([d] if j - i == 1 else list(sizes[i:j]))
    if not all(x.isdigit() for x in shape):
        return None
    return [int(x) for x in shape]


def _inserter(graph: fx.Graph, mode: Any) -> Any:
    """``insert(target, args, kwargs)``: a new node at the graph's insertion point, its value
    computed on the capture's fake tensors (``mode``)."""

    def insert(target: Any, args: tuple[Any, ...],
               kwargs: dict[str, Any] | None = None) -> fx.Node:
        node = graph.call_function(target, args, kwargs or {})
        with mode:
            node.meta["val"] = target(*fx.node.map_arg(args, val),
                                      **fx.node.map_arg(kwargs or {}, val))
        return node

    return insert


def _linear(n: Any) -> bool:
    """A Linear's product (``mm``, ``addmm``); a ``bmm`` is left alone: its views feed
    attention patterns (scores scaled after the view), which the planner matches as written."""
    return (isinstance(n, fx.Node) and n.op == "call_function"
            and op_name(n.target) in ("mm", "addmm"))


def _plain_bmm(n: Any) -> bool:
    """A ``bmm`` (a 4-D ``matmul`` on its merged batch dims) whose values reach no softmax
    (``amax``) through views and pointwise ops: attention scores keep the views the
    attention matcher reads (and explains when it rejects them) as written."""
    if not (isinstance(n, fx.Node) and n.op == "call_function" and op_name(n.target) == "bmm"):
        return False
    seen, todo = {n}, list(n.users)
    while todo:
        u = todo.pop()
        if u in seen or u.op != "call_function":
            continue
        seen.add(u)
        if op_name(u.target) in ("amax", "_softmax", "_log_softmax", "_safe_softmax"):
            return False
        if is_view(u.target) or is_pointwise(u.target):
            todo.extend(u.users)
    return True


def _sunk_args(n: fx.Node, v: fx.Node, lead: int, keep: int,
               out: tuple[str, ...]) -> list[str] | None:
    """How each argument of ``n`` reaches the unsplit shape: ``source`` (a view like ``v``:
    its input), ``squeeze`` (broadcast along the split dims: they are dropped), ``flatten``
    (the full shape, contiguous, static trailing dims), ``same`` (a scalar, or already
    trailing-only); None when one cannot."""
    how = []
    for a in n.args:
        if not is_tensor_node(a):
            how.append("same")
            continue
        split = _split_view(a)
        if (split == (lead, keep) and shape_key(val(a).shape) == out
                and shape_key(val(a.args[0]).shape) == shape_key(val(v.args[0]).shape)):
            how.append("source")
            continue
        s = shape_key(val(a).shape)
        padded = ("1",) * (len(out) - len(s)) + s
        if len(s) > len(out):
            return None
        if all(d == "1" for d in padded[:lead]):
            how.append("same" if len(s) <= keep else "squeeze")
        elif (s == out and val(a).is_contiguous()
              and all(d.isdigit() for d in out[lead:])):
            how.append("flatten")
        else:
            return None
    return how


def lift_cat_pieces(gm: fx.GraphModule) -> int:
    """``cat([f(a), b], d)`` -> ``where(i_d < len(a), f(c), c)`` (see the module docstring);
    returns the number of pieces lifted."""
    from torch._guards import detect_fake_mode

    graph = gm.graph
    count = 0
    for n in list(graph.nodes):
        if not (n.op == "call_function" and op_name(n.target) == "cat" and piecewise_load(n)
                and val(n).dtype in _FLOATS):
            continue
        pieces = list(n.args[0])
        rank = val(n).dim()
        dim = (n.args[1] if len(n.args) > 1 else n.kwargs.get("dim", 0)) % rank
        lifted = {i: p for i, p in enumerate(pieces) if _liftable(p)}
        if not lifted:
            continue
        insert = _inserter(graph, detect_fake_mode([val(n)]))
        with graph.inserting_before(n):
            sources = [_operand(p) if i in lifted else p for i, p in enumerate(pieces)]
            whole = insert(n.target, (sources, dim))

            # piece boundaries: numbers, or nodes computing symbolic sizes from the cat's
            # sources (not from its result: the index would then depend on the cat's kernel)
            ends: list[Any] = []
            for src in sources:
                d = val(src).shape[dim]
                length = d if isinstance(d, int) else insert(torch.ops.aten.sym_size.int,
                                                             (src, dim))
                start = ends[-1] if ends else 0
                ends.append(start + length if isinstance(start, int) and isinstance(length, int)
                            else insert(operator.add, (start, length)))
            idx = insert(torch.ops.aten.arange.default, (ends[-1],),
                         {"dtype": torch.int64, "device": val(n).device})
            idx = insert(torch.ops.aten.view.default,
                         (idx, [ends[-1] if d == dim else 1 for d in range(rank)]))
            out, start = whole, 0
            for i, end in enumerate(ends):
                if i in lifted:
                    p = lifted[i]
                    args = tuple(whole if a is _operand(p) else a for a in p.args)
                    value = insert(p.target, args, dict(p.kwargs))
                    if not (isinstance(start, int) and start == 0):
                        before = insert(torch.ops.aten.lt.Scalar, (idx, start))
                        value = insert(torch.ops.aten.where.self, (before, out, value))
                    if i < len(ends) - 1:  # the last piece runs to the end
                        inside = insert(torch.ops.aten.lt.Scalar, (idx, end))
                        value = insert(torch.ops.aten.where.self, (inside, value, out))
                    out = value
                start = end
        n.replace_all_uses_with(out)
        graph.erase_node(n)
        for p in lifted.values():
            if not p.users:
                graph.erase_node(p)
        count += len(lifted)
    if count:
        gm.recompile()
    return count


def slice_assignments(gm: fx.GraphModule) -> int:
    """``copy(dst, src)`` of ``dst``'s shape and dtype as ``src``; ``slice_scatter(base,
    src, d, a, b)`` as ``src`` where the slice is all of ``base``, else (step 1) as ``cat``
    of ``base[a':]``-style slices around ``src`` (see the module docstring). Returns the
    number rewritten."""
    from torch._guards import detect_fake_mode

    graph = gm.graph
    count = 0
    for n in list(graph.nodes):
        if n.op != "call_function" or op_name(n.target) not in ("copy", "slice_scatter"):
            continue
        dst, src = n.args[0], n.args[1]
        if not (is_tensor_node(dst) and is_tensor_node(src) and is_tensor_node(n)
                and val(src).dtype == val(n).dtype):
            continue
        if op_name(n.target) == "copy":
            if n.kwargs.get("non_blocking", False) or len(n.args) > 2 or (
                    shape_key(val(src).shape) != shape_key(val(n).shape)):
                continue
            out = src
        elif n.kwargs:  # (the defaults below fill positional arguments only)
            continue
        else:
            _, dim, start, end, step = slice_args((n.args[0], *n.args[2:]))
            dim = dim % val(n).dim()
            start = 0 if start is None else start
            if step != 1 or not isinstance(start, int) or not (end is None or isinstance(
                    end, int)) or start < 0 or (end is not None and end < 0):
                continue
            to_end = end is None or end >= _INT64_MAX // 2
            if start == 0 and to_end:
                if shape_key(val(src).shape) != shape_key(val(n).shape):
                    continue
                out = src
            elif val(n).dtype in _CAT_DTYPES:
                insert = _inserter(graph, detect_fake_mode([val(n)]))
                with graph.inserting_before(n):
                    pieces = []
                    if start > 0:
                        pieces.append(insert(torch.ops.aten.slice.Tensor, (dst, dim, 0, start)))
                    pieces.append(src)
                    if not to_end:
                        pieces.append(insert(torch.ops.aten.slice.Tensor,
                                             (dst, dim, end, _INT64_MAX)))
                    out = insert(torch.ops.aten.cat.default, (pieces, dim))
                out.meta = dict(n.meta)  # (its sizes as the capture names them)
            else:
                continue
        n.replace_all_uses_with(out)
        graph.erase_node(n)
        count += 1
    if count:
        graph.eliminate_dead_code()
        gm.recompile()
    return count


_INT64_MAX = 2**63 - 1


def scatter_lines(gm: fx.GraphModule) -> int:
    """``scatter(base, d, idx, v)`` with one index per line as ``where(idx == i_d, v, base)``
    (see the module docstring); returns the number rewritten."""
    from torch._guards import detect_fake_mode

    graph = gm.graph
    count = 0
    for n in list(graph.nodes):
        if not (n.op == "call_function" and op_name(n.target) == "scatter"
                and len(n.args) == 4 and not n.kwargs):
            continue
        base, dim, idx, v = n.args
        if not (is_tensor_node(base) and is_tensor_node(idx) and isinstance(dim, int)
                and val(idx).dtype == torch.int64 and val(base).dim() == val(idx).dim() >= 1):
            continue
        rank = val(base).dim()
        dim %= rank
        bshape, ishape = shape_key(val(base).shape), shape_key(val(idx).shape)
        if ishape[dim] != "1" or any(ishape[d] != bshape[d] for d in range(rank) if d != dim):
            continue
        if isinstance(v, fx.Node):
            if not (is_tensor_node(v) and shape_key(val(v).shape) == ishape
                    and val(v).dtype == val(base).dtype):
                continue
        elif not isinstance(v, (int, float, bool)):
            continue
        insert = _inserter(graph, detect_fake_mode([val(n)]))
        with graph.inserting_before(n):
            size = val(base).shape[dim]
            if not isinstance(size, int):
                size = insert(torch.ops.aten.sym_size.int, (base, dim))
            pos = insert(torch.ops.aten.arange.default, (size,),
                         {"dtype": torch.int64, "device": val(base).device})
            pos = insert(torch.ops.aten.view.default,
                         (pos, [size if d == dim else 1 for d in range(rank)]))
            hit = insert(torch.ops.aten.eq.Tensor, (idx, pos))
            if not isinstance(v, fx.Node):
                v = insert(torch.ops.aten.scalar_tensor.default, (v,),
                           {"dtype": val(base).dtype, "device": val(base).device})
            out = insert(torch.ops.aten.where.self, (hit, v, base))
        out.meta = {**n.meta, "val": out.meta["val"]}
        n.replace_all_uses_with(out)
        graph.erase_node(n)
        count += 1
    if count:
        gm.recompile()
    return count


def _operand(p: fx.Node) -> fx.Node:
    return next(a for a in p.args if is_tensor_node(a))


def _liftable(p: Any) -> bool:
    """A one-operand pointwise op of the piece's shape and dtype, read only by the cat."""
    if not (isinstance(p, fx.Node) and p.op == "call_function" and is_pointwise(p.target)
            and _simple_pointwise(p) and len(p.users) == 1 and not p.kwargs):
        return False
    tensors = [a for a in p.args if isinstance(a, fx.Node)]
    return (len(tensors) == 1 and is_tensor_node(tensors[0])
            and shape_key(val(tensors[0]).shape) == shape_key(val(p).shape)
            and val(tensors[0]).dtype == val(p).dtype)


def flip_gathers(gm: fx.GraphModule) -> int:
    """``flip(x, dims)`` -> ``x[..., n - 1 - arange(n), ...]`` (one ``aten.index`` per run of
    adjacent flipped dims), except next to a scan, whose template reverses its own indexing;
    returns the number of flips rewritten."""
    from torch._guards import detect_fake_mode

    from kernelcraft.plan import _GATHER_DTYPES

    graph = gm.graph
    count = 0
    for n in list(graph.nodes):
        if not (n.op == "call_function" and op_name(n.target) == "flip"
                and is_tensor_node(n.args[0]) and val(n).dtype in _GATHER_DTYPES
                and val(n).dim() > 0 and not _near_scan(n)):
            continue
        x = n.args[0]
        rank = val(x).dim()
        dims = sorted({int(d) % rank for d in (n.args[1] if len(n.args) > 1
                                                else n.kwargs["dims"])})
        runs: list[list[int]] = []
        for d in dims:
            if runs and runs[-1][-1] == d - 1:
                runs[-1].append(d)
            else:
                runs.append([d])
        insert = _inserter(graph, detect_fake_mode([val(x)]))
        out = x
        with graph.inserting_before(n):
            for run in runs:
                index: list[Any] = [None] * run[0]
                for k, d in enumerate(run):
                    size = val(x).shape[d]
                    last: Any = (size - 1 if isinstance(size, int) else
                                 insert(operator.sub, (insert(torch.ops.aten.sym_size.int,
                                                              (x, d)), 1)))
                    t = insert(torch.ops.aten.arange.start_step, (last, -1, -1),
                               {"dtype": torch.int64, "device": val(x).device})
                    for _ in range(len(run) - 1 - k):  # broadcast over the run's later dims
                        t = insert(torch.ops.aten.unsqueeze.default, (t, -1))
                    index.append(t)
                out = insert(torch.ops.aten.index.Tensor, (out, index))
        n.replace_all_uses_with(out)
        graph.erase_node(n)
        count += 1
    if count:
        gm.recompile()
    return count


def _near_scan(n: fx.Node) -> bool:
    """Whether a flip feeds a scan, or reads one through pointwise ops (the scan template's
    own output flip). cummax and cummin do not fuse flips: theirs become gathers."""
    from kernelcraft.codegen.scan import PAIRED, SCANS

    flipping = {op for op, kind in SCANS.items() if kind not in PAIRED}
    if any(op_name(u.target) in flipping for u in n.users if u.op == "call_function"):
        return True
    todo, seen = list(n.all_input_nodes), set()
    while todo:
        m = todo.pop()
        if m in seen or m.op != "call_function":
            continue
        seen.add(m)
        if op_name(m.target) in flipping:
            return True
        if is_pointwise(m.target):
            todo += m.all_input_nodes
    return False


def merge_gathers(gm: fx.GraphModule) -> int:
    """``index(index(x, I), J)`` -> ``index(x, I + J)`` when both index adjacent dims, one
    index tensor dim per indexed dim, the two sets disjoint and together adjacent (a
    ``torch.roll`` over two dims): one gather reads the source, nothing gathered twice;
    returns the number of merges."""
    from torch._guards import detect_fake_mode

    from kernelcraft.plan import gather_dims, gather_indices

    graph = gm.graph
    count = 0
    for o in list(graph.nodes):
        if not (o.op == "call_function" and op_name(o.target) == "index"):
            continue
        i = o.args[0]
        if not (isinstance(i, fx.Node) and i.op == "call_function"
                and op_name(i.target) == "index"):
            continue
        p1, p2 = gather_dims(i), gather_dims(o)
        if p1 is None or p2 is None or set(p1) & set(p2):
            continue
        dims = sorted(p1 + p2)
        if dims != list(range(dims[0], dims[-1] + 1)):
            continue
        if (any(val(t).dim() > len(p1) for t in gather_indices(i))
                or any(val(t).dim() > len(p2) for t in gather_indices(o))):
            continue  # an index of more dims than it indexes: the dims would not map 1:1
        insert = _inserter(graph, detect_fake_mode([val(o)]))
        with graph.inserting_before(o):
            index: list[Any] = [None] * dims[0]
            for d in dims:
                own, p = (i, p1) if d in p1 else (o, p2)
                t = gather_indices(own)[p.index(d)]
                # the index over its gather's dims, then a size-1 dim for each other one
                for _ in range(len(p) - val(t).dim()):
                    t = insert(torch.ops.aten.unsqueeze.default, (t, 0))
                for pos, e in enumerate(dims):
                    if e not in p:
                        t = insert(torch.ops.aten.unsqueeze.default, (t, pos))
                index.append(t)
            merged = insert(torch.ops.aten.index.Tensor, (i.args[0], index))
        if shape_key(val(merged).shape) != shape_key(val(o).shape):
            graph.erase_node(merged)  # (never expected) leave the two gathers as they were
            continue
        o.replace_all_uses_with(merged)
        graph.erase_node(o)
        if not i.users:
            graph.erase_node(i)
        count += 1
    if count:
        graph.eliminate_dead_code()
        gm.recompile()
    return count


def fold_scatter_bases(gm: fx.GraphModule) -> int:
    """``x + scatter(zeros, ...)`` as ``scatter(x, ...)``; the number of folds."""
    from kernelcraft.plan import scatter_combine, scatter_dims

    folded = 0
    for n in list(gm.graph.nodes):
        if (n.op != "call_function" or op_name(n.target) != "add" or len(n.args) != 2
                or n.kwargs.get("alpha", 1) != 1 or not isinstance(val(n), torch.Tensor)):
            continue
        for s, x in ((n.args[0], n.args[1]), (n.args[1], n.args[0])):
            if not (isinstance(s, fx.Node) and scatter_dims(s) is not None
                    and scatter_combine(s) == "add" and list(s.users) == [n] and is_tensor_node(x)
                    and _zero_fill(s.args[0]) and list(s.args[0].users) == [s]):
                continue
            out = shape_key(val(n).shape)
            if (shape_key(val(x).shape) != out or shape_key(val(s).shape) != out
                    or val(x).dtype != val(n).dtype or val(s).dtype != val(n).dtype):
                continue
            base = s.args[0]
            with gm.graph.inserting_before(n):
                new = gm.graph.call_function(s.target, (x, *s.args[1:]), dict(s.kwargs))
            new.meta = dict(n.meta)
            n.replace_all_uses_with(new)
            gm.graph.erase_node(n)
            gm.graph.erase_node(s)
            gm.graph.erase_node(base)
            folded += 1
            break
    if folded:
        gm.recompile()
    return folded


#: ``scatter_reduce``'s reductions, by the number that leaves an element as it is
_REDUCE_IDENTITY = {"sum": 0.0, "amax": float("-inf"), "amin": float("inf")}


def scatter_reduce_identity(gm: fx.GraphModule) -> int:
    """``scatter_reduce(base, d, idx, src, r, include_self=False)`` as
    ``scatter_reduce(scatter(base, d, idx, e), d, idx, src, r)`` with ``e`` the identity of
    ``r`` (see the module docstring); a base already filled with ``e`` (a GNN's zeros under a
    sum) only drops the flag. Returns the number rewritten."""
    from torch._guards import detect_fake_mode

    graph = gm.graph
    count = 0
    for n in list(graph.nodes):
        if not (n.op == "call_function" and op_name(n.target) == "scatter_reduce"
                and len(n.args) == 5 and set(n.kwargs) == {"include_self"}
                and n.kwargs["include_self"] is False and n.args[4] in _REDUCE_IDENTITY):
            continue
        base, dim, idx = n.args[:3]
        if not (is_tensor_node(base) and val(base).dtype == torch.float32):
            continue
        e = _REDUCE_IDENTITY[n.args[4]]
        if not _fill_of(base, e):
            with graph.inserting_before(n):
                base = _inserter(graph, detect_fake_mode([val(n)]))(
                    torch.ops.aten.scatter.value, (base, dim, idx, e))
        n.args = (base, *n.args[1:])
        n.kwargs = {}
        count += 1
    if count:
        gm.recompile()
    return count


def _fill_of(n: Any, value: float) -> bool:
    """A tensor filled with the number ``value`` (``full``, ``full_like``; zeros for 0)."""
    if value == 0 and _zero_fill(n):
        return True
    return (isinstance(n, fx.Node) and n.op == "call_function"
            and op_name(n.target) in ("full", "full_like") and len(n.args) > 1
            and isinstance(n.args[1], (int, float)) and not isinstance(n.args[1], bool)
            and n.args[1] == value)


def _zero_fill(n: Any) -> bool:
    """A tensor of zeros made from a literal (``torch.zeros``, ``zeros_like``)."""
    if not (isinstance(n, fx.Node) and n.op == "call_function"):
        return False
    name = op_name(n.target)
    if name in ("zeros", "zeros_like", "new_zeros"):
        return True
    value = n.args[1] if len(n.args) > 1 else None
    return name in ("full", "full_like") and isinstance(value, (int, float)) and value == 0


_LAYOUT_STEPS = ("unsqueeze", "permute", "squeeze", "clone", *_RESHAPES)


def _unit_step(n: fx.Node, atoms: list[Any]) -> list[Any] | None:
    """``atoms`` (what each dim of ``n``'s input is: a source dim's label, or "u" for a unit
    dim the chain added) for ``n``'s output; None where ``n`` does more than add, drop or
    reorder unit dims and reorder the others."""
    name, shape = op_name(n.target), list(val(n).shape)
    if name == "clone":  # a copy in memory order (``.contiguous()``): the same values
        return atoms if not set(n.kwargs) - {"memory_format"} else None
    if name == "unsqueeze":
        d = n.args[1] % (len(atoms) + 1)
        return atoms[:d] + ["u"] + atoms[d:]
    if name == "permute":
        perm = [d % len(atoms) for d in n.args[1]]
        return [atoms[d] for d in perm] if sorted(perm) == list(range(len(atoms))) else None
    if name == "squeeze":
        dims = n.args[1] if len(n.args) > 1 else [i for i, a in enumerate(atoms) if a == "u"]
        dims = {d % len(atoms) for d in ([dims] if isinstance(dims, int) else dims)}
        if any(atoms[d] != "u" for d in dims):
            return None
        return [a for i, a in enumerate(atoms) if i not in dims]
    # a view adding or dropping unit dims only: the other dims keep their order and sizes
    src = [d for d, a in zip(val(n.args[0]).shape, atoms, strict=True) if a != "u"]
    if shape_key(d for d in shape if not _is_one(d)) != shape_key(src):
        return None
    it = iter(a for a in atoms if a != "u")
    return ["u" if _is_one(d) else next(it) for d in shape]


def _is_one(d: Any) -> bool:
    return isinstance(d, int) and d == 1


def fold_unit_layouts(gm: fx.GraphModule) -> int:
    """Collapse unit-dim layout detours into one permute (see the module docstring); the
    number of chains folded. The folded view reads the same elements in the same order
    (unit dims do not move any), so it is valid wherever the original one was."""
    from torch._guards import detect_fake_mode

    graph, folded = gm.graph, 0
    for end in list(graph.nodes):
        if (end.op != "call_function" or op_name(end.target) not in _RESHAPES
                or not isinstance(val(end), torch.Tensor)):
            continue
        # walk back over single-user layout steps to the chain's source
        chain: list[fx.Node] = []
        src = end.args[0]
        while (isinstance(src, fx.Node) and src.op == "call_function"
               and op_name(src.target) in _LAYOUT_STEPS and len(src.users) == 1
               and isinstance(val(src), torch.Tensor)):
            chain.append(src)
            src = src.args[0]
        if not chain or not is_tensor_node(src):
            continue
        chain.reverse()
        shape = list(val(src).shape)
        if any(_is_one(d) for d in shape) or len(shape) not in (3, 4):
            continue  # size-1 source dims would be taken for the chain's unit dims
        atoms: list[Any] | None = list(range(len(shape)))
        steps, units = chain, False
        if len(shape) == 3:
            # a bmm's [B*H, M, N] split to [B, H, M, N] with unit dims: "0a", "0b", 1, 2
            first = chain[0]
            out = [d for d in val(first).shape if not _is_one(d)]
            if not (op_name(first.target) in _RESHAPES and len(out) == 4
                    and shape_key([out[0] * out[1], *out[2:]]) == shape_key(shape)):
                continue
            it = iter(["0a", "0b", 1, 2])
            atoms = ["u" if _is_one(d) else next(it) for d in val(first).shape]
            steps, units = chain[1:], "u" in atoms
        for n in steps:
            atoms = _unit_step(n, atoms) if atoms is not None else None
            units = units or (atoms is not None and "u" in atoms)
        if atoms is None or not units:
            continue  # not a detour through unit dims (plain permutes are left alone)
        order = [a for a in atoms if a != "u"]
        insert = _inserter(graph, detect_fake_mode([val(src)]))
        copied = any(op_name(n.target) == "clone" for n in chain)
        if len(shape) == 3:
            # the bmm's result viewed [B, H, M, N], then its dims reordered: ``end`` (unit
            # dims dropped) is that permute (a copy, where the chain copied)
            labels = ["0a", "0b", 1, 2]
            perm = [labels.index(a) for a in order]
            split_shape = [d for d in val(chain[0]).shape if not _is_one(d)]
            if shape_key(split_shape[i] for i in perm) != shape_key(val(end).shape):
                continue
            # the first view's own size arguments (size nodes or ints), its unit dims left out
            sizes = chain[0].args[1] if len(chain[0].args) > 1 else None
            if not isinstance(sizes, (list, tuple)) or len(sizes) != val(chain[0]).dim():
                continue
            split = [a for a, d in zip(sizes, val(chain[0]).shape, strict=True)
                     if not _is_one(d)]
            with graph.inserting_before(end):
                new = insert(torch.ops.aten.view.default, (src, split))
                if perm != [0, 1, 2, 3]:
                    new = insert(torch.ops.aten.permute.default, (new, perm))
                    if copied:
                        new = insert(torch.ops.aten.clone.default, (new,),
                                     {"memory_format": torch.contiguous_format})
            end.replace_all_uses_with(new)
            graph.erase_node(end)
        else:
            base = src
            with graph.inserting_before(end):
                if order != [0, 1, 2, 3]:
                    base = insert(torch.ops.aten.permute.default, (src, order))
                if copied:  # the view needs the copy's memory order
                    base = insert(torch.ops.aten.clone.default, (base,),
                                  {"memory_format": torch.contiguous_format})
            end.args = (base, *end.args[1:])
        for n in reversed(chain):
            graph.erase_node(n)
        folded += 1
    if folded:
        gm.recompile()
    return folded


def diagonal_matmuls(gm: fx.GraphModule) -> int:
    """``mm(diag(v), b)`` -> ``v[:, None] * b``, ``mm(b, diag(v))`` -> ``b * v[None, :]`` (see
    the module docstring); the number of products replaced."""
    from torch._guards import detect_fake_mode

    graph = gm.graph
    count = 0
    for n in list(graph.nodes):
        if n.op != "call_function" or op_name(n.target) != "mm" or n.kwargs:
            continue
        for side in (0, 1):
            v = _diagonal_of(n.args[side])
            other = n.args[1 - side]
            if v is None or not is_tensor_node(other) or val(other).dtype != val(n).dtype:
                continue
            insert = _inserter(graph, detect_fake_mode([val(n)]))
            with graph.inserting_before(n):
                vec = insert(torch.ops.aten.view.default, (v, [-1, 1] if side == 0 else [1, -1]))
                out = insert(torch.ops.aten.mul.Tensor, (vec, other) if side == 0 else (other, vec))
            n.replace_all_uses_with(out)
            graph.erase_node(n)
            count += 1
            break
    if count:
        graph.eliminate_dead_code()
        gm.recompile()
    return count


def thin_matmuls(gm: fx.GraphModule, most: int) -> int:
    """``bmm(a, b)`` (``mm``) with an output of one row and at most ``most`` columns, or
    one column and at most ``most`` rows, as ``sum(a^T * b, k)`` or ``sum(a * b^T, k)`` (see
    the module docstring); the number of products replaced."""
    from torch._guards import detect_fake_mode

    graph = gm.graph
    count = 0
    for n in list(graph.nodes):
        if (n.op != "call_function" or op_name(n.target) not in ("mm", "bmm") or n.kwargs
                or len(n.args) != 2 or not all(is_tensor_node(a) for a in n.args)
                or val(n).dtype != torch.float32
                or any(val(a).dtype != val(n).dtype for a in n.args)):
            continue
        a, b = n.args
        rows, cols = val(n).shape[-2:]
        if _is_one(rows) and _at_most(cols, most):
            side = 0  # one row: the row of a, transposed, times b's columns, summed over k
        elif _is_one(cols) and _at_most(rows, most):
            side = 1  # one column: a's rows times the column of b, transposed
        else:
            continue
        rank = val(n).dim()
        swap = [*range(rank - 2), rank - 1, rank - 2]
        insert = _inserter(graph, detect_fake_mode([val(n)]))
        with graph.inserting_before(n):
            if side == 0:
                prod = insert(torch.ops.aten.mul.Tensor,
                              (insert(torch.ops.aten.permute.default, (a, swap)), b))
            else:
                prod = insert(torch.ops.aten.mul.Tensor,
                              (a, insert(torch.ops.aten.permute.default, (b, swap))))
            out = insert(torch.ops.aten.sum.dim_IntList, (prod, [rank - 2 + side], True))
        out.meta = {**n.meta, "val": out.meta["val"]}
        n.replace_all_uses_with(out)
        graph.erase_node(n)
        count += 1
    if count:
        gm.recompile()
    return count


def _at_most(size: Any, most: int) -> bool:
    """A size of at most ``most`` (a symbolic size by its hint: the rewrite is exact at any
    size, only the choice of kernel rests on it)."""
    try:
        return hint(size) <= most
    except (TypeError, ValueError):
        return False


def _diagonal_of(a: Any) -> fx.Node | None:
    """v where ``a`` = ``where(arange(n) == arange(n)[:, None], v', 0)`` is an n x n matrix
    with v' a broadcast of the n-vector v (a row or a column), of ``a``'s dtype."""
    if not (isinstance(a, fx.Node) and a.op == "call_function" and op_name(a.target) == "where"
            and len(a.args) == 3 and is_tensor_node(a) and val(a).dim() == 2):
        return None
    cond, x, zero = a.args
    n = val(a).shape[0]
    if not (_literal_zero(zero) and _identity_pattern(cond, n) and is_tensor_node(x)):
        return None
    vx = val(x)
    if vx.dtype != val(a).dtype or vx.dim() > 2 or not _same_size(vx.numel(), n):
        return None
    if vx.dim() == 2 and not (_is_one(vx.shape[0]) or _is_one(vx.shape[1])):
        return None
    return x


def _literal_zero(z: Any) -> bool:
    if isinstance(z, (int, float)) and not isinstance(z, bool):
        return z == 0
    return (isinstance(z, fx.Node) and z.op == "call_function"
            and op_name(z.target) == "scalar_tensor" and len(z.args) == 1
            and isinstance(z.args[0], (int, float)) and z.args[0] == 0)


def _identity_pattern(c: Any, n: Any) -> bool:
    """``c`` is ``arange(n) == arange(n)[:, None]`` (either order; through views that keep
    its [n, n] shape): true exactly on the diagonal."""
    while isinstance(c, fx.Node) and _same_shape_view(c):
        c = c.args[0]
    if not (isinstance(c, fx.Node) and c.op == "call_function" and op_name(c.target) == "eq"
            and len(c.args) == 2 and is_tensor_node(c)):
        return False
    sides = [_arange_axis(x, n) for x in c.args]
    return sorted(s for s in sides if s is not None) == [0, 1]


def _arange_axis(x: Any, n: Any) -> int | None:
    """The axis (0: rows, ``[n, 1]``; 1: columns, ``[n]`` or ``[1, n]``) along which ``x``
    holds ``arange(n)``."""
    axis = 1
    if (isinstance(x, fx.Node) and x.op == "call_function" and op_name(x.target) == "unsqueeze"
            and x.args[1] in (-1, 1) and is_tensor_node(x.args[0]) and val(x.args[0]).dim() == 1):
        axis, x = 0, x.args[0]
    elif (isinstance(x, fx.Node) and x.op == "call_function"
          and op_name(x.target) == "unsqueeze" and x.args[1] in (0, -2)):
        x = x.args[0]
    if not (isinstance(x, fx.Node) and x.op == "call_function"
            and op_name(x.target) == "arange" and is_tensor_node(x) and val(x).dim() == 1):
        return None
    args = list(x.args)  # (end,), (start, end) or (start, end, step)
    start = 0 if len(args) == 1 else args[0]
    step = args[2] if len(args) > 2 else 1
    if start != 0 or step != 1 or not _same_size(val(x).shape[0], n):
        return None
    return axis


def _same_size(a: Any, b: Any) -> bool:
    """Equal sizes, symbolic ones compared as expressions (no guard added)."""
    return shape_key((a,)) == shape_key((b,))


def complex_products(gm: fx.GraphModule) -> int:
    """``view_as_real(view_as_complex(a) * z)`` -> real products of the pairs (see the module
    docstring); the number of products replaced."""
    from torch._guards import detect_fake_mode

    aten = torch.ops.aten
    graph = gm.graph
    count = 0
    for n in list(graph.nodes):
        if n.op != "call_function" or op_name(n.target) != "view_as_real":
            continue
        m = n.args[0]
        if (op_name(getattr(m, "target", None)) != "mul" or m.kwargs or len(m.users) != 1
                or not all(is_tensor_node(x) and val(x).is_complex() for x in m.args)):
            continue
        pair = next((x for x in m.args if op_name(x.target) == "view_as_complex"), None)
        if pair is None or val(pair).dtype != torch.complex64:
            continue
        z = m.args[1] if m.args[0] is pair else m.args[0]
        insert = _inserter(graph, detect_fake_mode([val(n)]))
        with graph.inserting_before(n):
            zr = (z.args[0] if op_name(z.target) == "view_as_complex"
                  else insert(aten.view_as_real.default, (z,)))
            # [..., n, 1] halves of the pairs (slices keep the rank): the products broadcast
            # to the [..., n, 2] result and are computed in its one kernel, even entries real
            a0, a1, z0, z1 = (insert(aten.slice.Tensor, (t, val(t).dim() - 1, i, i + 1))
                              for t in (pair.args[0], zr) for i in (0, 1))
            re = insert(aten.sub.Tensor, (insert(aten.mul.Tensor, (a0, z0)),
                                          insert(aten.mul.Tensor, (a1, z1))))
            im = insert(aten.add.Tensor, (insert(aten.mul.Tensor, (a0, z1)),
                                          insert(aten.mul.Tensor, (a1, z0))))
            lane = insert(aten.arange.start_step, (0, 2), {
                "dtype": torch.int64, "layout": torch.strided, "device": val(n).device})
            out = insert(aten.where.self, (insert(aten.eq.Scalar, (lane, 0)), re, im))
        n.replace_all_uses_with(out)
        graph.erase_node(n)
        count += 1
    if count:
        graph.eliminate_dead_code()
        gm.recompile()
    return count


#: reductions whose result over dims R is the same reduction of their results over part of R
#: (a mean of equal-sized row means is the mean), by the overload that takes dims
_SPLITTABLE = {
    "sum": torch.ops.aten.sum.dim_IntList,
    "mean": torch.ops.aten.mean.dim,
    "amax": torch.ops.aten.amax.default,
    "amin": torch.ops.aten.amin.default,
}


def split_row_reductions(gm: fx.GraphModule) -> int:
    """``r(f(x, q), R)`` as ``r(r(f(x, q), Q, keepdim), R)`` where ``q`` is a keepdim
    reduction over dims ``Q``, part of ``R``, of a tensor of ``f``'s shape (see the module
    docstring); the number of reductions split."""
    from torch._guards import detect_fake_mode

    from kernelcraft.plan import _supported_reduction, reduction_dims

    graph = gm.graph
    count = 0
    for n in list(graph.nodes):
        if (n.op != "call_function" or op_name(n.target) not in _SPLITTABLE
                or not _supported_reduction(n) or val(n.args[0]).dtype not in _FLOATS):
            continue
        src = n.args[0]
        rdims, _ = reduction_dims(n)
        inner = _row_context(src)
        if inner is None or not set(inner) < set(rdims):
            continue
        with graph.inserting_before(n):
            part = _inserter(graph, detect_fake_mode([val(n)]))(
                _SPLITTABLE[op_name(n.target)], (src, list(inner), True))
        n.replace_input_with(src, part)
        count += 1
    if count:
        gm.recompile()
    return count


def _row_context(src: fx.Node, most: int = 64) -> tuple[int, ...] | None:
    """The dims ``Q`` of the keepdim reductions of tensors of ``src``'s shape that the
    pointwise ops computing ``src`` broadcast back (a log-softmax's row maximum and
    log-sum-exp: ``Q`` = the class dim), if they all reduce the same dims; else None."""
    from kernelcraft.plan import _supported_reduction, reduction_dims

    domain = shape_key(val(src).shape)
    found: set[tuple[int, ...]] = set()
    seen: set[fx.Node] = set()
    todo = [src]
    while todo and len(seen) < most:
        m = todo.pop()
        if m in seen or not is_tensor_node(m) or m.op != "call_function":
            continue
        seen.add(m)
        if op_name(m.target) in _SPLITTABLE and _supported_reduction(m):
            dims, keep = reduction_dims(m)
            if keep and shape_key(val(m.args[0]).shape) == domain:
                found.add(dims)
            continue
        shape = shape_key(val(m).shape)
        if is_pointwise(m.target) and (shape == domain or broadcasts_to(shape, domain)):
            todo.extend(m.all_input_nodes)
    return found.pop() if len(found) == 1 else None


_ASSERTS = (torch.ops.aten._assert_async.msg, torch.ops.aten._assert_async.default)


def drop_proven_asserts(gm: fx.GraphModule) -> int:
    """Erase the ``_assert_async`` nodes whose condition ``value_range`` proves true (see the
    module docstring), then what only they read; the number erased."""
    from kernelcraft.value_range import ValueRanges

    ranges = ValueRanges()
    graph = gm.graph
    count = 0
    for n in list(graph.nodes):
        if n.op == "call_function" and n.target in _ASSERTS and ranges.always_true(n.args[0]):
            graph.erase_node(n)
            count += 1
    if count:
        graph.eliminate_dead_code()
        gm.recompile()
    return count


_UNIT_VIEWS = ("unsqueeze", "view", "_unsafe_view", "reshape")


def _inserts_unit_dims(v: fx.Node) -> bool:
    """A view whose result is its operand's shape with size-1 dims inserted."""
    if op_name(v.target) not in _UNIT_VIEWS or not is_tensor_node(v.args[0]):
        return False
    src, out = shape_key(val(v.args[0]).shape), shape_key(val(v).shape)
    if len(out) <= len(src):
        return False
    it = iter(src)
    want = next(it, None)
    for d in out:
        if want is not None and d == want:
            want = next(it, None)
        elif d != "1":
            return False
    return want is None


def _input_cone(v: fx.Node, most: int = 16) -> list[fx.Node] | None:
    """The pointwise nodes ``v`` (a unit view) reads back to graph inputs, each of the
    viewed shape and read only inside the cone (in graph order), if that is all it reads."""
    shape = shape_key(val(v.args[0]).shape)
    cone: list[fx.Node] = []
    todo = [v.args[0]]
    while todo:
        n = todo.pop()
        if n in cone:
            continue
        if (n.op != "call_function" or not is_pointwise(n.target) or not _simple_pointwise(n)
                or shape_key(val(n).shape) != shape or len(cone) >= most):
            return None
        cone.append(n)
        for a in n.all_input_nodes:
            if _input_view(a):  # an input, or a view of one: a load
                if shape_key(val(a).shape) != shape and val(a).dim() > 0:
                    return None
            else:
                todo.append(a)
    inside = set(cone) | {v}
    if any(u not in inside for n in cone for u in n.users):
        return None
    order = {n: i for i, n in enumerate(v.graph.nodes)}
    return sorted(cone, key=order.__getitem__)


def _input_view(a: fx.Node) -> bool:
    while a.op == "call_function" and is_view(a.target) and a.args \
            and isinstance(a.args[0], fx.Node):
        a = a.args[0]
    return a.op in ("placeholder", "get_attr")


def hoist_unit_views(gm: fx.GraphModule) -> int:
    """Move a unit view above the pointwise chain on graph inputs it views (see the module
    docstring); the number of views moved."""
    graph = gm.graph
    count = 0
    for v in list(graph.nodes):
        if v.op != "call_function" or not _inserts_unit_dims(v):
            continue
        cone = _input_cone(v)
        if cone is None:
            continue
        v.replace_all_uses_with(_rebuilt_viewed(v, cone))
        graph.erase_node(v)
        for n in reversed(cone):
            graph.erase_node(n)
        count += 1
    if count:
        gm.recompile()
    return count


def _rebuilt_viewed(v: fx.Node, cone: list[fx.Node]) -> fx.Node:
    """``cone`` computed again before ``v`` on its inputs viewed as ``v`` views (same op, same
    size arguments: symbolic sizes stay the graph's); the node that replaces ``v``."""
    from torch._guards import detect_fake_mode

    graph = v.graph
    insert = _inserter(graph, detect_fake_mode([val(v)]))
    new: dict[fx.Node, fx.Node] = {}

    def moved(a: Any) -> Any:
        if not isinstance(a, fx.Node):
            return a
        if a in new:
            return new[a]
        if not is_tensor_node(a) or val(a).dim() == 0:
            return a
        new[a] = insert(v.target, (a, *v.args[1:]), dict(v.kwargs))  # one view per input
        return new[a]

    with graph.inserting_before(v):
        for n in cone:
            new[n] = insert(n.target, tuple(fx.node.map_arg(n.args, moved)),
                            dict(fx.node.map_arg(n.kwargs, moved)))
    return new[cone[-1]]
