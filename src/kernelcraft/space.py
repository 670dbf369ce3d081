"""Search spaces: typed knobs, target constraints, feature vectors.

A template declares the knobs of one kernel group (tile sizes, warps, stages, split,
fusion decisions) as a :class:`Space`; search strategies only see this interface (sample,
mutate, cross over, enumerate, check) and never the template. Every config flattens to a
feature vector for the cost model: the knobs' encodings plus the workload's context
(sizes, bytes, flops, the target's numbers), so one model ranks configs across workloads.
"""

from __future__ import annotations

import itertools
import json
import math
import random
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class PowerOfTwo:
    """An integer knob taking the powers of two from ``low`` to ``high``."""

    name: str
    low: int
    high: int

    def __post_init__(self) -> None:
        for v in (self.low, self.high):
            if v < 1 or v & (v - 1):
                raise ValueError(f"{self.name}: {v} is not a power of two")
        if self.low > self.high:
            raise ValueError(f"{self.name}: low {self.low} > high {self.high}")

    def values(self) -> list[int]:
        return [1 << i for i in range(self.low.bit_length() - 1, self.high.bit_length())]

    def encode(self, v: Any) -> float:
        return math.log2(v)

    def neighbours(self, v: Any) -> list[int]:
        return [x for x in (v // 2, v * 2) if self.low <= x <= self.high]


@dataclass(frozen=True)
class Choice:
    """One of a few options (ints, strings, bools); encoded by position."""

    name: str
    options: tuple[Any, ...]

    def __post_init__(self) -> None:
        if not self.options:
            raise ValueError(f"{self.name}: no options")

    def values(self) -> list[Any]:
        return list(self.options)

    def encode(self, v: Any) -> float:
        return float(self.options.index(v))

    def neighbours(self, v: Any) -> list[Any]:
        return [x for x in self.options if x != v]


@dataclass(frozen=True)
class Boolean:
    """An on/off decision (a fusion, a layout)."""

    name: str

    def values(self) -> list[bool]:
        return [False, True]

    def encode(self, v: Any) -> float:
        return 1.0 if v else 0.0

    def neighbours(self, v: Any) -> list[bool]:
        return [not v]


Knob = PowerOfTwo | Choice | Boolean


class Config(Mapping[str, Any]):
    """An immutable, hashable assignment of every knob of a space."""

    __slots__ = ("_d", "_key")

    def __init__(self, values: Mapping[str, Any]) -> None:
        self._d = dict(values)
        self._key = json.dumps(self._d, sort_keys=True, default=str)

    def __getitem__(self, k: str) -> Any:
        return self._d[k]

    def __iter__(self) -> Iterator[str]:
        return iter(self._d)

    def __len__(self) -> int:
        return len(self._d)

    def __hash__(self) -> int:
        return hash(self._key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Config) and other._key == self._key

    def __repr__(self) -> str:
        return f"Config({self._key})"

    @property
    def key(self) -> str:
        """Canonical JSON text: the database stores configs by it."""
        return self._key

    def replace(self, **changes: Any) -> Config:
        return Config({**self._d, **changes})


#: A constraint returns why a config cannot run on the target (None: it can).
Constraint = Callable[[Config], "str | None"]


@dataclass
class Space:
    """The knobs of one kernel group on one target, with its constraints and context."""

    family: str
    knobs: tuple[Knob, ...]
    constraints: tuple[Constraint, ...] = ()
    context: dict[str, float] = field(default_factory=dict)  # workload and target numbers
    default: Config | None = None  # the analytical heuristic's pick (a seed)

    def __post_init__(self) -> None:
        names = [k.name for k in self.knobs]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate knob names in {names}")
        if self.default is not None and self.check(self.default) is not None:
            # a heuristic seed the constraints reject is not a seed
            self.default = None

    @property
    def names(self) -> list[str]:
        return [k.name for k in self.knobs]

    def knob(self, name: str) -> Knob:
        return next(k for k in self.knobs if k.name == name)

    def size(self) -> int:
        """Number of knob combinations before constraints."""
        return math.prod(len(k.values()) for k in self.knobs)

    def check(self, config: Mapping[str, Any]) -> str | None:
        """Why ``config`` is invalid (a missing or unknown knob, a value outside its range,
        a violated target constraint), or None."""
        for k in self.knobs:
            if k.name not in config:
                return f"knob {k.name} missing"
            if config[k.name] not in k.values():
                return f"{k.name}={config[k.name]!r} outside {k.values()}"
        extra = set(config) - set(self.names)
        if extra:
            return f"unknown knobs {sorted(extra)}"
        cfg = config if isinstance(config, Config) else Config(config)
        for c in self.constraints:
            why = c(cfg)
            if why:
                return why
        return None

    def valid(self, config: Mapping[str, Any]) -> bool:
        return self.check(config) is None

    def enumerate(self, limit: int | None = None) -> Iterator[Config]:
        """Valid configs in a fixed order (all of them for small spaces)."""
        n = 0
        for combo in itertools.product(*(k.values() for k in self.knobs)):
            cfg = Config(dict(zip(self.names, combo, strict=True)))
            if self.valid(cfg):
                yield cfg
                n += 1
                if limit is not None and n >= limit:
                    return

    def sample(self, rng: random.Random, tries: int = 200) -> Config | None:
        """A uniformly drawn valid config (None if none was found in ``tries`` draws)."""
        for _ in range(tries):
            cfg = Config({k.name: rng.choice(k.values()) for k in self.knobs})
            if self.valid(cfg):
                return cfg
        return next(iter(self.enumerate(limit=1)), None)

    def mutate(self, config: Config, rng: random.Random, n: int = 1,
               tries: int = 50) -> Config | None:
        """``config`` with ``n`` knobs moved to a neighbouring value (valid, or None)."""
        for _ in range(tries):
            d = dict(config)
            for k in rng.sample(list(self.knobs), min(n, len(self.knobs))):
                options = k.neighbours(d[k.name])
                if options:
                    d[k.name] = rng.choice(options)
            cfg = Config(d)
            if cfg != config and self.valid(cfg):
                return cfg
        return None

    def crossover(self, a: Config, b: Config, rng: random.Random,
                  tries: int = 20) -> Config | None:
        """Each knob from one parent or the other (valid, or None)."""
        for _ in range(tries):
            cfg = Config({k.name: (a if rng.random() < 0.5 else b)[k.name]
                          for k in self.knobs})
            if self.valid(cfg):
                return cfg
        return None

    def features(self, config: Mapping[str, Any]) -> dict[str, float]:
        """The cost model's view: knob encodings, then the workload and target context."""
        out = {f"knob.{k.name}": k.encode(config[k.name]) for k in self.knobs}
        out.update({f"ctx.{k}": float(v) for k, v in self.context.items()})
        out[f"family.{self.family}"] = 1.0
        return out
