"""What every search strategy shares: results, effort profiles, bookkeeping, the entry point.

A strategy knows nothing of Triton or GPUs. It sees a :class:`~kernelcraft.space.Space`, a
``measure`` callback that builds and times a batch of configs (the caller compiles in
parallel and times on the GPU), and optionally a ``ranker`` (the cost model) that scores
proposals so that only the most promising few are built. The bookkeeping lives here, once,
so that every strategy obeys the same rules: invalid configs and configs already measured
are never sent to ``measure``, a batch whose measurement raises is recorded as crashed (and
so can never win), and the search stops on the configs budget, the wall time, an exhausted
space, or when it stops improving.
"""

from __future__ import annotations

import logging
import math
import random
import re
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Literal, Protocol

from kernelcraft.space import Config, Space

log = logging.getLogger(__name__)

Status = Literal["ok", "wrong", "compile-error", "timeout", "crash", "pruned"]
StopReason = Literal["budget", "time", "exhausted", "converged"]


@dataclass
class Result:
    """The outcome of measuring one config. Only an "ok" result with a latency can win."""

    config: Config
    status: Status
    latency_ms: float | None = None
    error: str = ""

    @property
    def ok(self) -> bool:
        return (self.status == "ok" and self.latency_ms is not None
                and math.isfinite(self.latency_ms) and self.latency_ms >= 0)


#: Builds and times a batch of configs; one result per config.
Measure = Callable[[list[Config]], list[Result]]
#: Scores proposals, higher = expected faster (the cost model). Only the order matters.
Ranker = Callable[[Space, list[Config]], list[float]]

#: Spaces up to this many knob combinations may be enumerated to find the configs that
#: sampling no longer hits (checking them all takes seconds at most); in larger ones a
#: sampler that keeps missing ends the search as "exhausted".
ENUMERATE_LIMIT = 100_000

#: A new best counts as progress (for ``patience``) only when it is at least this much
#: faster: smaller gains are within timing noise and should not keep a search alive.
MIN_GAIN = 0.005


@dataclass(frozen=True)
class Effort:
    """How much a search may spend (configs, seconds) and how it spends it per round."""

    max_measured: int  # configs sent to ``measure``, seeds included
    max_seconds: float  # wall time of the whole search
    batch: int  # configs measured per round
    proposals: int  # candidates generated (and ranked) per round
    population: int  # best results kept as parents
    epsilon: float  # share of each batch picked at random among proposals (exploration)
    patience: int  # rounds without progress before the search stops

    def __post_init__(self) -> None:
        for name in ("max_measured", "batch", "proposals", "population", "patience"):
            if getattr(self, name) < 1:
                raise ValueError(f"effort: {name} must be at least 1, not {getattr(self, name)}")
        if not self.max_seconds > 0:
            raise ValueError(f"effort: max_seconds must be positive, not {self.max_seconds}")
        if not 0.0 <= self.epsilon <= 1.0:
            raise ValueError(f"effort: epsilon must lie in [0, 1], not {self.epsilon}")


EFFORTS: dict[str, Effort] = {
    # a couple of rounds around the heuristic's pick: CI, first runs
    "quick": Effort(max_measured=16, max_seconds=45, batch=8, proposals=64, population=8,
                    epsilon=0.25, patience=2),
    "default": Effort(max_measured=64, max_seconds=300, batch=8, proposals=256, population=16,
                      epsilon=0.25, patience=5),
    # overnight-style tuning of a hot kernel
    "full": Effort(max_measured=256, max_seconds=1800, batch=16, proposals=1024, population=32,
                   epsilon=0.2, patience=8),
}

_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0}
_BUDGET = re.compile(r"(?:\d+(?:\.\d*)?|\.\d+)[smh]")


def parse_budget(text: str) -> float:
    """Seconds in a duration such as "90s", "5m", "1.5h" or "1h30m"."""
    s = text.strip().lower()
    parts = _BUDGET.findall(s)
    if not parts or "".join(parts) != s:
        raise ValueError(f"time budget {text!r}: expected a duration such as 90s, 5m, 1h or 1h30m")
    seconds = sum(float(p[:-1]) * _UNITS[p[-1]] for p in parts)
    if seconds <= 0:
        raise ValueError(f"time budget {text!r}: must be longer than zero")
    return seconds


def effort(name: str, budget: str | None = None) -> Effort:
    """The effort profile ``name``; a ``budget`` ("90s", "5m", "1h") replaces its wall time."""
    try:
        profile = EFFORTS[name]
    except KeyError:
        raise ValueError(f"unknown effort {name!r}; expected one of {sorted(EFFORTS)}") from None
    if budget is not None:
        profile = replace(profile, max_seconds=parse_budget(budget))
    return profile


@dataclass
class SearchResult:
    """What a search found and what it cost."""

    best: Result | None
    history: list[Result]  # in measurement order
    rounds: int  # batches sent to ``measure``
    seconds: float
    stopped_because: StopReason

    @property
    def measured(self) -> int:
        return len(self.history)


class SearchState:
    """The bookkeeping a strategy works against: what is known, the best, what is left.

    Strategies propose; this class filters (invalid, duplicate, already measured or
    skipped), measures, records and decides when to stop, so that no strategy can break
    those rules.
    """

    def __init__(self, space: Space, measure: Measure, effort: Effort, *, seed: int = 0,
                 skip: Collection[str] = (), on_result: Callable[[Result], None] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.space = space
        self.effort = effort
        self.rng = random.Random(seed)
        self.history: list[Result] = []
        self.best: Result | None = None
        self.rounds = 0
        self.stale = 0  # rounds since the last progress
        self._measure = measure
        self._on_result = on_result
        self._clock = clock
        self._start = clock()
        self._seen: set[str] = set(skip)  # measured or skipped: never proposed again
        self._pool: list[Config] | None = None  # unseen valid configs, once enumerated

    # -- what is known ----------------------------------------------------------------

    def elapsed(self) -> float:
        return self._clock() - self._start

    def is_new(self, config: Config) -> bool:
        """Worth measuring: valid, never measured, not skipped."""
        return config.key not in self._seen and self.space.valid(config)

    def population(self, n: int) -> list[Result]:
        """The ``n`` fastest ok results, fastest first (ties: the earlier measured)."""
        ok = [r for r in self.history if r.ok]
        ok.sort(key=lambda r: r.latency_ms)  # stable: keeps measurement order on ties
        return ok[:n]

    # -- stopping ---------------------------------------------------------------------

    def batch_size(self) -> int:
        """How many configs the next round may measure: the effort's batch, cut to the
        configs budget and to what the remaining time fits at the rate seen so far."""
        n = min(self.effort.batch, self.effort.max_measured - len(self.history))
        left = self.effort.max_seconds - self.elapsed()
        if left <= 0:
            return 0
        if self.history:
            per_config = self.elapsed() / len(self.history)
            if per_config > 0:
                n = min(n, int(left / per_config))
        return max(n, 0)

    def stop_reason(self, patience: bool = True) -> StopReason | None:
        if len(self.history) >= self.effort.max_measured:
            return "budget"
        if self.batch_size() < 1:
            return "time"
        if patience and self.stale >= self.effort.patience:
            return "converged"
        return None

    # -- measuring --------------------------------------------------------------------

    def fresh_samples(self, n: int, rng: random.Random | None = None,
                      exclude: Collection[str] = ()) -> list[Config]:
        """Up to ``n`` distinct, new, uniformly drawn valid configs. When rejection
        sampling stops finding new ones the remaining configs are enumerated, so an empty
        answer means the space is exhausted."""
        rng = rng or self.rng
        out: dict[str, Config] = {}
        if self._pool is None:
            misses = 0
            while len(out) < n and misses < 20 + 4 * n:
                cfg = self.space.sample(rng)
                if cfg is None:
                    break
                if cfg.key in out or cfg.key in exclude or not self.is_new(cfg):
                    misses += 1
                    continue
                out[cfg.key] = cfg
            if len(out) == n or self.space.size() > ENUMERATE_LIMIT:
                return list(out.values())
            self._pool = list(self.space.enumerate())
        self._pool = [c for c in self._pool if c.key not in self._seen]
        rest = [c for c in self._pool if c.key not in out and c.key not in exclude]
        out.update((c.key, c) for c in rng.sample(rest, min(n - len(out), len(rest))))
        return list(out.values())

    def unseen(self) -> list[Config]:
        """Every valid config not measured nor skipped yet (enumerates the space)."""
        if self._pool is None:
            self._pool = list(self.space.enumerate())
        self._pool = [c for c in self._pool if c.key not in self._seen]
        return list(self._pool)

    def run_batch(self, configs: Iterable[Config]) -> list[Result]:
        """Measure the new configs among ``configs`` (at most :meth:`batch_size` of them)
        and record them. A raising ``measure`` marks the whole batch as crashed."""
        batch: dict[str, Config] = {}
        limit = self.batch_size()
        for cfg in configs:
            if len(batch) >= limit:
                break
            if cfg.key not in batch and self.is_new(cfg):
                batch[cfg.key] = cfg
        if not batch:
            return []
        todo = list(batch.values())
        self._seen.update(batch)
        self.rounds += 1
        try:
            got = list(self._measure(list(todo)))
        except Exception as e:  # a config that crashes the tuner is recorded, never chosen
            log.warning("measuring %d configs failed: %s", len(todo), e)
            error = f"{type(e).__name__}: {e}"
            got = [Result(c, "crash", None, error) for c in todo]
        by_key = {r.config.key: r for r in got if isinstance(r, Result)}
        results = [by_key.get(c.key) or Result(c, "crash", None, "measure returned no result")
                   for c in todo]
        before = self.best
        for r in results:
            self.history.append(r)
            if r.ok and (self.best is None or r.latency_ms < self.best.latency_ms):
                self.best = r
            if self._on_result is not None:
                self._on_result(r)
        progressed = self.best is not None and (
            before is None or self.best.latency_ms < before.latency_ms * (1 - MIN_GAIN))
        self.stale = 0 if progressed else self.stale + 1
        return results


class Strategy(Protocol):
    """Proposes the next batch; the state filters, measures and records it."""

    def propose(self, n: int) -> list[Config]:
        """Up to ``n`` new valid configs for the next round ([] = nothing left to try)."""
        ...


def rank(ranker: Ranker | None, space: Space, configs: list[Config]) -> list[float] | None:
    """Scores from the cost model, or None (no model, or it failed: search goes on blind)."""
    if ranker is None or not configs:
        return None
    try:
        scores = [float(s) for s in ranker(space, list(configs))]
    except Exception as e:  # the model only advises; a broken one must not stop tuning
        log.warning("ranker failed, proposals are picked at random: %s", e)
        return None
    if len(scores) != len(configs):
        log.warning("ranker returned %d scores for %d configs; ignored",
                    len(scores), len(configs))
        return None
    return [s if not math.isnan(s) else -math.inf for s in scores]


def pick(candidates: list[Config], n: int, rng: random.Random, scores: list[float] | None,
         epsilon: float) -> list[Config]:
    """Epsilon-greedy choice of ``n`` candidates: the best scored, plus ceil(epsilon * n)
    random others so that the model's blind spots still get measured. Without scores,
    ``n`` random ones."""
    if len(candidates) <= n:
        return list(candidates)
    if scores is None:
        return rng.sample(candidates, n)
    n_explore = min(math.ceil(epsilon * n), n - 1)
    order = sorted(range(len(candidates)), key=lambda i: -scores[i])  # stable on ties
    top, rest = order[:n - n_explore], order[n - n_explore:]
    chosen = top + rng.sample(rest, n_explore)
    return [candidates[i] for i in chosen]


STRATEGIES = ("evolutionary", "random")


def run_search(space: Space, measure: Measure, *, strategy: str = "evolutionary",
               effort: Effort | str = "default", ranker: Ranker | None = None, seed: int = 0,
               seeds: Sequence[Config] = (), skip: Collection[str] = frozenset(),
               on_result: Callable[[Result], None] | None = None,
               clock: Callable[[], float] = time.monotonic) -> SearchResult:
    """Search ``space`` for the fastest config that measures "ok".

    ``space.default`` and ``seeds`` are measured first (invalid or skipped ones are
    dropped), then ``strategy`` proposes batch after batch. ``skip`` holds the keys of
    configs measured before (the database): they are never measured again. ``on_result``
    sees every result as it arrives. Deterministic for a given ``seed`` and ``measure``.
    """
    profile = EFFORTS[effort] if isinstance(effort, str) and effort in EFFORTS else effort
    if not isinstance(profile, Effort):
        raise ValueError(f"unknown effort {effort!r}; expected one of {sorted(EFFORTS)}")
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown search strategy {strategy!r}; expected one of {STRATEGIES}")
    state = SearchState(space, measure, profile, seed=seed, skip=skip, on_result=on_result,
                        clock=clock)

    first = [space.default] if space.default is not None else []
    queue = _unique(c for c in [*first, *map(Config, seeds)] if state.is_new(c))
    reason = state.stop_reason(patience=False)
    while queue and reason is None:  # all seeds, unless budget or time run out
        n = state.batch_size()
        state.run_batch(queue[:n])
        queue = queue[n:]
        reason = state.stop_reason(patience=False)
    state.stale = 0  # patience counts the strategy's own rounds

    strat = _make(strategy, state, ranker)
    while reason is None:
        proposals = strat.propose(state.batch_size())
        if not state.run_batch(proposals):
            reason = "exhausted"
            break
        reason = state.stop_reason()
    return SearchResult(best=state.best, history=state.history, rounds=state.rounds,
                        seconds=state.elapsed(), stopped_because=reason)


def _unique(configs: Iterable[Config]) -> list[Config]:
    return list({c.key: c for c in configs}.values())


def _make(name: str, state: SearchState, ranker: Ranker | None) -> Strategy:
    # imported here: the strategies import this module's types
    if name == "random":
        from kernelcraft.search.random_search import RandomSearch
        return RandomSearch(state)
    from kernelcraft.search.evolutionary import Evolutionary
    return Evolutionary(state, ranker)


__all__ = [
    "EFFORTS", "ENUMERATE_LIMIT", "MIN_GAIN", "STRATEGIES", "Effort", "Measure", "Ranker", "Result",
    "SearchResult", "SearchState", "Status", "StopReason", "Strategy", "effort",
    "parse_budget", "pick", "rank", "run_search",
]
