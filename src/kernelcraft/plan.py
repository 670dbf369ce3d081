"""Plan: partition the captured graph into fused groups.

Groups are built in one pass over the nodes in topological order:

- ``pointwise``: connected elementwise ops over one output shape (the domain);
- ``reduction``: reductions over the same dims of one domain, with the pointwise ops
  before them (on the domain) and after them (on the domain or on the reduced shape), so
  softmax, norms and losses become one kernel;
- ``matmul``: mm/addmm/bmm with the pointwise ops on its output as the epilogue;
- ``pool``: a max or average pooling window (1-3-D, fixed or adaptive) with the pointwise
  ops that feed only it (recomputed per tap) and the pointwise ops on its output;
- ``scan``: a cumulative sum, product, log-sum-exp, max or min along one dim, with the
  pointwise ops that feed only it, the pointwise ops on its output, and flips along the
  scanned dim on either side (a suffix sum is one kernel);
- ``topk``: the k largest or smallest entries along one dim (values and indices), with
  the pointwise ops that feed only it; a ``sort`` (and ``argsort``) of short rows too;
- ``conv``: a convolution (``--conv-template``, default auto) with the pointwise ops on its
  output as the epilogue, like matmul;
- ``scatter``: an accumulating ``index_put`` (``index_add``, ``x.index_put_(idx, v,
  accumulate=True)``) with the pointwise ops that feed only its values: the pointwise
  template over the values' domain, each element added atomically where its index sends it;
- ``attention``: softmax(Q K^T * scale + causal or boolean mask) V, recognised by structure
  before the pass (``attention_pattern.py``), one flash-attention kernel that never
  materialises the scores; a pattern it cannot take keeps the kernels below, with a note;
- ``extern``: ops no template covers yet, run through PyTorch;
- ``glue``: views and size arithmetic (no data moves).

A node joins a neighbour's group only if no path leaves the group and comes back (that
would be a cycle); the fusion choices are recorded in :class:`FusionOptions` so the tuner
can change them later.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.fx as fx

from kernelcraft.codegen.ops import is_matmul, is_pointwise, is_reduction, is_view, op_name


@dataclass(frozen=True)
class FusionOptions:
    """Fusion decisions exposed to search."""

    fuse_pointwise: bool = True
    fuse_reductions: bool = True  # pre/post pointwise and sibling reductions into one kernel
    fuse_epilogues: bool = True  # pointwise ops after a matmul into its kernel
    #: pointwise ops that feed only a pool or a scan recomputed inside it (never stored)
    fuse_prologues: bool = True
    extern_ops: frozenset[str] = frozenset()  # ops forced to PyTorch
    #: convolutions through the implicit-GEMM template, with the pointwise ops on their
    #: output as the epilogue: "always", "never" (cuDNN/MIOpen) or "auto": with a GPU to
    #: measure on every layer (each kernel is timed against the library and kept where it
    #: wins), without one every layer but the kinds the library won on the H200
    #: (``conv_group.library_wins``). True and False mean "always" and "never".
    conv_template: str | bool = "auto"
    #: softmax(Q K^T) V through the flash-attention template (else bmm + softmax kernels)
    attention_template: bool = True
    #: nodes computing what an earlier node computes merged into it (``rewrite``)
    eliminate_common: bool = True
    #: pointwise values on a broadcast shape that one kernel reads recomputed inside it
    fuse_broadcast_producers: bool = True
    #: literal 0-d tensors (``scalar_tensor``) computed inside the kernels that read them
    inline_constants: bool = True
    #: gathers moved below the pointwise ops feeding them (``rewrite.sink_gathers``: cross
    #: entropy then never writes the whole log-softmax)
    sink_gathers: bool = True
    #: pointwise ops after a Linear on a 3-D input moved before its view back
    #: (``rewrite.sink_views``): they become the matmul's epilogue
    sink_views: bool = True
    #: pointwise ops read an ``expand``'s input, broadcasting it themselves
    #: (``rewrite.drop_expands``): they can join the kernel that produces it
    drop_expands: bool = True
    #: values computed from ``arange`` alone (upsampling's source rows, position ids, masks
    #: from lengths) computed inside the pointwise kernel that reads them: no launch, no
    #: buffer, no index load
    compute_positions: bool = True
    #: reductions over the same rows of one tensor through different pointwise chains
    #: (``any(|x| > t)`` and ``all(x > -t)``; a min and a max for a quantisation range) in
    #: one kernel: the rows are read once, and what combines both results joins it
    merge_row_siblings: bool = True
    #: a cat's piece computed by a one-operand pointwise op (``-x2`` in rotate_half)
    #: computed where the cat is read, from the element's index (``rewrite.lift_cat_pieces``)
    lift_cat_pieces: bool = True
    #: pointwise ops after a view merging the dims of a clone (``x.permute(..).contiguous()
    #: .view(..)``) compute on the clone's shape (``rewrite.unmerge_views``): one kernel
    unmerge_views: bool = True
    #: a bmm operand copied only to merge its batch dims (``view(clone(y))``) is read from
    #: ``y`` through its strides by the matmul kernel (``batch_operand_chain``): no copy
    strided_batch_operands: bool = True
    #: pointwise ops whose operands are all reshapes of values of one shape (or single
    #: elements) compute on that shape (``rewrite.follow_views``): GroupNorm's activation
    #: joins the norm's kernel
    follow_views: bool = True
    #: ``flip`` as a gather with computed reversed indices (``rewrite.flip_gathers``): it
    #: joins the kernel that reads it instead of running as a copy in PyTorch
    flip_gathers: bool = True
    #: a gather of a gather on other dims as one gather (``rewrite.merge_gathers``:
    #: ``torch.roll`` over two dims reads its source once, in the kernel that uses it)
    merge_gathers: bool = True
    #: ``scatter`` of one value per line (the one-hot of an argmax) as a ``where`` of the
    #: element's index (``rewrite.scatter_lines``): a pointwise op, fused
    scatter_lines: bool = True
    #: ``x + zeros.index_add(...)`` as ``x.index_add(...)`` (``rewrite.fold_scatter_bases``):
    #: the scatter adds into a copy of x, no zero fill and no pass adding the two
    fold_scatter_bases: bool = True
    #: ``scatter_reduce(..., include_self=False)`` as a scatter of the reduction's identity,
    #: then the reduction over the base (``rewrite.scatter_reduce_identity``): two atomic
    #: scatters the template takes (a GNN's max aggregation), not PyTorch's whole op
    scatter_reduce_identity: bool = True
    #: ``x[:, a:b] = y`` as exported (``copy`` into a slice, ``slice_scatter``) as ``y``
    #: itself where it covers x, else ``cat`` of x's slices around y
    #: (``rewrite.slice_assignments``): a load of the pointwise template, not PyTorch's copies
    slice_assignments: bool = True
    #: unit-dim layout detours (einsum's 5-D ``unsqueeze`` / ``permute`` chains around a bmm)
    #: as one permute and the view (``rewrite.fold_unit_layouts``): attention written with
    #: einsum is seen as attention
    fold_unit_layouts: bool = True
    #: ``torch.diag(v) @ b`` as ``v[:, None] * b`` (``rewrite.diagonal_matmuls``): no n x n
    #: matrix, n^2 work instead of n^3, the same rounding
    diagonal_matmuls: bool = True
    #: a product with one output dim of 1 and the other at most ``thin_matmul_max`` (a
    #: batched matvec into 3 coordinates: einsum "bij,bijk->bik") as a product and a sum
    #: (``rewrite.thin_matmuls``): a reduction kernel that computes its operands in place,
    #: where a matmul's 16-wide tiles would be mostly padding; 0 turns it off
    thin_matmul_max: int = 16
    #: a view inserting size-1 dims after pointwise ops on graph inputs moved above them
    #: (``rewrite.hoist_unit_views``): a per-row cast unsqueezed against the features is
    #: recomputed in the kernel that reads it
    hoist_unit_views: bool = True
    #: device-side checks proven true by the value bounds of their operands erased with
    #: the reductions feeding them (``rewrite.drop_proven_asserts``: ``F.one_hot`` of an
    #: argmax checks nothing that can fail)
    drop_proven_asserts: bool = True
    #: ``view_as_real(view_as_complex(a) * z)`` as real products of the pairs
    #: (``rewrite.complex_products``: Meta's Llama rotary embedding as one pointwise kernel)
    complex_products: bool = True
    #: a reduction over more dims of values computed with a row reduction's result (a
    #: loss summed over a log-softmax) reduced over the rows' dims first
    #: (``rewrite.split_row_reductions``): the row kernel computes each row's part, where
    #: the whole tensor was written out and read back by a second kernel
    split_row_reductions: bool = True
    #: a pointwise group (or a reduction over the same dims) reading values of the domain
    #: that a row reduction's kernel computes (``_merge_row_consumer``) is computed there
    merge_row_consumers: bool = True


@dataclass
class Group:
    id: int
    kind: str  # pointwise | reduction | matmul | attention | conv | pool | scan | scatter |
    #            topk | extern | glue
    nodes: list[fx.Node] = field(default_factory=list)
    domain: tuple[str, ...] = ()
    rdims: tuple[int, ...] = ()
    anchor: fx.Node | None = None
    reason: str = ""
    deps: set[int] = field(default_factory=set)
    inputs: list[fx.Node] = field(default_factory=list)
    outputs: list[fx.Node] = field(default_factory=list)
    template: Any = None  # what a template matched (attention: an AttentionMatch)
    #: position values the kernel computes (``compute_positions``): the value read -> the
    #: nodes computing it from ``arange``, in graph order (members of this group)
    positions: dict[fx.Node, list[fx.Node]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"g{self.id}_{self.kind}"

    @property
    def is_kernel(self) -> bool:
        return self.kind in ("pointwise", "reduction", "matmul", "attention", "conv", "pool",
                             "scan", "scatter", "topk")

    def describe(self) -> str:
        ops = [op_name(n.target) for n in self.nodes if n.op == "call_function"]
        return ", ".join(ops)


@dataclass
class Plan:
    graph: fx.Graph
    groups: list[Group]
    group_of: dict[fx.Node, Group]
    notes: list[str] = field(default_factory=list)  # patterns a template left alone, and why

    @property
    def kernels(self) -> list[Group]:
        return [g for g in self.groups if g.is_kernel]

    @property
    def externs(self) -> list[Group]:
        return [g for g in self.groups if g.kind == "extern"]


def val(n: Any) -> Any:
    return n.meta.get("val") if isinstance(n, fx.Node) else n


#: the size assumed for a data-dependent one (rows of ``x[mask]``, of ``nonzero``), which no
#: capture can know: configs and cost estimates take it, kernels read the real size
UNBACKED_HINT = 8192


def hint(d: Any) -> int:
    """A captured size as an int (a symbolic one by the value it was captured at; a
    data-dependent one as ``UNBACKED_HINT``)."""
    if isinstance(d, torch.SymInt):
        return UNBACKED_HINT if d.node.hint is None else int(d.node.hint)
    return int(d)


def is_tensor_node(n: Any) -> bool:
    return isinstance(n, fx.Node) and isinstance(val(n), torch.Tensor)


def shape_key(shape: Any) -> tuple[str, ...]:
    return tuple(_size_key(s) for s in shape)


def _size_key(s: Any) -> str:
    """A size as text; symbolic sizes after the capture's equalities
    (``capture.unify_sizes``), so that sizes the program requires equal compare equal."""
    if isinstance(s, torch.SymInt):
        subs = getattr(s.node.shape_env, "kc_equal_sizes", None)
        if subs:
            return str(s.node.expr.xreplace(subs).expand())
    return str(s)


def reduction_dims(n: fx.Node) -> tuple[tuple[int, ...], bool]:
    """Positive reduced dims and keepdim of a reduction node."""
    x = n.args[0]
    ndim = val(x).dim()
    name = op_name(n.target)
    dims: Any = None
    keepdim = False
    if name in ("argmax", "argmin"):
        dims = n.args[1] if len(n.args) > 1 else n.kwargs.get("dim")
        keepdim = bool(n.args[2]) if len(n.args) > 2 else bool(n.kwargs.get("keepdim", False))
    else:
        dims = n.args[1] if len(n.args) > 1 else n.kwargs.get("dim")
        keepdim = bool(n.args[2]) if len(n.args) > 2 else bool(n.kwargs.get("keepdim", False))
    if dims is None or dims == []:
        dims = list(range(ndim))
    if isinstance(dims, int):
        dims = [dims]
    return tuple(sorted(d % max(ndim, 1) for d in dims)), keepdim


def keep_shape(domain: tuple[str, ...], rdims: tuple[int, ...]) -> tuple[str, ...]:
    """The domain with its reduced dims set to 1 (a keepdim reduction's result)."""
    return tuple("1" if i in rdims else s for i, s in enumerate(domain))


def drop_shape(domain: tuple[str, ...], rdims: tuple[int, ...]) -> tuple[str, ...]:
    """The domain without its reduced dims (a reduction's result without keepdim)."""
    return tuple(s for i, s in enumerate(domain) if i not in rdims)


def kept_shapes(domain: tuple[str, ...], rdims: tuple[int, ...]) -> set[tuple[str, ...]]:
    return {keep_shape(domain, rdims), drop_shape(domain, rdims)}


def _supported_reduction(n: fx.Node) -> bool:
    if not is_tensor_node(n.args[0]):
        return False
    name = op_name(n.target)
    if name in ("argmax", "argmin"):
        dim = n.args[1] if len(n.args) > 1 else n.kwargs.get("dim")
        if dim is None:
            return False
    if n.kwargs.get("dtype") is not None:
        return False
    dtype = val(n.args[0]).dtype
    if name == "sum" and dtype in (torch.bool, torch.int32, torch.int64):
        return True  # a count: int64 lanes
    if name in ("amax", "amin") and not dtype.is_floating_point and dtype != torch.uint64:
        return True  # int64 lanes
    if name in ("argmax", "argmin") and not dtype.is_floating_point:
        return _exact_in_fp32(n.args[0])
    return dtype in (torch.float32, torch.float16, torch.bfloat16)


def _exact_in_fp32(x: fx.Node) -> bool:
    """Integers the row template's fp32 lanes hold exactly (a comparison or a selection
    then picks as on the integers): every value of a narrow dtype, or values bounded
    within 2^24 (``value_range``: a mask cast to int32, a clamped label)."""
    dtype = val(x).dtype
    if dtype in (torch.bool, torch.uint8, torch.int8, torch.int16):
        return True
    if dtype not in (torch.int32, torch.int64):
        return False
    from kernelcraft.value_range import ValueRanges  # (it reads node values through plan)

    b = ValueRanges().of(x)
    return b is not None and -(2**24) <= b[0] and b[1] <= 2**24


#: gathers the pointwise template loads directly (``x[idx]``, ``x[:, rows, cols]``)
GATHERS = ("index", "_unsafe_index")
_GATHER_DTYPES = (torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32,
                  torch.bool)


def gather_dims(n: Any) -> tuple[int, ...] | None:
    """The source dims a gather node indexes, else None: ``aten.index`` with integer index
    tensors on adjacent dims, or ``aten.gather(x, dim, index)``."""
    if not isinstance(n, fx.Node) or n.op != "call_function":
        return None
    if op_name(n.target) == "gather":
        x, dim, index = n.args[0], n.args[1], n.args[2]
        if (n.kwargs.get("sparse_grad") or not is_tensor_node(x) or not is_tensor_node(index)
                or val(x).dtype not in _GATHER_DTYPES or not isinstance(dim, int)
                or val(index).dtype not in (torch.int64, torch.int32)
                or val(index).dim() != val(x).dim()):
            return None
        return (dim % max(val(x).dim(), 1),)
    if op_name(n.target) not in GATHERS:
        return None
    x, idx = n.args[0], n.args[1]
    if not is_tensor_node(x) or not isinstance(idx, (list, tuple)):
        return None
    if val(x).dtype not in _GATHER_DTYPES:
        return None
    return _adjacent_indices(idx)


def _adjacent_indices(idx: list[Any] | tuple[Any, ...]) -> tuple[int, ...] | None:
    """The dims an ``aten.index``/``index_put`` index list takes: integer index tensors on
    adjacent dims (separated ones move their dims to the front: not here), else None."""
    pos = [i for i, t in enumerate(idx) if t is not None]
    if not pos or pos != list(range(pos[0], pos[-1] + 1)):
        return None
    for i in pos:
        if not is_tensor_node(idx[i]) or val(idx[i]).dtype not in (torch.int64, torch.int32):
            return None
    return tuple(pos)


def gather_indices(n: fx.Node) -> list[fx.Node]:
    """A gather's (or scatter's) index tensors, in the order of the dims they index."""
    if in_place_index(n):
        return [n.args[2]]
    return [a for a in n.args[1] if a is not None]


#: what the template adds atomically (fp32 atomics exist on every target)
_SCATTER_DTYPES = (torch.float32, torch.int32, torch.int64)  # (integers: exact atomics)


def in_place_index(n: fx.Node) -> bool:
    """``gather``, ``scatter_add``, ``scatter_reduce`` and ``scatter``: one index tensor of
    the source's rank, which takes the indexed dim's place (the other dims are the
    element's own)."""
    return op_name(n.target) in ("gather", "scatter_add", "scatter_reduce", "scatter")


def scatter_values(n: fx.Node) -> Any:
    """What a scatter combines (``index_put``'s values, ``scatter_add``'s src; a number for
    ``scatter.value``)."""
    return n.args[3] if in_place_index(n) else n.args[2]


#: ``scatter_reduce``'s reductions the template takes, by the atomic each takes
_SCATTER_REDUCE = {"sum": "add", "amax": "max", "amin": "min"}


def scatter_combine(n: fx.Node) -> str:
    """How a scatter's value meets its target's element: ``add``, ``max`` or ``min`` (an
    atomic: duplicates combine in any order), or ``set`` (``scatter.value``: every write
    stores the same number, so duplicates agree)."""
    name = op_name(n.target)
    if name == "scatter_reduce":
        return _SCATTER_REDUCE[n.args[4]]
    return "set" if name == "scatter" else "add"


def scatter_dims(n: Any) -> tuple[int, ...] | None:
    """The base dims a scatter indexes, else None: an accumulating ``index_put`` (integer
    index tensors on adjacent dims, as ``index_add`` and ``x.index_put_(i, v,
    accumulate=True)`` export), ``scatter_add`` and ``scatter_reduce`` of a sum, amax or
    amin that includes the base (src read where its index is), ``scatter`` of a number. A
    plain ``index_put`` or ``scatter`` of a tensor (duplicates: one write wins) stays
    extern, as do ``scatter_reduce`` without the base (``rewrite.scatter_reduce_identity``
    rewrites it first), of a product or a mean."""
    if not isinstance(n, fx.Node) or n.op != "call_function":
        return None
    name = op_name(n.target)
    if name in ("scatter_add", "scatter_reduce", "scatter"):
        if len(n.args) != (5 if name == "scatter_reduce" else 4):
            return None
        base, dim, index, src = n.args[:4]
        if name == "scatter_reduce" and (n.args[4] not in _SCATTER_REDUCE
                                         or n.kwargs.get("include_self", True) is not True):
            return None
        if name == "scatter":
            if n.kwargs or isinstance(src, bool) or not isinstance(src, (int, float)):
                return None
        elif (not is_tensor_node(src) or val(src).dtype != val(base).dtype
              or val(src).dim() != val(base).dim()):
            return None
        if (not is_tensor_node(base) or not is_tensor_node(index) or not isinstance(dim, int)
                or val(base).dtype not in _SCATTER_DTYPES
                or val(index).dtype not in (torch.int64, torch.int32)
                or val(base).dim() != val(index).dim()):
            return None
        return (dim % max(val(base).dim(), 1),)
    if name != "index_put":
        return None
    base, idx, values = n.args[0], n.args[1], n.args[2]
    if (not _accumulates(n) or not is_tensor_node(base) or not is_tensor_node(values)
            or not isinstance(idx, (list, tuple)) or val(base).dtype not in _SCATTER_DTYPES
            or val(values).dtype != val(base).dtype):
        return None
    return _adjacent_indices(idx)


def _accumulates(n: fx.Node) -> bool:
    """An ``index_put`` that adds (``accumulate=True``) rather than assigns."""
    return (n.args[3] if len(n.args) > 3 else n.kwargs.get("accumulate", False)) is True


def scatter_shape(n: fx.Node) -> tuple[Any, ...]:
    """The domain of a scatter: the shape its values broadcast to (the base's dims around
    the broadcast shape of the index tensors)."""
    dims = scatter_dims(n)
    assert dims is not None
    if in_place_index(n):
        return tuple(val(n.args[2]).shape)
    base = val(n.args[0]).shape
    idx = torch.broadcast_shapes(*(val(t).shape for t in gather_indices(n)))
    return (*base[:dims[0]], *idx, *base[dims[-1] + 1:])


_PIECE_DTYPES = (torch.float32, torch.float16, torch.bfloat16)
#: what ``cat`` takes besides (copied values: integer positions, masks)
_CAT_DTYPES = (*_PIECE_DTYPES, torch.int64, torch.int32, torch.bool)


def piecewise_load(n: Any) -> bool:
    """``cat`` and ``constant_pad_nd`` over tensors read from memory: each element of the
    result is a load from one source (or the pad value), chosen by its index on one dim."""
    if not isinstance(n, fx.Node) or n.op != "call_function":
        return False
    name = op_name(n.target)
    if name == "cat":
        srcs, out = n.args[0], val(n)
        dim = n.args[1] if len(n.args) > 1 else n.kwargs.get("dim", 0)
        return (isinstance(srcs, (list, tuple)) and len(srcs) >= 1 and isinstance(dim, int)
                and out.dtype in _CAT_DTYPES and out.dim() >= 1
                and all(is_tensor_node(t) and val(t).dtype == out.dtype
                        and val(t).dim() == out.dim() for t in srcs))
    if name == "constant_pad_nd":
        x, pad = n.args[0], n.args[1]
        value = n.args[2] if len(n.args) > 2 else n.kwargs.get("value", 0)
        return (is_tensor_node(x) and val(x).dtype in _PIECE_DTYPES
                and isinstance(pad, (list, tuple)) and all(isinstance(p, int) for p in pad)
                and len(pad) % 2 == 0 and len(pad) // 2 <= val(x).dim()
                and isinstance(value, (int, float)))
    return False


def is_load(n: Any) -> bool:
    """Nodes the pointwise template reads from memory by index: gathers, cat, padding."""
    return gather_dims(n) is not None or piecewise_load(n)


def _has_gather(g: Group) -> bool:
    return any(is_load(m) for m in g.nodes)


def _domain_gather(m: fx.Node, domain: tuple[str, ...]) -> bool:
    """A load a reduction kernel over ``domain`` can take: a gather (no cat or padding) on
    the domain or broadcast to it (read per element, like any full-context value: the
    embedding rows a LayerNorm normalises, a rolled map)."""
    shape = shape_key(val(m).shape)
    return gather_dims(m) is not None and (shape == domain or broadcasts_to(shape, domain))


def _reduction_gathers_ok(g: Group, domain: tuple[str, ...]) -> bool:
    """Whether ``g``'s loads may join a reduction kernel over ``domain``: domain gathers
    (``_domain_gather``) whose sources and index tensors are outside ``g``."""
    members = set(g.nodes)
    return all(_domain_gather(m, domain) and not any(a in members for a in m.all_input_nodes)
               for m in g.nodes if is_load(m))


def row_gather(n: fx.Node, g: Group) -> bool:
    """An ``aten.gather`` of one value per row of reduction group ``g``: its result has
    the group's kept shape (cross entropy's logit at the target)."""
    return (op_name(n.target) == "gather"
            and shape_key(val(n).shape) == keep_shape(g.domain, g.rdims))


def _row_gather_home(n: fx.Node, group_of: dict[fx.Node, Group],
                     groups: list[Group]) -> Group | None:
    """A reduction group that can load ``aten.gather``'s one value per row: its result has
    the group's kept shape (cross entropy's logit at the target beside the row's
    log-sum-exp), its source is read from memory (not computed in the group) and its index
    is a per-row value of the group or comes from outside it."""
    if op_name(n.target) != "gather":
        return None
    src, idx = n.args[0], n.args[2]
    for u in [*src.users, *idx.users]:
        g = group_of.get(u)
        if g is None or g.kind != "reduction" or src in g.nodes or not row_gather(n, g):
            continue
        if idx in g.nodes and shape_key(val(idx).shape) != shape_key(val(n).shape):
            continue
        if _acyclic(n, g, group_of, groups):
            return g
    return None


def _gather_safe(groups: list[Group]) -> bool:
    """Whether these groups may become one kernel: a gather's (or cat's, or padding's)
    sources and index tensors stay outside it (the kernel reads them from memory), and only
    pointwise kernels gather (reduction kernels: gathers on their domain)."""
    members = {m for g in groups for m in g.nodes}
    for g in groups:
        for m in g.nodes:
            if not is_load(m):
                continue
            if groups[0].kind == "reduction":
                if not _domain_gather(m, groups[0].domain):
                    return False
            elif groups[0].kind != "pointwise":
                return False
            if any(a in members for a in m.all_input_nodes):
                return False
    return True


def build_plan(gm: fx.GraphModule, options: FusionOptions | None = None) -> Plan:
    """Partition ``gm``'s graph into groups (see the module docstring)."""
    from kernelcraft.codegen.pool import POOLS, pool_supported, value_node
    from kernelcraft.codegen.scan import SCANS, is_flip_along, scan_dim, scan_supported
    from kernelcraft.codegen.topk import SELECTS, topk_args, topk_supported

    opts = options or FusionOptions()
    if opts.eliminate_common:
        from kernelcraft.rewrite import eliminate_common

        eliminate_common(gm)
    if opts.drop_proven_asserts:
        from kernelcraft.rewrite import drop_proven_asserts

        drop_proven_asserts(gm)
    if opts.diagonal_matmuls:
        from kernelcraft.rewrite import diagonal_matmuls

        diagonal_matmuls(gm)
    if opts.thin_matmul_max:
        from kernelcraft.rewrite import thin_matmuls

        thin_matmuls(gm, opts.thin_matmul_max)
    if opts.complex_products:
        from kernelcraft.rewrite import complex_products

        complex_products(gm)
    if opts.flip_gathers:
        from kernelcraft.rewrite import flip_gathers

        flip_gathers(gm)
    if opts.merge_gathers:
        from kernelcraft.rewrite import merge_gathers

        merge_gathers(gm)
    if opts.slice_assignments:
        from kernelcraft.rewrite import slice_assignments

        slice_assignments(gm)
    if opts.scatter_lines:
        from kernelcraft.rewrite import scatter_lines

        scatter_lines(gm)
    if opts.scatter_reduce_identity:
        from kernelcraft.rewrite import scatter_reduce_identity

        scatter_reduce_identity(gm)
    if opts.fold_scatter_bases:
        from kernelcraft.rewrite import fold_scatter_bases

        fold_scatter_bases(gm)
    if opts.fold_unit_layouts:
        from kernelcraft.rewrite import fold_unit_layouts

        fold_unit_layouts(gm)
    if opts.sink_views or opts.drop_expands or opts.unmerge_views or opts.follow_views:
        keep: set[fx.Node] = set()  # what the attention template will claim stays as it is
        if opts.attention_template:
            from kernelcraft.attention_pattern import find_attention

            keep = {n for m in find_attention(gm.graph, opts.extern_ops)[0] for n in m.nodes}
        if opts.sink_views:
            from kernelcraft.rewrite import sink_views

            sink_views(gm, keep)
        if opts.unmerge_views:
            from kernelcraft.rewrite import unmerge_views

            unmerge_views(gm, keep)
        if opts.follow_views:
            from kernelcraft.rewrite import follow_views

            follow_views(gm, keep)
        if opts.drop_expands:
            from kernelcraft.rewrite import drop_expands

            drop_expands(gm, keep)
    if opts.hoist_unit_views:
        from kernelcraft.rewrite import hoist_unit_views

        hoist_unit_views(gm)
    if opts.lift_cat_pieces:
        from kernelcraft.rewrite import lift_cat_pieces

        lift_cat_pieces(gm)
    if opts.sink_gathers:
        from kernelcraft.rewrite import sink_gathers

        sink_gathers(gm)
    if opts.split_row_reductions:
        from kernelcraft.rewrite import split_row_reductions

        split_row_reductions(gm)
    if opts.inline_constants:
        from kernelcraft.rewrite import literal_fills, split_constants

        literal_fills(gm)
        split_constants(gm)
    groups: list[Group] = []
    group_of: dict[fx.Node, Group] = {}

    def new(kind: str, n: fx.Node, **kw: Any) -> Group:
        g = Group(len(groups), kind, [n], **kw)
        g.deps = _input_deps(n, group_of)
        groups.append(g)
        group_of[n] = g
        return g

    def join(g: Group, n: fx.Node) -> None:
        g.nodes.append(n)
        g.deps |= _input_deps(n, group_of) - {g.id}
        group_of[n] = g

    notes: list[str] = []
    attention: dict[fx.Node, Any] = {}  # node -> the AttentionMatch that claims it
    if opts.attention_template:
        from kernelcraft.attention_pattern import find_attention

        matches, notes = find_attention(gm.graph, opts.extern_ops)
        attention = {n: m for m in matches for n in m.nodes}
    attention_group: dict[int, Group] = {}

    for n in gm.graph.nodes:
        if n.op in ("placeholder", "output", "get_attr"):
            continue
        value = val(n)
        name = op_name(n.target)
        match = attention.get(n)
        if match is not None:  # its nodes only feed each other: one group, no cycle
            ag = attention_group.get(id(match))
            if ag is None:
                attention_group[id(match)] = new("attention", n, anchor=match.output,
                                                 domain=shape_key(val(match.output).shape),
                                                 template=match)
            else:
                join(ag, n)
            continue
        if not isinstance(value, torch.Tensor) and not _is_tensor_seq(value):
            new("glue", n)
            continue
        if name in opts.extern_ops:
            new("extern", n, reason="forced to PyTorch by the fusion options")
            continue
        if n.target is operator.getitem:
            g = group_of.get(n.args[0])
            # values or indices of a top-k or a cummax, the values of a max pool (its
            # indices are not used): computed in the anchor's kernel
            if g is not None and g.anchor is n.args[0] and (
                    g.kind in ("topk", "scan") or g.kind == "pool" and n.args[1] == 0):
                join(g, n)
                continue
        if is_load(n):  # a load of the pointwise template
            g = _row_gather_home(n, group_of, groups) if opts.fuse_reductions else None
            if g is not None:  # one value per row, loaded by the reduction's kernel
                join(g, n)
            else:
                new("pointwise", n, domain=shape_key(value.shape))
            continue
        if name == "squeeze":
            g = group_of.get(n.args[0])
            if (g is not None and g.kind == "pool" and g.nodes[-1] is n.args[0]
                    and value_node(g.anchor) is n.args[0]
                    and val(n).dim() == val(n.args[0]).dim() - 1):
                g.domain = shape_key(value.shape)  # (a 1-D pool's) epilogue on this shape
                join(g, n)
                continue
        if is_view(n.target):
            g = _row_view_home(n, group_of) if opts.fuse_reductions else None
            if g is not None:  # the same per-row values in another kept shape
                join(g, n)
            else:
                new("glue", n)
            continue
        if is_pointwise(n.target) and _simple_pointwise(n):
            shape = shape_key(value.shape)
            homes = _pointwise_homes(n, shape, groups, group_of, opts)
            if homes:
                target = homes[0]
                for other in homes[1:]:
                    _merge(target, other, groups, group_of)
                join(target, n)
            else:
                target = new("pointwise", n, domain=shape)
            if opts.inline_constants:
                _absorb_constants(n, target, groups, group_of)
            if opts.fuse_broadcast_producers:
                _absorb_broadcast_producers(n, target, groups, group_of)
            continue
        if is_reduction(n.target) and _supported_reduction(n):
            rdims, _ = reduction_dims(n)
            domain = shape_key(val(n.args[0]).shape)
            src = n.args[0]
            g = group_of.get(src)
            if (
                opts.fuse_reductions
                and g is not None
                and g.kind in ("pointwise", "reduction")
                and _reduction_gathers_ok(g, domain)
                and g.domain == domain
                and (g.kind == "pointwise" or g.rdims == rdims)
                and shape_key(val(src).shape) == domain
                and _acyclic(n, g, group_of, groups)
            ):
                g.kind, g.rdims = "reduction", rdims
                join(g, n)
                if opts.merge_row_siblings:
                    _merge_row_sibling(g, groups, group_of)
                if opts.merge_row_consumers:
                    _merge_row_consumer(g, groups, group_of)
            else:
                sibling = _sibling_reduction(n, src, domain, rdims, groups, group_of, opts)
                if sibling is not None:  # reads the same input: one pass over it
                    join(sibling, n)
                else:
                    new("reduction", n, domain=domain, rdims=rdims)
            continue
        if is_matmul(n.target) and _matmul_ok(n):
            mg = new("matmul", n, domain=shape_key(value.shape), anchor=n)
            if opts.strided_batch_operands:
                for chain in filter(None, map(batch_operand_chain, n.args[:2])):
                    homes = [group_of.get(m) for m in chain]
                    if all(h is not None and h.nodes == [m]
                           for h, m in zip(homes, chain, strict=True)):
                        for h in homes:  # the copy's kernel and the view's glue
                            _merge(mg, h, groups, group_of)
            continue
        if name in POOLS:
            why = pool_supported(n)
            if why is not None:
                new("extern", n, reason=f"{name}: {why}")
                continue
            out = value_node(n)
            domain = shape_key(val(out).shape) if out is not None else ()
            src = n.args[0]
            g = group_of.get(src)
            # a 1-D pool is a 2-D one over unsqueeze(x, -2): look through the unsqueeze
            unsq = g if (g is not None and g.kind == "glue" and g.nodes == [src]
                         and op_name(src.target) == "unsqueeze" and len(src.users) == 1) \
                else None
            if unsq is not None:
                g = group_of.get(src.args[0])
            prologue = g is not None and _prologue_ok(g, src if unsq else n, opts)
            if prologue and unsq is not None:
                _merge(g, unsq, groups, group_of)
            if prologue:  # it feeds only this pool: recomputed per tap
                g.kind, g.anchor, g.domain = "pool", n, domain
                join(g, n)
            else:
                new("pool", n, domain=domain, anchor=n)
            continue
        if name in SCANS and scan_supported(n) is None:
            d, domain = scan_dim(n), shape_key(val(n.args[0]).shape)
            src = n.args[0]
            g = group_of.get(src)
            if (is_flip_along(src, d) and len(src.users) == 1 and g is not None
                    and g.kind == "extern" and g.nodes == [src]):
                g.kind, g.anchor, g.domain, g.rdims, g.reason = "scan", n, domain, (d,), ""
                pre = group_of.get(src.args[0])  # what feeds the flip, if only the flip
                if (pre is not None and _prologue_ok(pre, src, opts)
                        and _acyclic(src, pre, group_of, groups)):
                    _merge(g, pre, groups, group_of)
                join(g, n)
            elif g is not None and _prologue_ok(g, n, opts):
                g.kind, g.anchor, g.rdims = "scan", n, (d,)
                join(g, n)
            else:
                new("scan", n, domain=domain, anchor=n, rdims=(d,))
            continue
        if name in SCANS:  # the template's reason, not "no template yet"
            new("extern", n, reason=f"{name}: {scan_supported(n)}")
            continue
        if name == "flip":
            g = group_of.get(n.args[0])
            if (g is not None and g.kind == "scan" and g.nodes[-1] is n.args[0]
                    and is_flip_along(n, g.rdims[0])
                    and not any(op_name(m.target) == "flip"
                                for m in g.nodes[g.nodes.index(g.anchor) + 1:])
                    and _acyclic(n, g, group_of, groups)):
                join(g, n)  # a flip of the scan's result: reversed stores
                continue
        if name == "convolution":
            from kernelcraft.codegen.conv_group import conv_mode, conv_supported, library_wins

            mode = conv_mode(opts.conv_template)
            if mode == "never":
                new("extern", n, reason="convolution: cuDNN/MIOpen (--conv-template never)")
                continue
            why = conv_supported(n)
            if why is None and mode == "auto":
                why = library_wins(n)
            if why is None:
                new("conv", n, domain=shape_key(value.shape), anchor=n)
            else:
                new("extern", n, reason=f"convolution: {why}")
            continue
        if scatter_dims(n) is not None:
            domain = _scatter_domain(n)
            g = group_of.get(scatter_values(n))
            if g is not None and _scatter_prologue_ok(g, n, domain, opts, group_of, groups):
                g.kind, g.anchor = "scatter", n  # the values' kernel adds them where they go
                join(g, n)
            else:
                new("scatter", n, domain=domain, anchor=n)
            continue
        if name in SELECTS:
            why = topk_supported(n)
            if why is not None:
                new("extern", n, reason=f"{name}: {why}")
                continue
            g = group_of.get(n.args[0])
            d = topk_args(n)[1]
            # (a k computed at run time falls back to torch.topk past the template's
            # buffer, which reads the input from memory: no prologue then)
            if (name == "topk" and g is not None and isinstance(topk_args(n)[0], int)
                    and _prologue_ok(g, n, opts)):
                g.kind, g.anchor, g.rdims = "topk", n, (d,)  # ranks what it computes
                join(g, n)
            else:
                new("topk", n, domain=shape_key(val(n.args[0]).shape), anchor=n, rdims=(d,))
            continue
        new("extern", n, reason=_extern_reason(n))
    if opts.merge_row_consumers:
        for g in list(groups):
            if g.kind == "pointwise":
                _merge_row_consumer(g, groups, group_of)
    if opts.fuse_broadcast_producers:
        # again once every node has its group: a producer read by several nodes of one
        # kernel (a lerp weight's where/sub pair) qualifies only once all of them joined it
        for g in list(groups):
            for n in list(g.nodes):
                if g.kind in ("pointwise", "reduction", "matmul", "conv"):
                    _absorb_broadcast_producers(n, g, groups, group_of)
                if g.kind == "reduction":
                    _absorb_row_producer(n, g, groups, group_of)
    for g in list(groups):
        fill = _domain_fill(g)
        if fill is not None:  # the fill is written once, and the kernel reads it
            _ungroup(fill, group_of)
            g.deps.add(new("extern", fill, reason="full: a fill the reduction kernel reads "
                                                  "(its only tensor of the domain's shape)").id)
    order = {n: i for i, n in enumerate(gm.graph.nodes)}
    if opts.compute_positions:
        _compute_positions(groups, group_of, order)
    live = [g for g in groups if g.kind != "merged"]
    for g in live:
        g.nodes.sort(key=order.__getitem__)
    plan = Plan(gm.graph, live, group_of, notes)
    _finish(plan)
    _drop_unread(plan)
    return plan


def _prologue_ok(g: Group, consumer: fx.Node, opts: FusionOptions) -> bool:
    """A pointwise group on ``consumer``'s input (a pool, a scan, a flip before a scan)
    whose values only ``consumer`` reads becomes its prologue: recomputed where it is read
    (at each tap of a pool), never stored."""
    if not (opts.fuse_prologues and g.kind == "pointwise" and not _has_gather(g)
            and g.domain == shape_key(val(consumer.args[0]).shape)):
        return False
    members = set(g.nodes)
    for m in g.nodes:
        if shape_key(val(m).shape) != g.domain and not inline_constant(m):
            return False
        for u in m.users:
            if u not in members and u is not consumer:
                return False
    return True


def _scatter_domain(n: fx.Node) -> tuple[str, ...]:
    """A scatter's domain as a shape key: its values' own where they take every dim (the
    capture names the values' sizes and the base's with different symbols, equal at run
    time: ``index_put`` broadcasts the values, never shrinks them), else the broadcast
    shape. ``scatter_add`` runs over its index (its src may be larger)."""
    full = shape_key(scatter_shape(n))
    if in_place_index(n):
        return full
    v = shape_key(val(scatter_values(n)).shape)
    if (len(v) == len(full)
            and all(a != "1" or b == "1" for a, b in zip(v, full, strict=True))):
        return v
    return full


def _scatter_prologue_ok(g: Group, n: fx.Node, domain: tuple[str, ...], opts: FusionOptions,
                         group_of: dict[fx.Node, Group], groups: list[Group]) -> bool:
    """A pointwise group computing scatter ``n``'s values, read by nothing else, becomes
    the scatter's kernel: the values are never stored. Its base and index tensors come
    from outside (the kernel reads the indices and writes the base's copy)."""
    if not (opts.fuse_prologues and g.kind == "pointwise" and g.domain == domain):
        return False
    members = set(g.nodes)
    if n.args[0] in members or any(t in members for t in gather_indices(n)):
        return False
    if any(u not in members and u is not n for m in g.nodes for u in m.users):
        return False
    return _acyclic(n, g, group_of, groups)


def _domain_fill(g: Group) -> fx.Node | None:
    """A reduction group that reads no tensor and gathers nothing has nothing to take its
    domain's sizes from (cross entropy against ``torch.zeros(n, dtype=long)`` targets:
    the count of kept targets is a sum over a fill); its ``full`` of the domain's shape,
    else None."""
    if g.kind != "reduction":
        return None
    members = set(g.nodes)
    if any(is_load(m) or any(is_tensor_node(a) and a not in members
                             for a in m.all_input_nodes) for m in g.nodes):
        return None
    return next((m for m in g.nodes if op_name(m.target) == "full"
                 and shape_key(val(m).shape) == g.domain), None)


def _after_scan_flip(n: fx.Node, g: Group) -> bool:
    """After a scan group's output flip, a node may read only the flip and what follows it
    (values before the flip sit at the mirrored index)."""
    flips = [m for m in g.nodes[g.nodes.index(g.anchor) + 1:] if op_name(m.target) == "flip"]
    if not flips:
        return True
    after = set(g.nodes[g.nodes.index(flips[0]):])
    return all(a in after for a in n.all_input_nodes if a in g.nodes)


def inline_constant(n: Any) -> bool:
    """A tensor of one literal (``scalar_tensor(0.0)``, as ``where(m, x, 0.0)`` and
    ``masked_fill`` decompose; ``torch.ones(t, t, dtype=bool)`` under a ``triu``): a kernel
    reading it computes it in place. Its shape never matters there: a pointwise reader's
    result already has the broadcast shape."""
    if not (isinstance(n, fx.Node) and n.op == "call_function"):
        return False
    name = op_name(n.target)
    if name == "full" and len(n.args) == 2:
        value = n.args[1]
    elif name == "scalar_tensor":
        value = n.args[0]
    else:
        return False
    if set(n.kwargs) - {"dtype", "layout", "device", "pin_memory"} or n.kwargs.get(
            "layout") not in (None, torch.strided):
        return False
    if isinstance(value, fx.Node):  # a symbolic number (``float(n - 1)``): a kernel argument
        value = val(value)
        if not isinstance(value, (torch.SymInt, torch.SymFloat, int, float)):
            return False
        value = 0
    return (isinstance(value, (int, float, bool)) and val(n).dtype in (
                torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int32,
                torch.bool))


def _absorb_constants(n: fx.Node, g: Group, groups: list[Group],
                      group_of: dict[fx.Node, Group]) -> None:
    """n's literal 0-d inputs that only n reads move from their own (extern) group into n's
    group, where the template lowers them to literals."""
    if g.kind not in ("pointwise", "reduction", "matmul", "conv"):
        return
    for a in n.all_input_nodes:
        h = group_of.get(a)
        if (h is not None and h is not g and h.kind == "extern" and h.nodes == [a]
                and inline_constant(a) and len(a.users) == 1):
            _merge(g, h, groups, group_of)


def broadcasts_to(s: tuple[str, ...], domain: tuple[str, ...]) -> bool:
    """Whether a value of shape ``s`` (same rank, or a 0-d scalar such as a learned
    temperature) broadcasts to ``domain`` and differs."""
    if s == () and domain != ():
        return True
    return (len(s) == len(domain) and s != domain
            and all(a == b or a == "1" for a, b in zip(s, domain, strict=True)))


def _absorb_broadcast_producers(n: fx.Node, g: Group, groups: list[Group],
                                group_of: dict[fx.Node, Group]) -> None:
    """A pointwise group on a smaller, broadcast shape (``~mask`` of a [B, 1, K] key
    padding mask, ``gamma.exp()`` of a [C, 1, 1] parameter) whose values only ``n`` and
    the rest of n's group read is recomputed in n's group, its inputs read broadcast there:
    no launch, no buffer. Matmul and convolution epilogues take such groups too (CLIP's
    ``logit_scale.exp()``: a launch for one value, before)."""
    if g.kind not in ("pointwise", "reduction", "matmul", "conv"):
        return
    shape = shape_key(val(n).shape)
    if g.kind != "reduction" and shape != g.domain:
        return
    tile = g.kind in ("matmul", "conv")  # an epilogue: no loads, no positions
    for a in n.all_input_nodes:
        h = group_of.get(a)
        if (h is None or h is g or h.kind != "pointwise"
                or not broadcasts_to(h.domain, shape)):
            continue
        if tile and (_has_gather(h) or h.positions or any(is_arange(m) for m in h.nodes)):
            continue
        if (_has_gather(g) or _has_gather(h)) and not (
                g.kind == "pointwise" and _gather_safe([g, h])
                or g.kind == "reduction" and _reduction_gathers_ok(h, g.domain)):
            continue  # (a position embedding [1, S, D] added to token embeddings)
        members = set(h.nodes)
        if any(u not in members and u is not n and group_of.get(u) is not g
               for m in h.nodes for u in m.users):
            continue  # read outside g too (or returned): computed once, stored
        if any(shape_key(val(m).shape) != h.domain and not inline_constant(m)
               for m in h.nodes):
            continue
        if g.id in h.deps or not _acyclic(n, g, group_of, groups):
            continue
        _merge(g, h, groups, group_of)


def _absorb_row_producer(n: fx.Node, g: Group, groups: list[Group],
                         group_of: dict[fx.Node, Group]) -> None:
    """A pointwise group on reduction ``g``'s row shape whose values only ``g`` reads, through
    a view to the other row form (labels shifted and clamped, then unsqueezed against the
    classes for a one-hot), is computed once per row in ``g``'s kernel with the view: no
    launch, no [rows] buffer written and read back."""
    kept = kept_shapes(g.domain, g.rdims) - {g.domain}
    for a in n.all_input_nodes:
        v = group_of.get(a)
        if (v is None or v.kind != "glue" or v.nodes != [a] or op_name(a.target) not in ROW_VIEWS
                or len(a.all_input_nodes) != 1 or shape_key(val(a).shape) not in kept):
            continue
        b = a.all_input_nodes[0]
        h = group_of.get(b)
        if (h is None or h.kind != "pointwise" or h.domain not in kept
                or not _row_mergeable(h, h.domain, g)
                or any(shape_key(val(m).shape) != h.domain and not inline_constant(m)
                       for m in h.nodes)):
            continue
        inside = set(h.nodes) | {a}
        if any(u not in inside and group_of.get(u) is not g
               for m in inside for u in m.users):
            continue  # read elsewhere too (or returned): computed once, stored
        if g.id in h.deps or g.id in v.deps:
            continue
        _merge(g, h, groups, group_of)
        _merge(g, v, groups, group_of)


def is_arange(n: Any) -> bool:
    """``arange`` of numbers (or captured sizes) into a strided int or fp32 tensor."""
    if not (isinstance(n, fx.Node) and n.op == "call_function"
            and op_name(n.target) == "arange"):
        return False
    if n.kwargs.get("layout") not in (None, torch.strided):
        return False
    if set(n.kwargs) - {"dtype", "layout", "device", "pin_memory"}:
        return False
    return (val(n).dtype in (torch.int64, torch.int32, torch.float32) and val(n).dim() == 1
            and all(isinstance(a, (int, float)) or (isinstance(a, fx.Node)
                                                     and _is_scalar_node(a))
                    for a in n.args))


#: views that only insert or drop size-1 dims around a 1-D value (element order kept)
_POSITION_VIEWS = ("unsqueeze", "view", "_unsafe_view", "reshape", "squeeze", "alias")


def slice_args(args: tuple[Any, ...]) -> list[Any]:
    """(x, dim, start, end, step) of a positional ``aten.slice.Tensor`` call, defaults
    filled."""
    return (list(args) + [0, None, None, 1][len(args) - 1:])[:5]


def whole_slice(n: fx.Node) -> bool:
    """``x[:, :]``-style slices that keep every element (``x[None, :]`` makes one)."""
    if op_name(n.target) != "slice" or not is_tensor_node(n.args[0]):
        return False
    start = n.args[2] if len(n.args) > 2 else n.kwargs.get("start")
    step = n.args[4] if len(n.args) > 4 else n.kwargs.get("step", 1)
    return (start in (None, 0) and step == 1
            and shape_key(val(n).shape) == shape_key(val(n.args[0]).shape))


def _line_dims(n: fx.Node) -> list[str]:
    return [s for s in shape_key(val(n).shape) if s != "1"]


def position_chain(t: fx.Node) -> list[fx.Node] | None:
    """The nodes computing ``t`` from ``arange`` alone, else None: pointwise ops and views
    whose values all lie along one line (one dim of the arange's length, size-1 dims
    around it) and whose tensor operands are aranges, literal 0-d tensors or each other.
    Element p of every node is a function of p alone (broadcasting cannot mix positions:
    that would make a second long dim), so a kernel reading ``t`` computes it from its
    position."""
    if not is_tensor_node(t) or len(_line_dims(t)) > 1:
        return None
    line = _line_dims(t)
    chain: list[fx.Node] = []
    stack = [t]
    while stack:
        m = stack.pop()
        if m in chain:
            continue
        if not (isinstance(m, fx.Node) and m.op == "call_function"):
            return None
        if inline_constant(m):
            chain.append(m)
            continue
        if _line_dims(m) != line:
            return None
        chain.append(m)
        if is_arange(m):
            continue
        if is_view(m.target) and (op_name(m.target) in _POSITION_VIEWS or whole_slice(m)):
            stack.append(m.args[0])
        elif is_pointwise(m.target) and _simple_pointwise(m) and not is_load(m):
            stack += [a for a in m.all_input_nodes if is_tensor_node(a)]
        else:
            return None
    if not any(is_arange(m) for m in chain):
        return None
    return chain


def _compute_positions(groups: list[Group], group_of: dict[fx.Node, Group],
                       order: dict[fx.Node, Any]) -> None:
    """Position values a pointwise kernel reads (``position_chain``), and the index tensors
    of a reduction kernel's gathers, move into it: the
    kernel computes them per element instead of loading them; their own small kernels,
    externs (``arange``) and buffers go. Chains may share nodes (bilinear upsampling's
    source row is an index and, minus its floor, a weight); a chain something else reads
    too is copied for the kernel (recomputing an arange costs nothing)."""
    for g in groups:
        if g.kind not in ("pointwise", "reduction"):
            continue
        members = set(g.nodes)
        if g.kind == "pointwise":
            reads = [a for m in g.nodes if not piecewise_load(m)
                     for a in (gather_indices(m) if gather_dims(m) is not None
                               else m.all_input_nodes) if a not in members]
        else:  # a reduction kernel computes the index tensors of its gathers, when
            # nothing else in it reads them (it computes them per row, not per element),
            # and values its elementwise ops on the domain read broadcast (sparsemax's
            # 1..n, a one-hot's class ids)
            reads = [a for m in g.nodes if gather_dims(m) is not None
                     for a in gather_indices(m) if a not in members
                     and all(gather_dims(u) is not None and a in gather_indices(u)
                             and u.args[0] is not a for u in a.users if u in members)]
            reads += [a for a in _domain_reads(g) if a not in reads]
        chains = {t: c for t in dict.fromkeys(reads) if (c := position_chain(t)) is not None}
        if not chains:
            continue
        union = sorted({m for c in chains.values() for m in c}, key=order.__getitem__)
        inside = set(union) | members
        if any(u not in inside for m in union for u in m.users):
            copy = _copy_nodes(union, order)
            for m in g.nodes:
                for t in chains:
                    m.replace_input_with(t, copy[t])
            _drop_unused(union, group_of)
            chains = {copy[t]: [copy[m] for m in c] for t, c in chains.items()}
            union = [copy[m] for m in union]
        for m in union:
            if group_of.get(m) is not g:
                _ungroup(m, group_of)
            group_of[m] = g
        g.nodes.extend(union)
        g.positions = {t: sorted(c, key=order.__getitem__) for t, c in chains.items()}


def _domain_reads(g: Group) -> list[fx.Node]:
    """Values from outside reduction group ``g`` that, inside it, only pointwise ops on the
    domain read, each as an operand broadcast to it (the candidates for positions)."""
    members = set(g.nodes)
    out: list[fx.Node] = []
    for m in g.nodes:
        if (not is_pointwise(m.target) or is_load(m) or inline_constant(m)
                or shape_key(val(m).shape) != g.domain):
            continue
        for a in m.all_input_nodes:
            s = shape_key(val(a).shape) if is_tensor_node(a) else None
            if (a in members or a in out or s is None or not (s == g.domain or broadcasts_to(
                    ("1",) * (len(g.domain) - len(s)) + s, g.domain))):
                continue
            if all(is_pointwise(u.target) and not is_load(u)
                   and shape_key(val(u).shape) == g.domain for u in a.users if u in members):
                out.append(a)  # (readers elsewhere keep their own: the chain is copied)
    return out


def _copy_nodes(nodes: list[fx.Node], order: dict[fx.Node, Any]) -> dict[fx.Node, fx.Node]:
    """Copies of ``nodes`` (in graph order), each inserted after its original and reading
    the other copies."""
    copy: dict[fx.Node, fx.Node] = {}
    for m in nodes:
        with m.graph.inserting_after(m):
            c = m.graph.node_copy(m, lambda a: copy.get(a, a))
        c.meta = dict(m.meta)
        copy[m] = c
        order[c] = order[m]
    return copy


def _drop_unused(nodes: list[fx.Node], group_of: dict[fx.Node, Group]) -> None:
    """Erase the nodes among ``nodes`` that nothing reads any more (latest first; the
    capture has dropped the metadata assertions that would keep them alive)."""
    for m in reversed(nodes):
        if not m.users:
            _erase(m, group_of)


def _ungroup(n: fx.Node, group_of: dict[fx.Node, Group]) -> None:
    """Take ``n`` out of its group; a group left empty is dropped."""
    h = group_of.pop(n, None)
    if h is not None:
        h.nodes.remove(n)
        if not h.nodes:
            h.kind = "merged"


def _erase(n: fx.Node, group_of: dict[fx.Node, Group]) -> None:
    """Take ``n`` out of its group and out of the graph."""
    _ungroup(n, group_of)
    n.graph.erase_node(n)


def _is_tensor_seq(value: Any) -> bool:
    return isinstance(value, (list, tuple)) and any(isinstance(v, torch.Tensor) for v in value)


def _device_of(a: Any) -> torch.device | None:
    return val(a).device if is_tensor_node(a) else None


def _simple_pointwise(n: fx.Node) -> bool:
    """Pointwise nodes the templates lower: tensor operands, supported dtypes and kwargs."""
    value = val(n)
    if value.dtype not in (torch.float32, torch.float16, torch.bfloat16, torch.bool,
                           torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8):
        return False
    name = op_name(n.target)
    if name == "_to_copy":  # a cast (``.float()``, ``.to(x.device, torch.float32)``)
        if set(n.kwargs) - {"dtype", "device", "layout"} or n.kwargs.get("layout") not in (
                None, torch.strided) or n.kwargs.get("device") not in (
                None, _device_of(n.args[0])):
            return False
    if name == "clone" and set(n.kwargs) - {"memory_format"}:
        return False
    if name in ("full_like", "zeros_like", "ones_like"):  # a constant on the operand's shape
        if n.kwargs.get("layout") not in (None, torch.strided):
            return False
        return not (set(n.kwargs) - {"dtype", "layout", "device", "pin_memory",
                                     "memory_format"})
    if name == "pow" and value.dtype in (torch.int64, torch.int32, torch.bool) and (
            isinstance(n.args[1], fx.Node) or n.args[1] not in (1, 2, 3)):
        return False  # integer powers stay exact in PyTorch
    if name == "pow" and isinstance(n.args[1], bool):
        return False
    if name == "round" and value.dtype not in (torch.float32, torch.float16, torch.bfloat16):
        return False
    if name == "div" and n.kwargs.get("rounding_mode") not in (None, "floor", "trunc"):
        return False
    for a in n.args:
        if isinstance(a, fx.Node) and not (is_tensor_node(a) or _is_scalar_node(a)):
            return False
        if is_tensor_node(a) and val(a).dtype.is_complex:  # (``abs`` of a complex tensor)
            return False
        if isinstance(a, (list, tuple)):
            return False
    for key, v in n.kwargs.items():
        if isinstance(v, fx.Node) and not _is_scalar_node(v):
            return False
        if key not in ("alpha", "rounding_mode", "dtype", "memory_format", "min", "max") and not (
                name == "_to_copy" and key in ("device", "layout")):  # checked above
            return False
    return True


def _is_scalar_node(n: fx.Node) -> bool:
    v = val(n)
    return isinstance(v, (int, float, torch.SymInt, torch.SymFloat)) and not isinstance(v, bool)


def _matmul_ok(n: fx.Node) -> bool:
    name = op_name(n.target)
    tensors = [a for a in n.args if isinstance(a, fx.Node)]
    if any(val(a).dtype not in (torch.float32, torch.float16, torch.bfloat16) for a in tensors):
        return False
    if name == "addmm":
        bias = val(n.args[0])
        if bias.dim() > 2:
            return False
    return True


def batch_operand_chain(a: Any) -> tuple[fx.Node, fx.Node] | None:
    """``(clone, view)`` when bmm operand ``a`` is ``view(clone(y), [B, M, K])`` with ``y`` of
    shape [b1, .., bk, M, K] (a 4-D ``matmul``'s operand whose batch dims cannot merge in
    place: a broadcast query, a key permuted from [B, S, H, D]) and nothing else reads the
    copy: the matmul
    kernel reads ``y`` through its strides, splitting its batch index over y's batch dims,
    and the copy is never made. Else None."""
    if not (isinstance(a, fx.Node) and op_name(a.target) in ("view", "_unsafe_view")
            and len(a.users) == 1 and val(a).dim() == 3):
        return None
    c = a.args[0]
    if not (isinstance(c, fx.Node) and c.op == "call_function" and op_name(c.target) == "clone"
            and len(c.users) == 1 and set(c.kwargs) <= {"memory_format"}):
        return None
    y = c.args[0]
    if not (is_tensor_node(y) and 1 <= val(y).dim() - 2 <= MAX_BATCH_SPLIT
            and shape_key(val(y).shape)[-2:] == shape_key(val(a).shape)[-2:]
            and val(y).dtype == val(a).dtype):
        return None
    return c, a


#: batch dims a bmm operand may keep (``batch_operand_chain``): [b1, b2, b3, M, K]
MAX_BATCH_SPLIT = 3


def _extern_reason(n: fx.Node) -> str:
    name = op_name(n.target)
    if any(isinstance(t, torch.Tensor) and t.dtype.is_complex
           for t in (val(n), *map(val, n.all_input_nodes))):
        return f"{name}: complex tensors have no template (PyTorch runs it)"
    if is_pointwise(n.target):
        return f"{name}: arguments the pointwise template does not lower"
    if is_reduction(n.target):
        return f"{name}: reduction form not supported by the template (dtype or dims)"
    if name == "index_put":
        if not _accumulates(n):
            return "index_put: a plain assignment (among duplicate indices one write wins)"
        return ("index_put: the scatter template adds float32, int32 or int64 values by "
                "integer index tensors on adjacent dims")
    if name == "scatter_add":
        return ("scatter_add: the scatter template adds float32, int32 or int64 values by an "
                "integer index")
    if name == "scatter_reduce":
        return ("scatter_reduce: the scatter template takes a sum, amax or amin of float32, "
                "int32 or int64 values (a product or a mean has no atomic)")
    if name == "scatter":
        return "scatter: a plain scatter of a tensor (among duplicate indices one write wins)"
    if name in ("lstm", "gru", "rnn_tanh", "rnn_relu"):
        return (f"{name}: a whole recurrent layer, left to the vendor library's fused "
                "kernel (unrolled, every step would be separate launches)")
    return f"{name}: no template yet"


def _input_deps(n: fx.Node, group_of: dict[fx.Node, Group]) -> set[int]:
    deps: set[int] = set()
    for a in n.all_input_nodes:
        g = group_of.get(a)
        if g is not None:
            deps.add(g.id)
            deps |= g.deps
    return deps


def _acyclic(n: fx.Node, g: Group, group_of: dict[fx.Node, Group], groups: list[Group]) -> bool:
    """n may join g if none of its inputs from outside g depends on g."""
    for a in n.all_input_nodes:
        h = group_of.get(a)
        if h is None or h is g:
            continue
        if g.id in h.deps:
            return False
    return True


def _pointwise_homes(n: fx.Node, shape: tuple[str, ...], groups: list[Group],
                     group_of: dict[fx.Node, Group], opts: FusionOptions) -> list[Group]:
    """Groups n can join; several pointwise groups of one domain are merged first."""
    found: list[Group] = []
    for a in n.all_input_nodes:
        g = group_of.get(a)
        if g is None or g in found or not _acyclic(n, g, group_of, groups):
            continue
        ok = False
        if g.kind == "pointwise" and opts.fuse_pointwise and g.domain == shape:
            ok = True
        elif g.kind == "reduction" and opts.fuse_reductions:
            if g.domain == shape or shape in kept_shapes(g.domain, g.rdims):
                ok = _reduced_context_ok(n, g, shape)
        elif (g.kind in ("matmul", "conv", "pool") and opts.fuse_epilogues
              and g.domain == shape):
            ok = True
        elif g.kind == "scan" and opts.fuse_epilogues and g.domain == shape:
            ok = _after_scan_flip(n, g)
        if ok:
            found.append(g)
    if not found:
        return []
    # A matmul first: a pointwise group on its domain that only reads other inputs (the
    # |x|^2 + |y|^2 of pairwise distances, from two broadcast vectors) joins its epilogue,
    # where the opposite order would leave the product's tile stored and read back.
    found.sort(key=lambda g: g.kind != "matmul")
    # A node on a reduction's kept shape (per-row values) makes that reduction its home;
    # independent pointwise groups on the same row shape merge in (BatchNorm's running
    # statistics, updated from the batch statistics in the kernel that computes them).
    rows = [g for g in found if g.kind == "reduction" and g.domain != shape]
    if rows and all(g is rows[0] or _row_mergeable(g, shape, rows[0]) for g in found):
        found.remove(rows[0])
        found.insert(0, rows[0])
    # The fused kernel is the first home; others merge in when they are pointwise groups of
    # the same domain that neither depends on the other (no path through a third group).
    home = found[0]
    merged = [home]
    for g in found[1:]:
        row_level = (home.kind == "reduction" and home.domain != shape
                     and _row_mergeable(g, shape, home))
        if (g.kind == "pointwise" and (g.domain == home.domain or row_level)
                and all(g.id not in m.deps and m.id not in g.deps for m in merged)
                and _gather_safe([*merged, g])
                and (home.kind in ("pointwise", "reduction")
                     or not (g.positions or _has_gather(g)))):
            merged.append(g)
        elif (opts.merge_row_siblings and home.kind == g.kind == "reduction"
              and g.domain == home.domain and g.rdims == home.rdims
              and all(g.id not in m.deps and m.id not in g.deps for m in merged)
              and not any(m.positions or _has_gather(m) for m in (*merged, g))):
            # independent reductions over the same rows that this node combines (cosine
            # similarity's two norms, each dividing its own tensor): one pass reads both
            # tensors, where two kernels wrote a normalised tensor out and read it back
            merged.append(g)
    for a in n.all_input_nodes:
        h = group_of.get(a)
        if h is None or h in merged:
            continue
        if any(m.id in h.deps for m in merged):
            return []
    return merged


def _merge(into: Group, other: Group, groups: list[Group],
           group_of: dict[fx.Node, Group]) -> None:
    """Move other's nodes into ``into``; groups that depended on other now depend on into."""
    for n in other.nodes:
        group_of[n] = into
    into.nodes.extend(other.nodes)
    into.deps |= other.deps
    into.deps -= {into.id, other.id}
    other.nodes = []
    other.kind = "merged"
    for g in groups:
        if other.id in g.deps:
            g.deps |= {into.id} | into.deps


def _sibling_reduction(n: fx.Node, src: fx.Node, domain: tuple[str, ...],
                       rdims: tuple[int, ...], groups: list[Group],
                       group_of: dict[fx.Node, Group], opts: FusionOptions) -> Group | None:
    """A reduction group over the same domain and dims that already reads ``src``."""
    if not opts.fuse_reductions:
        return None
    for g in reversed(groups):
        if g.kind != "reduction" or g.domain != domain or g.rdims != rdims:
            continue
        if any(src in m.all_input_nodes for m in g.nodes) and _acyclic(n, g, group_of, groups):
            return g
    return None


def _merge_row_sibling(g: Group, groups: list[Group], group_of: dict[fx.Node, Group]) -> None:
    """Merge ``g`` (a reduction group just formed from a pointwise chain) into an earlier
    reduction group over the same domain and dims that reads one of the same full-domain
    tensors, when neither depends on the other: one pass over the shared rows."""
    def full_reads(h: Group) -> set[fx.Node]:
        return {a for m in h.nodes for a in m.all_input_nodes
                if group_of.get(a) is not h and is_tensor_node(a)
                and shape_key(val(a).shape) == h.domain}

    mine = full_reads(g)
    for r in reversed(groups):
        if (r is g or r.kind != "reduction" or r.domain != g.domain or r.rdims != g.rdims
                or r.id in g.deps or g.id in r.deps or _has_gather(r) or _has_gather(g)
                or r.positions or g.positions):
            continue
        if mine & full_reads(r):
            _merge(r, g, groups, group_of)
            return


def _merge_row_consumer(g: Group, groups: list[Group],
                        group_of: dict[fx.Node, Group]) -> None:
    """Merge ``g`` (a pointwise group, or a reduction group just formed) into the reduction
    group over rows of the same domain (and dims) whose values it reads (of the domain, or
    one per row in keepdim form, also through a view that only restores the reduced dims),
    when no third group lies between them: the row kernel computes g's values from what it
    already has (a loss's per-row sum over a log-softmax, the ``exp(x - max)`` of a
    stabilised feature map, the one-hot of an argmax), where it wrote its values out for g
    to read back. Groups with gathers or an arange of their own keep their kernels; an
    arange they read from outside (the one-hot's classes) becomes a position of the merged
    kernel later, as for any reduction group."""
    if not g.nodes or _has_gather(g) or any(is_arange(m) for m in g.nodes):
        return
    members = set(g.nodes)
    for a in (a for m in g.nodes for a in m.all_input_nodes):
        r, view = group_of.get(a), None
        if r is not None and r.kind == "glue" and r.nodes == [a]:
            view, r = a, _row_view_of(a, group_of)
            if r is None or not set(view.users) <= members:
                continue
        if (r is None or r is g or r.kind != "reduction" or r.domain != g.domain
                or len(r.rdims) == len(r.domain)
                or shape_key(val(a).shape) not in (g.domain, keep_shape(r.domain, r.rdims))
                or (g.kind == "reduction" and g.rdims != r.rdims)
                or _has_gather(r) or r.positions):
            continue
        skip = group_of[view].id if view is not None else None
        between = [h for h in groups if h.id in g.deps and h is not r and r.id in h.deps
                   and h.kind != "merged" and h.id != skip]
        if not between:
            if view is not None:
                _merge(r, group_of[view], groups, group_of)
            _merge(r, g, groups, group_of)
            return


def _row_view_of(n: fx.Node, group_of: dict[fx.Node, Group]) -> Group | None:
    """The reduction group whose per-row value (in the form without the reduced dims) ``n``
    views back to the keepdim form (an argmax unsqueezed against the classes), if any."""
    found = _viewed_row(n, group_of)
    if found is None:
        return None
    r, a = found
    if (shape_key(val(a).shape) == drop_shape(r.domain, r.rdims)
            and shape_key(val(n).shape) == keep_shape(r.domain, r.rdims)):
        return r
    return None


def _viewed_row(n: fx.Node, group_of: dict[fx.Node, Group]) -> tuple[Group, fx.Node] | None:
    """(the reduction group, its member) that ``n`` re-views without moving data, if any."""
    a = n.args[0] if n.args else None
    g = group_of.get(a) if isinstance(a, fx.Node) else None
    if (g is None or g.kind != "reduction" or op_name(n.target) not in ROW_VIEWS
            or n.all_input_nodes != [a] or not is_tensor_node(n) or not is_tensor_node(a)):
        return None
    return g, a


def _row_view_home(n: fx.Node, group_of: dict[fx.Node, Group]) -> Group | None:
    """The reduction group whose per-row value ``n`` re-views from one kept shape to the
    other ([1, C, 1, 1] <-> [C]: the same value per row, no data moved) for pointwise
    nodes on a kept shape, if any."""
    found = _viewed_row(n, group_of)
    if found is None:
        return None
    g, a = found
    kept = kept_shapes(g.domain, g.rdims) - {g.domain}
    if (shape_key(val(a).shape) in kept and shape_key(val(n).shape) in kept and n.users
            and all(is_pointwise(u.target) and is_tensor_node(u)
                    and shape_key(val(u).shape) in kept for u in n.users)):
        return g
    return None


def _row_mergeable(g: Group, shape: tuple[str, ...], row: Group) -> bool:
    """A pointwise group on the row shape ``shape`` that reduction kernel ``row`` can take
    as it is: no positions (now or later: no arange), no gathers but row gathers of sources
    and indices from outside both (``_row_gather_home``: one value per row)."""
    if g.kind != "pointwise" or g.domain != shape or g.positions:
        return False
    if any(is_arange(m) for m in g.nodes):
        return False
    members = set(g.nodes) | set(row.nodes)
    return all(row_gather(m, row) and not any(a in members for a in m.all_input_nodes)
               for m in g.nodes if is_load(m))


#: views that can only re-shape a per-row value between kept shapes (no permutation)
ROW_VIEWS = ("view", "_unsafe_view", "reshape", "squeeze", "unsqueeze")


def _reduced_context_ok(n: fx.Node, g: Group, shape: tuple[str, ...]) -> bool:
    """A node on the domain may use reduced values only in keepdim form (broadcasts right)."""
    keep = keep_shape(g.domain, g.rdims)
    for a in n.all_input_nodes:
        if group_of_member(a, g) and shape_key(val(a).shape) not in (g.domain, keep):
            if shape == g.domain:
                return False
    return True


def group_of_member(n: fx.Node, g: Group) -> bool:
    return n in g.nodes


def live_units(units: list[Any], roots: list[Any], reads: Any,
               unit_of: dict[fx.Node, Any]) -> list[Any]:
    """The ``units`` (groups, or single nodes) a root needs, in their order: the roots and,
    transitively, the units owning the nodes each one reads (``reads(unit)``). The planner
    drops groups nothing reads with it, and the export skips nodes only the members of
    kernels read (kernels take their operands, not every node of their group)."""
    live = {id(u) for u in roots}
    todo = list(roots)
    while todo:
        for a in reads(todo.pop()):
            v = unit_of.get(a)
            if v is not None and id(v) not in live:
                live.add(id(v))
                todo.append(v)
    return [u for u in units if id(u) in live]


def _drop_unread(plan: Plan) -> None:
    """Drop the groups whose values nothing reads: a group is needed when the graph's
    output reads one of its nodes, when one of its nodes has no users at all (it is there
    for its effect, as the capture's index checks are), or when a needed group takes one of
    its nodes as input. An attention group takes only its template's operands (``_finish``),
    so an ``arange`` that fed a causal mask the kernel applies itself would otherwise run as
    an extern op whose result no kernel uses."""
    out = {a for n in plan.graph.nodes if n.op == "output" for a in n.all_input_nodes}
    roots = [g for g in plan.groups if any(n in out or not n.users for n in g.nodes)]
    live = live_units(plan.groups, roots, lambda g: g.inputs, plan.group_of)
    kept = {id(g) for g in live}
    for g in plan.groups:
        if id(g) not in kept:
            for n in g.nodes:
                plan.group_of.pop(n, None)
    plan.groups = live


def _finish(plan: Plan) -> None:
    """Inputs (external nodes used) and outputs (members used outside) of every group."""
    outputs_of_graph: set[fx.Node] = set()
    for n in plan.graph.nodes:
        if n.op == "output":
            for a in n.all_input_nodes:
                outputs_of_graph.add(a)
    for g in plan.groups:
        members = set(g.nodes)
        seen: list[fx.Node] = []
        for n in g.nodes:
            for a in n.all_input_nodes:
                if a not in members and a not in seen:
                    seen.append(a)
        # an attention kernel reads its template's operands only: the nodes of a mask it
        # applies itself are never computed
        g.inputs = (list(g.template.inputs) if g.kind == "attention" and g.template is not None
                    else seen)
        g.outputs = [
            n for n in g.nodes
            if n in outputs_of_graph or any(u not in members for u in n.users)
        ]
