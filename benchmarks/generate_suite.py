"""Run ``kernelcraft generate`` over a problem suite and record, per problem, the groups,
extern ops, cross-compilation results and the judge's verdict as JSON lines.

Without a GPU the judge runs through Triton's interpreter at reduced sizes (correctness
only); with one, at full size with timings against eager and torch.compile.

Usage: python benchmarks/generate_suite.py [PROBLEMS_DIR] [--out DIR] [--targets LIST]
                                           [--device cpu|cuda] [--only NAME ...]
                                           [--no-build] [--gpus N] [--per-gpu K]

``--gpus N --per-gpu K`` runs N*K shards at once, K per GPU (``CUDA_VISIBLE_DEVICES``),
each appending to its own results file; the summary merges them.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path

from kernelcraft.generate import GenerateOptions, generate
from kernelcraft.plan import FusionOptions
from kernelcraft.tune import TuneOptions

START = time.time()
#: a shard's exit status after a GPU fault (a lost CUDA context, or memory that another
#: shard's cache held): ``run_shards`` starts it again, and the problem gets a second try
RESTART = 75
#: tries a problem gets when each ends in a GPU fault
GPU_TRIES = 2


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("problems", type=Path, nargs="?", default=Path("benchmarks/problems"))
    ap.add_argument("--out", type=Path, default=Path("out/suite"))
    ap.add_argument("--targets", default="sm_90,gfx942")
    ap.add_argument("--device", default=None)
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--results", type=Path, default=None, help="JSON lines file to append to")
    ap.add_argument("--no-build", action="store_true", help="skip cross-compilation")
    ap.add_argument("--tune", default="none", choices=["none", "quick", "default", "full"],
                    help="tuning effort on the GPU (default: none, the heuristics)")
    ap.add_argument("--strategy", default="evolutionary", choices=["evolutionary", "random"])
    ap.add_argument("--db", type=Path, default=None, help="tuning database")
    ap.add_argument("--gpus", type=int, default=1, help="GPUs to spread the shards over")
    ap.add_argument("--per-gpu", type=int, default=1,
                    help="shards per GPU; they share it, each timing with it alone")
    ap.add_argument("--first", nargs="*", default=(),
                    help="these problems before the others (a run cut short has them)")
    ap.add_argument("--mixed", action="store_true",
                    help="a fixed mixed order (families interleaved) instead of by name")
    ap.add_argument("--deadline", type=float, default=None,
                    help="start no new problem after this many seconds (a resumable run "
                         "that fits a time slot)")
    ap.add_argument("--conv-template", nargs="?", const="always", default="auto",
                    choices=["auto", "always", "never"],
                    help="convolution template mode (kernelcraft generate --conv-template)")
    ap.add_argument("--shard", default="0/1", help=argparse.SUPPRESS)
    args = ap.parse_args()
    files = sorted(p for p in args.problems.glob("*.py") if not p.name.startswith("_"))
    if args.only:
        files = [f for f in files if f.stem in args.only]
    if args.mixed:  # a cut-short run still covers every family
        files.sort(key=lambda f: hashlib.sha1(f.stem.encode()).hexdigest())
    files.sort(key=lambda f: f.stem not in args.first)  # stable: the order otherwise kept
    results = args.results or args.out / "results.jsonl"
    results.parent.mkdir(parents=True, exist_ok=True)
    if args.gpus * args.per_gpu > 1:
        run_shards(args.gpus, args.per_gpu, results)
        write_summary(results)
        return
    index, count = (int(x) for x in args.shard.split("/"))
    done = finished(read_rows(results))
    for f in files[index::count]:
        if f.stem in done:
            continue
        if args.deadline is not None and time.time() - START > args.deadline:
            print(f"deadline: {f.stem} and later problems left for the next run", flush=True)
            break
        t0 = time.time()
        row: dict = {"problem": f.stem, "date": dt.datetime.now(dt.UTC).isoformat()}
        try:
            tune = None if args.tune == "none" else TuneOptions(
                effort=args.tune, strategy=args.strategy, db_path=args.db, progress=False)
            gen = generate(f, GenerateOptions(targets=args.targets, out_dir=args.out,
                                              device=args.device, build=not args.no_build,
                                              tune=tune, db_path=args.db,
                                              fusion=FusionOptions(
                                                  conv_template=args.conv_template)))
            j = gen.judge
            row.update(
                correct=j.correct, reason=j.reason, detail=j.detail[:300], device=j.device,
                kernels=len(gen.kernels),
                externs=[g.describe() for g in gen.plan.groups if g.kind == "extern"],
                builds_ok=all(b["ok"] for b in gen.builds),
                spills={f"{b['kernel']}@{b['target']}": b.get("spills")
                        for b in gen.builds if b.get("spills")},
                speedup_eager=j.speedup_eager, speedup_compile=j.speedup_compile,
                timing=j.timing, roofline=j.roofline, env=j.env,
                choices=[vars(c) for c in gen.choices], phases=gen.seconds,
                tunings=[{k: v for k, v in vars(t).items() if k != "history"}
                         | {"curve": t.history} for t in gen.tunings],
                ranked=[vars(r) for r in gen.ranked],
            )
            if j.verdict.get("traceback"):  # a judge error: its cause, for runs far away
                row["traceback"] = j.verdict["traceback"][-2000:]
        except Exception as exc:  # recorded, the suite goes on
            row.update(correct=False, reason="generate-error",
                       detail=f"{type(exc).__name__}: {exc}"[:300],
                       traceback=traceback.format_exc()[-2000:])
        row["seconds"] = round(time.time() - t0, 1)
        if gpu_fault(row):
            row["gpu_fault"] = True
        out = results if count == 1 else results.with_suffix(f".{index}.jsonl")
        with open(out, "a") as fh:
            fh.write(json.dumps(row, default=str) + "\n")
        print(f"{f.stem}: {'ok' if row['correct'] else row['reason']} "
              f"({row.get('kernels', 0)} kernels, {row['seconds']} s)", flush=True)
        release_gpu()
        if row.get("gpu_fault") and count > 1:  # a fresh process for the next problems
            sys.exit(RESTART)
    if count == 1:
        write_summary(results)


def gpu_fault(row: dict) -> bool:
    """A failure that says nothing of the problem: the GPU ran out of memory (shards share
    it) or its CUDA context was lost (every later call of the process fails)."""
    text = f"{row.get('detail', '')} {row.get('traceback', '')}"
    return not row.get("correct") and ("out of memory" in text or "CUDA error" in text)


def finished(rows: list[dict]) -> set[str]:
    """Problems not to run again: those with a row, but a GPU fault's, until its last try."""
    faults: dict[str, int] = {}
    for r in rows:
        if r.get("gpu_fault"):
            faults[r["problem"]] = faults.get(r["problem"], 0) + 1
    return {r["problem"] for r in rows
            if not r.get("gpu_fault") or faults[r["problem"]] >= GPU_TRIES}


def release_gpu() -> None:
    """Hand the problem's cached GPU memory back: the shards beside this one need it (one
    shard's allocator cache of 69 GiB made every other shard's problems fail)."""
    import gc

    import torch

    gc.collect()
    if torch.cuda.is_initialized():
        torch.cuda.empty_cache()


def read_rows(results: Path) -> list[dict]:
    """Rows of ``results`` and of its shard files (``results.<i>.jsonl``)."""
    files = [results, *sorted(results.parent.glob(results.stem + ".*.jsonl"))]
    return [json.loads(line) for p in files if p.exists()
            for line in p.read_text().splitlines() if line.strip()]


def run_shards(gpus: int, per_gpu: int, results: Path) -> None:
    """This script once per shard, over every n-th problem; then merge the shards.

    Shards on one GPU take turns to time through ``KERNELCRAFT_GPU_LOCK``; their captures,
    compilations and correctness trials overlap.
    """
    argv, skip = [], False
    for a in sys.argv[1:]:
        if skip:
            skip = False
        elif a in ("--gpus", "--per-gpu"):
            skip = True
        elif not a.startswith(("--gpus=", "--per-gpu=")):
            argv.append(a)
    n = gpus * per_gpu
    env = dict(os.environ)
    if per_gpu > 1:  # a lock given by the caller is shared with its other GPU jobs
        env.setdefault("KERNELCRAFT_GPU_LOCK", str(results.parent / ".gpu.lock"))
        # a shard's problem may take at most twice its share, never the whole GPU
        env.setdefault("KERNELCRAFT_GPU_MEMORY_FRACTION", f"{min(0.9, 2 / per_gpu):.2f}")
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    ids = visible.split(",") if visible else [str(i) for i in range(gpus)]

    def start(i: int) -> subprocess.Popen:
        return subprocess.Popen([sys.executable, __file__, *argv, "--shard", f"{i}/{n}",
                                 "--results", str(results)],
                                env={**env, "CUDA_VISIBLE_DEVICES": ids[i % gpus]})

    procs = {i: start(i) for i in range(n)}
    restarts = 0
    while procs:
        time.sleep(1)
        for i, p in list(procs.items()):
            if p.poll() is None:
                continue
            del procs[i]
            if p.returncode == RESTART and restarts < 8 * n:  # after a GPU fault
                restarts += 1
                procs[i] = start(i)
    rows = read_rows(results)
    results.write_text("".join(json.dumps(r, default=str) + "\n" for r in rows))
    for p in results.parent.glob(results.stem + ".*.jsonl"):
        p.unlink()


def path_of(row: dict) -> str:
    """What the emitted module runs: generated kernels, or the problem's own forward."""
    if any(c["group"] < 0 and not c["kept"] for c in row.get("choices") or []):
        return "problem's forward (faster)"
    n = row.get("kernels", 0)
    ext = len(row.get("externs") or [])
    text = f"{n} kernel{'s' if n != 1 else ''}"
    return text + (f" + {ext} extern" if ext else "")


def write_summary(results: Path) -> Path:
    """summary.md beside the results: per problem, then fast_p and geomeans."""
    from kernelcraft.report import bench_markdown

    rows = list({r["problem"]: r for r in read_rows(results)}.values())  # the latest try
    for r in rows:
        r["name"] = r["problem"]
    env = next((r.get("env") for r in rows if r.get("env")), {}) or {}
    on_gpu = bool(rows) and rows[0].get("device") == "cuda"
    command = ("bash benchmarks/generate_gpu.sh" if on_gpu
               else "python benchmarks/generate_suite.py --device cpu")
    header = {"name": "kernelcraft generate over the suite", "device": rows[0].get("device")
              if rows else None, "gpu": env.get("gpu"), "torch": env.get("torch"),
              "triton": env.get("triton"), "date": max(r["date"] for r in rows) if rows else "",
              "command": command}
    out = results.parent / "summary.md"
    out.write_text(bench_markdown(rows, header, {"path": path_of}))
    return out


if __name__ == "__main__":
    main()
