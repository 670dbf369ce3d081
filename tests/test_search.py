"""Search strategies on a synthetic matmul-like space: rules, limits, sample efficiency.

No GPU and no Triton: latency is a synthetic function of the knobs with a unique optimum,
a region that "fails to compile" (and looks attractive to the ranker), one that computes
wrong results and one that times out, so every rule of the search can be checked exactly
and fast.
"""

from __future__ import annotations

import hashlib
import math
import random
import statistics
from dataclasses import dataclass, replace

import pytest

from kernelcraft.search.strategy import (
    EFFORTS,
    Effort,
    Result,
    effort,
    parse_budget,
    pick,
    run_search,
)
from kernelcraft.space import Choice, Config, PowerOfTwo, Space

WARPS = (2, 4, 8)
STAGES = (1, 2, 3, 4, 5)


def _smem(c: Config) -> str | None:
    need = (c["BLOCK_M"] + c["BLOCK_N"]) * c["BLOCK_K"] * 2 * c["num_stages"]
    return f"needs {need} bytes of shared memory" if need > 160 * 1024 else None


def _tile(c: Config) -> str | None:
    return "tile too large" if c["BLOCK_M"] * c["BLOCK_N"] > 128 * 256 else None


def make_space(default: Config | None = None) -> Space:
    return Space(
        family="matmul",
        knobs=(PowerOfTwo("BLOCK_M", 16, 256), PowerOfTwo("BLOCK_N", 16, 256),
               PowerOfTwo("BLOCK_K", 16, 128), Choice("num_warps", WARPS),
               Choice("num_stages", STAGES)),
        constraints=(_tile, _smem),
        default=default,
    )


def _unit(text: str) -> float:
    """A deterministic pseudo-random number in [0, 1) (Python's str hash is salted)."""
    return int(hashlib.sha256(text.encode()).hexdigest()[:12], 16) / 16**12


@dataclass(frozen=True)
class Workload:
    """A bowl in log2 knob space, skewed by an interaction and roughened by bumps."""

    name: str
    center: tuple[float, float, float, float, float]  # log2 M, N, K; warps index; stages
    weights: tuple[float, float, float, float, float]
    base_ms: float

    def model(self, c: Config) -> float:
        """The smooth-ish latency, also for configs that fail (what a model would guess)."""
        x = (math.log2(c["BLOCK_M"]), math.log2(c["BLOCK_N"]), math.log2(c["BLOCK_K"]),
             WARPS.index(c["num_warps"]), c["num_stages"])
        d = sum(w * (v - m) ** 2 for w, v, m in zip(self.weights, x, self.center, strict=True))
        d += 0.05 * (x[0] - self.center[0]) * (x[1] - self.center[1])
        bump = 0.04 * (_unit(self.name + c.key) - 0.5)  # within +-2%: keeps the optimum unique
        return self.base_ms * math.exp(d) * (1 + bump)

    def outcome(self, c: Config) -> Result:
        if c["num_warps"] == 2 and c["BLOCK_M"] * c["BLOCK_N"] >= 128 * 64:
            return Result(c, "compile-error", None, "out of registers")
        if c["num_stages"] == 1 and c["BLOCK_K"] == 128:
            return Result(c, "wrong", 1.0, "mismatch")  # fast, and wrong
        if c["BLOCK_M"] == 16 and c["BLOCK_N"] == 16 and c["BLOCK_K"] == 16:
            return Result(c, "timeout", None, "timed out")
        return Result(c, "ok", self.model(c))

    def measure(self, batch: list[Config]) -> list[Result]:
        return [self.outcome(c) for c in batch]


WORKLOADS = [
    # big square matmul: large tiles, 8 warps, deep pipeline; failing region right next door
    Workload("square", (7.0, 7.6, 5.2, 2.0, 3.6), (0.30, 0.25, 0.35, 0.25, 0.12), 1.0),
    # skinny M: small BLOCK_M, wide N
    Workload("skinny", (4.3, 7.8, 6.0, 1.0, 2.4), (0.40, 0.22, 0.30, 0.20, 0.15), 0.2),
    # small K: shallow pipeline, mid tiles, 2 warps preferred but large tiles fail with 2
    Workload("small-k", (6.2, 6.1, 4.1, 0.0, 1.8), (0.25, 0.28, 0.45, 0.30, 0.20), 0.05),
]


def oracle_ranker(workload: Workload, seed: int, noise: float = 0.1):
    """The true latency with ~10% multiplicative noise; blind to failures (it scores failing
    configs by the smooth model, 10% better than that, as a fooled model would)."""

    def ranker(space: Space, configs: list[Config]) -> list[float]:
        out = []
        for c in configs:
            guess = workload.model(c)
            if workload.outcome(c).status != "ok":
                guess *= 0.9
            eps = (_unit(f"{seed}:{c.key}") - 0.5) * 2 * noise * math.sqrt(3)
            out.append(-math.log(guess) + eps)
        return out

    return ranker


def all_valid(space: Space) -> list[Config]:
    return list(space.enumerate())


@pytest.mark.parametrize("w", WORKLOADS, ids=lambda w: w.name)
def test_synthetic_workloads_have_a_unique_optimum_and_failures(w: Workload):
    results = [w.outcome(c) for c in all_valid(make_space())]
    ok = sorted(r.latency_ms for r in results if r.ok)
    assert len(ok) > 300 and ok[0] < ok[1]
    assert {"compile-error", "wrong", "timeout"} <= {r.status for r in results}
    assert make_space().size() > EFFORTS["default"].max_measured  # not enumerated


class Recorder:
    """A measure callback that checks the rules as the strategy calls it."""

    def __init__(self, space: Space, fn, skip: set[str] = frozenset()):
        self.space, self.fn, self.skip = space, fn, skip
        self.calls: list[list[Config]] = []
        self.keys: set[str] = set()

    def __call__(self, batch: list[Config]) -> list[Result]:
        self.calls.append(list(batch))
        for c in batch:
            assert self.space.check(c) is None, f"invalid config measured: {c}"
            assert c.key not in self.skip, f"skipped config measured: {c}"
            assert c.key not in self.keys, f"config measured twice: {c}"
            self.keys.add(c.key)
        return self.fn(batch)


def _best_ok(history: list[Result]) -> Result:
    return min((r for r in history if r.ok), key=lambda r: r.latency_ms)


@pytest.mark.parametrize("strategy", ["random", "evolutionary"])
@pytest.mark.parametrize("w", WORKLOADS, ids=lambda w: w.name)
def test_never_measures_invalid_or_skipped_and_only_ok_wins(strategy: str, w: Workload):
    space = make_space()
    valid = all_valid(space)
    optimum = min((w.outcome(c) for c in valid if w.outcome(c).ok),
                  key=lambda r: r.latency_ms).config
    skip = {optimum.key} | {c.key for c in random.Random(1).sample(valid, 40)}
    invalid = Config({"BLOCK_M": 256, "BLOCK_N": 256, "BLOCK_K": 128, "num_warps": 8,
                      "num_stages": 5})
    assert not space.valid(invalid)
    rec = Recorder(space, w.measure, skip)
    out = run_search(space, rec, strategy=strategy, effort=replace(EFFORTS["default"], patience=99),
                     ranker=oracle_ranker(w, 0), seeds=[invalid, optimum], skip=skip,
                     clock=lambda: 0.0)
    assert out.measured == 64 and out.stopped_because == "budget"
    assert [r.config for r in out.history] == [c for call in rec.calls for c in call]
    assert out.best is not None and out.best.ok and out.best.status == "ok"
    assert out.best == _best_ok(out.history)
    assert out.best.config != optimum
    assert any(not r.ok for r in out.history)  # failures were met, and lost


def test_failed_configs_never_win_even_when_fastest():
    """A "wrong" result reporting a tiny latency and an ok one without latency never win."""
    space = make_space()

    def measure(batch: list[Config]) -> list[Result]:
        out = []
        for i, c in enumerate(batch):
            if i % 3 == 0:
                out.append(Result(c, "wrong", 1e-6, "mismatch"))
            elif i % 3 == 1:
                out.append(Result(c, "ok", None))
            else:
                out.append(Result(c, "ok", 1.0 + _unit(c.key)))
        return out

    for strategy in ("random", "evolutionary"):
        out = run_search(space, measure, strategy=strategy, effort="quick", clock=lambda: 0.0)
        assert out.best is not None and out.best.status == "ok"
        assert out.best.latency_ms >= 1.0


@pytest.mark.parametrize("strategy", ["random", "evolutionary"])
def test_budget_is_respected(strategy: str):
    space, w = make_space(), WORKLOADS[0]
    prof = replace(EFFORTS["default"], max_measured=20, patience=99)
    seen: list[Result] = []
    out = run_search(space, Recorder(space, w.measure), strategy=strategy, effort=prof,
                     on_result=seen.append, clock=lambda: 0.0)
    assert out.measured == 20 and out.stopped_because == "budget"
    assert seen == out.history


@pytest.mark.parametrize("strategy", ["random", "evolutionary"])
def test_time_limit_is_respected(strategy: str):
    """Each config takes one fake second; the last batch shrinks to fit the time left."""
    space, w = make_space(), WORKLOADS[1]
    now = [0.0]

    def measure(batch: list[Config]) -> list[Result]:
        now[0] += len(batch)
        return w.measure(batch)

    prof = replace(EFFORTS["default"], max_measured=1000, max_seconds=45, patience=99)
    out = run_search(space, measure, strategy=strategy, effort=prof, clock=lambda: now[0])
    assert out.stopped_because == "time"
    assert out.seconds <= 45 and out.measured == 45


def test_time_limit_with_a_budget_string():
    space, w = make_space(), WORKLOADS[2]
    now = [100.0]

    def measure(batch: list[Config]) -> list[Result]:
        now[0] += 10.0  # a whole batch costs ten seconds
        return w.measure(batch)

    prof = replace(effort("quick", "1m"), max_measured=1000, patience=99)
    out = run_search(space, measure, effort=prof, clock=lambda: now[0])
    assert out.stopped_because == "time" and out.seconds <= 60


@pytest.mark.parametrize("strategy", ["random", "evolutionary"])
def test_a_raising_measure_records_crashes_and_goes_on(strategy: str):
    space, w = make_space(), WORKLOADS[0]
    calls = [0]

    def measure(batch: list[Config]) -> list[Result]:
        calls[0] += 1
        if calls[0] in (1, 3):
            raise RuntimeError(f"worker died in call {calls[0]}")
        return w.measure(batch)

    default = Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 32, "num_warps": 8,
                      "num_stages": 3})
    space = make_space(default=default)
    prof = replace(EFFORTS["default"], max_measured=40, patience=99)
    out = run_search(space, measure, strategy=strategy, effort=prof,
                     ranker=oracle_ranker(w, 0), clock=lambda: 0.0)
    crashed = [r for r in out.history if r.status == "crash"]
    assert out.stopped_because == "budget" and out.measured == 40
    assert out.history[0].config == default and out.history[0].status == "crash"
    assert {r.error for r in crashed} == {"RuntimeError: worker died in call 1",
                                          "RuntimeError: worker died in call 3"}
    assert out.best is not None and out.best.status == "ok"
    assert out.best.config not in {r.config for r in crashed}
    # a crashed config is never measured again, even though it is the default
    assert sum(r.config == default for r in out.history) == 1


def test_measure_missing_results_are_crashes():
    space, w = make_space(), WORKLOADS[0]
    out = run_search(space, lambda batch: w.measure(batch)[1:], strategy="random",
                     effort="quick", clock=lambda: 0.0)
    missing = [r for r in out.history if r.error == "measure returned no result"]
    assert len(missing) == out.rounds and all(r.status == "crash" for r in missing)


def test_seeds_are_measured_first():
    space = make_space()
    w = WORKLOADS[0]
    default = Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32, "num_warps": 4,
                      "num_stages": 2})
    space = make_space(default=default)
    seeds = [Config({**default, "BLOCK_M": m}) for m in (16, 32, 128)]
    skipped = Config({**default, "num_stages": 4})
    invalid = Config({**default, "BLOCK_M": 256, "BLOCK_N": 256})
    rec = Recorder(space, w.measure, {skipped.key})
    out = run_search(space, rec, effort="quick", seeds=[*seeds, default, skipped, invalid],
                     skip={skipped.key}, clock=lambda: 0.0)
    assert [r.config for r in out.history[:4]] == [default, *seeds]
    assert rec.calls[0][:4] == [default, *seeds]


def test_all_seeds_are_measured_even_past_patience():
    space = make_space()
    seeds = list(space.enumerate(limit=30))
    out = run_search(space, lambda b: [Result(c, "ok", 1.0) for c in b], seeds=seeds,
                     effort=replace(EFFORTS["quick"], max_measured=100, patience=1),
                     clock=lambda: 0.0)
    assert [r.config for r in out.history[:30]] == seeds
    assert out.stopped_because == "converged" and out.measured == 38


def test_epsilon_greedy_pick():
    configs = [Config({"i": i}) for i in range(100)]
    scores = [float(i) for i in range(100)]  # higher is better: 99 first
    chosen = pick(configs, 8, random.Random(0), scores, epsilon=0.25)
    assert [c["i"] for c in chosen[:6]] == [99, 98, 97, 96, 95, 94]
    assert len({c["i"] for c in chosen}) == 8 and all(c["i"] < 94 for c in chosen[6:])
    assert [c["i"] for c in pick(configs, 3, random.Random(0), scores, 0.0)] == [99, 98, 97]
    assert len(pick(configs, 5, random.Random(0), None, 0.25)) == 5
    assert pick(configs[:3], 5, random.Random(0), None, 0.25) == configs[:3]


def test_small_space_is_enumerated_then_exhausted():
    space = Space("tiny", (PowerOfTwo("BLOCK", 16, 128), Choice("num_warps", (4, 8))),
                  constraints=(lambda c: "no" if c["BLOCK"] == 128 and c["num_warps"] == 4
                               else None,))
    n_valid = len(all_valid(space))
    for strategy in ("random", "evolutionary"):
        rec = Recorder(space, lambda b: [Result(c, "ok", c["BLOCK"] / c["num_warps"]) for c in b])
        out = run_search(space, rec, strategy=strategy,
                         effort=replace(EFFORTS["quick"], patience=99), clock=lambda: 0.0)
        assert out.stopped_because == "exhausted" and out.measured == n_valid == 7
        assert out.best is not None and out.best.config == Config({"BLOCK": 16, "num_warps": 8})
    # with a model, the enumeration runs best-ranked first
    out = run_search(space, lambda b: [Result(c, "ok", c["BLOCK"] / c["num_warps"]) for c in b],
                     effort=replace(EFFORTS["quick"], batch=3, patience=99),
                     ranker=lambda s, cs: [c["num_warps"] / c["BLOCK"] for c in cs],
                     clock=lambda: 0.0)
    latencies = [r.latency_ms for r in out.history]
    assert latencies == sorted(latencies) and out.rounds == 3


def test_an_empty_space_is_exhausted_at_once():
    space = Space("none", (Choice("x", (1, 2)),), constraints=(lambda c: "never",))
    for strategy in ("random", "evolutionary"):
        out = run_search(space, lambda b: pytest.fail("measured"), strategy=strategy,
                         clock=lambda: 0.0)
        assert out.best is None and out.history == [] and out.stopped_because == "exhausted"


def test_patience_stops_a_search_that_no_longer_improves():
    space = make_space()
    out = run_search(space, lambda b: [Result(c, "ok", 1.0) for c in b],
                     effort=replace(EFFORTS["default"], max_measured=1000, patience=3),
                     clock=lambda: 0.0)
    # the first round finds a best; three more rounds find nothing better
    assert out.stopped_because == "converged" and out.rounds == 4


def test_deterministic_for_a_seed():
    space, w = make_space(), WORKLOADS[1]

    def keys(seed: int) -> list[str]:
        out = run_search(space, w.measure, effort="default", ranker=oracle_ranker(w, 0),
                         seed=seed, clock=lambda: 0.0)
        return [r.config.key for r in out.history]

    assert keys(3) == keys(3) and keys(3) != keys(4)


def test_a_broken_ranker_does_not_stop_the_search():
    space, w = make_space(), WORKLOADS[0]

    def ranker(space: Space, configs: list[Config]) -> list[float]:
        raise RuntimeError("model file missing")

    out = run_search(space, w.measure, effort=replace(EFFORTS["quick"], max_measured=24),
                     ranker=ranker, clock=lambda: 0.0)
    assert out.measured == 24 and out.best is not None


def test_bad_arguments():
    space = make_space()
    with pytest.raises(ValueError, match="strategy"):
        run_search(space, lambda b: [], strategy="annealing")
    with pytest.raises(ValueError, match="effort"):
        run_search(space, lambda b: [], effort="extreme")
    with pytest.raises(ValueError, match="epsilon"):
        replace(EFFORTS["quick"], epsilon=1.5)


# -- effort profiles ----------------------------------------------------------------------


def test_effort_profiles():
    assert effort("quick", "90s").max_seconds == 90
    assert effort("default", "5m").max_seconds == 300
    assert effort("full", "1h").max_seconds == 3600
    assert effort("full", "1h30m").max_seconds == 5400
    assert effort("quick", " 1.5M ").max_seconds == 90
    assert effort("quick") == EFFORTS["quick"]
    q, d, f = (EFFORTS[k] for k in ("quick", "default", "full"))
    assert q.max_measured < d.max_measured < f.max_measured
    assert q.max_seconds < d.max_seconds < f.max_seconds
    assert all(isinstance(e, Effort) and e.batch <= e.proposals for e in (q, d, f))
    with pytest.raises(AttributeError):
        q.batch = 3  # type: ignore[misc]


@pytest.mark.parametrize("bad", ["", "90", "5x", "m", "1h 30m", "-5m", "0s", "1e3s", "five m",
                                 "1.2.3s"])
def test_bad_budget_strings(bad: str):
    with pytest.raises(ValueError, match="time budget"):
        parse_budget(bad)
    with pytest.raises(ValueError, match="90s, 5m, 1h|longer than zero"):
        effort("quick", bad)


def test_unknown_effort_name():
    with pytest.raises(ValueError, match="quick"):
        effort("turbo")


# -- sample efficiency --------------------------------------------------------------------


def _configs_to_reach(history: list[Result], target_ms: float) -> int | None:
    """How many configs were measured when the best first reached ``target_ms``."""
    for i, r in enumerate(history, 1):
        if r.ok and r.latency_ms <= target_ms:
            return i
    return None


def test_sample_efficiency_against_random_search():
    """With a good ranker (the true latency with 25% noise, fooled by the failing region),
    evolutionary search gets within 95% of what a 200-config random search finds with at
    most a third of the configs random search needed; without a ranker it still needs
    clearly fewer than random search."""
    n_random, seeds = 200, range(5)
    needed: dict[str, list[int]] = {"random": [], "evolutionary": [], "blind": []}
    report = []
    for w in WORKLOADS:
        space = make_space()
        per_w: dict[str, list[int]] = {k: [] for k in needed}
        for seed in seeds:
            rand = run_search(space, w.measure, strategy="random",
                              effort=replace(EFFORTS["full"], max_measured=n_random,
                                             patience=10**6),
                              seed=seed, clock=lambda: 0.0)
            target = rand.best.latency_ms / 0.95
            per_w["random"].append(_configs_to_reach(rand.history, target))
            for name, ranker, budget in [("evolutionary", oracle_ranker(w, seed, 0.25),
                                          n_random // 3),
                                         ("blind", None, n_random)]:
                evo = run_search(space, w.measure, strategy="evolutionary",
                                 effort=replace(EFFORTS["default"], max_measured=budget,
                                                patience=10**6),
                                 ranker=ranker, seed=seed, clock=lambda: 0.0)
                # not reached within its budget: counted as the whole random run
                per_w[name].append(_configs_to_reach(evo.history, target) or n_random)
                assert evo.best is not None and evo.best.ok
        for k, v in per_w.items():
            needed[k] += v
        report.append(f"{w.name}: " + ", ".join(
            f"{k} {statistics.mean(v):.1f} {v}" for k, v in per_w.items()))
    r, e, b = (statistics.mean(needed[k]) for k in ("random", "evolutionary", "blind"))
    report.append(f"mean configs to reach 95% of random-200's best: random {r:.1f}, "
                  f"evolutionary with ranker {e:.1f} ({e / r:.2f}x), without {b:.1f} "
                  f"({b / r:.2f}x)")
    print("\n".join(report))
    assert e <= r / 3, report
    assert b <= r / 1.5, report
