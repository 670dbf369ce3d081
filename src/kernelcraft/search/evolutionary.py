"""Evolutionary search steered by the cost model.

Building and timing a config costs seconds; scoring one with the cost model costs
microseconds. So each round generates many proposals around the best configs found so far
(mutations of one or two knobs, crossovers of two parents, a few uniform samples), lets the
ranker score all of them, and measures only the top few plus an epsilon share of random
others (the model's blind spots must still get measured, or its mistakes never get
corrected). Without a ranker the batch is drawn at random from the proposals, which is
still a local search around the best configs. A space no larger than the configs budget is
simply enumerated, best-ranked first.
"""

from __future__ import annotations

import random

from kernelcraft.search.strategy import Ranker, Result, SearchState, pick, rank
from kernelcraft.space import Config

#: Shares of each round's proposals made by mutation and by crossover; uniform samples
#: fill the rest (and everything while no config has measured "ok" yet).
MUTATION_SHARE = 0.6
CROSSOVER_SHARE = 0.25
#: Chance that a mutation moves two knobs rather than one (to step over invalid ridges).
TWO_KNOBS = 0.3
#: Parents are the best of this many population members drawn at random: a pull towards
#: the fastest that still lets the others breed.
TOURNAMENT = 3


class Evolutionary:
    """Mutation, crossover and epsilon-greedy selection of what the ranker likes best."""

    def __init__(self, state: SearchState, ranker: Ranker | None = None) -> None:
        self.state = state
        self.ranker = ranker
        self.rng = state.rng
        self._order: list[Config] | None = None  # the whole space, once it is enumerated
        self._enumerate = state.space.size() <= state.effort.max_measured

    def propose(self, n: int) -> list[Config]:
        if n < 1:
            return []
        if self._enumerate:
            return self._enumerated(n)
        # many proposals only pay off when a model picks among them; without one, diluting
        # the batch with a big random pick would weaken the pull towards the best configs
        candidates = self.candidates(self.state.effort.proposals if self.ranker else n)
        if len(candidates) < n:  # the neighbourhood is used up: widen with uniform samples
            more = self.state.fresh_samples(n - len(candidates), exclude=candidates)
            candidates.update((c.key, c) for c in more)
        configs = list(candidates.values())
        scores = rank(self.ranker, self.state.space, configs)
        if scores is None:
            self.ranker = None  # it failed: go on as a search without a model
        return pick(configs, n, self.rng, scores, self.state.effort.epsilon)

    def candidates(self, target: int) -> dict[str, Config]:
        """Up to ``target`` new, valid, distinct proposals, keyed by config key."""
        state, space, rng = self.state, self.state.space, self.rng
        population = state.population(state.effort.population)
        out: dict[str, Config] = {}

        def add(cfg: Config | None) -> None:
            if cfg is not None and cfg.key not in out and state.is_new(cfg):
                out[cfg.key] = cfg

        if population:
            want = round(target * MUTATION_SHARE)
            for _ in range(3 * want):
                if len(out) >= want:
                    break
                knobs = 2 if rng.random() < TWO_KNOBS else 1
                add(space.mutate(self._parent(population, rng).config, rng, n=knobs))
        if len(population) > 1:
            want = len(out) + round(target * CROSSOVER_SHARE)
            for _ in range(3 * (want - len(out))):
                if len(out) >= want:
                    break
                a = self._parent(population, rng)
                b = self._parent([r for r in population if r is not a], rng)
                add(space.crossover(a.config, b.config, rng))
        if len(out) < target:
            for cfg in state.fresh_samples(target - len(out), exclude=out):
                add(cfg)
        return out

    @staticmethod
    def _parent(population: list[Result], rng: random.Random) -> Result:
        """Tournament selection (``population`` is sorted fastest first)."""
        k = min(TOURNAMENT, len(population))
        return population[min(rng.sample(range(len(population)), k))]

    def _enumerated(self, n: int) -> list[Config]:
        if self._order is None:
            configs = self.state.unseen()
            scores = rank(self.ranker, self.state.space, configs)
            if scores is None:
                self.rng.shuffle(configs)  # no model: any order is as good, but not a biased one
            else:
                order = sorted(range(len(configs)), key=lambda i: -scores[i])  # stable
                configs = [configs[i] for i in order]
            self._order = configs
        self._order = [c for c in self._order if self.state.is_new(c)]
        return self._order[:n]
