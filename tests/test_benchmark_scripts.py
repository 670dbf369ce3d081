"""The GPU benchmark scripts keep working: their plumbing runs through the interpreter
(their times mean nothing there; the GPU runs are in benchmarks/results/)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SOFTMAX = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x * 2.0, dim=-1)


def get_inputs():
    return [torch.randn(16, 40)]


def get_init_inputs():
    return []
"""


def test_ranked_vs_measured_runs(tmp_path: Path) -> None:
    probs = tmp_path / "problems"
    probs.mkdir()
    (probs / "soft.py").write_text(textwrap.dedent(SOFTMAX))
    records = sorted((ROOT / "benchmarks" / "results").glob("tune-*/records.jsonl"))
    assert records
    out = tmp_path / "out"
    env = {**os.environ, "TRITON_INTERPRET": "1",
           "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    run = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "ranked_vs_measured.py"), str(probs),
         "--records", *map(str, records), "--random", "2", "--cpu-smoke", "sm_90",
         "--out", str(out)], env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    table = (out / "ranked.md").read_text()
    assert "| soft | 0 | reduction |" in table, table
    assert "Unmeasured picks: geometric mean" in table, table
