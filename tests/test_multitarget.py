"""Every kernel of a sample of the suite compiles for all six targets, spill-free at the
configs the module would run there (the whole suite: benchmarks/build_targets.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernelcraft.generate import GenerateOptions, generate

ROOT = Path(__file__).resolve().parents[1]
ALL = "sm_80,sm_90,sm_100,gfx90a,gfx942,gfx950"


@pytest.mark.parametrize("name", ["gemm_linear_gelu_scale", "norm_layernorm"])
def test_suite_sample_builds_spill_free_on_every_target(name, tmp_path):
    opts = GenerateOptions(targets=ALL, out_dir=tmp_path, device="cpu", judge=False,
                           tune=None, db_path=tmp_path / "t.db")
    gen = generate(ROOT / "benchmarks" / "problems" / f"{name}.py", opts)
    assert gen.kernels
    assert {b["target"] for b in gen.builds} == set(ALL.split(","))
    assert len(gen.builds) == 6 * len(gen.kernels)
    bad = [b for b in gen.builds if not b["ok"] or b.get("spills")]
    assert not bad, bad
    text = gen.module_path.read_text()
    for r in gen.ranked:  # a config chosen without hardware is in the dispatch table
        assert f"'{r.target}'" in text
        assert "ranked, not measured" in gen.report_path.read_text()


def test_occupancy_from_resources():
    from kernelcraft.build import occupancy
    from kernelcraft.target import resolve

    h200, mi300 = resolve("sm_90"), resolve("gfx942")
    assert occupancy(h200, 128, 0, 8) == 0.25  # 16 warps of registers: 2 blocks of 8
    assert occupancy(h200, 32, 0, 4) == 1.0  # warp slots are the limit
    assert occupancy(h200, 32, 100 * 1024, 4) == 2 * 4 / 64  # shared memory: 2 blocks
    assert occupancy(mi300, 156, 16384, 4) == 0.375  # 13 waves of VGPRs: 3 blocks of 4
    assert occupancy(mi300, None, 0, 4) is None


TWINS = """
import torch, torch.nn as nn, torch.nn.functional as F

class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(n, n) for _ in range(4)])

    def forward(self, x):
        for i, lin in enumerate(self.layers):
            x = F.gelu(lin(x)) if i % 2 == 0 else torch.tanh(lin(x))
        return x

rows, n = 64, 64
def get_inputs(): return [torch.randn(rows, n)]
def get_init_inputs(): return [n]
"""


def test_twin_kernels_compile_once(tmp_path, monkeypatch):
    """The layers of a repeated block differ only in their names: each distinct kernel is
    compiled once per target (two here: the GELU and the tanh layer), every kernel still
    gets its build row."""
    import kernelcraft.build as build

    seen: list[int] = []
    real = build.compile_pairs

    def counting(module_path, pairs, *args, **kwargs):
        seen.append(len(pairs))
        return real(module_path, pairs, *args, **kwargs)

    monkeypatch.setattr(build, "compile_pairs", counting)
    (tmp_path / "twins.py").write_text(TWINS)
    opts = GenerateOptions(targets="sm_90,gfx942", out_dir=tmp_path / "o", device="cpu",
                           judge=False, tune=None, db_path=tmp_path / "t.db")
    gen = generate(tmp_path / "twins.py", opts)
    assert [g.kind for g in gen.plan.kernels].count("matmul") == 4
    assert seen[0] == 2 * 2  # (the first call: every kernel and target, twins once)
    assert len(gen.builds) == 2 * len(gen.kernels)
    assert len({b["kernel"] for b in gen.builds}) == len(gen.kernels)


def test_canonical_sources_differ_only_by_names():
    from kernelcraft.build import _canonical_source

    a = "def k(x, y):\n    v_add_1 = x + y\n    return tl.exp(v_add_1)\n"
    b = "def k(x, y):\n    v_add_7 = x + y\n    return tl.exp(v_add_7)\n"
    c = "def k(x, y):\n    v_add_7 = x + y\n    return tl.log(v_add_7)\n"
    assert _canonical_source(a) == _canonical_source(b) != _canonical_source(c)
