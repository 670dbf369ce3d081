"""Rebuild a bench run's summary.md from its results.jsonl (e.g. after a resumed run).

Usage: python benchmarks/summarize.py RUN_DIR [--name NAME]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from kernelcraft.bench import load_done
from kernelcraft.report import bench_markdown


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("--name", default=None)
    args = ap.parse_args()
    rows = list(load_done(args.run_dir / "results.jsonl").values())
    env = next((r.get("env") for r in rows if r.get("env")), {}) or {}
    header = {
        "name": args.name or str(args.run_dir),
        "date": max((r.get("date", "") for r in rows), default=""),
        "device": rows[0].get("device") if rows else None,
        "gpu": env.get("gpu"),
        "precision": rows[0].get("precision") if rows else None,
        "torch": env.get("torch"),
        "triton": env.get("triton"),
        "command": "kernelcraft bench examples --out RUN_DIR",
    }
    (args.run_dir / "run.json").write_text(json.dumps({**header, "env": env}, indent=2))
    (args.run_dir / "summary.md").write_text(bench_markdown(rows, header))
    print((args.run_dir / "summary.md").read_text())


if __name__ == "__main__":
    main()
