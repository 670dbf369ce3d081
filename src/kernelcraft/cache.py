"""Where kernelcraft keeps its files (Triton cache, tuning database) unless told otherwise."""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """``$KERNELCRAFT_CACHE``, else ``$XDG_CACHE_HOME/kernelcraft``, else ~/.cache/kernelcraft."""
    root = os.environ.get("KERNELCRAFT_CACHE")
    if root:
        path = Path(root)
    else:
        base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
        path = Path(base) / "kernelcraft"
    path.mkdir(parents=True, exist_ok=True)
    return path
