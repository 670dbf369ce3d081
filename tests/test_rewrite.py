"""Graph rewrites before planning: ``sink_gathers`` moves a gather below pointwise ops only
where that is exact, and the moved program computes the same values; ``split_constants``
gives each reader of a literal 0-d tensor its own copy, which the planner puts into the
reader's kernel."""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import fx

from kernelcraft.capture import capture
from kernelcraft.codegen.ops import op_name
from kernelcraft.plan import FusionOptions, build_plan
from kernelcraft.rewrite import eliminate_common, sink_gathers, split_constants


class _CrossEntropy(nn.Module):
    def forward(self, logits, targets):
        return F.cross_entropy(logits, targets)


class _RowVarying(nn.Module):
    """The second operand varies along the gathered dim: gathering first would be wrong."""

    def forward(self, x, w, idx):
        return torch.gather(x * w, 1, idx)


class _Partial(nn.Module):
    """The index covers part of dim 0, where the per-row operand varies: not moved."""

    def forward(self, x, r, idx):
        return torch.gather(x - r, 1, idx)


def _gathers(gm) -> list[tuple[str, str]]:
    return [(n.args[0].name, str(n.args[0].target)) for n in gm.graph.nodes
            if n.op == "call_function" and "gather" in str(n.target)]


def test_cross_entropy_gathers_the_logits() -> None:
    logits, targets = torch.randn(16, 40), torch.randint(0, 40, (16,))
    c = capture(_CrossEntropy(), [logits, targets])
    assert sink_gathers(c.gm) == 2  # through log_softmax's two subtractions
    assert [src for src, _ in _gathers(c.gm)] == ["logits"]
    # no node of the full [16, 40] shape is left besides the row statistics' inputs
    full = [n for n in c.gm.graph.nodes if n.op == "call_function"
            and isinstance(n.meta.get("val"), torch.Tensor)
            and tuple(n.meta["val"].shape) == (16, 40)]
    assert {n.name for n in full} <= {"sub", "exp"}
    out = c.gm(logits, targets)
    torch.testing.assert_close(out[0], F.cross_entropy(logits, targets))


def test_operands_varying_along_the_gathered_dim_stay() -> None:
    x, w = torch.randn(4, 9), torch.randn(1, 9)
    idx = torch.randint(0, 9, (4, 2))
    c = capture(_RowVarying(), [x, w, idx])
    assert sink_gathers(c.gm) == 0
    x, r = torch.randn(6, 9), torch.randn(6, 1)
    c = capture(_Partial(), [x, r, torch.randint(0, 9, (3, 2))])
    assert sink_gathers(c.gm) == 0
    # equal sizes in this call, but nothing in the program ties them: the module must stay
    # right for any index shorter than x along dim 0
    c = capture(_Partial(), [x, r, torch.randint(0, 9, (6, 2))])
    assert sink_gathers(c.gm) == 0


class _MaskedSoftmax(nn.Module):
    """masked_fill and nan_to_num decompose to ``where`` on 0-d tensors of literals."""

    def forward(self, s, mask):
        return torch.softmax(s.masked_fill(~mask, float("-inf")), -1).nan_to_num(0.0)


def _constants(gm) -> list[fx.Node]:
    return [n for n in gm.graph.nodes if n.op == "call_function"
            and "scalar_tensor" in str(n.target)]


def test_literal_constants_are_computed_in_the_kernel_that_reads_them() -> None:
    s, mask = torch.randn(4, 6, 10), torch.rand(4, 6, 10) > 0.3
    mask[0, 0] = False  # a row with every score masked: NaN, then 0.0
    c = capture(_MaskedSoftmax(), [s, mask])
    want = _MaskedSoftmax()(s, mask)
    before = len(_constants(c.gm))
    split_constants(c.gm)
    assert len(_constants(c.gm)) >= before and all(len(n.users) == 1 for n in _constants(c.gm))
    torch.testing.assert_close(c.gm(s, mask)[0], want)  # the copies mean what they meant
    plan = build_plan(c.gm)
    (kernel,) = [g for g in plan.groups if g.kind != "glue"]
    assert kernel.kind == "reduction" and set(_constants(c.gm)) <= set(kernel.nodes)


def test_constants_stay_outside_without_the_option() -> None:
    from kernelcraft.plan import FusionOptions

    c = capture(_MaskedSoftmax(), [torch.randn(4, 6, 10), torch.rand(4, 6, 10) > 0.3])
    plan = build_plan(c.gm, FusionOptions(inline_constants=False))
    externs = [g for g in plan.groups if g.kind == "extern"]
    assert externs and all(op_name(g.nodes[0].target) == "scalar_tensor" for g in externs)


class _Twice(nn.Module):
    """softmax and log_softmax of one tensor take the same row maximum and exp-sum; the two
    means are one; the integer ``+ 1`` and the float ``+ 1.0`` are not the same op."""

    def forward(self, x, k):
        m = x.mean(-1, keepdim=True)
        return (torch.softmax(x, -1) + torch.log_softmax(x, -1)
                + x.mean(-1, keepdim=True) * m.sigmoid(), k + 1, (k + 1.0) * 2, k + 1)


def test_common_subexpressions_are_computed_once() -> None:
    x, k = torch.randn(8, 16), torch.randint(0, 5, (8,))
    c = capture(_Twice(), [x, k])
    ops = [str(n.target) for n in c.gm.graph.nodes if n.op == "call_function"]
    assert eliminate_common(c.gm) >= 4  # amax, sub, exp, sum, mean
    after = [str(n.target) for n in c.gm.graph.nodes if n.op == "call_function"]
    assert after.count("aten.amax.default") == 1 < ops.count("aten.amax.default")
    assert after.count("aten.mean.dim") == 1
    assert after.count("aten.add.Tensor") >= 3  # k + 1 twice (both returned), k + 1.0
    for got, want in zip(c.gm(x, k), _Twice()(x, k), strict=True):
        torch.testing.assert_close(got, want)
        assert got.dtype == want.dtype


class _LinearChain(nn.Module):
    """A Linear on [B, S, K], then GELU, a per-feature scale and a residual: all sink below
    the view back to [B, S, N]; ``* per_row`` (broadcast along S only) cannot."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(16, 16)
        self.gamma = nn.Parameter(torch.randn(16))

    def forward(self, x, per_row):
        y = x + self.gamma * F.gelu(self.fc(x))
        return y, self.fc(x) * per_row


def _run(cap, model, inputs):
    user = iter(inputs)
    args = [model.get_parameter(cap.param_of[n.name]) if n.name in cap.param_of else next(user)
            for n in cap.gm.graph.nodes if n.op == "placeholder"]
    return cap.gm(*args)


def test_pointwise_ops_after_a_linear_become_its_epilogue() -> None:
    from kernelcraft.codegen.ops import is_pointwise, is_view
    from kernelcraft.rewrite import sink_views

    x, per_row = torch.randn(3, 5, 16), torch.randn(3, 1, 16)
    model = _LinearChain()
    cap = capture(model, [x, per_row])
    before = _run(cap, model, [x, per_row])
    assert sink_views(cap.gm) >= 3
    for a, b in zip(_run(cap, model, [x, per_row]), before, strict=True):
        torch.testing.assert_close(a, b)
    readers = [u for n in cap.gm.graph.nodes if op_name(n.target) == "addmm"
               for v in n.users if is_view(v.target) for u in v.users if is_pointwise(u.target)]
    assert [op_name(u.target) for u in readers] == ["mul"]  # only `* per_row` stayed
    plan = build_plan(capture(model, [x, per_row]).gm)
    (mm,) = [g for g in plan.groups if g.kind == "matmul" and len(g.nodes) > 1]
    assert {"erf", "add"} <= {op_name(m.target) for m in mm.nodes}  # gelu and residual
    assert any(g.kind == "pointwise" and g.describe() == "mul" for g in plan.groups)


class _Expands(nn.Module):
    """A divide by an expanded row norm (F.normalize), and a clone of an expand alone (the
    repeat of grouped-query attention's K/V), which must keep its expand."""

    def forward(self, x, kv):
        n = x.norm(dim=-1, keepdim=True).expand_as(x)
        rep = kv[:, None].expand(kv.shape[0], 3, kv.shape[1]).clone()
        return x / n, rep


def test_pointwise_readers_broadcast_an_expand_themselves() -> None:
    from kernelcraft.rewrite import drop_expands

    x, kv = torch.randn(8, 24), torch.randn(5, 7)
    c = capture(_Expands(), [x, kv])
    assert drop_expands(c.gm) == 1  # the divide; the clone keeps its expand
    div = next(n for n in c.gm.graph.nodes if op_name(n.target) == "div")
    assert all(op_name(a.target) != "expand" for a in div.all_input_nodes)
    clone = next(n for n in c.gm.graph.nodes if op_name(n.target) == "clone")
    assert op_name(clone.args[0].target) == "expand"
    out, rep = c.gm(x, kv)
    torch.testing.assert_close(out, x / x.norm(dim=-1, keepdim=True))
    torch.testing.assert_close(rep, kv[:, None].expand(5, 3, 7))


_SEEN: list[bool] = []


class _Bilinear(nn.Module):
    """A three-operand einsum: with opt_einsum installed, torch picks the contraction order
    from the sizes, which export would specialise."""

    def __init__(self) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.randn(6, 4, 5))

    def forward(self, x1, x2):
        _SEEN.append(torch.backends.opt_einsum.enabled)
        return torch.einsum("bi,oij,bj->bo", x1, self.weight, x2)


def test_einsum_order_does_not_depend_on_sizes_while_capturing() -> None:
    m = _Bilinear()
    x1, x2 = torch.randn(3, 4), torch.randn(3, 5)
    _SEEN.clear()
    before = torch.backends.opt_einsum.enabled  # True where the opt_einsum package is there
    c = capture(m, [x1, x2])
    assert _SEEN and not any(_SEEN)  # opt_einsum's size-driven order off while exporting
    assert torch.backends.opt_einsum.enabled == before  # and restored
    torch.testing.assert_close(_run(c, m, [x1, x2])[0], m(x1, x2))
    batch = [str(d) for d in c.gm.graph.find_nodes(op="placeholder")[-1].meta["val"].shape]
    assert not batch[0].isdigit()  # the batch stays symbolic


class _RotateHalf(nn.Module):
    """Rotary embedding's rotate_half, and a cat whose first and last pieces are computed
    (the last one after a plain piece) with a third piece read elsewhere too."""

    def forward(self, x, cos, sin, a, b, c):
        x1, x2 = x.chunk(2, dim=-1)
        rot = x * cos + torch.cat((-x2, x1), dim=-1) * sin
        e = c.exp()
        three = torch.cat((a.abs(), b, torch.sigmoid(c), e), dim=1) * 2.0
        return rot, three, e


def test_computed_cat_pieces_are_computed_where_the_cat_is_read() -> None:
    from kernelcraft.rewrite import lift_cat_pieces

    inputs = [torch.randn(2, 3, 5, 8), torch.randn(5, 8), torch.randn(5, 8),
              torch.randn(4, 3), torch.randn(4, 2), torch.randn(4, 5)]
    model = _RotateHalf()
    c = capture(model, inputs)
    assert lift_cat_pieces(c.gm) == 3  # -x2; abs and sigmoid (exp is read by the output too)
    names = [op_name(n.target) for n in c.gm.graph.nodes if n.op == "call_function"]
    # -x2 (first of two): 1 where; abs (first of four): 1; sigmoid (third): 2
    assert "neg" in names and names.count("exp") == 1 and names.count("where") == 4
    for got, want in zip(_run(c, model, inputs), model(*inputs), strict=True):
        torch.testing.assert_close(got, want)
    plan = build_plan(capture(model, inputs).gm)
    rot_kernels = [g for g in plan.kernels if any(op_name(n.target) == "neg" for n in g.nodes)]
    assert len(rot_kernels) == 1 and any(op_name(n.target) == "add" for n in rot_kernels[0].nodes)


class _Shuffle(nn.Module):
    """Channel shuffle, then a per-channel affine, ReLU and (optionally) a full residual."""

    def __init__(self, c: int, residual: bool = False):
        super().__init__()
        self.scale = nn.Parameter(torch.randn(c))
        self.residual = residual

    def forward(self, x, r):
        n, c, h, w = x.shape
        y = x.view(n, 4, c // 4, h, w).transpose(1, 2).contiguous().view(n, c, h, w)
        y = torch.relu(y * self.scale.view(1, c, 1, 1) + 0.5)
        return y + r if self.residual else y


def test_ops_after_a_merged_view_of_a_clone_compute_on_its_shape() -> None:
    from kernelcraft.rewrite import unmerge_views

    x, r = torch.randn(2, 16, 3, 5), torch.randn(2, 16, 3, 5)
    model = _Shuffle(16)
    c = capture(model, [x, r])
    assert unmerge_views(c.gm) == 3  # mul, add, relu
    clone = next(n for n in c.gm.graph.nodes if n.op == "call_function"
                 and op_name(n.target) == "clone")
    relu = next(n for n in c.gm.graph.nodes if n.op == "call_function"
                and op_name(n.target) == "relu")
    assert relu.meta["val"].shape == clone.meta["val"].shape  # [n, c/4, 4, h, w]
    torch.testing.assert_close(c.gm(*[p.detach() for p in model.parameters()], x, r)[0],
                               model(x, r))
    dead = [n for n in c.gm.graph.nodes if n.op == "call_function" and not n.users]
    assert not dead  # the views the moved ops read are gone (each would be a kernel output)
    plan = build_plan(c.gm)
    groups = [g for g in plan.groups if g.kind not in ("glue", "merged")]
    assert [g.kind for g in groups] == ["pointwise"]  # the copy and the ops after it: one
    assert len(groups[0].outputs) == 1  # kernel, writing the result only


def test_a_symbolic_full_operand_keeps_the_view() -> None:
    """The residual has the symbolic batch: it cannot be viewed split statically, so the add
    stays after the view (the ops before it still move)."""
    from kernelcraft.rewrite import unmerge_views

    x, r = torch.randn(2, 16, 3, 5), torch.randn(2, 16, 3, 5)
    model = _Shuffle(16, residual=True)
    c = capture(model, [x, r])
    unmerge_views(c.gm)
    add = [n for n in c.gm.graph.nodes if n.op == "call_function"
           and op_name(n.target) == "add"][-1]
    assert add.meta["val"].dim() == 4
    torch.testing.assert_close(c.gm(*[p.detach() for p in model.parameters()], x, r)[0],
                               model(x, r))


class _Einsum(nn.Module):
    def __init__(self, qk: str, pv: str) -> None:
        super().__init__()
        self.qk, self.pv = qk, pv

    def forward(self, q, k, v):
        return torch.einsum(self.pv, torch.einsum(self.qk, q, k).softmax(-1), v)


class _HeadsMerged(nn.Module):
    """A permute and a copy before a view, no unit dim: not a detour, left as it is."""

    def forward(self, x):
        b, h, s, d = x.shape
        return x.permute(0, 2, 1, 3).contiguous().view(b, s, h * d) * 2.0


def test_unit_layout_detours_fold_and_compute_the_same() -> None:
    from kernelcraft.rewrite import fold_unit_layouts

    for qk, pv, shape in (("bhqd,bhkd->bhqk", "bhqk,bhkd->bhqd", (2, 3, 8, 4)),
                          ("bqhd,bkhd->bhqk", "bhqk,bkhd->bqhd", (2, 8, 3, 4))):
        q, k, v = (torch.randn(*shape) for _ in range(3))
        model = _Einsum(qk, pv)
        c = capture(model, [q, k, v])
        before = sum(1 for n in c.gm.graph.nodes if op_name(n.target) == "unsqueeze")
        assert before and fold_unit_layouts(c.gm) == 6  # q, k, p, v and both products
        assert not [n for n in c.gm.graph.nodes if op_name(n.target) == "unsqueeze"]
        assert all(n.meta["val"].dim() <= 4 for n in c.gm.graph.nodes
                   if isinstance(n.meta.get("val"), torch.Tensor))
        c.gm.graph.lint()
        torch.testing.assert_close(c.gm(q, k, v)[0], model(q, k, v))
    c = capture(_HeadsMerged(), [torch.randn(2, 3, 8, 4)])
    assert fold_unit_layouts(c.gm) == 0


class _Diagonal(nn.Module):
    """diag(v) @ a, b @ diag(w) (a parameter's diagonal), and products the rewrite must keep:
    a triangular mask's matmul and an identity mask over a full matrix."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.randn(n))

    def forward(self, v, a, b, m):
        eye = torch.eye(v.shape[0], dtype=torch.bool)
        return (torch.diag(v) @ a, b @ torch.diag_embed(self.w), torch.triu(m) @ a,
                torch.where(eye, m, 0.0) @ a)


def test_diagonal_matmuls_become_row_and_column_scales() -> None:
    from kernelcraft.rewrite import diagonal_matmuls

    n = 12
    model = _Diagonal(n)
    inputs = [torch.randn(n), torch.randn(n, 7), torch.randn(5, n), torch.randn(n, n)]
    cap = capture(model, inputs)
    before = _run(cap, model, inputs)
    assert diagonal_matmuls(cap.gm) == 2
    after = _run(cap, model, inputs)
    for a, b in zip(after, before, strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=0)  # one product per element either way
    mms = [n for n in cap.gm.graph.nodes if op_name(n.target) == "mm"]
    assert len(mms) == 2  # the triangular product and the full-matrix one stay matmuls
    # at other sizes too (the rewrite is shape-generic)
    m = 9
    other = [torch.randn(m), torch.randn(m, 3), torch.randn(4, n), torch.randn(m, m)]
    model.w = nn.Parameter(torch.randn(n))
    ref = model(*other)
    got = _run(cap, model, other)
    for a, b in zip(got, ref, strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=0)


class _BmmBias(nn.Module):
    """A view to the sizes the product already has, between a bmm and its bias add."""

    def forward(self, x, w, b):
        return torch.bmm(x, w).view(x.shape[0], x.shape[1], w.shape[2]) + b


def test_views_to_the_same_sizes_are_dropped() -> None:
    x, w, b = torch.randn(3, 5, 8), torch.randn(3, 8, 6), torch.randn(6)
    model = _BmmBias()
    cap = capture(model, [x, w, b])
    before = _run(cap, model, [x, w, b])
    assert eliminate_common(cap.gm) >= 1
    assert not any(op_name(n.target) == "view" for n in cap.gm.graph.nodes)
    torch.testing.assert_close(_run(cap, model, [x, w, b]), before, rtol=0, atol=0)
    plan = build_plan(capture(model, [x, w, b]).gm)
    assert [(g.kind, g.describe()) for g in plan.kernels] == [("matmul", "bmm, add")]


class _GroupNormSiLU(nn.Module):
    """GroupNorm (computed on [N, G, C/G, H*W], viewed back), then SiLU and a scale; the
    residual is not a reshape: the add stays where it is."""

    def __init__(self, c: int):
        super().__init__()
        self.norm = nn.GroupNorm(4, c)

    def forward(self, x, r):
        y = F.silu(self.norm(x)) * x.mean()
        return y.reshape(x.shape[0], -1) + r, y


def test_ops_on_reshapes_of_one_shape_follow_the_reshape() -> None:
    from kernelcraft.rewrite import follow_views

    x, r = torch.randn(2, 16, 3, 5), torch.randn(2, 240)
    model = _GroupNormSiLU(16)
    c = capture(model, [x, r])
    assert follow_views(c.gm) == 3  # sigmoid, mul, mul by the 0-d mean
    norm_shape = next(n for n in c.gm.graph.nodes if n.op == "call_function"
                      and op_name(n.target) == "rsqrt").meta["val"].shape
    sig = next(n for n in c.gm.graph.nodes if n.op == "call_function"
               and op_name(n.target) == "sigmoid")
    assert sig.meta["val"].dim() == len(norm_shape) == 4 and sig.meta["val"].shape[1] == 4
    add = next(n for n in c.gm.graph.nodes if n.op == "call_function"
               and op_name(n.target) == "add" and n.meta["val"].dim() == 2)
    assert add.meta["val"].shape == r.shape
    params = [p.detach() for p in model.parameters()]
    for got, want in zip(c.gm(*params, x, r), model(x, r), strict=True):
        torch.testing.assert_close(got, want)
    plan = build_plan(c.gm)
    kinds = [g.kind for g in plan.groups if g.kind not in ("glue", "merged")]
    assert kinds.count("pointwise") == 1  # the norm with SiLU and the scale; the residual add
    assert kinds.count("reduction") == 2  # (and the mean)


class _HardOneHot(nn.Module):
    """Straight-through hard one-hot of an argmax (dim 1 of a map), a scattered row of
    values (last dim), and a scatter with two indices per line (not rewritten)."""

    def forward(self, logits, src, idx2):
        y = logits.softmax(1)
        hard = torch.zeros_like(y).scatter_(1, y.argmax(1, keepdim=True), 1.0)
        rows = torch.full_like(src, -1.0).scatter(-1, src.argmin(-1, keepdim=True),
                                                  src.amin(-1, keepdim=True) * 2)
        two = torch.zeros_like(src).scatter(1, idx2, 3.0)
        return hard - y.detach() + y, rows, two


def test_scatters_of_one_index_per_line_become_a_where() -> None:
    from kernelcraft.rewrite import scatter_lines

    inputs = [torch.randn(2, 7, 3, 5), torch.randn(6, 9),
              torch.tensor([[0, 3]] * 5 + [[8, 8]])]
    model = _HardOneHot()
    c = capture(model, inputs)
    assert scatter_lines(c.gm) == 2  # the two-index scatter stays
    names = [op_name(n.target) for n in c.gm.graph.nodes if n.op == "call_function"]
    assert names.count("scatter") == 1 and names.count("arange") == 2
    for got, want in zip(_run(c, model, inputs), model(*inputs), strict=True):
        torch.testing.assert_close(got, want, rtol=0, atol=0)
    plan = build_plan(capture(model, inputs).gm)
    assert not [g.describe() for g in plan.groups if g.kind == "extern"]
    # the two-index scatter stores its number through the scatter template
    assert [g.describe() for g in plan.groups if g.kind == "scatter"] == ["scatter"]
    # the fills the wheres read are literals in their kernels, not kernels of their own
    fills = [g for g in plan.kernels if any(op_name(n.target) == "full_like" for n in g.nodes)]
    assert len(fills) == 1 and fills[0].kind == "pointwise", fills  # the scatter's base


class _CosineEmbedding(nn.Module):
    def forward(self, a, b, y):
        return F.cosine_embedding_loss(a, b, y, margin=0.2)


def test_fills_sized_by_an_empty_tensor_leave_no_allocation() -> None:
    """cosine_embedding_loss fills ``full_like(empty_permuted(...))``: the fill becomes a
    literal and the allocation that only gave it its sizes goes (it stayed as an extern)."""
    inputs = [torch.randn(6, 5), torch.randn(6, 5), torch.tensor([1, -1, 1, 1, -1, -1.0])]
    plan = build_plan(capture(_CosineEmbedding(), inputs).gm)
    assert not [g.describe() for g in plan.groups if g.kind == "extern"]


class _ZeroState(nn.Module):
    def forward(self, x, w):
        # a fill made from sizes read by pointwise ops (a literal in their kernel) and one a
        # matmul reads (a fill of its own)
        acc = torch.zeros(x.shape[0], x.shape[1], device=x.device)
        h = torch.zeros(x.shape[0], w.shape[0], device=x.device)
        return torch.maximum(acc, x) + 1.0, (h @ w + x).sum()


def test_fills_of_sizes_read_pointwise_are_literals() -> None:
    from kernelcraft.rewrite import literal_fills

    inputs = [torch.randn(4, 6), torch.randn(6, 6)]
    c = capture(_ZeroState(), inputs)
    assert literal_fills(c.gm) == 1
    names = [op_name(n.target) for n in c.gm.graph.nodes if n.op == "call_function"]
    assert names.count("full") == 1 and names.count("scalar_tensor") == 1, names
    for got, want in zip(_run(c, _ZeroState(), inputs), _ZeroState()(*inputs), strict=True):
        torch.testing.assert_close(got, want, rtol=0, atol=0)
    plan = build_plan(capture(_ZeroState(), inputs).gm)
    assert [g.describe() for g in plan.groups if g.kind == "extern"] == ["full"]


class _ThinProducts(nn.Module):
    def forward(self, w, d, x, v, m):
        # a batched matvec into 3 coordinates (einsum), a one-column product, and a product
        # too wide to be thin (stays a matmul)
        acc = torch.einsum("bij,bijk->bik", w, d)
        col = x @ v.unsqueeze(-1)
        return acc, col, x @ m


def test_thin_products_become_a_product_and_a_sum() -> None:
    from kernelcraft.rewrite import thin_matmuls

    inputs = [torch.randn(2, 5, 7), torch.randn(2, 5, 7, 3), torch.randn(6, 9),
              torch.randn(9), torch.randn(9, 40)]
    c = capture(_ThinProducts(), inputs)
    assert thin_matmuls(c.gm, 16) == 2
    names = [op_name(n.target) for n in c.gm.graph.nodes if n.op == "call_function"]
    assert names.count("bmm") + names.count("mm") == 1 and names.count("sum") == 2, names
    for got, want in zip(_run(c, _ThinProducts(), inputs), _ThinProducts()(*inputs),
                         strict=True):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)
    plan = build_plan(capture(_ThinProducts(), inputs).gm)
    kinds = sorted(g.kind for g in plan.groups if g.kind != "glue")
    assert kinds.count("matmul") == 1 and kinds.count("reduction") == 2, kinds
    off = build_plan(capture(_ThinProducts(), inputs).gm, FusionOptions(thin_matmul_max=0))
    assert sum(g.kind == "matmul" for g in off.groups) == 3


class _SliceAssign(nn.Module):
    def forward(self, seg, x, y):
        start = torch.ones_like(seg, dtype=torch.bool)
        start[:, 1:] = seg[:, 1:] != seg[:, :-1]  # document starts of packed sequences
        cache = x * 2.0
        cache[:, 2:5] = torch.tanh(y)  # a block written inside a dim
        return start, cache


def test_slice_assignments_are_cats() -> None:
    from kernelcraft.rewrite import slice_assignments

    inputs = [torch.randint(0, 3, (4, 9)), torch.randn(3, 8), torch.randn(3, 3)]
    c = capture(_SliceAssign(), inputs)
    assert slice_assignments(c.gm) >= 3
    names = [op_name(n.target) for n in c.gm.graph.nodes if n.op == "call_function"]
    assert "slice_scatter" not in names and "copy" not in names, names
    for got, want in zip(_run(c, _SliceAssign(), inputs), _SliceAssign()(*inputs), strict=True):
        torch.testing.assert_close(got, want, rtol=0, atol=0)
    plan = build_plan(capture(_SliceAssign(), inputs).gm)
    assert not [g.describe() for g in plan.groups if g.kind == "extern"]


class _SelectAssignLoop(nn.Module):
    """``out[:, q] = ...`` for every q: each assignment exports around ``out[:]`` (a slice
    of the whole tensor) and a scatter over all of it."""

    def forward(self, f):
        out = torch.empty_like(f)
        for q, (sx, sy) in enumerate([(0, 0), (1, 0), (0, 1), (-1, 0), (0, -1)]):
            out[:, q] = torch.roll(f[:, q], shifts=(sy, sx), dims=(1, 2))
        return out * 2.0


def test_select_assignments_in_a_loop_write_the_tensor_once() -> None:
    """Slices keeping all of a tensor are aliases (``eliminate_common``): the chain of
    per-channel assignments is one kernel (with the scaling after it) instead of five
    writes of the whole tensor, and computes the same."""
    f = torch.randn(2, 5, 8, 16)
    c = capture(_SelectAssignLoop(), [f])
    eliminate_common(c.gm)
    assert not any(op_name(n.target) == "slice" for n in c.gm.graph.nodes)
    torch.testing.assert_close(_run(c, _SelectAssignLoop(), [f])[0], _SelectAssignLoop()(f),
                               rtol=0, atol=0)
    plan = build_plan(capture(_SelectAssignLoop(), [f]).gm)
    wheres = [g for g in plan.kernels if "where" in g.describe()]
    assert len(wheres) == 1 and wheres[0].describe().count("where") == 5, [
        g.describe() for g in plan.kernels]


class _RowContexts(nn.Module):
    """Whole-tensor reductions of values computed with row statistics (split), and a column
    sum of them and a whole sum of plain values (not split)."""

    def forward(self, x, t):
        logp = F.log_softmax(x, dim=-1)
        centred = x - x.mean(-1, keepdim=True)
        return ((t * logp).sum(), logp.mean(), (centred * t).amax(), centred.sum(0),
                (x * t).sum())


def test_whole_reductions_of_row_values_are_split_per_row() -> None:
    from kernelcraft.rewrite import split_row_reductions

    inputs = [torch.randn(6, 50), torch.rand(6, 50)]
    c = capture(_RowContexts(), inputs)

    def row_parts() -> int:
        return sum(n.op == "call_function" and op_name(n.target) in ("sum", "mean", "amax")
                   and tuple(n.meta["val"].shape) == (6, 1) for n in c.gm.graph.nodes)

    before = row_parts()
    assert split_row_reductions(c.gm) == 3
    assert row_parts() == before + 3  # one per-row part for each split reduction
    for got, want in zip(_run(c, _RowContexts(), inputs), _RowContexts()(*inputs),
                         strict=True):
        torch.testing.assert_close(got, want, rtol=1e-5, atol=1e-5)


class _PerRowCasts(nn.Module):
    """Per-row integers cast and unsqueezed against the features: the casts move below the
    views (inputs only); a chain on a computed value stays."""

    def forward(self, x, n, c, w):
        valid = torch.arange(x.shape[1])[None, :] < n[:, None]
        count = n.type_as(x).view(-1, 1, 1)  # moved: [P] -> [P, 1, 1]
        mean = (x * valid[..., None]).sum(1, keepdim=True) / count
        cx = c[:, 2].type_as(x).unsqueeze(1) * 0.16 + 0.08  # moved: a view of an input
        twice = n.float().unsqueeze(1)  # moved: [6, 1], read twice
        made = (w.sum(-1) * 2.0).unsqueeze(1)  # on a computed value: stays
        return mean, x[..., 0] - cx + twice + made, twice * 3.0


def test_unit_views_move_above_casts_of_inputs() -> None:
    from kernelcraft.rewrite import hoist_unit_views

    inputs = [torch.randn(6, 5, 3), torch.randint(1, 5, (6,)), torch.randint(0, 9, (6, 3)),
              torch.randn(6, 4)]
    c = capture(_PerRowCasts(), inputs)
    assert hoist_unit_views(c.gm) == 3
    casts = [n for n in c.gm.graph.nodes if n.op == "call_function"
             and op_name(n.target) == "_to_copy"]
    assert sorted(len(n.meta["val"].shape) for n in casts) == [2, 2, 3]
    for got, want in zip(_run(c, _PerRowCasts(), inputs), _PerRowCasts()(*inputs),
                         strict=True):
        torch.testing.assert_close(got, want)
    # the moved casts are computed in the kernels that read them: no kernel of a lone cast
    kernels = [g.describe() for g in build_plan(capture(_PerRowCasts(), inputs).gm).kernels]
    assert "_to_copy, mul, sum, div" in kernels  # the count, per row in the mean's kernel
    assert any(k.startswith("_to_copy, mul, add, sub") for k in kernels), kernels  # cx
    assert all(k != "_to_copy" for k in kernels), kernels
