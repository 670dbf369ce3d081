"""Run ``kernelcraft generate`` over a problem suite and record, per problem, the groups,
extern ops, cross-compilation results and the judge's verdict as JSON lines.

Without a GPU the judge runs through Triton's interpreter at reduced sizes (correctness
only); with one, at full size with timings against eager and torch.compile.

Usage: python benchmarks/generate_suite.py [PROBLEMS_DIR] [--out DIR] [--targets LIST]
                                           [--device cpu|cuda] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import time
import traceback
from pathlib import Path

from kernelcraft.generate import GenerateOptions, generate


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("problems", type=Path, nargs="?", default=Path("benchmarks/problems"))
    ap.add_argument("--out", type=Path, default=Path("out/suite"))
    ap.add_argument("--targets", default="sm_90,gfx942")
    ap.add_argument("--device", default=None)
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--results", type=Path, default=None, help="JSON lines file to append to")
    args = ap.parse_args()
    files = sorted(p for p in args.problems.glob("*.py") if not p.name.startswith("_"))
    if args.only:
        files = [f for f in files if f.stem in args.only]
    results = args.results or args.out / "results.jsonl"
    results.parent.mkdir(parents=True, exist_ok=True)
    done = set()
    if results.exists():
        done = {json.loads(line)["problem"] for line in results.read_text().splitlines()}
    for f in files:
        if f.stem in done:
            continue
        t0 = time.time()
        row: dict = {"problem": f.stem, "date": dt.datetime.now(dt.UTC).isoformat()}
        try:
            gen = generate(f, GenerateOptions(targets=args.targets, out_dir=args.out,
                                              device=args.device))
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
            )
        except Exception as exc:  # recorded, the suite goes on
            row.update(correct=False, reason="generate-error",
                       detail=f"{type(exc).__name__}: {exc}"[:300],
                       traceback=traceback.format_exc()[-2000:])
        row["seconds"] = round(time.time() - t0, 1)
        with open(results, "a") as fh:
            fh.write(json.dumps(row, default=str) + "\n")
        print(f"{f.stem}: {'ok' if row['correct'] else row['reason']} "
              f"({row.get('kernels', 0)} kernels, {row['seconds']} s)", flush=True)
    write_summary(results)


def write_summary(results: Path) -> Path:
    """summary.md beside the results: per problem, then fast_p and geomeans."""
    from kernelcraft.report import bench_markdown

    rows = [json.loads(line) for line in results.read_text().splitlines()]
    for r in rows:
        r["name"] = r["problem"]
    env = next((r.get("env") for r in rows if r.get("env")), {}) or {}
    header = {"name": "kernelcraft generate over the suite", "device": rows[0].get("device")
              if rows else None, "gpu": env.get("gpu"), "torch": env.get("torch"),
              "triton": env.get("triton"), "date": max(r["date"] for r in rows) if rows else "",
              "command": "python benchmarks/generate_suite.py"}
    out = results.parent / "summary.md"
    out.write_text(bench_markdown(rows, header))
    return out


if __name__ == "__main__":
    main()
