"""Shared fixtures: small problem files written on the fly, a private cache directory."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

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


def _launch_signature(kernel: Any, args: Any) -> tuple[dict[str, str], dict[str, Any],
                                                       dict[tuple[int, ...], Any]]:
    """(signature, constexprs, attrs) of ``kernel``'s positional ``args``, specialised as
    Triton's launcher does (e.g. an int argument equal to 1 becomes a constexpr)."""
    from triton._C.libtriton import native_specialize_impl
    from triton.backends.compiler import BaseBackend

    sig: dict[str, str] = {}
    consts: dict[str, Any] = {}
    attrs: dict[tuple[int, ...], Any] = {}
    for i, (name, value) in enumerate(zip(kernel.arg_names, args, strict=False)):
        ty, attr = native_specialize_impl(BaseBackend, value, False, True, True)
        sig[name] = ty
        if ty == "constexpr":
            consts[name] = attr
        elif attr:
            attrs[(i,)] = BaseBackend.parse_attr(attr)
    return sig, consts, attrs


@pytest.fixture
def launch_signature():
    """(signature, constexprs, attrs) of a kernel launched with given positional args, as
    Triton's launcher specialises them: tests cross-compile exactly what a wrapper launches."""
    return _launch_signature
