"""One table from several generate_suite.py result files: the latest row of each problem.

Later files win (pass them oldest first); the ``run`` column says which file a row came
from, so rows measured before a later change stay identifiable.

Usage: python benchmarks/summarize_runs.py A.jsonl B.jsonl ... [--prefix conv_ block_]
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
    args = ap.parse_args()
    latest: dict[str, tuple[str, dict]] = {}
    for f in args.files:
        for line in f.read_text().splitlines():
            r = json.loads(line)
            if args.prefix is None or r["problem"].startswith(tuple(args.prefix)):
                latest[r["problem"]] = (f.stem, r)
    print("| problem | run | correct | ms | eager ms | compile ms | vs eager | vs compile | "
          "path |")
    print("|" + "---|" * 9)
    se, sc = [], []
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
        print(f"| {name} | {run} | {'yes' if r.get('correct') else 'NO'} | {fmt(ms)} | "
              f"{fmt(eager)} | {fmt(comp)} | {e or 0:.2f}x | {c or 0:.2f}x | {path} |")
    if se:
        print(f"\n{len(latest)} problems; geomean vs eager {math.exp(sum(se) / len(se)):.2f}x, "
              f"vs torch.compile {math.exp(sum(sc) / len(sc)):.2f}x (correct rows)")


if __name__ == "__main__":
    main()
