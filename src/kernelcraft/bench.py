"""``kernelcraft bench``: the judge over every problem/candidate pair of a tree.

Pairs are matched by relative path (``problems/level1/x.py`` with ``candidates/level1/x.py``,
or ``candidates/level1/x/kernel.py`` as ``kernelcraft generate -o`` writes it), so
KernelBench-style ``levelN/`` trees and generated modules work as they are. Results go to
a JSON-lines file, one line per pair as soon as it is judged, which makes a run resumable:
pairs whose problem, candidate and settings are unchanged are not judged again.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import queue
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kernelcraft.errors import InputError
from kernelcraft.measure.judge import JudgeOptions, judge_files, resolve_device
from kernelcraft.report import bench_markdown


@dataclass(frozen=True)
class Pair:
    name: str
    problem: Path
    candidate: Path


def find_pairs(root: Path, candidates: Path | None = None) -> tuple[list[Pair], list[str]]:
    """Pairs under ``root``; also returns the problems that have no candidate."""
    if not root.is_dir():
        raise InputError(f"not a directory: {root}")
    problems_dir = root
    if candidates is None:
        if (root / "problems").is_dir() and (root / "candidates").is_dir():
            problems_dir, candidates = root / "problems", root / "candidates"
        else:
            raise InputError(
                f"{root}: no candidates; pass --candidates DIR or use DIR/problems + "
                "DIR/candidates"
            )
    if not candidates.is_dir():
        raise InputError(f"candidates directory not found: {candidates}")
    pairs, missing = [], []
    for prob in sorted(problems_dir.rglob("*.py")):
        if prob.name.startswith("_") or "__pycache__" in prob.parts:
            continue
        rel = prob.relative_to(problems_dir)
        cand = candidates / rel
        if not cand.is_file():  # the layout `kernelcraft generate -o DIR` writes
            cand = candidates / rel.with_suffix("") / "kernel.py"
        name = str(rel.with_suffix(""))
        if cand.is_file():
            pairs.append(Pair(name, prob, cand))
        else:
            missing.append(name)
    if not pairs:
        raise InputError(
            f"{problems_dir}: no problem file has a matching candidate in {candidates}"
        )
    return pairs, missing


def _digest(path: Path) -> str:
    return hashlib.sha1(path.read_bytes()).hexdigest()[:12]


def pair_key(pair: Pair, device: str, precision: str) -> str:
    return f"{pair.name}|{_digest(pair.problem)}|{_digest(pair.candidate)}|{device}|{precision}"


def load_done(jsonl: Path) -> dict[str, dict[str, Any]]:
    done: dict[str, dict[str, Any]] = {}
    if not jsonl.is_file():
        return done
    for line in jsonl.read_text().splitlines():
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut short by a kill: judged again
        if "key" in row:
            done[row["key"]] = row
    return done


def default_workers(device: str) -> int:
    if device == "cuda":
        import torch

        return max(1, torch.cuda.device_count())
    return max(1, min(4, (os.cpu_count() or 2)))


def run_bench(
    root: Path,
    out_dir: Path,
    opts: JudgeOptions,
    candidates: Path | None = None,
    workers: int | None = None,
    resume: bool = True,
    on_result: Callable[[dict[str, Any]], None] | None = None,
    command: str | None = None,
) -> tuple[list[dict[str, Any]], Path]:
    """Judge every pair; returns the rows (this run's and resumed ones) and the summary."""
    pairs, missing = find_pairs(root, candidates)
    device = resolve_device(opts.device)
    out_dir.mkdir(parents=True, exist_ok=True)
    jsonl = out_dir / "results.jsonl"
    done = load_done(jsonl) if resume else {}
    if not resume and jsonl.exists():
        jsonl.unlink()
    todo = [p for p in pairs if pair_key(p, device, opts.precision) not in done]
    rows: dict[str, dict[str, Any]] = {}
    for p in pairs:
        k = pair_key(p, device, opts.precision)
        if k in done:
            rows[p.name] = done[k]
    n_workers = workers or default_workers(device)
    gpus: queue.Queue[int | None] = queue.Queue()
    for i in range(n_workers):
        gpus.put(i if device == "cuda" else None)
    lock = threading.Lock()

    def judge(pair: Pair) -> dict[str, Any]:
        gpu = gpus.get()
        try:
            return _judge_pair(pair, device, opts, gpu)
        finally:
            gpus.put(gpu)

    with ThreadPoolExecutor(max_workers=n_workers) as pool:
        futures = {pool.submit(judge, p): p for p in todo}
        for fut in as_completed(futures):
            row = fut.result()
            with lock:
                rows[row["name"]] = row
                with open(jsonl, "a") as fh:
                    fh.write(json.dumps(row, default=str) + "\n")
                    fh.flush()
                    os.fsync(fh.fileno())
            if on_result:
                on_result(row)
    ordered = [rows[p.name] for p in pairs if p.name in rows]
    header = run_header(root, device, opts, ordered, command)
    header["missing_candidates"] = missing
    (out_dir / "run.json").write_text(json.dumps(header, indent=2, default=str))
    summary = out_dir / "summary.md"
    summary.write_text(bench_markdown(ordered, header))
    return ordered, summary


def _judge_pair(pair: Pair, device: str, opts: JudgeOptions, gpu: int | None) -> dict[str, Any]:
    key = pair_key(pair, device, opts.precision)
    base = {"name": pair.name, "key": key, "problem": str(pair.problem),
            "candidate": str(pair.candidate)}
    job_opts = JudgeOptions(**{**opts.__dict__, "device": device, "gpu": gpu})
    try:
        res = judge_files(pair.candidate, pair.problem, job_opts)
    except InputError as exc:
        return {**base, "status": "input-error", "correct": False, "reason": "input-error",
                "detail": str(exc)}
    row = res.to_json()
    row.pop("candidate", None)
    row.pop("ref", None)
    return {**base, **row}


def run_header(root: Path, device: str, opts: JudgeOptions, rows: list[dict[str, Any]],
               command: str | None) -> dict[str, Any]:
    import torch
    import triton

    env = next((r.get("env") for r in rows if r.get("env")), {}) or {}
    return {
        "name": str(root),
        "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "device": device,
        "gpu": env.get("gpu"),
        "env": env,
        "precision": opts.precision,
        "torch": torch.__version__,
        "triton": triton.__version__,
        "command": command or " ".join(["kernelcraft", *sys.argv[1:]]),
        "pairs": len(rows),
    }
