"""Markdown tables from attention_gpu.py, conv_gpu.py and generate_suite.py results.

Usage: python benchmarks/summarize_templates.py RUN_DIR  (prints the tables; the run
directory holds attention.jsonl, conv.jsonl and problems.jsonl, any of them optional)
"""

from __future__ import annotations

import argparse
import json
import math
from collections import defaultdict
from pathlib import Path


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _geomean(xs: list[float]) -> float:
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def attention_table(rows: list[dict]) -> list[str]:
    by: dict[tuple, list[dict]] = defaultdict(list)
    for r in rows:
        by[(r["batch"], r["heads"], r["seq"], r["head_dim"], r["causal"])].append(r)
    out = ["| B x H x S x D | causal | SDPA fp32 ms | compile ms | ours fp32 ms | vs eager | "
           "vs compile | rel. L2 (tol.) | best swept ms (tile) | ours bf16 ms | SDPA bf16 ms "
           "| bf16 ratio |", "|" + "---|" * 12]
    ratios: list[float] = []
    for (b, h, s, d, causal), rs in by.items():
        def get(impl: str, rs: list[dict] = rs, **kw: object) -> dict | None:
            return next((r for r in rs if r["impl"] == impl and all(
                r.get(k) == v for k, v in kw.items())), None)
        eager, comp = get("eager_sdpa_fp32"), get("compile_sdpa_fp32")
        ours = get("kc_fp32", precision="bf16x3", config="heuristic")
        bf = get("kc_bf16", config="heuristic")
        if not (eager and comp and ours and "ms" in ours):
            continue
        ratios.append(eager["ms"] / ours["ms"])
        swept = [r for r in rs if r["impl"] == "kc_fp32" and isinstance(r.get("config"), dict)
                 and "ms" in r and r.get("ok")]
        best = min(swept, key=lambda r: r["ms"]) if swept else None
        best_s = (f"{best['ms']:.3f} ({'x'.join(str(v) for v in best['config'].values())})"
                  if best else "")
        out.append(
            f"| {b}x{h}x{s}x{d} | {'yes' if causal else 'no'} | {eager['ms']:.3f} | "
            f"{comp['ms']:.3f} | {ours['ms']:.3f} | {eager['ms'] / ours['ms']:.2f}x | "
            f"{comp['ms'] / ours['ms']:.2f}x | {ours['rel_l2']:.1e} ({ours['tol_rel']:.0e}) | "
            f"{best_s} | {bf['ms']:.3f} | {bf['sdpa_bf16_ms']:.3f} | {bf['vs_sdpa']:.2f} |"
            if bf else "")
    out.append(f"\nGeometric mean over these shapes, strict fp32 vs eager SDPA: "
               f"{_geomean(ratios):.2f}x")
    return out


def conv_table(rows: list[dict]) -> list[str]:
    by: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by[r["layer"]].append(r)
    out = ["| layer | GFLOP | cuDNN fp32 ms (TFLOP/s) | ours NCHW ms | ours channels-last ms | "
           "ours tf32 ms (not strict) | best swept ms | ours / cuDNN |", "|" + "---|" * 8]
    for layer, rs in by.items():
        def get(impl: str, v: str | None = None, rs: list[dict] = rs) -> dict | None:
            return next((r for r in rs if r["impl"] == impl and (
                v is None or r.get("variant") == v) and "ms" in r), None)
        cud, heur = get("cudnn_fp32"), get("kc", "heuristic")
        cl, tf = get("kc", "channels_last"), get("kc", "tf32")
        swept = [r for r in rs if r["impl"] == "kc" and str(r.get("variant", "")).startswith("{")
                 and "ms" in r]
        best = min((r["ms"] for r in swept), default=None)
        if not (cud and heur):
            continue
        out.append(f"| {layer} | {rs[0]['gflop']:.1f} | {cud['ms']:.3f} ({cud['tflops']:.0f}) | "
                   f"{heur['ms']:.3f} | {cl['ms'] if cl else float('nan'):.3f} | "
                   f"{tf['ms'] if tf else float('nan'):.3f} | "
                   f"{'' if best is None else f'{best:.3f}'} | "
                   f"{heur['ms'] / cud['ms']:.2f}x |")
    return out


def problems_table(rows: list[dict]) -> list[str]:
    out = ["| problem | correct | ms | eager ms | compile ms | vs eager | vs compile | "
           "template groups (kernel ms / eager ms, kept) |", "|" + "---|" * 8]
    for r in rows:
        t = r.get("timing") or {}
        def ms(k: str, t: dict = t) -> float | None:
            return (t.get(k) or {}).get("median_ms")
        groups = ", ".join(f"{c['kernel_ms']:.2f}/{c['eager_ms']:.2f} "
                           f"{'kept' if c['kept'] else 'eager'}"
                           for c in r.get("choices", []) if c["group"] >= 0
                           and max(c["kernel_ms"], c["eager_ms"]) > 0.05)
        fmt = lambda x: "" if x is None else f"{x:.3f}"  # noqa: E731
        out.append(f"| {r['problem']} | {'yes' if r['correct'] else r.get('reason')} | "
                   f"{fmt(ms('candidate'))} | {fmt(ms('eager'))} | {fmt(ms('compile'))} | "
                   f"{fmt(r.get('speedup_eager'))} | {fmt(r.get('speedup_compile'))} | "
                   f"{groups} |")
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("run_dir", type=Path)
    args = ap.parse_args()
    for title, fn, name in (("Attention", attention_table, "attention.jsonl"),
                            ("Convolution layers", conv_table, "conv.jsonl"),
                            ("Problems", problems_table, "problems.jsonl")):
        rows = _rows(args.run_dir / name)
        if rows:
            print(f"### {title}\n")
            print("\n".join(fn(rows)) + "\n")


if __name__ == "__main__":
    main()
