"""The scan template: cumulative sums and products with fused neighbours and flips, judged
correct under the interpreter (at reduced and at other sizes) and cross-compiled."""

from __future__ import annotations

from pathlib import Path

from kernelcraft.codegen.runtime import _kc_scan_config
from kernelcraft.generate import GenerateOptions, generate

SCANS = """
    import torch, torch.nn as nn

    class Model(nn.Module):
        def forward(self, x, y, w):
            a = torch.cumsum(x, dim=1)
            b = torch.flip(torch.cumsum(torch.flip(y, dims=[1]), dim=1), dims=[1])  # suffix
            c = torch.cumsum(torch.sigmoid(x) * 2.0, dim=0) + w  # strided scan, epilogue
            d = torch.cumprod(1.0 + 0.01 * x, dim=-1)
            e = torch.cumsum(y, dim=2).relu()
            f = torch.flip(torch.cumsum(x, 1), [1]) * 3.0  # stored reversed, then scaled
            g = torch.cumsum(torch.flip(y.exp(), [1]), 1)  # loaded reversed
            return a, b, c, d, e, f, g

    rows, cols = 37, 300
    def get_inputs():
        return [torch.randn(rows, cols), torch.randn(3, 50, 24), torch.randn(cols)]
    def get_init_inputs(): return []
"""

MIXED = """
    import torch, torch.nn as nn

    class Model(nn.Module):
        def forward(self, x):
            s = torch.cumsum(x, 1)
            # reads the scan before and after its flip: not one kernel, still correct
            both = s + torch.flip(s, [1])
            keep = x > 0
            pos = torch.cumsum(keep, 1) * keep - 1  # position ids from a mask (bool -> int64)
            cp = torch.cumprod((x.abs() * 2).int() % 3 + 1, 0)  # int32 in, int64 out
            return both, torch.cumsum(x.half(), 0), torch.cumsum(x.long(), 1), pos, cp

    def get_inputs(): return [torch.randn(9, 70)]
    def get_init_inputs(): return []
"""


def _gen(write, tmp_path: Path, name: str, source: str, **kw):
    kw.setdefault("build", False)
    return generate(write(f"{name}.py", source),
                    GenerateOptions(out_dir=tmp_path / "out", device="cpu", **kw))


def test_scans_judged_correct(write, tmp_path: Path) -> None:
    gen = _gen(write, tmp_path, "scans", SCANS)
    assert gen.judge.correct, (gen.judge.reason, gen.judge.detail)
    kinds = [g.kind for g in gen.plan.groups if g.kind != "glue"]
    assert kinds == ["scan"] * 7, gen.extern_reasons
    flips = [g for g in gen.plan.groups if "flip" in g.describe()]
    assert len(flips) == 3 and all(g.kind == "scan" for g in flips)


def test_scan_edge_cases_judged_correct(write, tmp_path: Path) -> None:
    gen = _gen(write, tmp_path, "mixed", MIXED)
    assert gen.judge.correct, (gen.judge.reason, gen.judge.detail)
    reasons = " ".join(gen.extern_reasons.values())
    assert "cumsum" not in reasons and "cumprod" not in reasons, reasons
    assert sum(g.kind == "scan" for g in gen.plan.groups) == 5  # integers accumulate in int64


def test_scan_config_covers_the_gpu() -> None:
    bk, br, warps = _kc_scan_config(8192, 8192, True, False)
    assert bk * br <= 4096 and 8192 / bk >= 1024 and br >= 512
    bk, br, warps = _kc_scan_config(16 * 1024, 4096, False, False)
    assert bk >= 8 and 16 * 1024 / bk >= 512 and br >= 8
    assert 1 <= warps <= 8
    bk, br, warps = _kc_scan_config(12, 100, False, False)  # few rows: no empty lanes
    assert bk <= 16 and br >= 8 and warps == 1


def test_scan_kernels_cross_compile(write, tmp_path: Path) -> None:
    gen = _gen(write, tmp_path, "scans", SCANS, targets="sm_90,gfx942", judge=False,
               build=True)
    assert {b["target"] for b in gen.builds} == {"sm_90", "gfx942"}
    assert all(b["ok"] and b["spills"] == 0 for b in gen.builds), gen.builds


def test_scan_and_pool_groups_have_tuning_spaces(write) -> None:
    import torch

    from kernelcraft.capture import capture
    from kernelcraft.generate import emit_group
    from kernelcraft.plan import build_plan
    from kernelcraft.problem import load_problem
    from kernelcraft.spaces import build_spec, space_for, tuned_key
    from kernelcraft.target import resolve

    problem = load_problem(write("sp.py", """
        import torch, torch.nn as nn, torch.nn.functional as F
        class Model(nn.Module):
            def forward(self, x):
                return torch.cumsum(x, 0), F.max_pool2d(x.view(1, 1, 4096, 512), 2)
        def get_inputs(): return [torch.randn(4096, 512)]
        def get_init_inputs(): return []
    """))
    with torch.device("meta"):
        model = problem.make_model(problem.init_inputs(0), 0)
        inputs = problem.template_inputs(0)
    plan = build_plan(capture(model, inputs, problem.name).gm)
    target = resolve("sm_90")
    for g in plan.kernels:
        k = emit_group(g, target)
        space = space_for(k, g.kind, target)
        assert space is not None and space.family == g.kind
        assert space.default is not None  # the heuristic's pick is in the space
        if g.kind == "scan":
            assert tuned_key(k, "scan") == (512, 4096)
            spec = build_spec(k, "scan", space.default)
            assert spec["constexprs"]["BLOCK_K"] == space.default["BLOCK_K"]
            assert space.check({"BLOCK_K": 128, "BLOCK_R": 2048, "num_warps": 4})  # spills
        else:
            assert tuned_key(k, "pool") == (2048 * 256,)


LOG_SCANS = """
    import torch, torch.nn as nn

    class Model(nn.Module):
        def forward(self, x, y):
            # log-space cumulative sums: masked entries (-inf) at the start of rows and in
            # the middle, rows longer than a chunk, a strided dim, half precision, a suffix
            masked = torch.where(x > 1.0, float("-inf"), x * 4.0)
            a = torch.logcumsumexp(masked, dim=1)
            b = torch.logcumsumexp(y * 30.0, dim=0) - 1.0
            c = torch.logcumsumexp(x.half(), dim=-1)
            d = torch.flip(torch.logcumsumexp(torch.flip(x, [1]), 1), [1])
            return a, b, c, d

    rows, cols = 3, 520
    def get_inputs():
        x = torch.randn(rows, cols)
        x[:, :5] = 2.0  # whole -inf prefixes
        return [x, torch.randn(24, 3, 5)]
    def get_init_inputs(): return []
"""


def test_logcumsumexp_is_a_scan(write, tmp_path: Path) -> None:
    gen = _gen(write, tmp_path, "logscans", LOG_SCANS, targets="sm_90,gfx942", build=True)
    assert gen.judge.correct, (gen.judge.reason, gen.judge.detail)
    kinds = [g.kind for g in gen.plan.groups if g.kind != "glue"]
    assert kinds == ["scan"] * 4, gen.extern_reasons
    assert all(b["ok"] and b["spills"] == 0 for b in gen.builds), gen.builds


RUNNING_EXTREMES = """
    import torch, torch.nn as nn

    class Model(nn.Module):
        def forward(self, x, n):
            # ties (rounded values: the latest index wins), a NaN that sticks, rows longer
            # than a chunk, an epilogue on the values, a strided dim, int32 and half
            v, i = torch.cummax(torch.round(x * 2.0), dim=1)
            lo = torch.cummin(x, dim=0)
            h = torch.cummax(x.half(), dim=-1).values
            ni = torch.cummin(n, dim=1).indices
            return v * 0.5 + 1.0, i, lo.values, lo.indices, h, ni

    def get_inputs():
        x = torch.randn(3, 600)
        x[1, 300] = float("nan")
        return [x, torch.randint(-50, 50, (4, 70), dtype=torch.int32)]
    def get_init_inputs(): return []
"""


def test_cummax_and_cummin_are_scans(write, tmp_path: Path) -> None:
    gen = _gen(write, tmp_path, "extremes", RUNNING_EXTREMES, targets="sm_90", build=True)
    assert gen.judge.correct, (gen.judge.reason, gen.judge.detail)
    kinds = [g.kind for g in gen.plan.groups if g.kind != "glue"]
    assert kinds == ["scan"] * 4, gen.extern_reasons
    assert all(b["ok"] and b["spills"] == 0 for b in gen.builds), gen.builds
