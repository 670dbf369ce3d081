"""The benchmark suite end to end on the CPU: problems of benchmarks/problems go through
``generate`` (no cross-compilation, no tuning) and the judge, which runs the generated
module through Triton's interpreter at the problem's reduced sizes, must find it correct.

Each problem takes a judge's two worker processes and a few captures (tens of seconds on
two cores), so ``make test`` takes a stratified quarter: every family (the name's first
word) in name order, every fourth problem from its first. ``make test-all`` (the
environment variable ``KERNELCRAFT_FULL_SUITE=1``) takes them all.
"""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path

import pytest

from kernelcraft.generate import GenerateOptions, generate

PROBLEMS = Path(__file__).resolve().parents[1] / "benchmarks" / "problems"
FILES = sorted(p for p in PROBLEMS.glob("*.py") if not p.name.startswith("_"))
FULL = os.environ.get("KERNELCRAFT_FULL_SUITE", "") not in ("", "0")


def stratified(files: list[Path], every: int = 4) -> list[Path]:
    """Every ``every``-th problem of each family, from the family's first."""
    families: dict[str, list[Path]] = defaultdict(list)
    for p in files:
        families[p.stem.split("_")[0]].append(p)
    return sorted(p for members in families.values() for p in members[::every])


CHOSEN = FILES if FULL else stratified(FILES)


def test_suite_is_not_empty():
    assert len(FILES) >= 80


def test_the_sample_covers_every_family():
    families = {p.stem.split("_")[0] for p in FILES}
    assert {p.stem.split("_")[0] for p in stratified(FILES)} == families
    assert 4 * len(stratified(FILES)) >= len(FILES)


@pytest.mark.parametrize("path", CHOSEN, ids=[p.stem for p in CHOSEN])
def test_problem_generates_correct_module(path: Path, tmp_path: Path):
    gen = generate(path, GenerateOptions(targets="sm_90", out_dir=tmp_path / "out",
                                         device="cpu", build=False, tune=None))
    judge = gen.judge
    assert judge is not None
    assert judge.correct, f"{path.stem}: {judge.reason}: {judge.detail}"
