"""Train the cost model on exported tuning records, report held-out quality, write it.

Usage: python benchmarks/train_cost_model.py RECORDS.jsonl [MORE.jsonl ...]
           [--out src/kernelcraft/search/pretrained/cost_model.json] [--folds 5]

Held-out evaluation leaves whole workloads out (k folds over workloads), because the
model's job is to rank configs of shapes it has never seen: a random split of records
would let it memorise each workload's best config. Printed per fold and overall: top-1
regret (latency of the model's first pick / best latency; a failed first pick counts as
the slowest success), top-5 regret, failed first picks, Spearman within workload, and the
same regret for the untrained prior (input order) and for a random pick. The final model
is trained on every record and written with them, so a user's updates add to them.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from kernelcraft.search.cost_model import (
    PRETRAINED,
    CostModel,
    evaluate,
    group_records,
    load_records,
    split_workloads,
)


def _row(name: str, ev: dict[str, float]) -> str:
    if not ev.get("workloads"):
        return f"{name:>8}  (no held-out workload with a success)"
    return (f"{name:>8}  {ev['workloads']:>9}  {ev['regret']:>6.3f}  {ev['regret_top5']:>6.3f}"
            f"  {ev['failed_pick']:>6.2f}  {ev['spearman']:>8.3f}  {ev['prior_regret']:>6.3f}"
            f"  {ev['random_regret']:>6.3f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("records", nargs="+", type=Path, help="JSON-lines record files")
    ap.add_argument("--out", type=Path, default=PRETRAINED)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--objective", choices=("regression", "lambdarank"), default="regression")
    ap.add_argument("--n-estimators", type=int, default=300)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-records", action="store_true",
                    help="write the trees only, not the training records")
    args = ap.parse_args()

    t0 = time.perf_counter()
    records = load_records(args.records)
    groups = group_records(records)
    n_ok = sum(r.get("status") == "ok" for g in groups.values() for r in g)
    print(f"{len(records)} records, {sum(map(len, groups.values()))} trainable, "
          f"{n_ok} ok, {len(groups)} workloads")

    def make() -> CostModel:
        return CostModel(args.objective, n_estimators=args.n_estimators, seed=args.seed)

    folds = min(args.folds, len(groups))
    if folds >= 2:
        print(f"\nleave-workloads-out, {folds} folds ({args.objective})")
        print(f"{'fold':>8}  {'workloads':>9}  {'regret':>6}  {'top5':>6}  {'failed':>6}"
              f"  {'spearman':>8}  {'prior':>6}  {'random':>6}")
        parts = []
        for i, (train, held) in enumerate(split_workloads(records, folds, args.seed)):
            ev = evaluate(make().fit(train), held)
            if ev.get("workloads"):
                ev["prior_regret"] = evaluate(CostModel(), held)["regret"]
                parts.append(ev)
            print(_row(str(i), ev))
        if parts:
            w = np.array([p["workloads"] for p in parts], dtype=float)
            total = {"workloads": int(w.sum())}
            for k in parts[0]:
                if k != "workloads":
                    v = np.array([p[k] for p in parts])
                    keep = ~np.isnan(v)
                    total[k] = float(np.average(v[keep], weights=w[keep])) if keep.any() \
                        else float("nan")
            print(_row("all", total))
    else:
        print("fewer than 2 workloads: no held-out evaluation")

    model = make().fit(records)
    if not model.trained:
        print("too little data to train (need 2 workloads and 20 ok records); "
              "writing an untrained model, which ranks by the prior")
    model.save(args.out, include_records=not args.no_records)
    print(f"\nwrote {args.out} ({args.out.stat().st_size / 1e3:.0f} kB, "
          f"{len(model.feature_names)} features) in {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
