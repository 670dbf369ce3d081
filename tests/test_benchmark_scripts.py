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


AB_SMOKE = """
import sys
from pathlib import Path

import modules_ab_gpu as ab
from kernelcraft.generate import GenerateOptions, generate
from kernelcraft.measure import worker

path, mods = Path(sys.argv[1]), Path(sys.argv[2])
generate(path, GenerateOptions(out_dir=mods, targets="sm_90", device="cpu", build=False,
                               judge=False))
ab.timing_inputs = lambda p, m, s, n: worker.timing_inputs(p, m, s, n, device="cpu")
ab.timed_model = lambda p, m, s, c: worker.timed_model(p, m, s, c, device="cpu")
ab.time_cuda = lambda fn, sets, budget_ms: type("T", (), {"median_ms": 1.0})()
ab.host_ms = lambda fn, sets: 0.5
ab.torch.compile = lambda model: model
rows = []
times = ab.run_problem(path, {"kc": mods}, 10.0, rows.append, sweep="kc")
assert set(times) == {"eager", "compile", "kc"}, times
assert all(r.get("ok") for r in rows), rows
sweep = [r for r in rows if r["impl"] == "kc:sweep"]
assert sweep and all(r["key"] == [16, 40] for r in sweep), sweep
assert {r["config"]["BLOCK_R"] for r in sweep} == {64}, sweep  # R = 40: one chunk
print("ROWS", len(rows))
"""


def test_modules_ab_runs(tmp_path: Path) -> None:
    """modules_ab_gpu.py's plumbing through the interpreter (timers stubbed): every side
    checked against float64, and the sweep reaches the module's reduction through its tuned
    table."""
    path = tmp_path / "soft.py"
    path.write_text(textwrap.dedent(SOFTMAX))
    script = tmp_path / "smoke.py"
    script.write_text(AB_SMOKE)
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": os.pathsep.join(
        [str(ROOT / "src"), str(ROOT / "benchmarks"), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run([sys.executable, str(script), str(path), str(tmp_path / "mods")],
                         env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    assert "ROWS" in run.stdout


def test_suite_shards_retry_a_problem_after_a_gpu_fault() -> None:
    """A problem that failed on a GPU fault (out of memory while shards share the GPU, a
    lost CUDA context) gets a second try in a fresh shard; other failures are final."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "generate_suite", ROOT / "benchmarks" / "generate_suite.py")
    suite = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(suite)
    oom = {"problem": "a", "correct": False, "reason": "generate-error",
           "detail": "OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB"}
    lost = {"problem": "b", "correct": False, "reason": "error",
            "detail": "forward raised AcceleratorError: CUDA error: an illegal memory access"}
    wrong = {"problem": "c", "correct": False, "reason": "wrong", "detail": "rel L2 error"}
    assert suite.gpu_fault(oom) and suite.gpu_fault(lost) and not suite.gpu_fault(wrong)
    rows = [{**r, "gpu_fault": suite.gpu_fault(r)} for r in (oom, lost, wrong)]
    assert suite.finished(rows) == {"c"}
    assert suite.finished(rows + [dict(rows[0])]) == {"a", "c"}  # its last try
    assert suite.finished(rows + [{"problem": "b", "correct": True}]) == {"b", "c"}
