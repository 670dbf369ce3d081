"""The pooling template: window arithmetic, the planner's pool groups, generated modules
judged correct under the interpreter (at reduced and at other sizes) and cross-compiled."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from kernelcraft.codegen.runtime import (
    _kc_adaptive_window,
    _kc_channels_last,
    _kc_magic,
    _kc_pool_size,
    _kc_pool_strides,
)
from kernelcraft.generate import GenerateOptions, generate

WINDOWS_2D = """
    import torch, torch.nn as nn, torch.nn.functional as F

    class Model(nn.Module):
        def forward(self, x, bias):
            a = F.max_pool2d(x, 3, 2, 1)
            b = F.avg_pool2d(x, 5, 2, 2)
            c = torch.relu(F.max_pool2d(torch.tanh(x) * 2.0, 2))  # prologue and epilogue
            d = F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False) + bias
            e = F.max_pool2d(x, 3, 2, 1, dilation=2, ceil_mode=True)
            f = F.avg_pool2d(x, 2, divisor_override=3)
            g = F.lp_pool2d(x, 2, 3)  # x ** 2 per tap, the root in the epilogue
            h = F.avg_pool2d(x, 9, 1, 4)  # 81 taps: a loop, not unrolled
            return a, b, c, d, e, f, g, h

    batch, channels, h, w = 2, 5, 17, 22
    def get_inputs(): return [torch.randn(batch, channels, h, w), torch.randn(channels, 1, 1)]
    def get_init_inputs(): return []
"""

WINDOWS_MORE = """
    import torch, torch.nn as nn, torch.nn.functional as F

    class Model(nn.Module):
        def forward(self, x, y, z):
            a = F.max_pool1d(y, 4, 2, 1)
            b = F.avg_pool1d(y, 3, 1, 1, count_include_pad=False)
            c = F.adaptive_avg_pool2d(x, (5, 3))
            d = F.adaptive_max_pool2d(x, 4)
            e = F.max_pool3d(z, 2)
            f = F.avg_pool3d(z, 3, 2, 1, ceil_mode=True)
            g = F.adaptive_avg_pool3d(z, (2, 3, 1))
            h = F.max_pool2d(x.to(memory_format=torch.channels_last), 3, 1, 1)
            i = F.max_pool2d(x[0], 2)  # unbatched
            j, idx = F.max_pool2d(x, 2, return_indices=True)  # indices: PyTorch's
            k = F.avg_pool2d(torch.sigmoid(x), 2, 1) * 3.0
            return a, b, c, d, e, f, g, h, i, j, idx, k

    def get_inputs():
        return [torch.randn(2, 6, 19, 13), torch.randn(3, 4, 41), torch.randn(2, 3, 9, 8, 7)]
    def get_init_inputs(): return []
"""

ONE_D = """
    import torch, torch.nn as nn, torch.nn.functional as F

    class Model(nn.Module):
        def forward(self, x, b):
            # 1-D pools are 2-D ones over unsqueeze(x, -2): still one kernel each, with
            # what feeds them and what follows the squeeze
            a = F.avg_pool1d(F.gelu(x), 4) * 1.5
            c = torch.relu(F.max_pool1d(x * 2.0 + b, 3, 2, 1)) - b[..., :1]
            d = F.max_pool1d(x, 2)
            return a, c, d, F.avg_pool1d(torch.tanh(x), 3, 1, 1)

    def get_inputs(): return [torch.randn(3, 5, 37), torch.randn(5, 1)]
    def get_init_inputs(): return []
"""

HALF = """
    import torch, torch.nn as nn, torch.nn.functional as F

    class Model(nn.Module):
        def forward(self, x):
            return F.max_pool2d(x, 3, 2, 1), F.avg_pool2d(x, 2) * 0.5

    def get_inputs(): return [torch.randn(2, 4, 15, 16).half()]
    def get_init_inputs(): return []
"""

NAN_MAX = """
    import torch, torch.nn as nn, torch.nn.functional as F

    class Model(nn.Module):
        def forward(self, x):
            return F.max_pool2d(torch.log(x), 2)  # log of negatives: NaN must propagate

    def get_inputs(): return [torch.randn(2, 3, 8, 8)]
    def get_init_inputs(): return []
"""


def _kinds(gen) -> list[str]:
    return [g.kind for g in gen.plan.groups if g.kind not in ("glue",)]


@pytest.mark.parametrize("name, source", [("windows_2d", WINDOWS_2D),
                                          ("windows_more", WINDOWS_MORE), ("one_d", ONE_D),
                                          ("half", HALF), ("nan_max", NAN_MAX)])
def test_pools_judged_correct(write, tmp_path: Path, name: str, source: str) -> None:
    gen = generate(write(f"{name}.py", source),
                   GenerateOptions(out_dir=tmp_path / "out", device="cpu", build=False))
    assert gen.judge.correct, (gen.judge.reason, gen.judge.detail)
    pools = [g for g in gen.plan.groups if g.kind == "pool"]
    externs = gen.extern_reasons
    if name == "windows_more":  # all but the pool whose indices are used
        assert len(pools) == 10, externs
        assert any("indices are used" in r for r in externs.values()), externs
    else:
        assert pools and "pool" not in " ".join(externs.values()), externs
        assert all(g.kind in ("pool", "glue") for g in gen.plan.groups), _kinds(gen)
    if name == "one_d":
        assert len(pools) == 4 and not externs
        assert all(g.kind == "pool" for g in gen.plan.groups if g.kind != "glue")
        fused = [g.describe() for g in pools]
        assert any("erf" in d and "squeeze" in d and d.endswith("mul") for d in fused), fused
    if name == "windows_2d":  # tanh and mul feed only the pool: recomputed per tap
        fused = [g for g in pools if "tanh" in g.describe()]
        assert fused and "relu" in fused[0].describe()
        text = gen.module_path.read_text()
        assert "tl.static_range(K0)" in text and "in range(K0)" in text


def test_prologue_used_elsewhere_is_not_fused(write) -> None:
    from kernelcraft.capture import capture
    from kernelcraft.plan import build_plan
    from kernelcraft.problem import load_problem

    problem = load_problem(write("p.py", """
        import torch, torch.nn as nn, torch.nn.functional as F
        class Model(nn.Module):
            def forward(self, x):
                y = torch.relu(x)
                return F.max_pool2d(y, 2), y.sum()
        def get_inputs(): return [torch.randn(2, 3, 8, 8)]
        def get_init_inputs(): return []
    """))
    with torch.device("meta"):
        model = problem.make_model(problem.init_inputs(0), 0)
        inputs = problem.template_inputs(0)
    plan = build_plan(capture(model, inputs, problem.name).gm)
    (pool,) = [g for g in plan.groups if g.kind == "pool"]
    assert "relu" not in pool.describe()


def test_window_arithmetic_matches_pytorch() -> None:
    for size, k, s, p, d, ceil in itertools.product((1, 5, 8, 13), (1, 2, 3), (1, 2, 3),
                                                    (0, 1), (1, 2), (False, True)):
        if 2 * p > k:
            continue
        x = torch.zeros(1, 1, size)
        try:
            want = F.max_pool1d(x, k, s, p, d, ceil_mode=ceil).shape[-1]
        except RuntimeError:
            with pytest.raises(ValueError):
                _kc_pool_size(size, k, s, p, d, ceil)
            continue
        assert _kc_pool_size(size, k, s, p, d, ceil) == want, (size, k, s, p, d, ceil)
    for i, o in itertools.product(range(1, 20), range(1, 9)):
        widest = max(((j + 1) * i + o - 1) // o - (j * i) // o for j in range(o))
        assert _kc_adaptive_window(i, o) == widest


def test_output_layout_follows_the_input() -> None:
    x = torch.randn(2, 3, 5, 4)
    assert not _kc_channels_last(x, 2)
    xc = x.to(memory_format=torch.channels_last)
    assert _kc_channels_last(xc, 2)
    st = _kc_pool_strides((2, 3, 2, 2), 2, True)
    assert tuple(st) == torch.empty(2, 3, 2, 2).to(memory_format=torch.channels_last).stride()
    assert tuple(_kc_pool_strides((2, 3, 2, 2), 2, False)) == (12, 4, 2, 1)


def test_pool_kernels_cross_compile(write, tmp_path: Path) -> None:
    opts = GenerateOptions(out_dir=tmp_path / "out", device="cpu", targets="sm_90,gfx942",
                           judge=False)
    gen = generate(write("half.py", HALF), opts)
    assert {b["target"] for b in gen.builds} == {"sm_90", "gfx942"}
    assert all(b["ok"] and b["spills"] == 0 for b in gen.builds), gen.builds


def test_magic_division_is_exact() -> None:
    """_kc_udiv's (m, s): n // d == ((n * m) >> 32) >> (s - 16) for every int32 n >= 0."""
    import random

    rng = random.Random(0)
    divisors = [*range(1, 600), *(2**k + e for k in range(1, 31) for e in (-1, 0, 1)),
                *(rng.randrange(2, 2**31) for _ in range(400))]
    for d in divisors:
        m, s = _kc_magic(d)
        assert -(2**31) <= m < 2**31 and s != 1 and m != 1  # int32, never specialised to 1
        mu = m & 0xFFFFFFFF
        last = (2**31 - 1) // d * d
        for n in [0, 1, d - 1, d, d + 1, last - 1, last, 2**31 - 1,
                  *(rng.randrange(2**31) for _ in range(40))]:
            if 0 <= n < 2**31:
                q = n if d == 1 else (n * mu >> 32) >> (s - 16)
                assert q == n // d, (n, d)


FASTDIV_CHECK = """
import sys, torch
from kernelcraft.problem import load_module
mod = load_module(__import__("pathlib").Path(sys.argv[1]), "fastdiv")
calls = []
def tuned(name, dev, key):
    calls.append(name)
    return {"BLOCK": 256, "num_warps": 4, "FASTDIV": True}
mod._kc_tuned = tuned
torch.manual_seed(1)
x, w, b = torch.randn(3, 7, 19, 23), torch.randn(1, 7, 1, 1), torch.randn(7, 1, 1)
got, want = mod.ModelNew()(x, w, b), mod.Model()(x, w, b)
assert len(calls) >= 3, calls
for g, e in zip(got, want, strict=True):
    torch.testing.assert_close(g, e, rtol=1e-5, atol=1e-5)
print("ok")
"""


def test_magic_division_path_matches_eager(write, tmp_path: Path) -> None:
    """FASTDIV (a tuning knob, off by default) computes the same windows and broadcasts
    (run in a TRITON_INTERPRET=1 process: kernels are interpreted from their import)."""
    import os
    import subprocess
    import sys

    src = """
        import torch, torch.nn as nn, torch.nn.functional as F

        class Model(nn.Module):
            def forward(self, x, w, b):
                y = torch.relu(F.max_pool2d(x * w, 3, 2, 1) + b)
                z = F.avg_pool3d(x.unsqueeze(1), 2, 1) * 0.5
                return y, z, torch.where(x > 0, x, x * w)

        def get_inputs():
            return [torch.randn(3, 7, 19, 23), torch.randn(1, 7, 1, 1), torch.randn(7, 1, 1)]
        def get_init_inputs(): return []
    """
    opts = GenerateOptions(out_dir=tmp_path / "out", device="cpu", judge=False, build=False,
                           choose=False, tune=None)
    gen = generate(write("fast.py", src), opts)
    assert {g.kind for g in gen.plan.groups if g.id in gen.kernels} == {"pool", "pointwise"}
    run = subprocess.run([sys.executable, "-c", FASTDIV_CHECK, str(gen.module_path)],
                         env={**os.environ, "TRITON_INTERPRET": "1"}, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-2000:]


def test_prologue_fusion_is_a_fusion_option() -> None:
    """The ops feeding only a pool or a scan run inside it unless the tuner says not to."""
    import torch.nn as nn

    from kernelcraft.capture import capture
    from kernelcraft.plan import FusionOptions, build_plan

    class M(nn.Module):
        def forward(self, x):
            return F.max_pool2d(torch.tanh(x) * 2, 2), torch.cumsum(torch.exp(x), 1)

    cap = capture(M(), [torch.randn(2, 3, 8, 8)], "m")
    gm = cap.gm if hasattr(cap, "gm") else cap
    fused = [g.describe() for g in build_plan(gm, FusionOptions()).groups if g.kind != "glue"]
    assert fused == ["tanh, mul, max_pool2d_with_indices, getitem", "exp, cumsum"], fused
    apart = build_plan(gm, FusionOptions(fuse_prologues=False)).groups
    assert [g.kind for g in apart if g.kind != "glue"] == ["pointwise", "pool", "pointwise",
                                                            "scan"]
