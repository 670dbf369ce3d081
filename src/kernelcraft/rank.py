"""Configs for targets that are not present: build every kernel, never measure.

For each target of ``--target`` the kernel is compiled with the config it would run there
(a tuned one from the GPU or the database, else the template's heuristic for that target's
numbers). A config that fails to compile or spills registers is replaced by the best-ranked
alternative of the space that compiles without spills: candidates are ordered by closeness
to the heuristic's pick (the analytical model's choice, changed as little as the target
requires), and the cost model, where it has learned from measurements, orders the equally
close. Such a choice is
marked "ranked, not measured" in the report and stored in the database as ``ranked``;
measured records replace it once the user tunes on that hardware.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernelcraft.codegen.common import KernelSource
from kernelcraft.export import Variant
from kernelcraft.space import Config, Space
from kernelcraft.spaces import build_spec, space_for, tuned_key
from kernelcraft.target import Target

#: Alternatives compiled per round, and rounds at most, when a config spills.
BATCH = 8
MAX_ROUNDS = 6


@dataclass
class Ranked:
    """A config chosen for a target without running it."""

    kernel: str
    target: str
    config: dict[str, Any]
    replaced: str  # why the heuristic's config was not kept
    tried: int  # alternatives compiled


def build_all(variant: Variant, module_path: Path, targets: list[Target], precision: str,
              db_path: Path | None = None, measured_arch: str | None = None,
              jobs: int | None = None) -> tuple[list[dict[str, Any]], list[Ranked]]:
    """Cross-compile every kernel for every target with the config it would use there;
    replace configs that fail or spill by ranked alternatives. Returns the build rows (one
    per kernel and target, for the chosen config) and the ranked choices.

    Twins (kernels whose source differs only in their names, built with the same spec:
    the layers of a repeated block) are compiled, and searched for a replacement, once."""
    from kernelcraft.build import compile_pairs, twin_key

    jobs = jobs or min(8, os.cpu_count() or 1)
    ranked: list[Ranked] = []
    groups = {g.id: g for g in variant.plan.groups}
    items = []
    for t in targets:
        for gid, k in variant.kernels.items():
            if not k.signature:
                continue
            fam = groups[gid].kind
            space = space_for(k, fam, t)
            cfg = _current(variant, k, fam, t, space)
            spec = build_spec(k, fam, cfg, t)
            items.append((t, gid, k, fam, space, cfg, spec,
                          twin_key(k.source, k.kernel_name, spec, t.key)))
    first: dict[str, int] = {}
    for i, it in enumerate(items):
        first.setdefault(it[7], i)
    unique = sorted(set(first.values()))
    compiled = dict(zip(unique, compile_pairs(
        module_path, [(items[i][6], items[i][0].key) for i in unique], jobs=jobs),
        strict=True))
    alternatives: dict[tuple[str, str], Any] = {}
    rows: list[dict[str, Any]] = []
    for t, gid, k, fam, space, cfg, spec, key in items:
        row = _as_twin(compiled[first[key]], spec["name"])
        bad = _problem(row)
        measured = (space is not None and t.arch == measured_arch
                    and _tuned(variant, k, fam, t) is not None)
        if bad and space is not None and not measured:
            akey = (key, repr(k.config.get("at")))
            if akey not in alternatives:
                alternatives[akey] = _alternative(module_path, k, fam, space, cfg, t, jobs,
                                                  db_path, precision, groups[gid])
            alt = alternatives[akey]
            if alt is not None:
                choice, alt_row, tried = alt
                variant.tuned[(k.wrapper_name, t.arch, tuned_key(k, fam))] = dict(choice)
                ranked.append(Ranked(row["kernel"], t.arch, dict(choice), bad, tried))
                row = _as_twin(alt_row, spec["name"])
                row["note"] = (f"ranked, not measured ({bad} with the heuristic's "
                               f"config) {row.get('note', '')}").strip()
        rows.append(row)
    return rows, ranked


def _as_twin(row: dict[str, Any], name: str) -> dict[str, Any]:
    """A twin's build row under this kernel's name."""
    return {**row, "kernel": name}


def _problem(row: dict[str, Any]) -> str:
    if not row.get("ok"):
        return "compile error"
    if row.get("spills"):
        return f"{row['spills']} bytes of spills"
    return ""


def _tuned(variant: Variant, k: KernelSource, fam: str, t: Target) -> dict[str, Any] | None:
    return variant.tuned.get((k.wrapper_name, t.arch, tuned_key(k, fam)))


def _current(variant: Variant, k: KernelSource, fam: str, t: Target,
             space: Space | None) -> Config | None:
    if space is None:  # a template without tunable knobs: its own build spec
        return None
    cfg = _tuned(variant, k, fam, t)
    if cfg is not None:
        return Config(cfg)
    return space.default if space is not None else None


def _alternative(module_path: Path, k: KernelSource, fam: str, space: Space,
                 start: Config | None, t: Target, jobs: int, db_path: Path | None,
                 precision: str, g: Any) -> tuple[Config, dict[str, Any], int] | None:
    from kernelcraft.build import cross_compile

    order = _from_database(db_path, g, k, fam, t, precision) + candidates(space, start)
    tried = 0
    for r in range(MAX_ROUNDS):
        batch = order[r * BATCH:(r + 1) * BATCH]
        if not batch:
            break
        specs = [build_spec(k, fam, c, t) for c in batch]
        rows = cross_compile(module_path, specs, [t.key], jobs=jobs)
        tried += len(batch)
        for c, row in zip(batch, rows, strict=True):  # best-ranked first
            if not _problem(row):
                _record(db_path, g, k, fam, t, precision, c, row)
                return c, row, tried
    return None


def candidates(space: Space, start: Config | None, limit: int = 20000) -> list[Config]:
    """Valid configs, best first: by closeness to ``start`` (the heuristic's pick, changed as
    little as the target requires), configs with less work per thread first; the trained
    cost model, where there is one, orders configs equally close (ties broken by larger
    tiles without it). The model alone picked configs far from the heuristic's that its
    own validation measured slow (an 8192x4096x4096 matmul whose 128x128 tiles spilled in
    the epilogue went to 16x256 tiles: a sixteenth of the A-tile reuse)."""
    pool = [c for c in space.enumerate(limit=limit) if c != start]
    model = _model()
    if start is None:
        if model is None:
            return pool
        scores = model(space, pool)
        return [c for _, c in sorted(zip(scores, pool, strict=True), key=lambda x: -x[0])]
    base = _pressure(start)

    def distance(c: Config) -> tuple[bool, float]:
        d = 0.0
        for kn in space.knobs:
            a, b = c[kn.name], start[kn.name]
            if isinstance(a, bool) or not isinstance(a, int | float):
                d += float(a != b)
            else:
                d += abs(math.log2(max(a, 1)) - math.log2(max(b, 1)))
        # the start failed or spilled: configs with less work per thread come first
        return (_pressure(c) >= base, d)

    def size(c: Config) -> float:
        return sum(math.log2(c[n]) for n in c if isinstance(c[n], int) and c[n] > 0)

    score = dict(zip(map(id, pool), model(space, pool), strict=True)) if model else {}
    return sorted(pool, key=lambda c: (*distance(c), -score.get(id(c), size(c))))


def _pressure(c: Config) -> float:
    """Tile elements per warp: a register-pressure proxy over the BLOCK*/B* knobs."""
    tiles = [float(v) for k, v in c.items() if k.startswith(("BLOCK", "BM", "BN", "BK"))]
    if not tiles:
        return 0.0
    pairs = sum(a * b for i, a in enumerate(tiles) for b in tiles[i + 1:]) or tiles[0]
    return pairs / float(c.get("num_warps", 4))


def _model() -> Any:
    """The shipped cost model, if one was trained on measurements (else None)."""
    try:
        from kernelcraft.search.cost_model import CostModel

        model = CostModel.pretrained()
    except Exception:  # an unreadable model file must not stop a build
        return None
    return model if model.trained else None


def _from_database(db_path: Path | None, g: Any, k: KernelSource, fam: str, t: Target,
                   precision: str) -> list[Config]:
    """A config ranked for this workload before (tried first: usually no search at all)."""
    from kernelcraft.db import Database, default_path, workload_key
    from kernelcraft.tune import signature

    path = Path(db_path) if db_path else default_path()
    if not path.exists():
        return []
    try:
        with Database(path) as db:
            wl = workload_key(signature(g, k, fam), t.arch, precision)
            return [Config(r.config_dict) for r in db.records(wl, status="ok", source="ranked")]
    except Exception:
        return []


def _record(db_path: Path | None, g: Any, k: KernelSource, fam: str, t: Target,
            precision: str, c: Config, row: dict[str, Any]) -> None:
    """Keep the ranked choice in the database (measured records win over it later)."""
    from kernelcraft.db import Database, toolchain_versions
    from kernelcraft.tune import signature

    try:
        with Database(db_path) as db:
            wl = db.add_workload(signature(g, k, fam), t.arch, precision, family=fam)
            feats = {"static.registers": row.get("registers"), "static.spills": row.get("spills"),
                     "static.shared": row.get("shared")}
            db.add_record(wl, c, "ok", None, "ranked, not measured",
                          {k2: float(v) for k2, v in feats.items() if v is not None},
                          toolchain_versions(), source="ranked")
    except Exception:  # the database is a record, not a requirement of the build
        pass
