"""One table from several generate_suite.py result files: the latest row of each problem.

Later files win (pass them oldest first); the ``run`` column says which file a row came
from, so rows measured before a later change stay identifiable.

Usage: python benchmarks/summarize_runs.py A.jsonl B.jsonl ... [--prefix conv_ block_] [--cards]
       [--suite benchmarks/problems]

``--cards`` adds the card that timed each row and the row's roofline (% of that card's
bandwidth or matrix ceiling), and counts rows per card and memory-bound rows at 80% or more.
A file named ``results.jsonl`` is named by its folder in the ``run`` column.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("files", type=Path, nargs="+")
    ap.add_argument("--prefix", nargs="*", default=None, help="only problems starting so")
    ap.add_argument("--cards", action="store_true", help="card and roofline columns")
    ap.add_argument("--suite", type=Path, default=None,
                    help="only problems with a file in this folder (runs may hold others)")
    args = ap.parse_args()
    names = {f.stem for f in args.suite.glob("*.py")} if args.suite else None
    latest: dict[str, tuple[str, dict]] = {}
    for f in args.files:
        for line in f.read_text().splitlines():
            r = json.loads(line)
            if names is not None and r["problem"] not in names:
                continue
            if args.prefix is None or r["problem"].startswith(tuple(args.prefix)):
                latest[r["problem"]] = (f.parent.name if f.stem == "results" else f.stem, r)
    extra = " gpu | roofline % | bound |" if args.cards else ""
    print("| problem | run | correct | ms | eager ms | compile ms | vs eager | vs compile | "
          "path |" + extra)
    print("|" + "---|" * (12 if args.cards else 9))
    se, sc = [], []
    cards: dict[str, int] = {}
    memory = [0, 0]
    for name, (run, r) in sorted(latest.items()):
        t = r.get("timing") or {}
        ms = (t.get("candidate") or {}).get("median_ms")
        eager = (t.get("eager") or {}).get("median_ms")
        comp = (t.get("compile") or {}).get("median_ms")
        e, c = r.get("speedup_eager"), r.get("speedup_compile")
        if r.get("correct") and e and c:
            se.append(math.log(e))
            sc.append(math.log(c))
        path = f"{r.get('kernels', 0)} kernel(s)"
        prog = [ch for ch in r.get("choices") or [] if ch.get("group") == -1]
        if prog and not prog[0].get("kept"):
            path = "problem's forward (faster)"
        fmt = lambda v: "-" if v is None else f"{v:.3f}"  # noqa: E731
        row = (f"| {name} | {run} | {'yes' if r.get('correct') else 'NO'} | {fmt(ms)} | "
               f"{fmt(eager)} | {fmt(comp)} | {e or 0:.2f}x | {c or 0:.2f}x | {path} |")
        if args.cards:
            gpu = _card((r.get("env") or {}).get("gpu") or "")
            roof = r.get("roofline") or {}
            pct, bound = roof.get("pct"), roof.get("bound") or "-"
            cards[gpu] = cards.get(gpu, 0) + 1
            if r.get("correct") and bound == "memory" and pct is not None:
                memory[0] += pct >= 80
                memory[1] += 1
            row += f" {gpu} | {'-' if pct is None else f'{pct:.0f}'} | {bound} |"
        print(row)
    if se:
        print(f"\n{len(latest)} problems; geomean vs eager {math.exp(sum(se) / len(se)):.2f}x, "
              f"vs torch.compile {math.exp(sum(sc) / len(sc)):.2f}x (correct rows)")
    if args.cards:
        print("rows per card: " + ", ".join(f"{n} {k}" for k, n in sorted(cards.items()))
              + f"; memory-bound rows at 80% of their card's bandwidth or more: "
                f"{memory[0]} of {memory[1]}")


def _card(name: str) -> str:
    """A short card name (H100, H200, MI300X) from the device name the row carries."""
    for short in ("H100", "H200", "B200", "A100", "MI300X", "MI325X", "MI250"):
        if short in name:
            return short
    return name or "-"


if __name__ == "__main__":
    main()
