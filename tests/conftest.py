"""Shared fixtures: small problem files written on the fly, a private cache directory."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("KERNELCRAFT_CACHE", str(tmp_path_factory.getbasetemp() / "kc-cache"))


@pytest.fixture
def write(tmp_path: Path):
    """write("name.py", source) -> path, with the source dedented."""

    def _write(name: str, source: str) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(source))
        return path

    return _write
