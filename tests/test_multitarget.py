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
