"""The learned cost model on synthetic matmul-like workloads (CPU, seconds).

The latency function below is a toy of a tiled GEMM on an H200-like part: waves of
programs over the SMs, per-program compute at an efficiency set by the accumulator per
thread, memory traffic per tile, a per-iteration overhead that favours deep K steps, and
failures where real kernels fail (shared memory over the limit, registers so far over
that the build gives up). It is not a hardware model; it only has to have the structure a
model must learn to transfer across shapes.
"""

from __future__ import annotations

import json
import math
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from kernelcraft.search import cost_model
from kernelcraft.search.cost_model import CostModel, derive_features, evaluate
from kernelcraft.space import Choice, PowerOfTwo, Space

ROOT = Path(__file__).resolve().parents[1]

SMS = 132
PEAK_SM = 51e12 / SMS  # flop/s per SM (fp32)
BW_SM = 4.25e12 / SMS * 4  # bytes/s per SM, with some L2 reuse
SMEM = 232_448


def _space(m: int, n: int, k: int) -> Space:
    knobs = (PowerOfTwo("BLOCK_M", 16, 256), PowerOfTwo("BLOCK_N", 16, 256),
             PowerOfTwo("BLOCK_K", 16, 128), PowerOfTwo("num_warps", 1, 8),
             Choice("num_stages", (1, 2, 3, 4, 5)))
    ctx = {"M": m, "N": n, "K": k, "sms": SMS, "flops": 2.0 * m * n * k,
           "bytes": 4.0 * (m * k + k * n + m * n)}
    return Space("matmul", knobs, context=ctx)


def _measure(cfg, m: int, n: int, k: int, rng: random.Random) -> tuple[str, float | None,
                                                                        dict[str, float]]:
    """(status, latency_ms, static features) of one config on one shape."""
    bm, bn, bk, warps, stages = (cfg[x] for x in
                                 ("BLOCK_M", "BLOCK_N", "BLOCK_K", "num_warps", "num_stages"))
    smem = (bm + bn) * bk * 4 * stages
    if smem > SMEM:
        return "compile-error", None, {}
    acc = bm * bn / (warps * 32)  # accumulator registers per thread
    regs = 32 + 1.2 * acc
    static = {"static.registers": min(255.0, regs), "static.spills": max(0.0, regs - 255),
              "static.shared": float(smem)}
    if acc > 512:
        return "crash", None, static
    eff = min(1.0, acc / 64) ** 0.5 * min(1.0, 1.5 * warps / 8 + 0.4)
    eff /= 1 + static["static.spills"] / 32
    t_compute = 2 * bm * bn * k / (PEAK_SM * eff)
    t_memory = (bm + bn) * k * 4 / BW_SM
    t_prog = max(t_compute, t_memory) * (1 + 0.6 / stages) + (k / bk) * 4e-8
    waves = math.ceil(math.ceil(m / bm) * math.ceil(n / bn) / SMS)
    ms = (waves * t_prog + 5e-6) * 1e3 * math.exp(rng.gauss(0, 0.03))
    return "ok", ms, static


def synthetic_records(n_workloads: int, seed: int, configs: int = 80) -> list[dict]:
    """Records of ``n_workloads`` random GEMM shapes, ``configs`` sampled configs each."""
    rng = random.Random(seed)
    records = []
    for w in range(n_workloads):
        m, n, k = (rng.choice([rng.randrange(64, 8193, 16), 2 ** rng.randint(7, 13)])
                   for _ in range(3))
        space = _space(m, n, k)
        seen = set()
        for _ in range(configs * 3):
            cfg = space.sample(rng)
            if cfg in seen:
                continue
            seen.add(cfg)
            status, ms, static = _measure(cfg, m, n, k, rng)
            records.append({
                "workload": f"syn{seed}-{w}:{m}x{n}x{k}", "family": "matmul",
                "target": "sm_90", "precision": "fp32", "config": dict(cfg),
                "status": status, "latency_ms": ms,
                "features": {**space.features(cfg), **static}, "source": "measured"})
            if len(seen) == configs:
                break
    return records


@pytest.fixture(scope="module")
def data() -> tuple[list[dict], list[dict]]:
    return synthetic_records(20, seed=1), synthetic_records(5, seed=2)


@pytest.fixture(scope="module")
def model(data) -> CostModel:
    return CostModel().fit(data[0])


def test_picks_near_best_on_held_out_workloads(model: CostModel, data) -> None:
    assert model.trained
    ev = evaluate(model, data[1])
    assert ev["workloads"] == 5
    assert ev["regret"] <= 1.15, ev
    # clearly better than choosing at random among the measured configs
    assert ev["regret"] - 1 < 0.25 * (ev["random_regret"] - 1), ev
    assert ev["spearman"] > 0.9, ev


def test_failed_configs_rank_low(model: CostModel, data) -> None:
    held = data[1]
    positions = []
    for key in {r["workload"] for r in held}:
        group = [r for r in held if r["workload"] == key]
        order = model.rank([r["features"] for r in group])
        where = {idx: pos / (len(group) - 1) for pos, idx in enumerate(order)}
        positions += [where[i] for i, r in enumerate(group) if r["status"] != "ok"]
    assert positions, "the synthetic data should have failures"
    assert np.mean(positions) > 0.7, np.mean(positions)


def test_save_load_round_trip(model: CostModel, data, tmp_path: Path) -> None:
    feats = [r["features"] for r in data[1]]
    path = tmp_path / "m.json"
    model.save(path)
    text = path.read_text()
    assert json.loads(text)["format"] == cost_model.FORMAT  # plain JSON, nothing pickled
    loaded = CostModel.load(path)
    assert loaded.trained and loaded.feature_names == model.feature_names
    np.testing.assert_array_equal(loaded.predict(feats), model.predict(feats))
    assert len(loaded.records) == len(model.records)


def test_untrained_model_falls_back_to_prior() -> None:
    m = CostModel()
    assert not m.trained
    feats = [{"knob.BLOCK_M": 5.0}, {"knob.BLOCK_M": 6.0}, {"knob.BLOCK_M": 7.0}]
    assert m.rank(feats) == [0, 1, 2]  # no prior: the input order stands
    prior = [{"prior.score": 0.2}, {"x": 1.0}, {"prior.score": 0.9}]
    assert m.rank(prior) == [2, 0, 1]  # higher prior first, configs without one last
    assert m.rank([]) == []
    # too little data to train: still untrained, still ranks
    m.fit(synthetic_records(1, seed=3, configs=30))
    assert not m.trained
    assert m.rank(feats) == [0, 1, 2]


def test_update_adds_data_and_keeps_trees_when_data_is_thin(data) -> None:
    m = CostModel(n_estimators=50)
    m.update(data[0][:10])
    assert not m.trained
    m.update(data[0])
    assert m.trained and m.meta["workloads"] == 20
    n = len(m.records)
    m.update(data[0][:5])  # re-measured configs replace their records
    assert len(m.records) == n
    fresh = CostModel(n_estimators=50)
    fresh.update(synthetic_records(1, seed=4, configs=10))
    assert not fresh.trained


def test_pretrained_without_file_is_untrained(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setattr(cost_model, "PRETRAINED", tmp_path / "missing.json")
    assert not CostModel.pretrained().trained


def test_pretrained_loads_the_shipped_file(monkeypatch, model: CostModel,
                                           tmp_path: Path) -> None:
    path = tmp_path / "cost_model.json"
    model.save(path, include_records=False)
    monkeypatch.setattr(cost_model, "PRETRAINED", path)
    loaded = CostModel.pretrained()
    assert loaded.trained and loaded.records == []


def test_derived_features_are_generic() -> None:
    d = derive_features({"knob.BLOCK_M": 7.0, "knob.BLOCK_N": 6.0, "knob.BLOCK_K": 5.0,
                         "knob.SPLIT_K": 1.0, "ctx.M": 1000.0, "ctx.N": 256.0,
                         "ctx.K": 64.0, "ctx.sms": 132.0, "family.matmul": 1.0,
                         "note": "not a number"})
    assert d["derived.tiles.M"] == 8 and d["derived.tiles.N"] == 4 and d["derived.tiles.K"] == 2
    assert d["derived.pad.M"] == pytest.approx(1024 / 1000 - 1)
    assert d["derived.waves.except.K"] == pytest.approx(32 / 132)
    assert d["derived.util.except.K"] == pytest.approx(32 / 132)
    assert d["derived.log2.ctx.M"] == pytest.approx(math.log2(1000))
    assert "note" not in d and "derived.tiles.SPLIT" not in d


def test_database_export_layout(model: CostModel, data) -> None:
    """The database nests the workload's fields; grouping and scores do not change."""
    nested = [{**r, "workload": {"key": r["workload"], "family": r["family"],
                                 "target": r["target"], "precision": r["precision"]}}
              for r in data[1]]
    for r in nested:
        del r["family"], r["target"], r["precision"]
    assert evaluate(model, nested) == evaluate(model, data[1])
    assert cost_model.workload_key(nested[0]) == cost_model.workload_key(data[1][0])


def test_ranker_protocol(model: CostModel) -> None:
    """The model plugs into search as a ``Ranker(space, configs) -> scores``."""
    space = _space(4096, 4096, 4096)
    configs = list(space.enumerate(limit=50))
    scores = model(space, configs)
    assert len(scores) == 50 and all(isinstance(s, float) for s in scores)


def test_training_script(tmp_path: Path) -> None:
    recs = tmp_path / "records.jsonl"
    recs.write_text("".join(json.dumps(r) + "\n" for r in synthetic_records(8, seed=5,
                                                                              configs=40)))
    out = tmp_path / "model.json"
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "train_cost_model.py"),
                          str(recs), "--out", str(out), "--folds", "4",
                          "--n-estimators", "60"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "regret" in run.stdout
    assert CostModel.load(out).trained
