"""``kernelcraft generate``: problem file -> kernel.py + report, checked by the judge.

capture (full sizes, on the meta device: no memory) -> plan -> codegen per group (a group
a template cannot take becomes extern, with the reason) -> export -> judge.
"""

from __future__ import annotations

import base64
import contextlib
import datetime as _dt
import hashlib
import json
import os
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import torch

from kernelcraft.codegen.common import KernelSource
from kernelcraft.errors import InputError
from kernelcraft.export import Variant, emit_module, init_key, write_new
from kernelcraft.measure import gpulock
from kernelcraft.measure.verify import PRECISIONS
from kernelcraft.plan import FusionOptions, Group, Plan, build_plan
from kernelcraft.problem import Problem, load_problem, reduced
from kernelcraft.specialize import baked_dims, capture_at, holds
from kernelcraft.target import Target, resolve_many
from kernelcraft.tune import GroupTuning, TuneOptions


@dataclass
class GenerateOptions:
    targets: str = "sm_90"
    precision: str = "fp32"
    out_dir: Path = Path("out")
    device: str | None = None  # where the judge runs (default: cuda if present)
    judge: bool = True
    build: bool = True  # cross-compile every kernel for every target
    choose: bool = True  # on a GPU: keep the eager path for groups whose kernel loses
    timer: Any = None  # (fn, input_sets) -> ms; default CUDA events on the GPU
    #: reuse the kernel-or-eager choices the database holds for this exact module and GPU
    #: (None: when measuring on a GPU, not with a test timer; never with ``tune.retune``)
    reuse_choices: bool | None = None
    timeout_s: float = 900.0
    fusion: FusionOptions = field(default_factory=FusionOptions)
    #: tuning (on a GPU, or with ``tune.timer``); None: heuristics, plus database hits
    tune: TuneOptions | None = field(default_factory=TuneOptions)
    db_path: Path | None = None  # tuning database (default: KERNELCRAFT_DB or the cache)
    #: keep the module in the database and serve the same problem, options, GPU, toolchain
    #: and database state from it (capture, codegen, tuning and builds skipped; the judge
    #: still runs when asked); never with ``tune.retune``
    cache: bool = False

    @property
    def database(self) -> Path | None:
        """The tuning database every step uses: ``db_path``, else the tuner's own."""
        return self.db_path or (self.tune.db_path if self.tune else None)


@dataclass
class Generated:
    problem: Problem
    plan: Plan
    kernels: dict[int, KernelSource]
    module_path: Path
    report_path: Path | None = None
    judge: Any = None
    targets: list[Target] = field(default_factory=list)
    builds: list[dict[str, Any]] = field(default_factory=list)
    #: each distinct launch of the full-size forward, compiled as specialised (``launches``)
    launches: list[dict[str, Any]] = field(default_factory=list)
    variants: list[Variant] = field(default_factory=list)
    choices: list[Any] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)  # wall time per phase
    tunings: list[GroupTuning] = field(default_factory=list)
    tuned_from_db: dict[str, int] = field(default_factory=dict)  # arch -> groups
    ranked: list[Any] = field(default_factory=list)  # configs chosen without hardware
    choices_from_db: bool = False  # the choices were measured by an earlier run
    cached: str = ""  # served from the database: when the module was made

    @property
    def extern_reasons(self) -> dict[int, str]:
        """Groups running through PyTorch, with why (derived from the plan)."""
        if self.plan is None:  # served from the database: no plan in this process
            return {}
        return {g.id: g.reason for g in self.plan.groups if g.kind == "extern"}


def dot_precisions(targets: list[Target], precision: str) -> dict[str, str]:
    """input_precision of fp32 dots per backend: strict mode emulates fp32 on tensor cores."""
    table: dict[str, str] = {}
    for t in targets:
        if precision == "tf32" and "tf32" in t.dot_precisions:
            choice = "tf32"
        else:
            prefs = ("bf16x3", "tf32x3", "bf16x6", "ieee")
            choice = next(p for p in prefs if p in t.dot_precisions)
        table.setdefault(t.backend, choice)
    table.setdefault("cuda", "bf16x3")
    table.setdefault("hip", "bf16x3")
    return table


def emit_group(g: Group, target: Target) -> KernelSource:
    from kernelcraft.codegen.matmul import emit_matmul
    from kernelcraft.codegen.pointwise import emit_pointwise
    from kernelcraft.codegen.reduction import emit_reduction

    if g.kind in ("pointwise", "scatter"):
        return emit_pointwise(g)
    if g.kind == "reduction":
        return emit_reduction(g, target)
    if g.kind == "matmul":
        return emit_matmul(g, target)
    if g.kind == "attention":
        from kernelcraft.codegen.attention_group import emit_attention

        return emit_attention(g, target)
    if g.kind == "conv":
        from kernelcraft.codegen.conv_group import emit_conv

        return emit_conv(g, target)
    if g.kind == "pool":
        from kernelcraft.codegen.pool import emit_pool

        return emit_pool(g, target)
    if g.kind == "scan":
        from kernelcraft.codegen.scan import emit_scan

        return emit_scan(g, target)
    if g.kind == "topk":
        from kernelcraft.codegen.topk import emit_topk

        return emit_topk(g, target)
    raise NotImplementedError(g.kind)


def build(problem: Problem, opts: GenerateOptions, label: str = "") -> Variant:
    """Capture at the problem's sizes (meta device), plan and emit every group."""
    targets = resolve_many(opts.targets)
    cap = capture_at(problem)
    # before the planner's rewrites change the graph: baked_dims compares it with a fresh
    # capture at other sizes (a rewritten graph never matches, so every moved dim would
    # look baked and the module would run the problem's forward there)
    guard = baked_dims(problem, cap)
    from kernelcraft.codegen.conv_group import conv_mode

    fusion = opts.fusion
    if conv_mode(fusion.conv_template) == "auto" and opts.choose and _gpu_present(opts):
        # every layer through the template: the kernel-or-library choice measures each
        fusion = replace(fusion, conv_template="always")
    plan = build_plan(cap.gm, fusion)
    kernels: dict[int, KernelSource] = {}
    for g in plan.groups:
        if not g.is_kernel:
            continue
        try:
            kernels[g.id] = emit_group(g, targets[0])
        except NotImplementedError as exc:
            g.reason = f"{g.kind} template cannot take it: {exc}"
            g.kind = "extern"
    return Variant(init_key(problem.init_inputs(0)), cap, plan, kernels, label,
                   guard=guard)


def variants_for(problem: Problem, opts: GenerateOptions) -> list[Variant]:
    """The problem's own sizes, plus the reduced sizes the interpreter checks on a CPU
    (when they take other constructor arguments, or sizes the first capture baked in)."""
    out = [build(problem, opts, f"constructor arguments {problem.init_inputs(0)}")]
    small = reduced(problem)
    if small is not problem and (init_key(small.init_inputs(0)) != out[0].key or not holds(
            out[0].guard, small.template_inputs(0))):
        out.append(build(small, opts, f"reduced sizes {small.init_inputs(0)} "
                                      "(checked through the interpreter)"))
    return out


def generate(problem_path: str | Path, opts: GenerateOptions) -> Generated:
    targets = resolve_many(opts.targets)
    if opts.precision not in PRECISIONS:
        raise InputError(
            f"unknown precision {opts.precision!r}; choose from {', '.join(PRECISIONS)}"
        )
    if not Path(problem_path).is_file():
        raise InputError(f"problem file not found: {problem_path}")
    clock = _Clock()
    key = module_key(problem_path, opts, targets) if opts.cache and not (
        opts.tune is not None and opts.tune.retune) else None
    if key is not None:  # the same text loaded and passed the problem checks before
        hit = _from_database(Path(problem_path), key, opts, targets, clock)
        if hit is not None:
            return hit
    problem = load_problem(problem_path)
    variants = variants_for(problem, opts)
    clock.lap("capture+codegen")
    main = variants[0]
    plan, kernels = main.plan, main.kernels
    out = Path(opts.out_dir) / problem.name
    out.mkdir(parents=True, exist_ok=True)
    source = Path(problem_path).read_text()
    header = f"Targets: {', '.join(t.arch for t in targets)}; precision {opts.precision}."
    dots = dot_precisions(targets, opts.precision)
    module_path = out / "kernel.py"

    def emit() -> None:  # (again) after a step changed the variants
        write_new(module_path, emit_module(source, problem.name, variants, dots, header))

    emit()
    tunings, from_db = tune_paths(problem, variants, module_path, targets, opts)
    if any(v.tuned for v in variants):
        emit()
    clock.lap("tune")
    choices, choices_from_db = [], False
    if opts.choose and (opts.timer is not None or _gpu_present(opts)):
        choices, choices_from_db = choose_all(problem, main, module_path, opts, emit)
        clock.lap("choose")
    gen = Generated(problem, plan, kernels, module_path, targets=targets,
                    variants=variants, choices=choices, seconds=clock.laps, tunings=tunings,
                    tuned_from_db=from_db, choices_from_db=choices_from_db)
    if opts.build:
        from kernelcraft.rank import build_all

        measured = tunings[0].target if tunings else None
        gen.builds, gen.ranked = build_all(main, module_path, targets, opts.precision,
                                           db_path=opts.database, measured_arch=measured)
        if gen.ranked:  # spill-free alternatives join the dispatch table
            emit()
        from kernelcraft.build import compile_launches

        gen.launches = compile_launches(module_path, Path(problem_path), [t.key for t in targets])
        clock.lap("build")
    if opts.judge:
        gen.judge = judge_generated(gen, opts)
        clock.lap("judge")
    from kernelcraft.report import convergence_plot, generate_report

    convergence_plot(gen, out / "tuning.png")
    report = generate_report(gen, opts)
    gen.report_path = out / "report.md"
    write_new(gen.report_path, report)
    write_new(out / "report.json", json.dumps(_report_json(gen, opts), indent=2, default=str))
    if key is not None:  # keyed by the database as this run leaves it (records, choices)
        _to_database(gen, module_key(problem_path, opts, targets), opts, out)
    return gen


_CACHED_FILES = ("kernel.py", "report.md", "report.json")


def _code_hash() -> str:
    """kernelcraft's own source: a stored module is only as good as the code that made it."""
    root = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for f in sorted(root.rglob("*.py")):
        h.update(f.relative_to(root).as_posix().encode())
        h.update(f.read_bytes())
    return h.hexdigest()[:16]


def module_key(problem_path: str | Path, opts: GenerateOptions, targets: list[Target]) -> str:
    """What a generated module depends on: the problem's text, the options that shape the
    module, the GPU it was measured on, the toolchain, kernelcraft's code and the state of
    the database (a new measurement may change a config or a choice)."""
    from kernelcraft.db import Database, _canonical, default_path, toolchain_versions

    path = Path(opts.database) if opts.database else default_path()
    state = [None, 0, None]  # an empty database's
    if path.exists():
        with Database(path) as db:
            state = db.state()
    gpu = torch.cuda.get_device_name() if _gpu_present(opts) else "cpu"
    t = opts.tune
    fusion = asdict(opts.fusion)
    fusion["extern_ops"] = sorted(fusion["extern_ops"])
    text = _canonical({
        "problem": Path(problem_path).read_text(), "targets": [x.key for x in targets],
        "precision": opts.precision, "fusion": fusion, "build": opts.build,
        "choose": opts.choose, "tune": None if t is None else [str(t.effort), t.budget,
                                                               t.strategy],
        "gpu": gpu, "versions": toolchain_versions(), "code": _code_hash(), "db": state})
    return hashlib.sha256(text.encode()).hexdigest()[:24]


def _from_database(problem_path: Path, key: str, opts: GenerateOptions,
                   targets: list[Target], clock: _Clock) -> Generated | None:
    """The stored module for ``key``, written to the output directory and judged again if
    asked; None when there is none. ``problem`` stays None: nothing is built from it."""
    from kernelcraft.db import Database, default_path

    path = Path(opts.database) if opts.database else default_path()
    if not path.exists():
        return None
    with Database(path) as db:
        entry = db.module(key)
    if entry is None:
        return None
    out = Path(opts.out_dir) / problem_path.stem
    out.mkdir(parents=True, exist_ok=True)
    for name, text in entry["files"].items():
        if name.endswith(".b64"):  # the convergence plot
            (out / name[:-4]).write_bytes(base64.b64decode(text))
        else:
            write_new(out / name, text)
    made = _dt.datetime.fromtimestamp(entry["created"], _dt.UTC).isoformat(timespec="seconds")
    gen = Generated(None, None, {}, out / "kernel.py", targets=targets,  # type: ignore[arg-type]
                    cached=made)
    clock.lap("database")
    note = ["", "## Served from the database", "",
            f"Same problem, options, GPU, toolchain, kernelcraft and database as the run of "
            f"{made}: its module and report above, nothing captured, tuned or built again."]
    if opts.judge:
        from kernelcraft.measure.judge import JudgeOptions, judge_files

        meta = entry["meta"]
        gen.judge = judge_files(gen.module_path, problem_path, JudgeOptions(
            device=opts.device, precision=opts.precision, timeout_s=opts.timeout_s,
            min_launches=int(meta.get("min_launches", 1)),
            kernel_outputs=bool(meta.get("kernel_outputs", True)), target=None))
        clock.lap("judge")
        note += ["", f"Judged again now: correct: {'yes' if gen.judge.correct else 'no'}"
                 + ("" if gen.judge.correct else f" ({gen.judge.reason}: {gen.judge.detail})")]
    gen.seconds = clock.laps
    gen.report_path = out / "report.md"
    write_new(gen.report_path, entry["files"].get("report.md", "") + "\n".join(note) + "\n")
    return gen


def _to_database(gen: Generated, key: str, opts: GenerateOptions, out: Path) -> None:
    """Store the module and its reports under ``key`` (see ``module_key``)."""
    from kernelcraft.db import Database

    files = {n: (out / n).read_text() for n in _CACHED_FILES if (out / n).exists()}
    if (out / "tuning.png").exists() and gen.tunings:  # this run's plot, not an old one
        files["tuning.png.b64"] = base64.b64encode((out / "tuning.png").read_bytes()).decode()
    meta = {"min_launches": min(len(v.kernels) for v in gen.variants),
            "kernel_outputs": _kernel_outputs(gen)}
    try:
        with Database(opts.database) as db:
            db.save_module(key, gen.problem.name, files, meta)
    except Exception as exc:  # the store is a convenience: a module is never lost to it
        import warnings

        warnings.warn(f"kernelcraft: module not stored in the database: {exc}", stacklevel=2)


class _Clock:
    """Wall time per phase, for the report and the suite's records."""

    def __init__(self) -> None:
        self.laps: dict[str, float] = {}
        self._t = time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.laps[name] = round(now - self._t, 2)
        self._t = now


def _gpu_present(opts: GenerateOptions) -> bool:
    return opts.device != "cpu" and torch.cuda.is_available()


def tune_paths(problem: Problem, variants: list[Variant], module_path: Path,
               targets: list[Target], opts: GenerateOptions
               ) -> tuple[list[GroupTuning], dict[str, int]]:
    """Tune the full-size variant on the GPU present (or with a test timer, on the CPU);
    for every other target, take what the database measured before."""
    from kernelcraft.measure.verify import precision_mode
    from kernelcraft.problem import load_module
    from kernelcraft.target import detect
    from kernelcraft.tune import tune_variant, tuned_from_database

    main = variants[0]
    tunings: list[GroupTuning] = []
    t = opts.tune
    db_path = opts.database
    measured_arch = None
    if t is not None and main.kernels and (t.timer is not None or _gpu_present(opts)):
        gpu = _gpu_present(opts)
        device = torch.device("cuda") if gpu else torch.device("cpu")
        target = (detect() if gpu else None) or targets[0]
        measured_arch = target.arch
        with _interpreted(not gpu):  # on a CPU (a test timer) kernels run interpreted
            module = load_module(module_path, "tuned")
        with gpulock.shared(), precision_mode(opts.precision):
            tunings = tune_variant(problem, main, module, target, device, opts.precision,
                                   replace(t, db_path=db_path))
    from_db: dict[str, int] = {}
    for tgt in targets:
        if tgt.arch != measured_arch and main.kernels:
            n = tuned_from_database(main, tgt, opts.precision, db_path)
            if n:
                from_db[tgt.arch] = n
    return tunings, from_db


@contextlib.contextmanager
def _interpreted(on: bool) -> Iterator[None]:
    """TRITON_INTERPRET=1 while a module is imported (its @triton.jit run on the CPU)."""
    old = os.environ.get("TRITON_INTERPRET")
    if on:
        os.environ["TRITON_INTERPRET"] = "1"
        from kernelcraft.measure.interpreter import install

        install()
    try:
        yield
    finally:
        if on:
            if old is None:
                os.environ.pop("TRITON_INTERPRET", None)
            else:
                os.environ["TRITON_INTERPRET"] = old


def choose_all(problem: Problem, main: Variant, module_path: Path, opts: GenerateOptions,
               emit: Any) -> tuple[list[Any], bool]:
    """Per group, then for the whole program, the generated kernels or the eager path
    (``emit`` rewrites the module after a change). Returns (choices, from the database).

    The choices depend only on the emitted module and the GPU, so they are stored in the
    tuning database under the module's digest: a second ``generate`` of an unchanged
    problem (every config a database hit) reuses them instead of timing again.
    """
    from kernelcraft.choose import PROGRAM, Choice, apply
    from kernelcraft.db import Database

    reuse = opts.reuse_choices if opts.reuse_choices is not None else opts.timer is None
    key = None
    if reuse and not (opts.tune is not None and opts.tune.retune):
        key = choice_key(module_path.read_text(), _device_name(opts), opts.precision)
        with Database(opts.database) as db:
            saved = db.choices(key)
        if saved is not None:
            choices = [Choice(**c) for c in saved]
            for part in ([c for c in choices if c.group != PROGRAM],
                         [c for c in choices if c.group == PROGRAM]):
                apply(main, part)
                if _no_kernels(main, part) or any(not c.kept for c in part):
                    emit()
            return choices, True
    choices = choose_paths(problem, main, module_path, opts)
    if _no_kernels(main, choices) or any(not c.kept for c in choices):
        emit()
    if main.kernels and any(g.kind != "glue" for g in main.plan.groups):
        # the kernels that won may still lose as a whole to the problem's own forward (a
        # fused library softmax, cuDNN batch norm)
        snapshot = _plan_state(main)
        whole = choose_paths(problem, main, module_path, opts, program=True)
        if not whole[0].kept:
            emit()
            fewer = _fewer_groups(problem, main, module_path, opts, emit, choices, whole[0],
                                  snapshot)
            whole = fewer or whole
        choices += whole
    if key is not None:
        with Database(opts.database) as db:
            db.save_choices(key, [asdict(c) for c in choices])
    return choices, False


def _no_kernels(v: Variant, choices: list[Any]) -> bool:
    """With no kernel left (every one lost, or none made), the problem's own forward serves:
    replaying the decomposed ops cannot beat it and costs host time per op (a 0.080 ms
    product measured 0.086 ms through the replay). Returns whether that changed ``v``."""
    if v.kernels or v.reference:
        return False
    v.reference = "the problem's own forward kept: " + (
        "every generated kernel lost" if choices else "no generated kernel")
    return True


def _plan_state(v: Variant) -> tuple[Any, ...]:
    """What ``choose.apply`` changes in a variant, to undo it."""
    return dict(v.kernels), {g.id: (g.kind, g.reason) for g in v.plan.groups}, v.reference


def _restore(v: Variant, state: tuple[Any, ...]) -> None:
    kernels, kinds, v.reference = state
    v.kernels.clear()
    v.kernels.update(kernels)
    for g in v.plan.groups:
        g.kind, g.reason = kinds[g.id]


def _fewer_groups(problem: Problem, main: Variant, module_path: Path, opts: GenerateOptions,
                  emit: Any, choices: list[Any], lost: Any, state: tuple[Any, ...]
                  ) -> list[Any]:
    """When the whole program loses although its groups each won (small groups whose launch
    costs more host time than they save: a cross entropy's counts and means), the program
    with only the groups that save the most, tried with the top half, then the top one.
    Returns the choices that dropped groups and the program's, or [] (the problem's own
    forward stays)."""
    from kernelcraft.choose import Choice, apply

    kept = sorted((c for c in choices if c.kept and c.group in state[0]),
                  key=lambda c: c.kernel_ms - c.eager_ms)
    after = _plan_state(main)
    for n in sorted({len(kept) // 2, 1}, reverse=True):
        if not 0 < n < len(kept):
            continue
        _restore(main, state)
        drop = [Choice(c.group, c.kernel_ms, c.eager_ms, kept=False) for c in kept[n:]]
        apply(main, drop)
        emit()
        whole = choose_paths(problem, main, module_path, opts, program=True)
        if whole[0].kept:  # the reason names the outcome (the module text has none)
            why = (f"eager path kept: the whole program measured {lost.kernel_ms:.4f} ms "
                   f"with every group (PyTorch {lost.eager_ms:.4f} ms); only the {n} "
                   f"group(s) saving the most stay: {whole[0].kernel_ms:.4f} ms")
            dropped = {c.group for c in drop}
            for g in main.plan.groups:
                if g.id in dropped:
                    g.reason = why
            return drop + whole
    _restore(main, after)
    emit()
    return []


def choice_key(module_text: str, device: str, precision: str) -> str:
    """What a measured choice depends on: the module's text (kernels, configs), the GPU,
    the precision mode and the toolchain."""
    from kernelcraft.db import _canonical, toolchain_versions

    blob = _canonical({"module": hashlib.sha256(module_text.encode()).hexdigest(),
                       "device": device, "precision": precision,
                       "versions": toolchain_versions()})
    return hashlib.sha256(blob.encode()).hexdigest()


def _device_name(opts: GenerateOptions) -> str:
    if _gpu_present(opts):
        return torch.cuda.get_device_name()
    return "cpu (test timer)"


def choose_paths(problem: Problem, main: Variant, module_path: Path,
                 opts: GenerateOptions, program: bool = False) -> list[Any]:
    """Per group (or, with ``program``, for the whole forward), the generated kernels or
    the eager path, whichever measures faster."""
    from kernelcraft.choose import apply, choose, choose_program
    from kernelcraft.measure.verify import precision_mode
    from kernelcraft.problem import load_module

    timer, host = opts.timer, None
    if timer is None:
        from kernelcraft.measure.timing import host_ms as host
        from kernelcraft.measure.timing import time_cuda

        # groups: a short budget each; the whole program: the judge's (time_cuda's default)
        budget = {} if program else {"budget_ms": 300.0}

        def timer(fn: Any, sets: list[list[Any]]) -> float:
            return time_cuda(fn, sets, **budget).median_ms

    device = torch.device("cuda") if _gpu_present(opts) else torch.device("cpu")
    module = load_module(module_path, "generated")
    # the eager paths run in the judge's precision mode: outside it cuDNN convolutions take
    # TF32 (PyTorch's default), an fp32 baseline 3x faster than strict fp32 on the H200
    with gpulock.shared(), precision_mode(opts.precision):
        if program:
            choices = [choose_program(problem, module, device, timer,
                                      precision=opts.precision, host=host)]
        else:
            choices = choose(main, problem, module, device, timer)
    apply(main, choices)
    return choices


def _kernel_outputs(gen: Generated) -> bool:
    """Whether every output of every variant is written by a generated kernel."""
    for v in gen.variants:
        for n in v.plan.graph.nodes:
            if n.op == "output":
                for a in n.all_input_nodes:
                    g = v.plan.group_of.get(a)
                    if g is None or g.id not in v.kernels:
                        return False
    return True


def judge_generated(gen: Generated, opts: GenerateOptions) -> Any:
    from kernelcraft.measure.judge import JudgeOptions, judge_files

    jopts = JudgeOptions(
        device=opts.device,
        precision=opts.precision,
        timeout_s=opts.timeout_s,
        min_launches=min(len(v.kernels) for v in gen.variants),
        kernel_outputs=_kernel_outputs(gen),
        target=None,
    )
    return judge_files(gen.module_path, gen.problem.path, jopts)


def _report_json(gen: Generated, opts: GenerateOptions) -> dict[str, Any]:
    return {
        "generator": "kernelcraft",
        "problem": str(gen.problem.path),
        "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "targets": [t.arch for t in gen.targets],
        "precision": opts.precision,
        "groups": [
            {"id": g.id, "kind": g.kind, "ops": g.describe(), "reason": g.reason,
             "config": gen.kernels[g.id].config if g.id in gen.kernels else None}
            for g in gen.plan.groups if g.kind != "glue"
        ],
        "tuning": [vars(t) for t in gen.tunings],
        "tuned_from_database": gen.tuned_from_db,
        "judge": gen.judge.to_json() if gen.judge is not None else None,
        "builds": gen.builds,
        "launches": gen.launches,
    }
