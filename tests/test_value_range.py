"""Value bounds and the checks they prove: ``F.one_hot``'s range checks on an argmax, a clamp
to the classes, a remainder or a top-k index are erased; those on an input, on a one-sided
clamp's open side, on a float clamp (NaN) or on a sum that may wrap around stay; the
rewritten program computes what the original does."""

from __future__ import annotations

import torch
import torch.nn as nn
import torch.nn.functional as F

from kernelcraft.capture import capture
from kernelcraft.plan import FusionOptions, build_plan
from kernelcraft.rewrite import drop_proven_asserts
from kernelcraft.value_range import ValueRanges

C = 12


class _OneHots(nn.Module):
    def forward(self, logits, labels, scores):
        a = F.one_hot(logits.argmax(-1), C)  # proven: both checks go
        b = F.one_hot((labels - 3).clamp(0, C - 1), C)  # proven
        c = F.one_hot(labels % C, C)  # proven
        d = F.one_hot(scores.topk(2, dim=-1).indices[:, 0], C)  # proven: scores has C columns
        e = F.one_hot(labels, C)  # an input: both stay
        f = F.one_hot(labels.clamp(min=0), C)  # only x < C stays
        return (a + b + c + d + e + f).float() * logits * scores


def _asserts(gm) -> list[str]:
    return [n.args[1] for n in gm.graph.nodes
            if n.op == "call_function" and "assert_async" in str(n.target)]


def test_one_hot_checks_of_bounded_indices_are_dropped() -> None:
    logits = torch.randn(10, C)
    labels = torch.randint(0, C, (10,))
    scores = torch.randn(10, C)
    cap = capture(_OneHots(), [logits, labels, scores])
    before = _asserts(cap.gm)
    assert len(before) == 12
    assert drop_proven_asserts(cap.gm) == 9
    left = _asserts(cap.gm)
    assert sorted(left) == sorted(["one_hot: Class values must be non-negative.",
                                   "one_hot: Class values must be smaller than num_classes.",
                                   "one_hot: Class values must be smaller than num_classes."])
    # the reductions that fed the erased checks are gone: 3 checks, 3 amin
    amins = [n for n in cap.gm.graph.nodes if n.op == "call_function"
             and "amin" in str(n.target)]
    assert len(amins) == 3
    out = cap.gm(logits, labels, scores)
    torch.testing.assert_close(out[0], _OneHots()(logits, labels, scores))
    # the checks that stay still fire
    bad = labels.clone()
    bad[3] = C + 5
    try:
        cap.gm(logits, bad, scores)
    except RuntimeError as e:
        assert "smaller than num_classes" in str(e)
    else:
        raise AssertionError("the kept check on the input labels did not fire")


def test_plans_keep_no_group_for_proven_checks() -> None:
    class M(nn.Module):
        def forward(self, x):
            return F.one_hot(x.argmax(-1), C).float() * x

    x = torch.randn(64, C)
    kinds = [g.kind for g in build_plan(capture(M(), [x]).gm).groups if g.kind != "glue"]
    kept = [g.kind for g in build_plan(capture(M(), [x]).gm, FusionOptions(
        drop_proven_asserts=False)).groups if g.kind != "glue"]
    assert kinds == ["reduction"]
    assert len(kept) == 3  # the row kernel and the two checks' whole reductions


def _bounds(model: nn.Module, inputs: list[torch.Tensor]) -> dict[str, object]:
    gm = capture(model, inputs).gm
    r = ValueRanges()
    return {n.name: r.of(n) for n in gm.graph.nodes if n.op == "call_function"}


def test_bounds_are_sound_where_values_are_unknown() -> None:
    class M(nn.Module):
        def forward(self, x, i, u):
            fl = x.clamp(0, 1)  # float: NaN passes a clamp
            wrap = u + 200  # uint8 may wrap
            cnt = (x > 0).sum(-1)  # a sum of bools: unbounded above
            idx = x.argmax(0)  # over the dynamic dim: non-negative only
            ar = torch.arange(3, 20, 4)
            narrow = idx.to(torch.int8)  # an open-ended index may wrap in int8
            return fl, wrap, cnt, idx, ar, i - 1, narrow

    x = torch.randn(8, 5)
    i = torch.randint(0, 4, (8,))
    u = torch.randint(0, 255, (8,), dtype=torch.uint8)
    b = _bounds(M(), [x, i, u])
    assert _one(b, "clamp") is None
    assert _one(b, "add") is None
    assert _one(b, "sub") is None  # i is an input
    assert _one(b, "sum") is None
    assert _one(b, "arange") == (3, 19)
    idx = _one(b, "argmax")
    assert idx is not None and idx[0] == 0
    assert _one(b, "_to_copy") is None


def _one(bounds: dict[str, object], prefix: str) -> object:
    (v,) = [v for k, v in bounds.items() if k.rstrip("0123456789").rstrip("_") == prefix]
    return v


def test_comparisons_prove_only_what_holds_everywhere() -> None:
    class M(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w = nn.Parameter(torch.ones(7))  # the columns: 7, not a varying size

        def forward(self, x):
            k = (x * self.w).argmax(-1)  # 0..6
            return k < 7, k < 6, k >= 0, k > 0, k != 9, (k % 3) == 3

    b = _bounds(M(), [torch.randn(4, 7)])
    cmp = {k: v for k, v in b.items() if k.split("_")[0] in ("lt", "ge", "gt", "ne", "eq")}
    assert sorted(cmp.values()) == sorted([(1, 1), (0, 1), (1, 1), (0, 1), (1, 1), (0, 0)])
