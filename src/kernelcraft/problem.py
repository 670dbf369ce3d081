"""Problems: load KernelBench-format files or in-memory modules, and sample fresh inputs.

A problem file defines ``class Model(nn.Module)``, ``get_inputs()`` and optionally
``get_init_inputs()``; its sizes are module-level integer globals that ``get_inputs``
reads at call time. Because the sizes are plain globals, a problem can be rebuilt at
other sizes (the reduced sizes that Triton's interpreter can run on a CPU, or the
perturbed sizes that expose a kernel specialised to one shape) without its author's help.
"""

from __future__ import annotations

import copy
import importlib.util
import itertools
import math
import sys
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode

from kernelcraft.errors import InputError, one_line

#: Distributions the sampler cycles through; the first keeps the problem's own inputs.
DISTRIBUTIONS: tuple[str, ...] = ("problem", "normal", "uniform", "scaled", "outliers", "shifted")

#: Integer globals at or above this value are treated as sizes (smaller ones are usually
#: dims, kernel sizes or group counts, which must not change).
SIZE_THRESHOLD = 16

#: Element budget for the largest tensor at reduced size (interpreter runs stay quick).
REDUCED_NUMEL = 1 << 15
#: how much larger than REDUCED_NUMEL an intermediate of the reduced problem may be
INTERMEDIATE_SLACK = 16


@dataclass
class Problem:
    """A reference program and how to build its model and inputs."""

    name: str
    build_model: Callable[[Sequence[Any]], nn.Module]
    get_inputs: Callable[[], list[Any]]
    get_init_inputs: Callable[[], list[Any]]
    path: Path | None = None
    sizes: dict[str, int] = field(default_factory=dict)
    _module: ModuleType | None = None

    # ------------------------------------------------------------------ sizes
    @property
    def resizable(self) -> bool:
        return self._module is not None and bool(self.sizes)

    def with_sizes(self, sizes: dict[str, int]) -> Problem:
        """The same problem with some size globals replaced (a fresh module instance)."""
        if self.path is None or self._module is None:
            raise InputError(f"{self.name}: in-memory problems cannot be resized")
        unknown = set(sizes) - set(self.sizes)
        if unknown:
            raise InputError(f"{self.name}: not size globals: {sorted(unknown)}")
        return load_problem(self.path, overrides={**self.sizes, **sizes})

    # ----------------------------------------------------------------- inputs
    def init_inputs(self, seed: int = 0) -> list[Any]:
        torch.manual_seed(seed)
        return list(self.get_init_inputs())

    def make_model(self, init: Sequence[Any], seed: int = 0) -> nn.Module:
        torch.manual_seed(seed)
        return self.build_model(init)

    def template_inputs(self, seed: int, device: str | torch.device | None = None) -> list[Any]:
        torch.manual_seed(seed)
        try:
            if device is not None and torch.device(device).type != "cpu":
                with torch.device(device):
                    return list(self.get_inputs())
            return list(self.get_inputs())
        except Exception as exc:  # the problem's own code failed
            raise InputError(f"{self.name}: get_inputs() raised {one_line(exc)}") from exc

    def sample_inputs(self, seed: int, dist: str = "problem",
                      device: str | torch.device | None = None) -> list[Any]:
        """Fresh inputs: the problem's own under ``seed``, re-drawn from ``dist``.

        Floating tensors keep the shape, dtype, strides and domain of the problem's own
        sample (non-negative stays non-negative, [0, 1] stays inside it) so that e.g.
        ``log`` or probability inputs remain valid; integer and bool tensors are the
        problem's own draw under ``seed``. No tensor is ever all zeros.
        """
        template = self.template_inputs(seed, device)
        dev = torch.device(device) if device is not None else torch.device("cpu")
        gen = torch.Generator(device=dev).manual_seed(seed * 7919 + 17)
        return [redraw(t.to(dev), dist, gen) if isinstance(t, torch.Tensor) else t
                for t in template]

    def meta_numels(self) -> tuple[int, int]:
        """(largest tensor numel, total numel) over inputs, parameters and outputs, on meta."""
        return _meta_numels(self)[:2]


# ---------------------------------------------------------------------- sampling
def redraw(t: torch.Tensor, dist: str, gen: torch.Generator) -> torch.Tensor:
    """A tensor like ``t`` with values from ``dist``, within ``t``'s domain, never all zero."""
    if dist not in DISTRIBUTIONS:
        raise ValueError(f"unknown distribution {dist!r}; known: {', '.join(DISTRIBUTIONS)}")
    if not (t.is_floating_point() or t.is_complex()) or t.numel() == 0:
        return t
    dev = gen.device
    work = torch.float64 if dev.type == "cpu" else torch.float32
    src = t.detach().to(dev)
    nonneg = bool((src >= 0).all())
    unit = nonneg and bool((src <= 1).all())
    shape = t.shape

    def randn() -> torch.Tensor:
        return torch.randn(shape, generator=gen, dtype=work, device=dev)

    if dist == "problem":
        vals = src.to(work)
        if not bool((vals != 0).any()):
            vals = randn()
    elif dist == "normal":
        vals = randn()
    elif dist == "uniform":
        vals = torch.rand(shape, generator=gen, dtype=work, device=dev) * 2 - 1
    elif dist == "scaled":
        vals = randn() * 10
    elif dist == "outliers":
        vals = randn()
        spikes = torch.rand(shape, generator=gen, dtype=work, device=dev) < 0.01
        vals = torch.where(spikes, vals * 30, vals)
    else:  # shifted
        vals = randn() + 3
    if dist != "problem":
        if unit:
            vals = torch.sigmoid(vals)
        elif nonneg:
            vals = vals.abs() + 1e-3
    out = torch.empty_like(t)
    out.copy_(vals.to(t.dtype))
    return out


def redraw_parameters(model: nn.Module, seed: int) -> None:
    """Perturb parameters that are constant (e.g. norm weights = 1, biases = 0).

    Randomly initialised parameters are already fresh per seed; constant ones would let a
    candidate that ignores them pass, so they get noise of their own scale.
    """
    gen = torch.Generator().manual_seed(seed * 104729 + 3)
    with torch.no_grad():
        for p in model.parameters():
            if not p.is_floating_point() or p.numel() == 0:
                continue
            flat = p.detach().reshape(-1)
            if bool((flat == flat[0]).all()):
                scale = max(abs(float(flat[0])), 1.0) * 0.1
                noise = torch.randn(p.shape, generator=gen, dtype=torch.float64) * scale
                p.add_(noise.to(p.device, p.dtype))


# ----------------------------------------------------------------------- loading
def load_problem(path: str | Path, overrides: dict[str, int] | None = None) -> Problem:
    """Load a KernelBench-format problem file; ``overrides`` replaces size globals."""
    path = Path(path)
    module = load_module(path, "problem")
    for name in ("Model", "get_inputs"):
        if not hasattr(module, name):
            raise InputError(f"{path}: no `{name}` defined (a problem needs Model and get_inputs)")
    if not (isinstance(module.Model, type) and issubclass(module.Model, nn.Module)):
        raise InputError(f"{path}: `Model` is not an nn.Module subclass")
    sizes = size_globals(module)
    for key, value in (overrides or {}).items():
        setattr(module, key, value)
        sizes[key] = value
    get_init = getattr(module, "get_init_inputs", lambda: [])
    model_cls = module.Model

    def build(init: Sequence[Any]) -> nn.Module:
        return model_cls(*init)

    problem = Problem(
        name=path.stem,
        build_model=build,
        get_inputs=module.get_inputs,
        get_init_inputs=get_init,
        path=path,
        sizes=sizes,
        _module=module,
    )
    _check_callable(problem)
    return problem


def from_module(
    model: nn.Module | Callable[..., Any], example_inputs: Sequence[Any], name: str | None = None
) -> Problem:
    """A problem from an in-memory module or function plus example inputs."""
    if not isinstance(model, nn.Module):
        model = _FunctionModule(model)
    frozen = copy.deepcopy(model)
    examples = list(example_inputs)

    def build(init: Sequence[Any]) -> nn.Module:
        return copy.deepcopy(frozen)

    return Problem(
        name=name or type(model).__name__,
        build_model=build,
        get_inputs=lambda: [x.clone() if isinstance(x, torch.Tensor) else x for x in examples],
        get_init_inputs=lambda: [],
    )


class _FunctionModule(nn.Module):
    def __init__(self, fn: Callable[..., Any]) -> None:
        super().__init__()
        self.fn = fn

    def forward(self, *args: Any) -> Any:
        return self.fn(*args)


def load_module(path: Path, role: str) -> ModuleType:
    """Import a Python file under a private name; user errors become one-line InputErrors."""
    if not path.is_file():
        raise InputError(f"{role} file not found: {path}")
    name = f"_kernelcraft_{role}_{abs(hash((str(path.resolve()), next(_counter))))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise InputError(f"{path}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        raise InputError(f"{path}:{exc.lineno}: syntax error: {exc.msg}") from exc
    except Exception as exc:
        line = _user_line(exc, path)
        raise InputError(f"{path}{line}: error while importing: {one_line(exc)}") from exc
    return module


_counter = itertools.count()


def size_globals(module: ModuleType) -> dict[str, int]:
    """Module-level int globals that look like sizes (>= SIZE_THRESHOLD, public names).

    An upper-case name of two or more letters is a constant by convention (a modulus, a
    seed, a vocabulary id) unless the input or constructor-argument functions read it: a
    size is what shapes the inputs, and moving a constant changes what the program computes.
    """
    harness = _harness_names(module)
    out = {}
    for key, value in vars(module).items():
        if key.startswith("_") or isinstance(value, bool) or not isinstance(value, int):
            continue
        if len(key) > 1 and key.isupper() and key not in harness:
            continue
        if value >= SIZE_THRESHOLD:
            out[key] = value
    return out


def _harness_names(module: ModuleType) -> set[str]:
    """Global names that get_inputs and get_init_inputs read, through the module's own
    functions they call and the comprehensions and lambdas inside them."""
    names: set[str] = set()
    todo = [getattr(getattr(module, f, None), "__code__", None)
            for f in ("get_inputs", "get_init_inputs")]
    seen: set[int] = set()
    while todo:
        code = todo.pop()
        if code is None or id(code) in seen:
            continue
        seen.add(id(code))
        names.update(code.co_names)
        todo.extend(c for c in code.co_consts if hasattr(c, "co_names"))
        for name in code.co_names:
            fn = vars(module).get(name)
            if getattr(fn, "__module__", None) == module.__name__:
                todo.append(getattr(fn, "__code__", None))
    return names


def _check_callable(problem: Problem) -> None:
    """Call get_init_inputs and get_inputs once, on the meta device, to fail early."""
    try:
        init = problem.get_init_inputs()
    except Exception as exc:
        raise InputError(f"{problem.name}: get_init_inputs() raised {one_line(exc)}") from exc
    if not isinstance(init, (list, tuple)):
        raise InputError(f"{problem.name}: get_init_inputs() must return a list")
    try:
        with torch.device("meta"):
            inputs = problem.get_inputs()
    except Exception:
        inputs = None  # some get_inputs need real data (numpy, .item()); try the real call
    if inputs is None:
        torch.manual_seed(0)
        inputs = problem.template_inputs(0)
    if not isinstance(inputs, (list, tuple)):
        raise InputError(f"{problem.name}: get_inputs() must return a list")
    for i, x in enumerate(inputs):
        if isinstance(x, torch.Tensor) and x.dtype not in _SUPPORTED_DTYPES:
            raise InputError(f"{problem.name}: input {i} has unsupported dtype {x.dtype}")


_SUPPORTED_DTYPES = {
    torch.float32, torch.float16, torch.bfloat16, torch.float64,
    torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool,
}


# ----------------------------------------------------------------- reduced sizes
class _Peak(TorchDispatchMode):
    """Records the largest tensor any ATen op of a (meta) forward produces."""

    def __init__(self) -> None:
        super().__init__()
        self.peak = 0

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        out = func(*args, **(kwargs or {}))
        for x in torch.utils._pytree.tree_leaves(out):
            if isinstance(x, torch.Tensor):
                self.peak = max(self.peak, x.numel())
        return out


def _meta_numels(problem: Problem) -> tuple[int, int, int]:
    """(largest, total) numel of inputs, parameters and outputs, and the largest tensor the
    forward makes on the way (0 where it cannot run on meta)."""
    tensors: list[torch.Tensor] = []
    peak = _Peak()
    with torch.device("meta"):
        try:
            inputs = problem.get_inputs()
        except Exception:
            inputs = []
        tensors += [x for x in inputs if isinstance(x, torch.Tensor)]
        try:
            model = problem.build_model(problem.get_init_inputs())
            tensors += list(model.parameters()) + list(model.buffers())
            with peak:
                out = model(*inputs)
            tensors += [x for x in torch.utils._pytree.tree_leaves(out)
                        if isinstance(x, torch.Tensor)]
        except Exception:
            pass
    numels = [t.numel() for t in tensors] or [0]
    return max(numels), sum(numels), peak.peak


def _footprint(problem: Problem) -> int:
    """What the reduced sizes bound: the largest input, parameter or output, or an
    intermediate that is far larger than all of them (a pairwise [N, N] matrix of an
    [N, 4] input) over INTERMEDIATE_SLACK."""
    biggest, _, peak = _meta_numels(problem)
    return max(biggest, peak // INTERMEDIATE_SLACK)


def _runs(problem: Problem) -> bool:
    """Whether the reference runs at the problem's sizes (small sizes only)."""
    try:
        model = problem.make_model(problem.init_inputs(0), 0)
        with torch.no_grad():
            model(*problem.template_inputs(0))
        return True
    except Exception:
        return False


def reduced(problem: Problem, budget: int = REDUCED_NUMEL) -> Problem:
    """The problem at sizes small enough for Triton's interpreter on a CPU.

    Size globals are divided by a common power of two (which keeps the divisibility
    relations of typical sizes, e.g. hidden = heads * head_dim) until the largest tensor
    fits ``budget`` elements; the reference must run at the result. Where rounding up
    breaks a relation (500 graphs of 100 nodes: 63 graphs of 6250 nodes), each size is
    divided by the power of two it holds instead (125 of 6250 keep 50 a graph).
    """
    if not problem.resizable:
        return problem
    biggest = _footprint(problem)
    if biggest <= budget:
        return problem
    small, last_err = _uniformly_reduced(problem, budget, exact=False)
    if small is None:
        small, _ = _uniformly_reduced(problem, budget, exact=True)
    if small is not None:
        return small
    # Fall back to gentler shrinking of the largest sizes only. A size whose halving stops
    # the problem's get_inputs, or its forward where that runs on meta (a cache length below
    # a constructor's window or top-k budget), keeps its value while the others shrink.
    sizes = dict(problem.sizes)
    meta = _meta_ok(problem)
    held: set[str] = set()
    for _ in range(256):
        free = [k for k in sizes if k not in held and sizes[k] > SIZE_THRESHOLD // 2]
        if not free:
            break
        key = max(free, key=lambda k: sizes[k])
        trial = {**sizes, key: max(SIZE_THRESHOLD // 2, sizes[key] // 2)}
        try:
            small = problem.with_sizes(trial)
        except InputError:  # its get_inputs stops (nodes per graph below one): held
            held.add(key)
            continue
        if meta and not _meta_ok(small):
            held.add(key)
            continue
        sizes = trial
        held.clear()  # a held size may shrink once another has (nodes once graphs have)
        if _footprint(small) <= budget and _runs(small):
            return small
    if held:  # the held sizes keep it over budget: the least it can take, which may be
        # the problem itself (reduced again: the judge reduces a problem it was given reduced)
        small = problem.with_sizes(sizes) if sizes != problem.sizes else problem
        if _runs(small):
            return small
    raise InputError(f"{problem.name}: cannot reduce sizes for a CPU check ({last_err})")


def _uniformly_reduced(problem: Problem, budget: int,
                       exact: bool) -> tuple[Problem | None, str]:
    """Every size over the threshold divided by one power of two (rounded up), or with
    ``exact`` by the largest power of two that divides it, at the first factor that fits
    ``budget``; (None, why) where the reference does not run there."""
    floor = SIZE_THRESHOLD // 2
    last = dict(problem.sizes)
    for shift in range(1, 24):
        factor = 1 << shift
        sizes = {k: max(floor, v // math.gcd(v, factor) if exact else -(-v // factor))
                 for k, v in problem.sizes.items()}
        if sizes == last:  # no size holds a larger power of two
            continue
        last = sizes
        try:  # the problem's own get_inputs may not build at these sizes
            small = problem.with_sizes(sizes)
        except InputError as exc:
            return None, str(exc)
        if _footprint(small) > budget and any(v > floor for v in sizes.values()):
            continue
        if _runs(small):
            return small, ""
        return None, f"the reference does not run at sizes {sizes}"
    return None, "no smaller sizes"


def perturbations(problem: Problem, keys: Sequence[str] | None = None) -> Iterator[Problem]:
    """The problem at other sizes (odd where possible), most different first.

    Only ``keys`` change when given. Each yielded problem builds and runs on the meta
    device; whether the reference really runs there is for the caller to find out. A kernel
    that hard-codes the sizes it was written for passes at the problem's sizes, not here.
    """
    if not problem.resizable:
        return
    keys = list(problem.sizes) if keys is None else list(keys)
    if not keys:
        return
    rules: list[Callable[[int], int]] = [
        _odd_larger,
        lambda v: max(SIZE_THRESHOLD // 2, (v * 3) // 4 + 1),
        lambda v: max(SIZE_THRESHOLD // 2, (v * 3) // 4),
        lambda v: max(SIZE_THRESHOLD // 2, v // 2),
    ]
    seen = [dict(problem.sizes)]
    filter_on_meta = _meta_ok(problem)  # forwards that cannot run on meta are not filtered
    for rule in rules:
        sizes = dict(problem.sizes)
        sizes.update({k: rule(problem.sizes[k]) for k in keys})
        if sizes in seen:
            continue
        seen.append(sizes)
        try:
            other = problem.with_sizes(sizes)
        except InputError:
            continue
        if not filter_on_meta or _meta_ok(other):
            yield other


def init_free_sizes(problem: Problem) -> list[str]:
    """Size globals that do not change the constructor arguments (batch, sequence...)."""
    if not problem.resizable:
        return []
    base = problem.init_inputs(0)
    free = []
    for key, value in problem.sizes.items():
        # two probes: one alone can leave a floor division unchanged (37 // 8 == 32 // 8)
        if all(_same(problem.with_sizes({key: v}).init_inputs(0), base)
               for v in (_odd_larger(value), 2 * value)):
            free.append(key)
    return free


def _same(a: Sequence[Any], b: Sequence[Any]) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        if isinstance(x, torch.Tensor) or isinstance(y, torch.Tensor):
            if not (isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor)):
                return False
            if x.shape != y.shape:
                return False
        elif x != y:
            return False
    return True


def _meta_ok(problem: Problem) -> bool:
    try:
        with torch.device("meta"):
            model = problem.build_model(problem.get_init_inputs())
            model(*problem.get_inputs())
        return True
    except Exception:
        return False


def _odd_larger(v: int) -> int:
    n = v + v // 8 + 1
    return n if n % 2 else n + 1


# -------------------------------------------------------------------- messages
def _user_line(exc: BaseException, path: Path) -> str:
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if Path(frame.filename).resolve() == path.resolve():
            return f":{frame.lineno}"
    return ""


def geomean(values: Sequence[float]) -> float:
    vals = [v for v in values if v > 0 and math.isfinite(v)]
    if not vals:
        return float("nan")
    return math.exp(sum(math.log(v) for v in vals) / len(vals))
