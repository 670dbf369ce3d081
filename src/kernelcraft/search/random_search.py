"""Random search: uniformly drawn valid configs, each measured once, batch after batch.

It ignores the cost model on purpose: it is the baseline that the evolutionary search's
sample efficiency is judged against, and a fallback that cannot be misled by a bad model.
"""

from __future__ import annotations

from kernelcraft.search.strategy import SearchState
from kernelcraft.space import Config


class RandomSearch:
    """Uniform valid samples, never one measured or skipped before."""

    def __init__(self, state: SearchState) -> None:
        self.state = state

    def propose(self, n: int) -> list[Config]:
        return self.state.fresh_samples(n)
