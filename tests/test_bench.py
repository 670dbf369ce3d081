"""``kernelcraft bench``: pairing by relative path, resumable JSON lines, the fast_p table."""

from __future__ import annotations

import json
import shutil

import pytest

from kernelcraft.bench import find_pairs, run_bench
from kernelcraft.errors import InputError
from kernelcraft.measure.judge import JudgeOptions
from kernelcraft.report import bench_markdown, fast_p

from .conftest import EXAMPLES


@pytest.fixture
def tree(tmp_path):
    """level1/softmax (honest), level1/zeros (wrong), level2/gelu (no candidate)."""
    probs, cands = tmp_path / "problems", tmp_path / "candidates"
    for d in (probs / "level1", probs / "level2", cands / "level1"):
        d.mkdir(parents=True)
    shutil.copy(EXAMPLES / "problems/softmax.py", probs / "level1/softmax.py")
    shutil.copy(EXAMPLES / "candidates/softmax.py", cands / "level1/softmax.py")
    shutil.copy(EXAMPLES / "problems/scale_residual.py", probs / "level1/zeros.py")
    (cands / "level1/zeros.py").write_text(
        (EXAMPLES / "candidates/scale_residual.py").read_text().replace(
            "out = _tanh(x * w[None, :] + b[None, :]) + y", "out = x * 0.0"))
    shutil.copy(EXAMPLES / "problems/gelu.py", probs / "level2/gelu.py")
    return tmp_path


def test_find_pairs(tree):
    pairs, missing = find_pairs(tree)
    assert [p.name for p in pairs] == ["level1/softmax", "level1/zeros"]
    assert missing == ["level2/gelu"]
    with pytest.raises(InputError):
        find_pairs(tree / "problems")  # no candidates tree given
    with pytest.raises(InputError):
        find_pairs(tree / "nope")


def test_bench_runs_and_resumes(tree):
    out = tree / "out"
    seen: list[dict] = []
    rows, summary = run_bench(tree, out, JudgeOptions(device="cpu", timeout_s=120),
                              workers=2, on_result=seen.append)
    by_name = {r["name"]: r for r in rows}
    assert by_name["level1/softmax"]["correct"] is True
    assert by_name["level1/zeros"]["correct"] is False
    assert by_name["level1/zeros"]["reason"] == "wrong"
    lines = (out / "results.jsonl").read_text().splitlines()
    assert len(lines) == 2 and all(json.loads(line)["key"] for line in lines)
    text = summary.read_text()
    assert "correct (fast_0) | 0.50" in text and "1 of 2 correct" in text
    # A second run judges nothing again; a changed candidate is judged again.
    again: list[dict] = []
    run_bench(tree, out, JudgeOptions(device="cpu", timeout_s=120), on_result=again.append)
    assert again == []
    cand = tree / "candidates/level1/softmax.py"
    cand.write_text(cand.read_text() + "\n# edited\n")
    run_bench(tree, out, JudgeOptions(device="cpu", timeout_s=120), on_result=again.append)
    assert [r["name"] for r in again] == ["level1/softmax"]


def test_fast_p_definition():
    rows = [
        {"name": "a", "correct": True, "speedup_eager": 2.5, "speedup_compile": 1.2},
        {"name": "b", "correct": True, "speedup_eager": 1.2, "speedup_compile": 0.9},
        {"name": "c", "correct": False, "speedup_eager": 9.0},
        {"name": "d", "correct": True, "speedup_eager": 0.8, "speedup_compile": 0.5},
    ]
    assert fast_p(rows, "speedup_eager", 0) == 0.75
    assert fast_p(rows, "speedup_eager", 1.0) == 0.5  # wrong-but-fast does not count
    assert fast_p(rows, "speedup_eager", 2.0) == 0.25
    assert fast_p(rows, "speedup_compile", 1.0) == 0.25
    for r in rows:
        r["timing"] = {"candidate": {"median_ms": 1.0}}
    md = bench_markdown(rows, {"name": "t"})
    assert "fast_1.5" in md and "geomean" in md


def test_generated_layout_pairs(tmp_path):
    probs, gen = tmp_path / "problems", tmp_path / "out"
    probs.mkdir()
    (gen / "softmax").mkdir(parents=True)
    shutil.copy(EXAMPLES / "problems/softmax.py", probs / "softmax.py")
    (gen / "softmax" / "kernel.py").write_text("class ModelNew: pass\n")
    pairs, missing = find_pairs(probs, gen)
    assert [p.candidate for p in pairs] == [gen / "softmax" / "kernel.py"] and not missing


def test_roofline_of_a_model_expanding_a_parameter():
    """The judge counts FLOPs under no_grad; a view of a parameter made there (latents
    expanded over the batch, passed to a submodule) requires grad without a grad function,
    and the FLOP counter's module tracker failed on it: "Expected gradient function to be
    set" (seen on the GPU only, where the roofline runs)."""
    import torch
    import torch.nn as nn

    from kernelcraft.measure.worker import roofline

    class Latents(nn.Module):
        def __init__(self):
            super().__init__()
            self.latents = nn.Parameter(torch.randn(4, 8))
            self.attn = nn.MultiheadAttention(8, 2, batch_first=True)

        def forward(self, x):
            q = self.latents.unsqueeze(0).expand(x.shape[0], -1, -1)
            return self.attn(q, x, x, need_weights=False)[0]

    model = Latents()
    with torch.no_grad():
        roof = roofline(model, [torch.randn(3, 5, 8)], "fp32", "sm_90")
    assert roof["flops"] > 0 and roof["bytes"] > 0
    assert all(p.requires_grad for p in model.parameters())  # restored


def test_roofline_percent_uses_the_gpu_the_row_was_timed_on():
    """A row timed on an H100 under ``--target sm_90`` carries the H200's 4.25 TB/s floor:
    its memory-bound % is taken again at the H100's bandwidth; rows naming the roofline's
    product, or timed on the product the target means, keep theirs."""
    from kernelcraft.report import roofline_pct
    from kernelcraft.target import resolve

    h100, h200 = resolve("h100"), resolve("sm_90")
    roof = {"bytes": 4.25e9, "flops": 0, "target": "sm_90", "bandwidth": h200.bandwidth(),
            "peak_flops": 5e13, "ms": 1.0, "bound": "memory", "pct": 50.0}
    row = {"roofline": roof, "timing": {"candidate": {"median_ms": 2.0}},
           "env": {"gpu": "NVIDIA H100 80GB HBM3", "sms": 132}}
    assert roofline_pct(row) == pytest.approx(4.25e9 / h100.bandwidth() * 1e3 / 2.0 * 100)
    assert roofline_pct(row) > 60
    assert roofline_pct({**row, "env": {"gpu": "NVIDIA H200", "sms": 132}}) == 50.0
    assert roofline_pct({**row, "roofline": {**roof, "product": h100.product}}) == 50.0
