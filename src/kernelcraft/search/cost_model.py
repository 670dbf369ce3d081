"""The learned cost model: ranks configs within a workload, trained on measured records.

Search proposes many configs and can afford to build and time only a few, so the model's
job is to order proposals of one workload (best first), not to predict milliseconds.
Training therefore normalises each workload on its own: the target of a record is its
throughput relative to the workload's best measured config (``best / latency``, in
(0, 1]) and 0 for a config that failed (wrong result, compile error, timeout, crash,
pruned) -- a failure is what the model most needs to learn to avoid.

Features are the records' flat dicts (``knob.*``, ``ctx.*``, ``family.*``, ``static.*``,
see :meth:`kernelcraft.space.Space.features`) plus derived ones that mean the same thing
on every workload, so one model transfers across shapes (:func:`derive_features`).

The records format (one JSON object per line, as the tuning database exports them)::

    {"workload": key, "family": "matmul", "target": "sm_90", "precision": "fp32",
     "config": {...}, "status": "ok", "latency_ms": 0.12, "features": {...},
     "source": "measured"}
"""

from __future__ import annotations

import json
import math
import random
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from kernelcraft.space import Space

FORMAT = "kernelcraft-cost-model"
FORMAT_VERSION = 1
PRETRAINED = Path(__file__).resolve().parent / "pretrained" / "cost_model.json"

#: Below this much data a fitted model is noise; the prior ranks instead.
MIN_WORKLOADS = 2
MIN_OK_RECORDS = 20

#: Relevance levels of the lambdarank labels: ``round(10 * throughput)``. Finer levels
#: (up to LightGBM's default 31) made the top-1 pick worse on the synthetic suite: the
#: exponential gain then chases noise among near-equal configs.
RANK_LEVELS = 11

#: A knob named ``BLOCK_<D>`` / ``TILE_<D>`` is a log2-encoded tile size along the
#: workload dimension ``ctx.<D>`` (Space encodes power-of-two knobs as log2).
_TILE_KNOB = re.compile(r"^knob\.(?:BLOCK|TILE)_?([A-Za-z0-9]+)$", re.IGNORECASE)
#: Context keys that count the processors the programs are spread over (SMs, CUs).
_PROCESSOR_KEYS = ("sms", "num_sms", "cus", "num_cus", "compute_units", "multiprocessors")

_OK = "ok"


def derive_features(features: Mapping[str, Any]) -> dict[str, float]:
    """The record's numeric features plus derived ones that transfer across workloads.

    Raw sizes differ by orders of magnitude between workloads, so a tree split on
    ``ctx.M`` learnt on one shape says little about another; tiles per dimension, padding
    waste, waves over the processors and tail-wave utilisation mean the same thing
    everywhere. Everything is derived from feature *names*, never from problem names:

    - ``derived.log2.ctx.X``: log2 of every positive context number;
    - for each tile knob ``knob.BLOCK_D`` (or ``TILE_D``) with a context size ``ctx.D``
      (matched case-insensitively): ``derived.tiles.D``, its log2, and ``derived.pad.D``,
      the fraction of the padded extent that is out of bounds;
    - ``derived.log2.tiles`` (log2 of the product over tiled dimensions) and
      ``derived.log2.tiles.except.D`` (the product without D: not knowing which dimension
      is a reduction, the grid is one of these), with ``derived.waves*`` = tiles /
      processors and ``derived.util*`` = the busy fraction of the last wave, when the
      context has a processor count (``ctx.sms``, ``ctx.cus``, ...);
    - ``derived.log2.tile_elems``: log2 of the product of the tile sizes;
    - ``derived.log2.intensity``: log2(ctx.flops / ctx.bytes) when both exist.
    """
    out: dict[str, float] = {}
    for k, v in features.items():
        if isinstance(v, bool | int | float):
            out[k] = float(v)
    ctx = {k[4:]: v for k, v in out.items() if k.startswith("ctx.")}
    for name, v in ctx.items():
        if v > 0 and math.isfinite(v):
            out[f"derived.log2.ctx.{name}"] = math.log2(v)
    ctx_lower = {name.lower(): name for name in ctx}

    tiles: dict[str, tuple[float, float]] = {}  # dim -> (tile size, tile count)
    for key in sorted(out):
        m = _TILE_KNOB.match(key)
        dim = ctx_lower.get(m.group(1).lower()) if m else None
        if dim is None or dim in tiles or not math.isfinite(out[key]):
            continue
        size, tile = ctx[dim], 2.0 ** out[key]
        if size > 0 and math.isfinite(size):
            tiles[dim] = (tile, float(math.ceil(size / tile)))
    for dim, (tile, n) in tiles.items():
        out[f"derived.tiles.{dim}"] = n
        out[f"derived.log2.tiles.{dim}"] = math.log2(n)
        out[f"derived.pad.{dim}"] = n * tile / ctx[dim] - 1.0
    if tiles:
        out["derived.log2.tile_elems"] = sum(math.log2(t) for t, _ in tiles.values())
        grids = {"": math.prod(n for _, n in tiles.values())}
        if len(tiles) > 1:
            for dim, (_, n) in tiles.items():
                grids[f".except.{dim}"] = grids[""] / n
        procs = next((ctx[k] for k in (ctx_lower.get(p) for p in _PROCESSOR_KEYS)
                      if k is not None and ctx[k] >= 1), None)
        for suffix, g in grids.items():
            out[f"derived.log2.tiles{suffix}"] = math.log2(g)
            if procs is not None:
                waves = g / procs
                out[f"derived.waves{suffix}"] = waves
                out[f"derived.util{suffix}"] = waves / math.ceil(waves)
    flops, nbytes = ctx.get("flops"), ctx.get("bytes")
    if flops is not None and nbytes is not None and flops > 0 and nbytes > 0:
        out["derived.log2.intensity"] = math.log2(flops / nbytes)
    return out


# -- records ----------------------------------------------------------------------------


def load_records(paths: Iterable[str | Path]) -> list[dict[str, Any]]:
    """Records from JSON-lines files (blank lines skipped)."""
    records = []
    for p in paths:
        with open(p) as f:
            records.extend(json.loads(line) for line in f if line.strip())
    return records


def _field(record: Mapping[str, Any], name: str) -> Any:
    """A workload field, flat (``"target": ...``) or nested under ``"workload"`` (the
    database export carries ``{"workload": {"key", "family", "target", ...}}``)."""
    w = record.get("workload")
    if isinstance(w, Mapping):
        return w.get("key") if name == "workload" else w.get(name, record.get(name))
    return w if name == "workload" else record.get(name)


def workload_key(record: Mapping[str, Any]) -> str:
    """The group a record is ranked within (target and precision are part of it)."""
    return "|".join(str(_field(record, k) or "") for k in ("workload", "target", "precision"))


def _trainable(record: Mapping[str, Any]) -> bool:
    """Measured records only: a config that was ranked but not timed carries no label."""
    if record.get("source", "measured") != "measured" or not record.get("features"):
        return False
    if record.get("status") == _OK:
        lat = record.get("latency_ms")
        return isinstance(lat, int | float) and lat > 0 and math.isfinite(lat)
    return True


def group_records(records: Iterable[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    """Trainable records by workload, in first-seen order."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for r in records:
        if _trainable(r):
            groups.setdefault(workload_key(r), []).append(r)
    return groups


def throughput(group: Sequence[Mapping[str, Any]]) -> np.ndarray:
    """Normalised throughput of each record of one workload: best / latency, failures 0."""
    lats = [r["latency_ms"] if r.get("status") == _OK else math.inf for r in group]
    best = min(lats, default=math.inf)
    if not math.isfinite(best):
        return np.zeros(len(group))
    return np.array([best / lat for lat in lats])


def _record_id(record: Mapping[str, Any]) -> str:
    cfg = record.get("config")
    body = cfg if cfg is not None else record.get("features")
    return workload_key(record) + "|" + json.dumps(body, sort_keys=True, default=str)


# -- the model --------------------------------------------------------------------------


class CostModel:
    """Gradient-boosted trees (LightGBM) that score configs; higher = expected faster.

    Objective: ``"regression"`` (default) fits the normalised throughput directly;
    ``"lambdarank"`` optimises NDCG within each workload on integer relevance labels
    (:data:`RANK_LEVELS`). On the synthetic matmul-like suite of the tests (20 training
    workloads, 5 held out, 6 seeds) both pick within ~2.5% of the best config on average
    (top-1 regret 1.026 vs 1.025), but the regressor orders the rest far better
    (Spearman 0.98 vs 0.92) and is steadier across seeds. Search uses the whole order --
    the model ranks many proposals, the best few are built, and the evolutionary step
    breeds from the upper part -- so the regressor is the default. It also needs no
    label discretisation, sees every row rather than sampled pairs, and learns failures
    as an absolute 0, which orders configs even for workloads where nothing ran. The
    ranking loss stays available in case a large real database says otherwise.
    Training uses LightGBM's native API (``lightgbm.train``), so scikit-learn is not
    needed.

    Until trained on at least :data:`MIN_WORKLOADS` workloads and :data:`MIN_OK_RECORDS`
    successful records, the model ranks by a transparent prior: a ``prior.score``
    feature (e.g. the analytical model's estimate) when present, higher first, configs
    without it last; otherwise the input order is kept (the caller's order is its own
    prior, such as the heuristic seed first).
    """

    def __init__(self, objective: str = "regression", *, n_estimators: int = 300,
                 learning_rate: float = 0.05, num_leaves: int = 31,
                 min_child_samples: int = 5, seed: int = 0, n_jobs: int = 1) -> None:
        if objective not in ("regression", "lambdarank"):
            raise ValueError(f"objective {objective!r}: regression or lambdarank")
        self.objective = objective
        self.rounds = n_estimators
        self.params: dict[str, Any] = {  # LightGBM's native names
            "learning_rate": learning_rate, "num_leaves": num_leaves,
            "min_data_in_leaf": min_child_samples, "bagging_fraction": 0.8,
            "bagging_freq": 1, "feature_fraction": 0.9, "lambda_l2": 1.0, "seed": seed,
            "num_threads": n_jobs, "deterministic": True, "force_row_wise": True,
            "verbose": -1}
        self.feature_names: list[str] = []
        self.meta: dict[str, Any] = {}
        self._booster: Any = None  # lightgbm.Booster
        self._records: dict[str, Mapping[str, Any]] = {}

    # -- training ----------------------------------------------------------------------

    @property
    def trained(self) -> bool:
        """Whether predictions come from the trees (False: the prior ranks)."""
        return self._booster is not None

    @property
    def records(self) -> list[Mapping[str, Any]]:
        """The records the model was last trained on (saved with it, so updates add to
        them rather than forget them)."""
        return list(self._records.values())

    def fit(self, records: Iterable[Mapping[str, Any]]) -> CostModel:
        """Train from scratch on ``records``; too little data leaves the model untrained."""
        self._records = {}
        self._booster = None
        self._absorb(records)
        self._train()
        return self

    def update(self, new_records: Iterable[Mapping[str, Any]]) -> CostModel:
        """Retrain on every record seen plus ``new_records`` (a re-measured config replaces
        its older record). If the data still is too little, the current trees stay."""
        self._absorb(new_records)
        booster, names, meta = self._booster, self.feature_names, self.meta
        self._train()
        if self._booster is None and booster is not None:
            self._booster, self.feature_names, self.meta = booster, names, meta
        return self

    def _absorb(self, records: Iterable[Mapping[str, Any]]) -> None:
        for r in records:
            if _trainable(r):
                rid = _record_id(r)
                self._records.pop(rid, None)  # the newest goes last
                self._records[rid] = r

    def _train(self) -> None:
        import lightgbm

        groups = group_records(self._records.values())
        n_ok = sum(r.get("status") == _OK for g in groups.values() for r in g)
        n_ranked = sum(any(r.get("status") == _OK for r in g) for g in groups.values())
        if n_ranked < MIN_WORKLOADS or n_ok < MIN_OK_RECORDS:
            self._booster = None
            return
        if self.objective == "lambdarank":
            # a workload where nothing ran has no order to learn
            groups = {k: g for k, g in groups.items() if any(r.get("status") == _OK for r in g)}
        rows = [derive_features(r["features"]) for g in groups.values() for r in g]
        self.feature_names = sorted({k for row in rows for k in row})
        x = self._matrix(rows)
        y = np.concatenate([throughput(g) for g in groups.values()])
        if self.objective == "lambdarank":
            data = lightgbm.Dataset(x, np.rint(y * (RANK_LEVELS - 1)),
                                    group=[len(g) for g in groups.values()])
        else:
            data = lightgbm.Dataset(x, y)
        self._booster = lightgbm.train({**self.params, "objective": self.objective}, data,
                                       num_boost_round=self.rounds)
        self.meta = {"objective": self.objective, "workloads": len(groups),
                     "records": len(rows), "ok_records": n_ok,
                     "families": sorted({str(_field(r, "family")) for g in groups.values()
                                         for r in g})}

    # -- inference ---------------------------------------------------------------------

    def _matrix(self, rows: Sequence[Mapping[str, float]]) -> np.ndarray:
        index = {name: i for i, name in enumerate(self.feature_names)}
        x = np.full((len(rows), len(self.feature_names)), np.nan)
        for i, row in enumerate(rows):
            for k, v in row.items():
                j = index.get(k)
                if j is not None:
                    x[i, j] = v
        return x

    def predict(self, features: Sequence[Mapping[str, Any]]) -> np.ndarray:
        """A score per feature dict, higher = expected faster; comparable within a
        workload only. Untrained: the ``prior.score`` feature (-inf where missing), or
        zeros when no config has one."""
        if not features:
            return np.zeros(0)
        if self._booster is None:
            prior = [f.get("prior.score") for f in features]
            if all(p is None for p in prior):
                return np.zeros(len(features))
            return np.array([float(p) if isinstance(p, int | float) else -math.inf
                             for p in prior])
        x = self._matrix([derive_features(f) for f in features])
        return np.asarray(self._booster.predict(x), dtype=float)

    def rank(self, features: Sequence[Mapping[str, Any]]) -> list[int]:
        """Indices of ``features``, best first (ties keep the input order)."""
        scores = self.predict(features)
        return [int(i) for i in np.argsort(-scores, kind="stable")]

    def __call__(self, space: Space, configs: Sequence[Mapping[str, Any]]) -> list[float]:
        """Scores of ``configs`` of ``space``: the model as search's ``Ranker``. Untrained and
        without a prior the scores tie, so pass ``model if model.trained else None`` where
        ties would bias a pick."""
        return self.predict([space.features(c) for c in configs]).tolist()

    # -- persistence -------------------------------------------------------------------

    def save(self, path: str | Path, *, include_records: bool = True) -> None:
        """One JSON file: LightGBM's model text, feature names, settings, metadata and
        (by default) the training records, so that a loaded model keeps learning from
        them plus the user's own. Nothing is pickled."""
        doc = {
            "format": FORMAT, "version": FORMAT_VERSION, "objective": self.objective,
            "params": self.params, "rounds": self.rounds,
            "feature_names": self.feature_names, "meta": self.meta,
            "model": self._booster.model_to_string() if self._booster is not None else None,
            "records": list(self._records.values()) if include_records else [],
        }
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(json.dumps(doc, separators=(",", ":")))
        tmp.replace(path)

    @classmethod
    def load(cls, path: str | Path) -> CostModel:
        """A model written by :meth:`save` (plain JSON; LightGBM parses its own text)."""
        doc = json.loads(Path(path).read_text())
        if doc.get("format") != FORMAT or doc.get("version") != FORMAT_VERSION:
            raise ValueError(f"{path}: not a {FORMAT} v{FORMAT_VERSION} file")
        model = cls(doc["objective"])
        model.params.update(doc.get("params", {}))
        model.rounds = int(doc.get("rounds", model.rounds))
        model.feature_names = list(doc["feature_names"])
        model.meta = dict(doc.get("meta", {}))
        if doc.get("model"):
            import lightgbm

            model._booster = lightgbm.Booster(model_str=doc["model"])
        model._absorb(doc.get("records", []))
        return model

    @classmethod
    def pretrained(cls) -> CostModel:
        """The model shipped with the package, or an untrained one if none ships."""
        return cls.load(PRETRAINED) if PRETRAINED.is_file() else cls()


# -- evaluation -------------------------------------------------------------------------


def spearman(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's rank correlation (average ranks for ties); NaN if either is constant."""

    def ranks(v: np.ndarray) -> np.ndarray:
        order = np.argsort(v, kind="stable")
        r = np.empty(len(v))
        r[order] = np.arange(len(v), dtype=float)
        for val in np.unique(v):  # ties share their mean rank
            tie = v == val
            r[tie] = r[tie].mean()
        return r

    ra, rb = ranks(np.asarray(a, float)), ranks(np.asarray(b, float))
    if ra.std() == 0 or rb.std() == 0:
        return math.nan
    return float(np.corrcoef(ra, rb)[0, 1])


def evaluate(model: CostModel, records: Iterable[Mapping[str, Any]],
             top_k: int = 5) -> dict[str, float]:
    """How well ``model`` picks within each workload of ``records`` that has a success.

    - ``regret``: mean latency of the model's first pick / best latency; a first pick
      that failed counts as the workload's slowest success (the slot was wasted);
    - ``regret_top{k}``: the same for the best of the model's first k picks (search
      measures a few);
    - ``failed_pick``: fraction of workloads whose first pick failed;
    - ``spearman``: mean rank correlation of score and throughput over successes;
    - ``random_regret``: the expected regret of a uniformly random pick, as a baseline.
    """
    regrets, topk, failed, rhos, rand = [], [], [], [], []
    for group in group_records(records).values():
        tput = throughput(group)
        ok = tput > 0
        if not ok.any():
            continue
        worst = 1.0 / tput[ok].min()
        regret = np.where(ok, 1.0 / np.where(ok, tput, 1.0), worst)
        scores = model.predict([r["features"] for r in group])
        order = np.argsort(-scores, kind="stable")
        regrets.append(float(regret[order[0]]))
        topk.append(float(regret[order[:top_k]].min()))
        failed.append(float(not ok[order[0]]))
        rand.append(float(regret.mean()))
        if ok.sum() > 2:
            rho = spearman(scores[ok], tput[ok])
            if not math.isnan(rho):
                rhos.append(rho)
    if not regrets:
        return {"workloads": 0}
    return {"workloads": len(regrets), "regret": float(np.mean(regrets)),
            f"regret_top{top_k}": float(np.mean(topk)), "failed_pick": float(np.mean(failed)),
            "spearman": float(np.mean(rhos)) if rhos else math.nan,
            "random_regret": float(np.mean(rand))}


def split_workloads(records: Sequence[Mapping[str, Any]], folds: int,
                    seed: int = 0) -> list[tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]]:
    """(train, held-out) record lists, each workload held out in exactly one fold."""
    keys = sorted({workload_key(r) for r in records})
    random.Random(seed).shuffle(keys)
    fold_of = {k: i % folds for i, k in enumerate(keys)}
    out = []
    for i in range(folds):
        train = [r for r in records if fold_of[workload_key(r)] != i]
        held = [r for r in records if fold_of[workload_key(r)] == i]
        out.append((train, held))
    return out
