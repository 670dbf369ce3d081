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
