"""The reduction ("row") template: generated modules judged correct under the interpreter.

Each problem is generated end to end (capture, plan, codegen, export) and judged on fresh
inputs, at reduced and at other sizes; the reduction groups must become kernels.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelcraft.generate import GenerateOptions, generate

SOFTMAX_DIM1_3D = """
    import torch, torch.nn as nn

    class Model(nn.Module):
        def forward(self, x):
            return torch.softmax(x, dim=1)

    batch, classes, positions = 4, 37, 24
    def get_inputs(): return [torch.randn(batch, classes, positions)]
    def get_init_inputs(): return []
"""

BATCHNORM_STYLE = """
    import torch, torch.nn as nn

    class Model(nn.Module):
        def __init__(self, channels):
            super().__init__()
            self.weight = nn.Parameter(torch.randn(channels))
            self.bias = nn.Parameter(torch.randn(channels))
        def forward(self, x):
            mean = x.mean((0, 2, 3), keepdim=True)
            var = ((x - mean) ** 2).mean((0, 2, 3), keepdim=True)
            y = (x - mean) * torch.rsqrt(var + 1e-5)
            return y * self.weight.view(1, -1, 1, 1) + self.bias.view(1, -1, 1, 1)

    batch, channels, height, width = 3, 8, 17, 16
    def get_inputs(): return [torch.randn(batch, channels, height, width)]
    def get_init_inputs(): return [channels]
"""

ARGMAX_AMIN = """
    import torch, torch.nn as nn

    class Model(nn.Module):
        def forward(self, x):
            # argmin/amin over 4500 rows of 5 columns: R split over several programs
            return torch.argmax(x, dim=1), torch.argmin(x, dim=0), torch.amin(x, dim=0)

    rows, cols = 4500, 5
    def get_inputs(): return [torch.randn(rows, cols)]
    def get_init_inputs(): return []
"""

MSE_SUM = """
    import torch, torch.nn as nn

    class Model(nn.Module):
        def forward(self, pred, target):
            return ((pred - target) ** 2).sum() * 0.5

    batch, features = 96, 257  # R = 24672: partial sums from several programs, then combined
    def get_inputs(): return [torch.randn(batch, features), torch.randn(batch, features)]
    def get_init_inputs(): return []
"""

PRODUCTS = """
    import torch, torch.nn as nn

    class Model(nn.Module):
        def forward(self, x, y):
            # per row, over dim 0 with keepdim, of a whole tensor (split, then combined)
            return torch.prod(x, dim=1), torch.prod(x * 1.01, dim=0, keepdim=True), \\
                torch.prod(y)

    def get_inputs():
        return [torch.rand(6, 32, 48) + 0.5, torch.rand(30, 40) * 0.1 + 0.97]
    def get_init_inputs(): return []
"""

COUNTS = """
    import torch, torch.nn as nn

    class Model(nn.Module):
        def forward(self, p, t, idx):
            # sums of booleans and integers are int64 counts, exact past 2**24
            return ((p.argmax(1) == t).sum(), (p > 0).sum(1), idx.sum(0),
                    (idx % 3 == 0).sum())

    def get_inputs():
        return [torch.randn(300, 50), torch.randint(0, 50, (300,)),
                torch.randint(-1000, 1000, (300, 7))]
    def get_init_inputs(): return []
"""


def _generate(write, tmp_path: Path, name: str, source: str):
    path = write(f"{name}.py", source)
    gen = generate(path, GenerateOptions(out_dir=tmp_path / "out", device="cpu"))
    kinds = [g.kind for g in gen.plan.groups if g.kind not in ("glue", "pointwise")]
    return gen, kinds


@pytest.mark.parametrize(
    "name, source, n_reductions",
    [
        ("softmax_dim1_3d", SOFTMAX_DIM1_3D, 1),
        ("batchnorm_style", BATCHNORM_STYLE, 1),
        ("argmax_amin", ARGMAX_AMIN, 2),  # argmin and amin over dim 0 share a kernel
        ("mse_sum", MSE_SUM, 1),
        ("products", PRODUCTS, 3),
        ("counts", COUNTS, 5),  # argmax + eq, then the count of its hits
    ],
)
def test_reduction_judged_correct(write, tmp_path: Path, name: str, source: str,
                                  n_reductions: int) -> None:
    gen, kinds = _generate(write, tmp_path, name, source)
    assert kinds == ["reduction"] * n_reductions, gen.extern_reasons
    assert gen.judge.correct, (gen.judge.reason, gen.judge.detail)
    text = gen.module_path.read_text()
    assert "ONE_CHUNK" in text and "_kc_row_config" in text
    if name in ("argmax_amin", "mse_sum", "products", "counts"):
        assert "_combine[" in text


def test_config_is_reported(write) -> None:
    import torch

    from kernelcraft.capture import capture
    from kernelcraft.codegen.reduction import emit_reduction
    from kernelcraft.plan import build_plan
    from kernelcraft.problem import load_problem
    from kernelcraft.target import resolve

    problem = load_problem(write("softmax.py", SOFTMAX_DIM1_3D))
    with torch.device("meta"):
        model = problem.make_model(problem.init_inputs(0), 0)
        inputs = problem.template_inputs(0)
    plan = build_plan(capture(model, inputs, problem.name).gm)
    (group,) = [g for g in plan.groups if g.kind == "reduction"]
    ks = emit_reduction(group, resolve("sm_90"))
    assert ks.config["template"] == "row" and ks.config["passes"] == 3
    at = ks.config["at_capture_sizes"]
    assert at["K"] == 4 * 24 and at["R"] == 37 and at["one_chunk"]
