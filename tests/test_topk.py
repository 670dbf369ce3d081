"""The top-k template: values and indices along any dim, largest and smallest, with its
prologue fused, judged correct under the interpreter and cross-compiled; ties rank by
lowest index first; what it cannot take stays in PyTorch with the reason."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from kernelcraft.codegen.runtime import _kc_topk_config
from kernelcraft.generate import GenerateOptions, generate

TOPKS = """
    import torch, torch.nn as nn

    class Model(nn.Module):
        def forward(self, x, y, z, h):
            probs = torch.softmax(x @ y, dim=-1)
            w, e = torch.topk(probs, 2, dim=-1)  # a router: values and indices
            w = w / w.sum(-1, keepdim=True)
            # smallest along a strided dim, of a prologue only the top-k reads
            lo = torch.topk(z * 2.0 - 1.0, 3, dim=1, largest=False)
            # rows longer than a chunk, k across chunks; only the indices used
            far = torch.topk(z.flatten(1), 20, dim=-1).indices
            full = torch.topk(h, 11, dim=-1)  # k = the whole dim, half precision
            ints = torch.topk((z * 2**27).int(), 4, dim=-1)  # int32 keys
            return w, e, lo.values, lo.indices, far, full.values, full.indices, ints

    rows, inner, experts = 50, 16, 8
    def get_inputs():
        z = torch.randn(6, 7, 190)
        z[0, 2, 5] = float("nan")  # ranks above +inf for the largest, last for the smallest
        z[1, 0, 9] = float("inf")
        z[2, 4, 11] = float("-inf")
        return [torch.randn(rows, inner), torch.randn(inner, experts), z,
                torch.randn(5, 3, 11).half()]
    def get_init_inputs(): return []
"""


SORTS = """
    import torch, torch.nn as nn

    class Model(nn.Module):
        def forward(self, x, h, n):
            s = torch.sort(x, dim=-1, descending=True)
            a = torch.argsort(x * 2.0, dim=0)  # along a strided dim, of a computed value
            m = torch.msort(h)  # half precision, ascending along dim 0
            i = torch.sort(n, dim=1).indices  # int32 keys
            return s.values, s.indices, a, m, i

    def get_inputs():
        x = torch.randn(6, 33)
        x[1, 4] = float("nan")
        return [x, torch.randn(17, 5).half(), torch.randperm(40 * 9).int().view(40, 9)]
    def get_init_inputs(): return []
"""


def test_sort_and_argsort_are_top_k_of_the_whole_dim(write, tmp_path: Path) -> None:
    gen = _gen(write, tmp_path, "sorts", SORTS, targets="sm_90", build=True)
    assert gen.judge.correct, (gen.judge.reason, gen.judge.detail)
    assert [g.kind for g in gen.plan.groups if g.is_kernel].count("topk") == 4
    assert not gen.extern_reasons, gen.extern_reasons
    assert all(b["ok"] and b["spills"] == 0 for b in gen.builds), gen.builds


MEDIANS = """
    import torch, torch.nn as nn

    class Model(nn.Module):
        def forward(self, x, n):
            m = torch.median(x, dim=1)  # rows with NaNs: the first NaN
            kv = torch.kthvalue(x, 3, dim=0, keepdim=True)  # a strided dim, kept
            mi = torch.median(n, dim=-1, keepdim=True).values  # int32 with ties
            return m.values, m.indices, kv.values, kv.indices, mi, torch.median(x)

    def get_inputs():
        x = torch.randn(7, 41)
        x[2, 5] = float("nan")
        x[2, 30] = float("nan")
        return [x, torch.randint(-5, 5, (6, 8), dtype=torch.int32)]
    def get_init_inputs(): return []
"""


def test_median_and_kthvalue_are_the_last_of_a_smallest_k(write, tmp_path: Path) -> None:
    gen = _gen(write, tmp_path, "medians", MEDIANS)
    assert gen.judge.correct, (gen.judge.reason, gen.judge.detail)
    assert [g.kind for g in gen.plan.groups if g.is_kernel] == ["topk"] * 3
    # the median of all elements (no dim) has no row to select from
    assert list(gen.extern_reasons.values()) == ["median: a median over all elements"]


def _gen(write, tmp_path: Path, name: str, source: str, **kw):
    kw.setdefault("build", False)
    return generate(write(f"{name}.py", source),
                    GenerateOptions(out_dir=tmp_path / "out", device="cpu", **kw))


def test_topk_judged_correct_and_built(write, tmp_path: Path) -> None:
    gen = _gen(write, tmp_path, "topks", TOPKS, targets="sm_90,gfx942", build=True)
    assert gen.judge.correct, (gen.judge.reason, gen.judge.detail)
    tops = [g for g in gen.plan.groups if g.kind == "topk"]
    assert len(tops) == 5, gen.extern_reasons
    assert not any("topk" in r for r in gen.extern_reasons.values()), gen.extern_reasons
    lo = next(g for g in tops if "mul" in g.describe())  # the prologue fused
    assert "sub" in lo.describe()
    assert all(b["ok"] and b["spills"] == 0 for b in gen.builds), gen.builds


TIES = """
    import torch, torch.nn as nn

    class Model(nn.Module):
        def forward(self, x):
            return (torch.topk(x, 5, dim=-1), torch.topk(x, 4, dim=0, largest=False),
                    torch.sort(x, dim=-1, descending=True))

    def get_inputs(): return [torch.randn(8, 200)]
    def get_init_inputs(): return []
"""

_TIE_CHECK = """
import sys, torch
from pathlib import Path
from kernelcraft.problem import load_module

module = load_module(Path(sys.argv[1]), "generated")
x = torch.randint(0, 3, (8, 1100)).float()  # ties everywhere
x[0, :] = 0.0
x[1, ::2] = -0.0  # equal to 0.0
(v, i), (sv, si), (ov, oi) = module.ModelNew()(x[:, :200])
want = torch.sort(x[:, :200], dim=-1, descending=True, stable=True)
assert torch.equal(oi, want.indices) and torch.equal(ov, want.values)
(v, i), (sv, si), (ov, oi) = module.ModelNew()(x)  # the sort's rows: torch.sort's
want = torch.sort(x, dim=-1, descending=True, stable=True)
assert torch.equal(oi, want.indices) and torch.equal(ov, want.values)
want = torch.sort(x, dim=-1, descending=True, stable=True)
assert torch.equal(i, want.indices[:, :5]), (i, want.indices[:, :5])
assert torch.equal(v, want.values[:, :5])
want = torch.sort(x, dim=0, stable=True)
assert torch.equal(si, want.indices[:4]) and torch.equal(sv, want.values[:4])
print("ok")
"""


def test_topk_ties_rank_lowest_index_first(write, tmp_path: Path) -> None:
    gen = _gen(write, tmp_path, "ties", TIES, judge=False)
    assert [g.kind for g in gen.plan.groups if g.is_kernel] == ["topk"] * 3
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run([sys.executable, "-c", _TIE_CHECK, str(gen.module_path)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0 and "ok" in done.stdout, done.stderr[-3000:]


UNSUPPORTED = """
    import torch, torch.nn as nn

    class Model(nn.Module):
        def forward(self, x):
            a = torch.topk(x, 3, sorted=False).values  # order is the library's
            b = torch.topk(x.double(), 3).indices  # float64 keys do not fit
            c = torch.topk(x, 300).values  # k above the template's buffer
            d = torch.sort(x, dim=1).values  # rows longer than the buffer
            return a, b, c, d

    def get_inputs(): return [torch.randn(4, 400)]
    def get_init_inputs(): return []
"""


def test_topk_the_template_cannot_take_stays_in_pytorch(write, tmp_path: Path) -> None:
    gen = _gen(write, tmp_path, "unsupported", UNSUPPORTED)
    assert gen.judge.correct, (gen.judge.reason, gen.judge.detail)
    reasons = sorted(g.reason for g in gen.plan.groups if g.kind == "extern")
    assert any("unsorted" in r for r in reasons), reasons
    assert any("float64" in r for r in reasons), reasons
    assert any("k = 300" in r for r in reasons), reasons
    assert any("sort of rows of 400" in r for r in reasons), reasons
    assert not any(g.kind == "topk" for g in gen.plan.groups)


def test_topk_config_keeps_the_tile_bounded() -> None:
    for K, R, KP, inner in ((32768, 8, 2, True), (64, 50000, 64, True), (1, 3, 4, False),
                            (4096, 4096, 256, False), (10, 100000, 1, True)):
        bk, br, warps = _kc_topk_config(K, R, KP, inner, False)
        assert bk * max(br, KP) <= 4096 and 1 <= warps <= 8
        assert br >= min(R, 8) and bk >= 1
    # many short rows: rows side by side, enough programs to fill the GPU
    bk, br, _ = _kc_topk_config(32768, 8, 2, True, False)
    assert br == 8 and 32768 // bk >= 1024


def test_topk_has_a_tuning_space(write) -> None:
    import torch

    from kernelcraft.capture import capture
    from kernelcraft.generate import emit_group
    from kernelcraft.plan import build_plan
    from kernelcraft.problem import load_problem
    from kernelcraft.spaces import build_spec, space_for, tuned_key
    from kernelcraft.target import resolve

    problem = load_problem(write("sp.py", """
        import torch, torch.nn as nn
        class Model(nn.Module):
            def forward(self, x):
                return torch.topk(x, 40, dim=-1).indices
        def get_inputs(): return [torch.randn(4096, 1000)]
        def get_init_inputs(): return []
    """))
    with torch.device("meta"):
        model = problem.make_model(problem.init_inputs(0), 0)
        inputs = problem.template_inputs(0)
    plan = build_plan(capture(model, inputs, problem.name).gm)
    target = resolve("sm_90")
    (g,) = plan.kernels
    k = emit_group(g, target)
    space = space_for(k, "topk", target)
    assert space is not None and space.family == "topk" and space.default is not None
    assert tuned_key(k, "topk") == (4096, 1000)
    spec = build_spec(k, "topk", space.default)
    assert spec["constexprs"]["BLOCK_R"] == space.default["BLOCK_R"]
    assert spec["constexprs"]["KTOP"] == 40 and spec["constexprs"]["KP"] == 64
    assert space.check({"BLOCK_K": 128, "BLOCK_R": 64, "num_warps": 4})  # 128 x 64 keys
    assert f"_kc_tuned('{k.wrapper_name}'" in k.wrapper


RUNTIME_K = """
    import torch, torch.nn as nn

    class Model(nn.Module):
        def forward(self, x):
            # a capacity of one in eight along the row (mixture-of-depths routing), of a
            # computed value; k of a size's minimum with a literal
            cap = torch.topk(x * 2.0, x.shape[-1] // 8, dim=-1)
            few = torch.topk(x, min(5, x.shape[0]), dim=0, largest=False)
            return cap.values, cap.indices, few.values, few.indices

    def get_inputs(): return [torch.randn(6, 96)]
    def get_init_inputs(): return []
"""

_RUNTIME_K_CHECK = """
import sys, torch
from pathlib import Path
from kernelcraft.problem import load_module

module = load_module(Path(sys.argv[1]), "generated")
for shape in [(3, 40), (2, 4000), (7, 9)]:  # 5, 500 (past the buffer: torch's), 1
    x = torch.randn(*shape)
    for got, want in zip(module.ModelNew()(x), module.Model()(x), strict=True):
        assert torch.equal(got, want), (shape, got, want)
print("ok")
"""


def test_topk_of_a_k_computed_at_run_time(write, tmp_path: Path) -> None:
    gen = _gen(write, tmp_path, "runtimek", RUNTIME_K)
    assert gen.judge.correct, (gen.judge.reason, gen.judge.detail)
    kinds = sorted(g.kind for g in gen.plan.groups if g.is_kernel or g.kind == "extern")
    assert kinds == ["pointwise", "topk", "topk"], gen.extern_reasons  # x * 2 apart
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run([sys.executable, "-c", _RUNTIME_K_CHECK, str(gen.module_path)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0 and "ok" in done.stdout, done.stderr[-3000:]


LONG_SORT_TIES = """
    import torch, torch.nn as nn

    class Model(nn.Module):
        def forward(self, s, v):
            order = s.argsort(dim=1, descending=True)  # rows past the buffer: PyTorch's sort
            ranked = v.gather(1, order)
            top = torch.topk(ranked * 0.0 + s.gather(1, order), 5, dim=1)  # the template
            return ranked, top.values, top.indices, v.gather(1, order.gather(1, top.indices))

    def get_inputs():
        return [torch.randint(0, 3, (6, 400)).float(), torch.randn(6, 400)]
    def get_init_inputs(): return []
"""


def test_a_sort_left_to_pytorch_ranks_ties_as_the_templates_do(write, tmp_path: Path) -> None:
    """Scores with many ties: the extern sort is the stable one (lowest index first, the
    top-k template's order); the library's own order beside the template's matched neither
    of the judge's references."""
    gen = _gen(write, tmp_path, "long_sort_ties", LONG_SORT_TIES)
    assert gen.judge.correct, (gen.judge.reason, gen.judge.detail)
    assert "aten.sort.stable(" in gen.module_path.read_text()
    assert any(g.kind == "topk" for g in gen.plan.groups)
