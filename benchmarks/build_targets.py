"""Build the whole suite for every target without hardware: each kernel cross-compiled for
sm_80, sm_90, sm_100, gfx90a, gfx942 and gfx950 at the config the emitted module runs there
(a heuristic's pick, or a spill-free alternative ranked without measuring). Resumable.

Usage: python benchmarks/build_targets.py [PROBLEMS_DIR] [--out DIR] [--only NAME ...]
Writes DIR/results.jsonl (per problem: per kernel and target, ok, registers, spills,
shared memory/LDS, note) and DIR/summary.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from kernelcraft.generate import GenerateOptions, generate

TARGETS = "sm_80,sm_90,sm_100,gfx90a,gfx942,gfx950"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("problems", type=Path, nargs="?", default=Path("benchmarks/problems"))
    ap.add_argument("--out", type=Path,
                    default=Path(f"benchmarks/results/targets-{dt.date.today():%Y%m%d}"))
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--targets", default=TARGETS)
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    results = args.out / "results.jsonl"
    done = set()
    if results.exists():
        done = {json.loads(line)["problem"] for line in results.read_text().splitlines()}
    files = sorted(p for p in args.problems.glob("*.py") if not p.name.startswith("_"))
    if args.only:
        files = [f for f in files if f.stem in args.only]
    with tempfile.TemporaryDirectory() as tmp:
        for f in files:
            if f.stem in done:
                continue
            t0 = time.time()
            opts = GenerateOptions(targets=args.targets, out_dir=Path(tmp), device="cpu",
                                   judge=False, tune=None, db_path=Path(tmp) / "t.db")
            row: dict = {"problem": f.stem, "date": dt.datetime.now(dt.UTC).isoformat()}
            try:
                gen = generate(f, opts)
                row.update(kernels=len(gen.kernels), builds=gen.builds,
                           ranked=[vars(r) for r in gen.ranked])
            except Exception as exc:  # recorded; the suite goes on
                row.update(error=f"{type(exc).__name__}: {exc}"[:300])
            row["seconds"] = round(time.time() - t0, 1)
            with open(results, "a") as fh:
                fh.write(json.dumps(row) + "\n")
            bad = [b for b in row.get("builds", []) if not b["ok"] or b.get("spills")]
            print(f"{f.stem}: {row.get('kernels', 0)} kernels, "
                  f"{len(row.get('builds', []))} builds, {len(bad)} failed or spilling, "
                  f"{len(row.get('ranked', []))} ranked ({row['seconds']} s)", flush=True)
    summarize(results, args.targets.split(","))


def summarize(results: Path, targets: list[str]) -> None:
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    per: dict[str, Counter] = {t: Counter() for t in targets}
    for r in rows:
        for b in r.get("builds", []):
            c = per.setdefault(b["target"], Counter())
            c["kernels"] += 1
            c["ok"] += bool(b["ok"])
            c["spill-free"] += bool(b["ok"]) and not b.get("spills")
            c["ranked"] += "ranked, not measured" in (b.get("note") or "")
    lines = ["# The suite built for every target (no GPU)", "",
             f"- date: {max(r['date'] for r in rows) if rows else ''}",
             f"- command: `python {' '.join(sys.argv)}`",
             f"- problems: {len(rows)}; errors: {sum(1 for r in rows if r.get('error'))}", "",
             "| target | kernels | compiled | spill-free | ranked alternative |",
             "|---|---|---|---|---|"]
    for t, c in per.items():
        lines.append(f"| {t} | {c['kernels']} | {c['ok']} | {c['spill-free']} | {c['ranked']} |")
    bad = [(r["problem"], b["kernel"], b["target"], b.get("spills"), b.get("note", ""))
           for r in rows for b in r.get("builds", []) if not b["ok"] or b.get("spills")]
    if bad:
        lines += ["", "Failed or spilling:", ""]
        lines += [f"- {p} {k} {t}: spills {s} {n}" for p, k, t, s, n in bad]
    (results.parent / "summary.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
