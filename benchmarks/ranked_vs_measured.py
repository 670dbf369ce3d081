"""Configs chosen without hardware against the best a measured search finds, on the GPU.

For every tunable kernel group of the chosen problems, on the GPU present (its architecture
stands in for "a target that is not here"):

- **unmeasured**: the config the emitted module runs on this architecture when it was
  generated without the GPU (``rank.build_all``: the template's heuristic for the target,
  or the best-ranked spill-free alternative where the heuristic fails or spills);
- **model top-1**: the first config of the cost model's order that compiles without spills,
  the model trained on the committed records of every *other* workload
  (leave-one-workload-out, so it never saw this group's measurements);
- **measured best**: the best of a random search of ``--random`` configs, the two picks and
  the heuristic, all checked against float64 and timed with the tuner's timer.

The issue's target: the unmeasured picks reach >= 85% of the measured best (geometric mean
of best / pick over the groups). Rows to ``ranked.jsonl``, the table to ``ranked.md``.

Usage (repository root, GPU machine):
  python benchmarks/ranked_vs_measured.py --records benchmarks/results/tune-*/records.jsonl \
      [--only NAME ...] [--random 24] [--deadline 500] [--out DIR]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch

from kernelcraft.choose import graph_values
from kernelcraft.db import Database, toolchain_versions
from kernelcraft.export import _rename, emit_module, write_new
from kernelcraft.generate import GenerateOptions, build, dot_precisions
from kernelcraft.measure.timing import device_info
from kernelcraft.problem import load_module, load_problem
from kernelcraft.rank import build_all
from kernelcraft.search.cost_model import CostModel, load_records
from kernelcraft.search.strategy import Effort
from kernelcraft.space import Config
from kernelcraft.spaces import build_spec, space_for, tuned_key
from kernelcraft.target import detect, resolve
from kernelcraft.tune import TuneOptions, _Runner, signature, tune_variant

#: model-ordered candidates compiled to find its first spill-free config
MODEL_TRIES = 8


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("problems", type=Path, nargs="?", default=Path("benchmarks/problems"))
    ap.add_argument("--records", type=Path, nargs="+", required=True)
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--random", type=int, default=24, help="configs of the random search")
    ap.add_argument("--deadline", type=float, default=None,
                    help="start no new problem after this many seconds")
    ap.add_argument("--out", type=Path,
                    default=Path(f"benchmarks/results/ranked-{dt.date.today():%Y%m%d}"))
    ap.add_argument("--cpu-smoke", metavar="TARGET", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    start = time.monotonic()
    args.out.mkdir(parents=True, exist_ok=True)
    records = load_records(args.records)
    timer = None
    if args.cpu_smoke:  # the script's plumbing through the interpreter (times mean nothing)
        target, device, timer = resolve(args.cpu_smoke), torch.device("cpu"), _wall
    elif not torch.cuda.is_available():
        raise SystemExit("ranked_vs_measured.py measures on a GPU; none is present")
    else:
        target, device = detect(), torch.device("cuda")
    assert target is not None, "unknown GPU"
    files = sorted(p for p in args.problems.glob("*.py") if not p.name.startswith("_"))
    if args.only:  # in the order given (a deadline cuts the tail)
        files = [f for n in args.only for f in files if f.stem == n]
    budget = Effort(max_measured=args.random, max_seconds=600, batch=8, proposals=256,
                    population=16, epsilon=0.25, patience=10_000)
    rows: list[dict[str, Any]] = []
    for f in files:
        if args.deadline is not None and time.monotonic() - start > args.deadline:
            print(f"deadline: {f.stem} and later not started", flush=True)
            break
        try:
            rows += run_problem(f, target, device, timer, records, budget,
                                args.out / "ranked.jsonl")
        except Exception as exc:  # recorded, the run goes on
            print(f"{f.stem}: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        if device.type == "cuda":
            torch.cuda.empty_cache()
    write_summary(rows, args, device_info())


def run_problem(f: Path, target: Any, device: torch.device, timer: Any,
                records: list[dict[str, Any]], budget: Effort, out: Path
                ) -> list[dict[str, Any]]:
    problem = load_problem(f)
    variant = build(problem, GenerateOptions(targets=target.arch, device=device.type))
    rows: list[dict[str, Any]] = []
    if not variant.kernels:
        return rows
    groups = {g.id: g for g in variant.plan.groups}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "kernel.py"
        write_new(path, emit_module(f.read_text(), problem.name, [variant],
                                    dot_precisions([target], "fp32"), ""))
        # what a machine without this GPU emits for its architecture
        offline = replace(variant, tuned={})
        build_all(offline, path, [target], "fp32", db_path=Path(tmp) / "ranked.db")
        module = load_module(path, "ranked")
        env = graph_values(variant, problem, device)
        for gid, k in variant.kernels.items():
            g = groups[gid]
            space = space_for(k, g.kind, target)
            if space is None or space.default is None:
                continue
            key = tuned_key(k, g.kind)
            ranked = offline.tuned.get((k.wrapper_name, target.arch, key))
            pick = Config(ranked) if ranked is not None else space.default
            sig = signature(g, k, g.kind)
            model = CostModel().fit([r for r in records if _sig(r) != sig])
            top = _model_top1(model, space, path, k, g.kind, target)
            db = Database(Path(tmp) / f"g{gid}.db")
            versions = toolchain_versions()
            wl = db.add_workload(sig, target.arch, "fp32", family=g.kind, versions=versions)
            runner = _Runner(module, _rename(k.wrapper_name, 0), g, k, env, device, target,
                             space, "fp32", TuneOptions(progress=False, timer=timer))
            timed = {c.key: r for c, r in zip(
                [pick, top] if top is not None else [pick],
                runner.measure([pick, top] if top is not None else [pick], db, wl, versions),
                strict=True)}
            db.close()
            one = replace(variant, kernels={gid: k}, tuned={})
            opts = TuneOptions(effort=budget, strategy="random", retune=True,
                               db_path=Path(tmp) / f"search{gid}.db", progress=False,
                               use_model=False, timer=timer)
            (t,) = tune_variant(problem, one, module, target, device, "fp32", opts) or (None,)
            found = [ms for ms in (t.best_ms if t else None, runner.default_ms,
                                   *(r.latency_ms for r in timed.values() if r.ok)) if ms]
            best = min(found) if found else None
            pr = timed[pick.key]
            tr = timed.get(top.key) if top is not None else None
            row = {"problem": f.stem, "group": gid, "family": g.kind, "key": list(key),
                   "heuristic": dict(space.default), "heuristic_ms": runner.default_ms,
                   "unmeasured": dict(pick), "unmeasured_ranked": ranked is not None,
                   "unmeasured_ms": pr.latency_ms if pr.ok else None,
                   "unmeasured_status": pr.status,
                   "model_top1": dict(top) if top is not None else None,
                   "model_top1_ms": tr.latency_ms if tr is not None and tr.ok else None,
                   "model_trained": model.trained,
                   "search_best": t.config if t else None,
                   "search_best_ms": t.best_ms if t else None,
                   "search_measured": t.measured if t else 0, "best_ms": best}
            rows.append(row)
            with open(out, "a") as fh:
                fh.write(json.dumps(row) + "\n")
            print(f"{f.stem} g{gid} {g.kind}: unmeasured {_pct(best, row['unmeasured_ms'])} "
                  f"model {_pct(best, row['model_top1_ms'])} of best {best}", flush=True)
    return rows


def _model_top1(model: CostModel, space: Any, path: Path, k: Any, family: str,
                target: Any) -> Config | None:
    """The cost model's first config that compiles without spills (no measurement)."""
    from kernelcraft.build import cross_compile

    if not model.trained:
        return None
    order = list(space.enumerate(limit=20000))
    scores = model(space, order)
    order = [c for _, c in sorted(zip(scores, order, strict=True), key=lambda x: -x[0])]
    batch = order[:MODEL_TRIES]
    built = cross_compile(path, [build_spec(k, family, c) for c in batch], [target.key],
                          jobs=8)
    return next((c for c, b in zip(batch, built, strict=True)
                 if b.get("ok") and not b.get("spills")), None)


def _wall(fn: Any, sets: list[list[Any]]) -> float:
    t0 = time.perf_counter()
    fn(*sets[0])
    return 1e3 * (time.perf_counter() - t0)


def _sig(record: dict[str, Any]) -> Any:
    w = record.get("workload")
    return w.get("signature") if isinstance(w, dict) else None


def _pct(best: float | None, ms: float | None) -> str:
    return f"{100 * best / ms:.0f}%" if best and ms else "-"


def _geo(vals: list[float]) -> float | None:
    return math.exp(statistics.fmean(math.log(v) for v in vals)) if vals else None


def write_summary(rows: list[dict[str, Any]], args: Any, env: dict[str, Any]) -> None:
    lines = ["# Configs chosen without measuring vs the measured best", "",
             f"- gpu: {env.get('gpu')}; torch {env.get('torch')}; triton {env.get('triton')}",
             f"- date: {dt.datetime.now(dt.UTC):%Y-%m-%d}; command: "
             f"`python {' '.join(sys.argv)}`",
             f"- measured best: the best of a random search of {args.random} configs, the "
             "heuristic and both picks (the tuner's timer, output checked against float64)",
             "", "| problem | group | family | heuristic ms | unmeasured pick | ms "
             "| % of best | model top-1 ms | % of best | measured best ms |",
             "|---|---|---|---|---|---|---|---|---|---|"]

    def ms(v: float | None) -> str:
        return f"{v:.4f}" if v else "-"

    for r in rows:
        how = "ranked" if r["unmeasured_ranked"] else "heuristic"
        lines.append(f"| {r['problem']} | {r['group']} | {r['family']} | {ms(r['heuristic_ms'])} "
                     f"| {how} | {ms(r['unmeasured_ms'])} "
                     f"| {_pct(r['best_ms'], r['unmeasured_ms'])} "
                     f"| {ms(r['model_top1_ms'])} | {_pct(r['best_ms'], r['model_top1_ms'])} "
                     f"| {ms(r['best_ms'])} |")
    picks = [r["best_ms"] / r["unmeasured_ms"] for r in rows if r["best_ms"]
             and r["unmeasured_ms"]]
    tops = [r["best_ms"] / r["model_top1_ms"] for r in rows if r["best_ms"]
            and r["model_top1_ms"]]
    failed = sum(1 for r in rows if not r["unmeasured_ms"])
    if picks:
        lines += ["", f"Unmeasured picks: geometric mean {100 * _geo(picks):.1f}% of the "
                      f"measured best over {len(picks)} groups (target >= 85%)"
                      + (f"; {failed} pick(s) failed to run" if failed else "") + "."]
    if tops:
        lines.append(f"Model top-1 (leave-one-workload-out): {100 * _geo(tops):.1f}% over "
                     f"{len(tops)} groups.")
    (args.out / "ranked.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines), flush=True)


if __name__ == "__main__":
    main()
