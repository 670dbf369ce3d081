"""Adversarial tests of the judge: cheating candidates must be rejected for the right
reason, honest ones accepted.

Every case is a file under tests/cases/: problems/ (KernelBench format), cheats/ (one
trick each, described in its docstring) and honest/ (correct, shape-generic kernels).
Each judge call spawns a worker subprocess that runs the candidate under Triton's
interpreter on CPU tensors at reduced sizes, so the problems are small.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import torch

judge = pytest.importorskip(
    "kernelcraft.measure.judge", reason="kernelcraft.measure.judge is not available yet"
)
JudgeOptions = judge.JudgeOptions
judge_files = judge.judge_files

CASES = Path(__file__).parent / "cases"
PROBLEMS = CASES / "problems"
CHEATS = CASES / "cheats"
HONEST = CASES / "honest"

TIMEOUT_S = 60.0
HANG_TIMEOUT_S = 20.0

HAS_CUDA = torch.cuda.is_available()
needs_cuda = pytest.mark.skipif(not HAS_CUDA, reason="needs a CUDA GPU")

# Every reason code the judge may give; used where any rejection is acceptable.
ANY_REASON = frozenset(
    {
        "wrong",
        "nonfinite",
        "shape",
        "other-size",
        "repeat",
        "reused-output",
        "alias",
        "input-modified",
        "no-kernel",
        "stream",
        "error",
        "timeout",
        "crash",
    }
)

# Cheats also judged on CUDA when a GPU is present (where the caching allocator, streams and
# compiled kernels differ from the CPU interpreter); the rest run on CPU only, to keep a GPU
# run short (each CUDA judge call takes ~10 s).
ALSO_ON_CUDA = frozenset(
    {"memo_output", "alias_input", "inplace_input", "stale_empty", "partial_write", "hang"}
)

# (cheat file stem, problem file stem, accepted reasons, GPU only)
CHEAT_TABLE: list[tuple[str, str, frozenset[str], bool]] = [
    ("memo_output", "softmax", frozenset({"repeat"}), False),
    ("memo_global", "softmax", frozenset({"repeat", "wrong"}), False),
    ("zeros", "softmax", frozenset({"wrong"}), False),
    ("alias_input", "relu_pos", frozenset({"alias"}), False),
    ("inplace_input", "softmax", frozenset({"input-modified"}), False),
    ("fp16_math", "tanh_gelu", frozenset({"wrong"}), False),
    ("shape_specialised", "softmax", frozenset({"other-size"}), False),
    ("fallback_reference", "softmax", frozenset({"no-kernel"}), False),
    ("kernel_once", "softmax", frozenset({"no-kernel"}), False),
    ("empty_grid", "softmax", frozenset({"no-kernel"}), False),
    ("decoy_kernel", "softmax", frozenset({"no-kernel"}), False),
    ("side_stream", "tanh_gelu", frozenset({"stream"}), True),
    ("stale_empty", "softmax", frozenset({"nonfinite", "wrong"}), False),
    ("partial_write", "tanh_gelu", frozenset({"nonfinite"}), False),
    ("reused_buffer", "linear_relu", frozenset({"reused-output"}), False),
    ("wrong_dtype", "tanh_gelu", frozenset({"shape"}), False),
    ("gc_scavenge", "softmax", ANY_REASON, False),
    ("raises", "softmax", frozenset({"error"}), False),
    ("truncate_rounding", "round_rows", frozenset({"wrong"}), False),
    ("hang", "relu_pos", frozenset({"timeout"}), False),
    ("crash", "relu_pos", frozenset({"crash"}), False),
    ("crash_other_sizes", "relu_pos", frozenset({"crash"}), False),
    ("exit_clean", "relu_pos", frozenset({"crash"}), False),
    ("pickle_payload", "softmax", ANY_REASON, False),
    ("topk_wrong_index", "topk_ties", frozenset({"wrong"}), False),
    # last: it rewires torch inside the process that runs it
    ("monkeypatch_torch", "softmax", ANY_REASON, False),
]

# Cheats that no check of the judge targets yet: expected failures, kept to show the gap.
KNOWN_GAPS: dict[str, tuple[str, str]] = {}

HONEST_TABLE: list[tuple[str, str]] = [
    ("softmax_ok", "softmax"),
    ("tanh_gelu_ok", "tanh_gelu"),
    ("relu_ok", "relu_pos"),
    ("linear_relu_ok", "linear_relu"),
    ("block_sum_pos_ok", "block_sum_pos"),
    ("state_attribute_ok", "state_attribute"),
    ("topk_ties_ok", "topk_ties"),
    ("relu_ok", "relu_grouped_rows"),
    ("group_sum_rows_ok", "group_sum_rows"),
    ("round_rows_ok", "round_rows"),
]


def _cheat_params() -> list:
    params = []
    for cheat, problem, reasons, gpu_only in CHEAT_TABLE:
        if gpu_only:
            devices = ["cuda"]
        elif cheat in ALSO_ON_CUDA:
            devices = ["cpu", "cuda"]
        else:
            devices = ["cpu"]
        for device in devices:
            marks = [needs_cuda] if device == "cuda" else []
            params.append(
                pytest.param(cheat, problem, reasons, device, id=f"{cheat}-{device}", marks=marks)
            )
    for cheat, (problem, why) in KNOWN_GAPS.items():
        marks = [pytest.mark.xfail(reason=why, strict=False)]
        params.append(
            pytest.param(cheat, problem, ANY_REASON, "cpu", id=f"{cheat}-cpu", marks=marks)
        )
    return params


def _honest_params() -> list:
    params = []
    for cand, problem in HONEST_TABLE:
        params.append(pytest.param(cand, problem, "cpu", id=f"{cand}-{problem}-cpu"))
        params.append(pytest.param(cand, problem, "cuda", id=f"{cand}-{problem}-cuda",
                                   marks=[needs_cuda]))
    return params


def _describe(res) -> str:
    return f"correct={res.correct} reason={res.reason!r} detail={res.detail!r}"


def test_case_files_exist() -> None:
    stems = [(CHEATS, c, p) for c, p, _, _ in CHEAT_TABLE]
    stems += [(CHEATS, c, p) for c, (p, _) in KNOWN_GAPS.items()]
    stems += [(HONEST, c, p) for c, p in HONEST_TABLE]
    for folder, cand, problem in stems:
        assert (folder / f"{cand}.py").is_file(), cand
        assert (PROBLEMS / f"{problem}.py").is_file(), problem


@pytest.mark.parametrize(("cheat", "problem", "expected", "device"), _cheat_params())
def test_cheat_rejected(cheat: str, problem: str, expected: frozenset[str], device: str) -> None:
    timeout = HANG_TIMEOUT_S if cheat == "hang" else TIMEOUT_S
    start = time.monotonic()
    res = judge_files(
        CHEATS / f"{cheat}.py",
        PROBLEMS / f"{problem}.py",
        JudgeOptions(device=device, timeout_s=timeout),
    )
    elapsed = time.monotonic() - start
    assert not res.correct, f"{cheat} was accepted: {_describe(res)}"
    assert res.reason in expected, (
        f"{cheat} rejected for {res.reason!r}, expected one of {sorted(expected)}: {_describe(res)}"
    )
    assert res.detail, f"{cheat}: rejection without a detail message"
    if cheat == "hang":
        # the timeout must bound the wall time (slack for worker start-up and clean-up)
        assert elapsed < timeout + 60.0, f"hang took {elapsed:.0f}s with timeout_s={timeout}"


@pytest.mark.parametrize(("cand", "problem", "device"), _honest_params())
def test_honest_accepted(cand: str, problem: str, device: str) -> None:
    res = judge_files(
        HONEST / f"{cand}.py",
        PROBLEMS / f"{problem}.py",
        JudgeOptions(device=device, timeout_s=TIMEOUT_S),
    )
    assert res.correct, f"honest {cand} rejected: {_describe(res)}"
    assert res.reason is None, _describe(res)


def test_rounding_step_elements_are_named_in_the_verdict() -> None:
    """round_rows_ok sums rows in another order than PyTorch: a few rows round the other way
    at a half-integer (the plain rule rejected it). It passes, and the verdict says which
    trial needed the nearby values and for how many elements."""
    res = judge_files(HONEST / "round_rows_ok.py", PROBLEMS / "round_rows.py",
                      JudgeOptions(device="cpu", timeout_s=TIMEOUT_S))
    assert res.correct, _describe(res)
    notes = [n for n in res.verdict.get("notes", []) if "rounding step" in n]
    assert notes, res.verdict.get("notes")
    assert "elements match the reference only" in notes[0]
