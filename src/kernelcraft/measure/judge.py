"""The judge's front door: check inputs here, judge in a worker, return one result.

Problems (the user's own reference) are loaded here to report bad input early; candidates
(possibly written by an LLM) are only parsed here and executed in the worker.
"""

from __future__ import annotations

import ast
import datetime as _dt
import json
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kernelcraft.errors import InputError
from kernelcraft.measure.sandbox import run_in_worker
from kernelcraft.measure.verify import PRECISIONS
from kernelcraft.problem import load_problem


@dataclass
class JudgeOptions:
    device: str | None = None  # "cuda", "cpu" or None (cuda when present)
    precision: str = "fp32"
    n_sets: int = 5
    seed: int = 0
    timeout_s: float = 600.0
    timing: bool = True
    compile_baseline: bool = True
    min_launches: int = 1
    kernel_outputs: bool = True  # outputs must be buffers a Triton kernel was handed
    target: str | None = None  # for the roofline; default: the detected GPU
    gpu: int | None = None  # which GPU the worker may see


@dataclass
class JudgeResult:
    candidate: str
    ref: str
    device: str
    precision: str
    status: str  # ok | rejected | input-error | judge-error
    correct: bool
    reason: str | None
    detail: str
    timing: dict[str, Any] = field(default_factory=dict)
    speedup_eager: float | None = None
    speedup_compile: float | None = None
    roofline: dict[str, Any] = field(default_factory=dict)
    flags: list[str] = field(default_factory=list)
    verdict: dict[str, Any] = field(default_factory=dict)
    compile_error: str | None = None
    env: dict[str, Any] = field(default_factory=dict)
    date: str = ""

    @property
    def mode_note(self) -> str:
        if self.device == "cpu":
            return "CPU: Triton interpreter at reduced sizes, correctness only (no timing)"
        return f"GPU {self.env.get('gpu', '?')}: full sizes, timed"

    def ms(self, which: str) -> float | None:
        t = self.timing.get(which)
        return t["median_ms"] if t else None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def resolve_device(device: str | None) -> str:
    import torch

    if device is None:
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device not in ("cuda", "cpu"):
        raise InputError(f"unknown device {device!r}; choose cuda or cpu")
    if device == "cuda" and not torch.cuda.is_available():
        raise InputError("--device cuda: no CUDA/ROCm GPU is visible to PyTorch; use --device cpu")
    return device


# CPython 3.11's ast.parse keeps its recursion depth in interpreter-wide state: two threads
# parsing at once (`bench` judges pairs on a thread pool) can fail with "AST constructor
# recursion depth mismatch". One parse at a time.
_AST_LOCK = threading.Lock()


def check_candidate_source(path: Path) -> None:
    """Syntax and the presence of ModelNew, without executing anything."""
    if not path.is_file():
        raise InputError(f"candidate file not found: {path}")
    try:
        with _AST_LOCK:
            tree = ast.parse(path.read_text(), filename=str(path))
    except SyntaxError as exc:
        raise InputError(f"{path}:{exc.lineno}: syntax error: {exc.msg}") from exc
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not a text file") from exc
    names = set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    if "ModelNew" not in names:
        raise InputError(f"{path}: no `ModelNew` class defined (a candidate needs ModelNew)")


def judge_files(candidate: str | Path, ref: str | Path, opts: JudgeOptions | None = None,
                ) -> JudgeResult:
    """Judge a candidate file against a problem file. Raises InputError for bad input."""
    opts = opts or JudgeOptions()
    cand_path, ref_path = Path(candidate), Path(ref)
    if opts.precision not in PRECISIONS:
        raise InputError(
            f"unknown precision {opts.precision!r}; choose from {', '.join(PRECISIONS)}"
        )
    if opts.target:
        from kernelcraft.target import resolve

        resolve(opts.target)
    device = resolve_device(opts.device)
    check_candidate_source(cand_path)
    import tempfile

    from kernelcraft.measure.sandbox import scratch_dir
    from kernelcraft.measure.verify import VerifyOptions, plan_trials, reference_runs
    from kernelcraft.measure.worker import spec_json

    problem = load_problem(ref_path)
    vopts = VerifyOptions(
        device=device, precision=opts.precision, n_sets=opts.n_sets, seed=opts.seed,
        reduce=device == "cpu", other_sizes=True, min_launches=opts.min_launches,
        kernel_outputs=opts.kernel_outputs,
    )
    specs, notes = plan_trials(problem, vopts)
    vopts.main_sizes = next(dict(s.sizes) for s in specs if s.main)
    base = {
        "ref": str(ref_path.resolve()),
        "device": device,
        "verify": vopts.__dict__,
        "specs": spec_json(specs),
        "timing": opts.timing,
        "compile": opts.compile_baseline,
        "target": opts.target,
    }
    with tempfile.TemporaryDirectory(prefix="kernelcraft-trials-", dir=scratch_dir()) as tmp:
        base["out_dir"] = tmp
        for _ in range(len(specs)):
            cand = run_in_worker({**base, "role": "candidate",
                                  "candidate": str(cand_path.resolve())}, opts.timeout_s,
                                 gpu=opts.gpu)
            # A worker that died at other sizes where the program itself cannot run (its
            # get_inputs built indices past a table the sizes no longer fit, and a kernel
            # wrote where they point): that trial goes, as one the reference worker skips,
            # and the candidate runs again without it. Anywhere else a death rejects.
            dead = _died_at(cand, specs, Path(tmp))
            if dead is None or reference_runs(problem, vopts, dead):
                break
            specs = [s for s in specs if s is not dead]
            notes.append(f"{dead.name}: the reference does not run at sizes {dead.sizes}; "
                         "trial skipped (the candidate's worker died there)")
            base["specs"] = spec_json(specs)
        if cand.get("status") == "input-error":
            raise InputError(cand["detail"])
        if cand.get("status") == "ran":
            raw = run_in_worker({**base, "role": "reference", "facts": cand["facts"],
                                 "notes": notes, "candidate_timing": cand.get("timing")},
                                max(opts.timeout_s, 600.0), gpu=opts.gpu)
            if raw.get("status") == "input-error":
                raise InputError(raw["detail"])
        else:
            raw = cand  # timeout, crash or a judge error in the candidate's worker
    result = JudgeResult(
        candidate=str(cand_path),
        ref=str(ref_path),
        device=device,
        precision=opts.precision,
        status=raw.get("status", "judge-error"),
        correct=bool(raw.get("correct")),
        reason=raw.get("reason"),
        detail=raw.get("detail", ""),
        timing=raw.get("timing", {}),
        speedup_eager=raw.get("speedup_eager"),
        speedup_compile=raw.get("speedup_compile"),
        roofline=raw.get("roofline", {}),
        flags=raw.get("flags", []),
        verdict=raw.get("verdict", {}),
        compile_error=raw.get("compile_error"),
        env=raw.get("env", {}),
        date=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
    )
    if not result.env:
        from kernelcraft.measure.timing import device_info

        result.env = device_info() if device == "cuda" else _cpu_env()
    if result.status == "judge-error":
        result.detail = "internal judge error: " + result.detail
        result.verdict["traceback"] = raw.get("traceback", "")
    return result


def _died_at(cand: dict[str, Any], specs: list[Any], out_dir: Path) -> Any:
    """The other-size trial a crashed candidate worker was running, else None (its facts
    file holds the trials it finished)."""
    if cand.get("reason") != "crash":
        return None
    try:
        done = len(json.loads((out_dir / "facts.json").read_text()))
    except (OSError, ValueError):
        return None
    if done >= len(specs) or specs[done].kind != "other-size":
        return None
    return specs[done]


def _cpu_env() -> dict[str, Any]:
    import platform

    import torch
    import triton

    return {"gpu": None, "torch": torch.__version__, "triton": triton.__version__,
            "python": platform.python_version(), "machine": platform.machine()}
