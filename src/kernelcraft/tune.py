"""Tuning: search each kernel group's launch configs, measure, remember, learn.

Roles kept apart (MetaSchedule's split): ``spaces.py`` declares the knobs of a template on
a target; ``search/`` proposes configs (ranked by the cost model); ``build.py`` compiles a
batch for the explicit target in parallel processes, so compile errors and register spills
are found (and pruned) before the GPU runs anything; the runner here sets a config into the
module's ``_KC_TUNED`` table, checks the group's output against PyTorch (float64 and the
mode's precision, the judge's tolerance) and times it; ``db.py`` keeps every record. A
workload already in the database is a hit: its best config is used without searching.

Each config is written to the database as a ``timeout`` before it runs and settled after,
so a tuner killed by a hanging kernel leaves that config marked and never retried; a
watchdog ends the process if one config runs past ``measure_timeout_s``.
"""

from __future__ import annotations

import os
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import torch

from kernelcraft.codegen.common import KernelSource
from kernelcraft.export import Variant, _rename
from kernelcraft.plan import Group, hint, val
from kernelcraft.problem import Problem
from kernelcraft.space import Config, Space
from kernelcraft.spaces import build_spec, space_for, tuned_key
from kernelcraft.target import Target

Timer = Callable[[Callable[..., Any], list[list[Any]]], float]


@dataclass
class TuneOptions:
    effort: Any = "default"  # quick | default | full, or a search.strategy.Effort
    budget: str | None = None  # tuning wall time for the whole program, e.g. "90s"
    strategy: str = "evolutionary"  # evolutionary | random
    db_path: Path | None = None  # default: KERNELCRAFT_DB or the cache directory
    retune: bool = False  # search even where the database has a result
    seed: int = 0
    use_model: bool = True  # rank proposals with the cost model (pre-trained + database)
    build: bool = True  # compile each config for the target first; prune spills
    measure_timeout_s: float = 120.0
    progress: bool = True
    timer: Timer | None = None  # (fn, input_sets) -> ms; default CUDA events
    model: Any = None  # a CostModel to rank with instead of the shipped one (experiments)


@dataclass
class GroupTuning:
    """What tuning did for one kernel group, for the report."""

    group: int
    family: str
    wrapper: str
    target: str
    workload: str
    key: tuple[int, ...]
    source: str  # searched | database | untunable
    config: dict[str, Any] | None = None
    best_ms: float | None = None
    default_ms: float | None = None
    measured: int = 0
    failed: dict[str, int] = field(default_factory=dict)  # status -> count
    history: list[tuple[int, float]] = field(default_factory=list)  # (measured, best ms)
    seconds: float = 0.0
    stopped_because: str = ""

    @property
    def speedup(self) -> float | None:
        if self.best_ms and self.default_ms:
            return self.default_ms / self.best_ms
        return None


def signature(g: Group, k: KernelSource, family: str) -> dict[str, Any]:
    """What identifies a group's workload: its ops, its operands' shapes, dtypes, strides."""
    operands = []
    for a in k.inputs:
        v = val(a)
        if isinstance(v, torch.Tensor):
            operands.append([[hint(s) for s in v.shape], str(v.dtype),
                             [hint(s) for s in v.stride()]])
        else:
            operands.append(repr(v))
    return {"family": family, "ops": g.describe(), "operands": operands,
            "key": list(tuned_key(k, family))}


def tune_variant(problem: Problem, variant: Variant, module: Any, target: Target,
                 device: torch.device, precision: str, opts: TuneOptions,
                 index: int = 0) -> list[GroupTuning]:
    """Tune every kernel group of ``variant`` (variant ``index`` of ``module``) on
    ``device``; the results go into ``variant.tuned`` and the database."""
    from kernelcraft.choose import graph_values
    from kernelcraft.db import Database, toolchain_versions

    db = Database(opts.db_path)
    versions = toolchain_versions()
    groups = {g.id: g for g in variant.plan.groups}
    todo = [(groups[gid], k, space) for gid, k in variant.kernels.items()
            if (space := space_for(k, groups[gid].kind, target)) is not None]
    env: dict[Any, Any] | None = None  # computed, with the model, only if something searches
    model: Any = None
    out: list[GroupTuning] = []
    total = _total_seconds(opts)
    start = time.monotonic()
    try:
        for i, (g, k, space) in enumerate(todo):
            # the program's budget is shared by the groups still to tune
            share = None if total is None else max(
                1.0, (total - (time.monotonic() - start)) / (len(todo) - i))
            sig = signature(g, k, g.kind)
            wl = db.add_workload(sig, target.arch, precision, family=g.kind, versions=versions)
            res = GroupTuning(g.id, g.kind, k.wrapper_name, target.arch, wl,
                              tuned_key(k, g.kind), "searched")
            best = None if opts.retune or not db.searched(wl) else db.best(wl)
            if best is not None:
                res.source, res.config, res.best_ms = "database", best.config_dict, \
                    best.latency_ms
            else:
                if env is None:
                    env, model = graph_values(variant, problem, device), _model(db, opts)
                try:
                    runner = _Runner(module, _rename(k.wrapper_name, index), g, k, env,
                                     device, target, space, precision, opts)
                except Exception as exc:  # noqa: BLE001 - no reference: the heuristic runs
                    res.source = "untunable"
                    res.stopped_because = f"no reference: {type(exc).__name__}: {exc}"[:200]
                else:
                    _search(res, space, runner, db, wl, versions, model, opts, share)
            if res.config is not None:
                variant.tuned[(k.wrapper_name, target.arch, res.key)] = dict(res.config)
            out.append(res)
    finally:
        module._KC_TUNED.clear()
        db.close()
    return out


def tuned_from_database(variant: Variant, target: Target, precision: str,
                        db_path: Path | None = None) -> int:
    """Fill ``variant.tuned`` for ``target`` from earlier measurements (no GPU needed)."""
    from kernelcraft.db import Database, default_path, workload_key

    path = Path(db_path) if db_path else default_path()
    if not path.exists():
        return 0
    n = 0
    with Database(path) as db:
        for gid, k in variant.kernels.items():
            g = next(g for g in variant.plan.groups if g.id == gid)
            if space_for(k, g.kind, target) is None:
                continue
            best = db.best(workload_key(signature(g, k, g.kind), target.arch, precision))
            if best is not None:
                variant.tuned[(k.wrapper_name, target.arch, tuned_key(k, g.kind))] = \
                    best.config_dict
                n += 1
    return n


def _model(db: Any, opts: TuneOptions) -> Any:
    if not opts.use_model:
        return None
    if opts.model is not None:
        return opts.model
    try:
        import lightgbm  # noqa: F401
    except ImportError:  # a declared dependency, but the search must not die without it
        warnings.warn("lightgbm is not installed: the search runs without the cost model",
                      stacklevel=2)
        return None
    from kernelcraft.search.cost_model import CostModel

    model = CostModel.pretrained()
    records = []
    for w in db.workloads():
        for r in db.records(w["key"], source="measured"):
            records.append({"workload": w["key"], "family": w["family"],
                            "target": w["target"], "status": r.status,
                            "latency_ms": r.latency_ms, "features": r.features,
                            "config": r.config_dict, "source": r.source})
    if records:
        model.update(records)
    return model


def _search(res: GroupTuning, space: Space, runner: _Runner, db: Any, wl: str,
            versions: dict[str, str], model: Any, opts: TuneOptions,
            seconds: float | None = None) -> None:
    from kernelcraft.search.strategy import run_search

    t0 = time.monotonic()
    effort = _effort(opts)
    if seconds is not None and seconds < effort.max_seconds:
        effort = replace(effort, max_seconds=seconds)
    ranker = model if model is not None and model.trained else None
    history: list[tuple[int, float]] = []
    best_ms = [float("inf")]

    def measure(configs: list[Config]) -> list[Any]:
        return runner.measure(configs, db, wl, versions)

    def seen(r: Any) -> None:
        res.measured += 1
        if r.ok:
            best_ms[0] = min(best_ms[0], r.latency_ms)
        else:
            res.failed[r.status] = res.failed.get(r.status, 0) + 1
        if best_ms[0] < float("inf"):
            history.append((res.measured, best_ms[0]))
        progress.update(res.measured, best_ms[0], runner.default_ms)

    progress = _Progress(f"g{res.group} {res.family}", effort.max_measured, opts.progress)
    try:
        earlier = db.best(wl)  # an interrupted search resumes from its best
        found = run_search(space, measure, strategy=opts.strategy, effort=effort,
                           ranker=ranker, seed=opts.seed, skip=db.measured_configs(wl),
                           seeds=[Config(earlier.config_dict)] if earlier else [],
                           on_result=seen)
    finally:
        progress.close()
    db.mark_searched(wl, str(opts.effort), found.stopped_because, res.measured)
    res.history, res.seconds = history, round(time.monotonic() - t0, 2)
    res.default_ms, res.stopped_because = runner.default_ms, found.stopped_because
    if found.best is not None:
        res.config, res.best_ms = dict(found.best.config), found.best.latency_ms
    overall = db.best(wl)  # a resumed search: the interrupted run's best may be better
    if overall is not None and (res.best_ms is None or overall.latency_ms < res.best_ms):
        res.config, res.best_ms = overall.config_dict, overall.latency_ms
    if (runner.default_ms is not None and space.default is not None
            and (res.best_ms is None or runner.default_ms < res.best_ms)):
        # nothing beat the heuristic's config: keep it, and record it so that a database
        # hit returns it too
        db.add_record(wl, space.default, "ok", runner.default_ms,
                      "the heuristic's config through the untuned path",
                      runner.features.get(space.default.key, space.features(space.default)),
                      versions)
        res.config, res.best_ms = dict(space.default), runner.default_ms
    if model is not None and opts.model is None:
        new = [{"workload": wl, "family": res.family, "target": res.target,
                "status": r.status, "latency_ms": r.latency_ms,
                "features": runner.features.get(r.config.key, space.features(r.config)),
                "config": dict(r.config), "source": "measured"} for r in found.history]
        model.update(new)


#: Tuning wall time of a whole program under ``--effort quick`` (its promise: about a
#: minute per problem, the rest of generate included).
QUICK_PROGRAM_SECONDS = 40.0


def _effort(opts: TuneOptions) -> Any:
    """The per-group profile (the program's budget is applied by ``tune_variant``)."""
    from kernelcraft.search.strategy import Effort, effort

    return opts.effort if isinstance(opts.effort, Effort) else effort(opts.effort)


def _total_seconds(opts: TuneOptions) -> float | None:
    from kernelcraft.search.strategy import parse_budget

    if opts.budget:
        return parse_budget(opts.budget)
    return QUICK_PROGRAM_SECONDS if opts.effort == "quick" else None


class _Runner:
    """Builds, checks and times configs of one group through the emitted module."""

    def __init__(self, module: Any, wname: str, g: Group, k: KernelSource,
                 env: dict[Any, Any], device: torch.device, target: Target, space: Space,
                 precision: str, opts: TuneOptions) -> None:
        from kernelcraft.choose import eager_group
        from kernelcraft.measure.verify import float64_program

        self.module, self.wname, self.g, self.k = module, wname, g, k
        self.device, self.target, self.space, self.opts = device, target, space, opts
        self.precision = precision
        self.fn = getattr(module, wname)
        self.args = [env[a] for a in k.inputs]
        self.key = (wname, _arch(device), tuned_key(k, g.kind))
        with torch.no_grad():
            self.ref = eager_group(g, env, device)()
            env64 = {n: (v.double() if isinstance(v, torch.Tensor) and v.is_floating_point()
                         else v) for n, v in env.items()}
            # the group's own casts and dtype= factories in float64 too, as the judge's
            # reference runs them (a scatter of ones_like(idx, dtype=float32) into a float64
            # base failed: scatter wants one dtype)
            with float64_program():
                self.ref64 = eager_group(g, env64, device)()
        self.timer = opts.timer or _cuda_timer
        self.features: dict[str, dict[str, float]] = {}
        self.default_ms: float | None = None
        # spill bytes of the heuristic's config: the module runs it anyway, so a candidate
        # that spills no more than it is worth measuring (a matmul epilogue's spills cost
        # little; pruning them threw the fastest tiles away)
        self.spill_budget: int | None = None
        if space.default is not None:
            module._KC_TUNED.pop(self.key, None)
            self.default_ms = self.timer(self.fn, [self.args])

    def measure(self, configs: list[Config], db: Any, wl: str,
                versions: dict[str, str]) -> list[Any]:
        from kernelcraft.search.strategy import Result

        static = self._build(configs)
        results = []
        for c in configs:
            feats = {**self.space.features(c), **static.get(c.key, {}).get("features", {})}
            self.features[c.key] = feats
            fail = static.get(c.key, {}).get("fail")
            if fail:
                r = Result(c, fail[0], None, fail[1])
                db.add_record(wl, c, r.status, None, r.error, feats, versions)
                results.append(r)
                continue
            rid = db.add_record(wl, c, "timeout", None,
                                "in flight: the tuner stopped while this config ran",
                                feats, versions)
            r = self._run(c)
            db.update_record(rid, r.status, r.latency_ms, r.error, feats)
            results.append(r)
        return results

    def _build(self, configs: list[Config]) -> dict[str, dict[str, Any]]:
        """Compile every config for the target in parallel; failures and spills pruned."""
        if not self.opts.build:
            return {}
        from kernelcraft.build import cross_compile

        path = Path(self.module.__file__)
        specs = []
        default = self.space.default
        if self.spill_budget is None:
            self.spill_budget = 0
            if default is not None and all(c.key != default.key for c in configs):
                configs = [default, *configs]  # built once, for its spills
        for c in configs:
            spec = build_spec(self.k, self.g.kind, c, self.target)
            spec["config"] = c.key
            specs.append(spec)
        try:
            built = cross_compile(path, specs, [self.target.key], jobs=min(8, os.cpu_count()
                                                                           or 1))
        except Exception:  # the build step is an optimisation; the GPU run still checks
            return {}
        if len(built) > 1 and not any(b.get("ok") for b in built) and len(
                {b.get("note") for b in built}) == 1:
            # one error for every config: the toolchain cannot build here (not the
            # configs' fault); measure without the pre-build from now on
            self.opts = replace(self.opts, build=False)
            return {}
        out: dict[str, dict[str, Any]] = {}
        for spec, b in zip(specs, built, strict=False):
            if default is not None and spec["config"] == default.key and b.get("ok"):
                self.spill_budget = max(self.spill_budget or 0, int(b.get("spills") or 0))
        for spec, b in zip(specs, built, strict=False):
            feats = {"static.registers": b.get("registers"), "static.spills": b.get("spills"),
                     "static.shared": b.get("shared")}
            entry: dict[str, Any] = {"features": {k: float(v) for k, v in feats.items()
                                                  if v is not None}}
            if not b.get("ok"):
                entry["fail"] = ("compile-error", b.get("note", "")[:300])
            elif (b.get("spills") or 0) > (self.spill_budget or 0):
                entry["fail"] = ("pruned", f"{b['spills']} bytes of register spills"
                                 + (f" (the heuristic's config: {self.spill_budget})"
                                    if self.spill_budget else ""))
            out[spec["config"]] = entry
        return out

    def _run(self, c: Config) -> Any:
        from kernelcraft.measure.compare import compare
        from kernelcraft.search.strategy import Result

        self.module._KC_TUNED[self.key] = dict(c)
        watchdog = threading.Timer(self.opts.measure_timeout_s, _hang, args=(c.key,))
        watchdog.daemon = True
        watchdog.start()
        try:
            with torch.no_grad():
                out = self.fn(*self.args)
                if self.device.type == "cuda":
                    torch.cuda.synchronize(self.device)
                check = compare(list(out), self.ref, self.ref64, self.precision)
                if not check.ok:
                    return Result(c, "wrong", None, check.detail[:300])
                ms = self.timer(self.fn, [self.args])
            return Result(c, "ok", ms)
        except Exception as exc:  # a config that fails at run time is a result
            return Result(c, "crash", None, f"{type(exc).__name__}: {exc}"[:300])
        finally:
            watchdog.cancel()
            self.module._KC_TUNED.pop(self.key, None)


def _hang(config: str) -> None:
    """The watchdog: a config ran too long (a hang); the process must end, the database
    keeps it marked as a timeout."""
    import sys

    print(f"kernelcraft tune: config {config} exceeded the time limit; stopping",
          file=sys.stderr, flush=True)
    os._exit(124)


def _arch(device: torch.device) -> str:
    from kernelcraft.codegen.runtime import _kc_arch

    return _kc_arch(device)


def _cuda_timer(fn: Callable[..., Any], sets: list[list[Any]]) -> float:
    from kernelcraft.measure.timing import time_cuda

    return time_cuda(fn, sets, budget_ms=200.0).median_ms


class _Progress:
    """A live line per group: configs measured, best so far, gain over the heuristic."""

    def __init__(self, label: str, total: int, enabled: bool) -> None:
        self._bar = None
        if enabled:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

            self._bar = Progress(TextColumn("tuning {task.description}"), BarColumn(),
                                 MofNCompleteColumn(), TextColumn("{task.fields[best]}"),
                                 transient=False)
            self._bar.start()
            self._task = self._bar.add_task(label, total=total, best="")

    def update(self, n: int, best: float, default: float | None) -> None:
        if self._bar is None:
            return
        text = "" if best == float("inf") else f"best {best:.4g} ms"
        if default and best < float("inf"):
            text += f" ({default / best:.2f}x the heuristic)"
        self._bar.update(self._task, completed=n, best=text)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
