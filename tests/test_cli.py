"""The command line: exit codes, one-line errors for bad input, the eval table."""

from __future__ import annotations

import json

import pytest

from kernelcraft.cli import main

PROBLEM = """
import torch, torch.nn as nn

class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(hidden))
    def forward(self, x):
        return x * self.scale + 1.0

batch, hidden = 64, 48
def get_inputs(): return [torch.randn(batch, hidden)]
def get_init_inputs(): return [hidden]
"""

CANDIDATE = """
import torch, torch.nn as nn
import triton
import triton.language as tl

@triton.jit
def _affine(x_ptr, s_ptr, o_ptr, n, h, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    s = tl.load(s_ptr + offs % h, mask=m)
    tl.store(o_ptr + offs, x * s + 1.0, mask=m)

class ModelNew(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(hidden))
    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        n = x.numel()
        _affine[(triton.cdiv(n, 256),)](x, self.scale, out, n, x.shape[-1], BLOCK=256)
        return out
"""


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def files(write):
    return write("problem.py", PROBLEM), write("cand.py", CANDIDATE)


def test_eval_correct_and_json(capsys, files, tmp_path):
    problem, cand = files
    code, out, _ = run(capsys, "eval", str(cand), "--ref", str(problem), "--json",
                       str(tmp_path / "r.json"))
    assert code == 0, out
    assert "correct" in out and "yes" in out and "interpreter" in out
    data = json.loads((tmp_path / "r.json").read_text())
    assert data["correct"] is True and data["device"] == "cpu"
    assert len(data["verdict"]["trials"]) >= 5


def test_eval_rejected_exit_1(capsys, files, write):
    problem, _ = files
    wrong = write("wrong.py", CANDIDATE.replace("x * s + 1.0", "x * s + 1.001"))
    code, out, _ = run(capsys, "eval", str(wrong), "--ref", str(problem))
    assert code == 1
    assert "REJECTED (wrong)" in out


@pytest.mark.parametrize(
    "case, message",
    [
        ("missing-candidate", "candidate file not found"),
        ("missing-ref", "problem file not found"),
        ("syntax", "syntax error"),
        ("no-modelnew", "no `ModelNew`"),
        ("no-get-inputs", "no `get_inputs`"),
        ("get-inputs-raises", "get_inputs() raised"),
        ("ctor-mismatch", "constructor arguments"),
        ("param-names", "parameters and buffers differ"),
        ("unknown-target", "unknown target"),
        ("cuda-absent", "no CUDA"),
        ("precision", "invalid choice"),
    ],
)
def test_bad_input_exit_2(capsys, files, write, tmp_path, case, message):
    problem, cand = files
    args = ["eval", str(cand), "--ref", str(problem)]
    if case == "missing-candidate":
        args[1] = str(tmp_path / "nope.py")
    elif case == "missing-ref":
        args[3] = str(tmp_path / "nope.py")
    elif case == "syntax":
        args[1] = str(write("s.py", "class ModelNew(:\n"))
    elif case == "no-modelnew":
        args[1] = str(write("n.py", "class Model: pass\n"))
    elif case == "no-get-inputs":
        args[3] = str(write("p.py", PROBLEM.replace("def get_inputs", "def other_inputs")))
    elif case == "get-inputs-raises":
        args[3] = str(write("p.py", PROBLEM.replace(
            "def get_inputs(): return", "def get_inputs(): raise KeyError('x'); return")))
    elif case == "ctor-mismatch":
        args[1] = str(write("c.py", CANDIDATE.replace("def __init__(self, hidden)",
                                                      "def __init__(self)").replace(
            "torch.ones(hidden)", "torch.ones(4)")))
    elif case == "param-names":
        args[1] = str(write("c.py", CANDIDATE.replace("self.scale", "self.gain")))
    elif case == "unknown-target":
        args += ["--target", "rtx9999"]
    elif case == "cuda-absent":
        import torch

        if torch.cuda.is_available():
            pytest.skip("a GPU is present")
        args += ["--device", "cuda"]
    elif case == "precision":
        args += ["--precision", "fp8"]
    if case == "precision":
        with pytest.raises(SystemExit) as info:
            main(args)
        assert info.value.code == 2
        assert message in capsys.readouterr().err
        return
    code, out, err = run(capsys, *args)
    assert code == 2, (out, err)
    assert message in err
    assert "Traceback" not in err + out
    assert len(err.strip().splitlines()) == 1, err


def test_targets(capsys):
    code, out, _ = run(capsys, "targets")
    assert code == 0
    for arch in ("sm_80", "sm_89", "sm_90", "sm_100", "gfx90a", "gfx942", "gfx950"):
        assert arch in out
    code, out, _ = run(capsys, "targets", "--json", "mi300x")
    assert code == 0 and json.loads(out)[0]["arch"] == "gfx942"


def test_generate_bad_budget_exit_2(capsys, files):
    problem, _ = files
    code, out, err = run(capsys, "generate", str(problem), "--budget", "soon", "--no-judge")
    assert code == 2 and "--budget" in err and "Traceback" not in err + out


def test_generate_missing_problem_exit_2_and_debug_after_the_command(capsys, tmp_path):
    """A missing problem file is bad input (exit 2, one line), not an internal error; and
    ``--debug`` is accepted after the command too, as the error hint puts it."""
    missing = str(tmp_path / "nope.py")
    code, out, err = run(capsys, "generate", missing, "--no-judge")
    assert code == 2 and "problem file not found" in err and "Traceback" not in err + out
    code, out, err = run(capsys, "generate", missing, "--no-judge", "--debug")
    assert code == 2 and "problem file not found" in err
