"""Correctness of a candidate against its problem, split across two processes.

The candidate never shares a process with the reference: a candidate can rewrite anything
in the process it runs in (torch itself, the judge's own helpers), so values are compared
where it never ran.

1. ``plan_trials`` (trusted): the trial list — seeds, input distributions, sizes (reduced
   on CPU), a stream-order trial on CUDA, and trials at other sizes (same instance for
   batch-like sizes, a new instance otherwise).
2. ``run_candidate`` (candidate worker): rebuilds each trial's parameters and inputs from
   its seed, calls the candidate with allocations poisoned and Triton launches counted,
   checks inputs, aliasing and earlier outputs, and saves the outputs as plain tensors.
3. ``judge_trials`` (reference worker, after the candidate's process has exited): rebuilds
   the same inputs, runs the reference in the mode's precision and in float64, loads the
   candidate's outputs (``weights_only``: no code is unpickled) and decides the verdict.
"""

from __future__ import annotations

import contextlib
import copy
import json
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.overrides import TorchFunctionMode

from kernelcraft.errors import InputError, one_line
from kernelcraft.measure.compare import NEARBY_REL, compare, flatten
from kernelcraft.measure.instrument import (
    LaunchCounter,
    PoisonAllocations,
    poison_device_cache,
    storage_key,
)
from kernelcraft.problem import (
    DISTRIBUTIONS,
    Problem,
    init_free_sizes,
    perturbations,
    redraw_parameters,
    reduced,
)

PRECISIONS = ("fp32", "tf32", "bf16", "fp16")
_LOW = {"bf16": torch.bfloat16, "fp16": torch.float16}

#: Reason codes a verdict can carry (documented in README.md).
REASONS = (
    "wrong", "nonfinite", "shape", "other-size", "repeat", "reused-output", "alias",
    "input-modified", "no-kernel", "stream", "error", "timeout", "crash",
)


@dataclass
class VerifyOptions:
    device: str = "cpu"
    precision: str = "fp32"
    n_sets: int = 5
    seed: int = 0
    reduce: bool = True  # run at reduced sizes (always on CPU, where the interpreter runs)
    other_sizes: bool = True
    min_launches: int = 1
    kernel_outputs: bool = True  # every output must be last written by a Triton kernel
    #: the main trials' sizes as ``plan_trials`` found them (the workers take them rather
    #: than reduce again: a meta forward costs each worker process seconds of imports)
    main_sizes: dict[str, int] | None = None


@dataclass
class TrialSpec:
    name: str
    seed: int
    dist: str
    sizes: dict[str, int]
    instance: str = "main"  # main | new
    kind: str = "plain"  # plain | stream | other-size
    main: bool = True  # part of the main series (repeat / reused-output checks)


@dataclass
class Trial:
    name: str
    seed: int
    dist: str
    sizes: dict[str, int]
    ok: bool
    reason: str | None = None
    detail: str = ""
    rel_l2: float = 0.0
    tol_rel: float = 0.0
    max_abs: float = 0.0
    tol_abs: float = 0.0
    ref_rel_l2: float = 0.0
    launches: int = 0


@dataclass
class Verdict:
    correct: bool
    reason: str | None
    detail: str
    trials: list[Trial] = field(default_factory=list)
    sizes: dict[str, int] = field(default_factory=dict)
    reduced: bool = False
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


# ------------------------------------------------------------------ helpers
@contextlib.contextmanager
def precision_mode(mode: str) -> Iterator[None]:
    """PyTorch's matmul/conv precision for the reference and the baselines."""
    if mode not in PRECISIONS:
        raise InputError(f"unknown precision {mode!r}; choose from {', '.join(PRECISIONS)}")
    old = (torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32)
    tf32 = mode == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = old


def to_device(x: Any, device: torch.device, mode: str) -> Any:
    if not isinstance(x, torch.Tensor):
        return x
    x = x.to(device)
    if mode in _LOW and x.is_floating_point():
        x = x.to(_LOW[mode])
    return x


def to_double(x: Any) -> Any:
    if isinstance(x, torch.Tensor) and x.is_floating_point():
        return x.double()
    return x


_FLOAT_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


class _Float64Casts(TorchFunctionMode):
    """The float64 reference runs the program through its own casts: ``x.float()``,
    ``.half()``, ``.to(torch.float32)``, ``dtype=`` arguments and default-dtype factories
    give float64, as if the program had been written in float64. Without this a model that
    casts (``x.float()`` before a layer whose weights the reference made float64) fails with
    a dtype mismatch: a valid program the judge could not check. Integer and bool casts are
    kept; the reference in the mode's own precision still runs the casts as written."""

    def __torch_function__(self, func: Any, types: Any, args: tuple = (),
                           kwargs: dict | None = None) -> Any:
        kwargs = dict(kwargs or {})
        name = getattr(func, "__name__", "")
        if name in ("float", "half", "bfloat16") and args and isinstance(args[0], torch.Tensor):
            return args[0].to(torch.float64)
        if isinstance(kwargs.get("dtype"), torch.dtype) and kwargs["dtype"] in _FLOAT_DTYPES:
            kwargs["dtype"] = torch.float64
        args = tuple(torch.float64 if isinstance(a, torch.dtype) and a in _FLOAT_DTYPES else a
                     for a in args)
        if name == "to" and len(args) > 1 and isinstance(args[1], torch.Tensor):
            other = args[1]  # x.to(other): other's device, float64 for a floating other
            dtype = torch.float64 if other.is_floating_point() else other.dtype
            args = (args[0], other.device, dtype, *args[2:])
        return func(*args, **kwargs)


class StableTies(TorchFunctionMode):
    """PyTorch leaves the order of equal values unspecified in ``topk``, ``sort``,
    ``argsort``, ``kthvalue`` and ``median`` (CPU and CUDA differ, and so may two calls);
    its deterministic mode ranks them lowest index first, as ``sort(stable=True)`` does
    (a median over a dim with a NaN is that NaN, the first one). The judge accepts a candidate
    matching either the library's order or this one (all outputs, with the same
    tolerances): a top-k router on saturated probabilities has tied zeros, and a kernel
    that resolves them by index is as right as the library. ``used`` says whether the
    program called any of these (if not, this reference is the plain one)."""

    def __init__(self) -> None:
        super().__init__()
        self.used = False

    def __torch_function__(self, func: Any, types: Any, args: tuple = (),
                           kwargs: dict | None = None) -> Any:
        kwargs = dict(kwargs or {})
        name = getattr(func, "__name__", "")
        if name == "topk" and args and isinstance(args[0], torch.Tensor):
            self.used = True
            names = ("k", "dim", "largest", "sorted")
            a = dict(zip(names, args[1:], strict=False)) | kwargs
            x, dim = args[0], int(a.get("dim", -1))
            s = torch.sort(x, dim=dim, descending=bool(a.get("largest", True)), stable=True)
            k = int(a["k"])
            return torch.return_types.topk((s.values.narrow(dim, 0, k),
                                            s.indices.narrow(dim, 0, k)))
        if name in ("kthvalue", "median") and args and isinstance(args[0], torch.Tensor):
            names = ("k", "dim", "keepdim") if name == "kthvalue" else ("dim", "keepdim")
            a = dict(zip(names, args[1:], strict=False)) | kwargs
            if name == "median" and "dim" not in a:
                return func(*args, **kwargs)  # one value: no index to order
            self.used = True
            x, dim = args[0], int(a.get("dim", -1))
            k = int(a["k"]) if name == "kthvalue" else (x.shape[dim] + 1) // 2
            s = torch.sort(x, dim=dim, stable=True)
            v, i = s.values.narrow(dim, k - 1, 1), s.indices.narrow(dim, k - 1, 1)
            if name == "median" and x.is_floating_point():  # a NaN: the first NaN's
                nan = torch.isnan(x)
                has = nan.any(dim, keepdim=True)
                v = torch.where(has, torch.full_like(v, float("nan")), v)
                i = torch.where(has, nan.to(torch.int8).argmax(dim, keepdim=True), i)
            if not a.get("keepdim", False):
                v, i = v.squeeze(dim), i.squeeze(dim)
            return getattr(torch.return_types, name)((v, i))
        if name in ("sort", "argsort") and args and isinstance(args[0], torch.Tensor):
            self.used = True
            kwargs["stable"] = True
            if len(args) > 1 and isinstance(args[1], bool):  # sort(x, stable, dim=...)
                args = (args[0], *args[2:])
        return func(*args, **kwargs)


def _float64_model(model: nn.Module) -> nn.Module:
    """``model.double()``, plain floating tensor attributes included (an LSTM's initial
    state made in the constructor): ``.double()`` converts parameters and buffers only, and
    the reference then mixed float32 and float64 operands."""
    model.double()
    for m, _, name, x in list(_plain_tensors(model)):
        if x.is_floating_point():
            setattr(m, name, x.double())
    return model


@contextlib.contextmanager
def float64_program() -> Iterator[None]:
    """Run a model as its float64 counterpart (see :class:`_Float64Casts`)."""
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        with _Float64Casts():
            yield
    finally:
        torch.set_default_dtype(old)


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def tensors_of(xs: Sequence[Any]) -> list[torch.Tensor]:
    return [x for x in flatten(list(xs)) if isinstance(x, torch.Tensor)]


def _span(t: torch.Tensor) -> tuple[int, int]:
    start = t.data_ptr()
    if t.numel() == 0:
        return start, start
    extent = sum((s - 1) * st for s, st in zip(t.shape, t.stride(), strict=True)) + 1
    return start, start + extent * t.element_size()


def overlaps(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.device != b.device or a.numel() == 0 or b.numel() == 0:
        return False
    (a0, a1), (b0, b1) = _span(a), _span(b)
    return a0 < b1 and b0 < a1


def same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.is_floating_point() or a.is_complex():
        return bool(torch.equal(torch.nan_to_num(a, nan=0.125), torch.nan_to_num(b, nan=0.125))
                    and torch.equal(torch.isnan(a), torch.isnan(b)))
    return bool(torch.equal(a, b))


# --------------------------------------------------------------- trial plan
def main_problem(problem: Problem, opts: VerifyOptions) -> Problem:
    if opts.main_sizes is not None:
        return problem if opts.main_sizes == problem.sizes else problem.with_sizes(
            opts.main_sizes)
    return reduced(problem) if opts.reduce else problem


def plan_trials(problem: Problem, opts: VerifyOptions) -> tuple[list[TrialSpec], list[str]]:
    """The trials of one judgement (trusted side; the candidate is not involved)."""
    if opts.precision not in PRECISIONS:
        raise InputError(
            f"unknown precision {opts.precision!r}; choose from {', '.join(PRECISIONS)}"
        )
    main = main_problem(problem, opts)
    notes: list[str] = []
    specs = [
        TrialSpec(f"set {t + 1}", opts.seed + 1 + t, DISTRIBUTIONS[t % len(DISTRIBUTIONS)],
                  dict(main.sizes))
        for t in range(opts.n_sets)
    ]
    if opts.device == "cuda":
        specs.append(TrialSpec("stream order", opts.seed + 101, "uniform", dict(main.sizes),
                               kind="stream", main=False))
    if opts.other_sizes:
        from kernelcraft.specialize import structural_sizes  # capture: the trusted side only

        found = False
        free = init_free_sizes(main)
        # sizes the program's graph depends on (a loop over a dim) stay put where kernels
        # are required: no one graph, so no one module, serves all their values; the
        # new-instance trials still move them, for correctness alone
        held = structural_sizes(main, free)
        if held:
            notes.append("held at the problem's values where kernels are required at other "
                          "sizes (the program's graph depends on them): "
                          + ", ".join(f"{k}={main.sizes[k]}" for k in held))
        moving = [k for k in free if k not in held]
        for other in list(perturbations(main, moving))[:2] if moving else []:
            specs.append(TrialSpec("other sizes, same instance", opts.seed + 202, "normal",
                                   dict(other.sizes), kind="other-size", main=False))
            found = True
        base = reduced(main) if main.resizable else main
        for other in list(perturbations(base))[:2]:
            specs.append(TrialSpec("other sizes, new instance", opts.seed + 303, "normal",
                                   dict(other.sizes), instance="new", kind="other-size",
                                   main=False))
            found = True
        if not found:
            notes.append("sizes could not be varied: shape-generality not checked")
    return specs, notes


def reference_runs(problem: Problem, opts: VerifyOptions, spec: TrialSpec) -> bool:
    """Whether the reference runs at ``spec`` (its sizes, instance and inputs), on the CPU:
    trusted side, asked where a candidate's worker died at other sizes."""
    cpu = replace(opts, device="cpu")
    b = _Builder(problem, cpu)
    try:  # as the reference worker runs it (``_judge_one`` skips the trial where it raises)
        _references(b, spec, b.state(spec), b.inputs(spec), cpu)
    except Exception:  # noqa: BLE001 - the problem's own code fails there
        return False
    return True


class _Builder:
    """Rebuilds a trial's models and inputs from its spec, identically in both processes."""

    def __init__(self, problem: Problem, opts: VerifyOptions) -> None:
        self.problem = problem
        self.opts = opts
        self.device = torch.device(opts.device)
        self._cache: dict[tuple[tuple[str, int], ...], Problem] = {}
        self.main = main_problem(problem, opts)

    def at(self, sizes: dict[str, int]) -> Problem:
        key = tuple(sorted(sizes.items()))
        if sizes == self.main.sizes:
            return self.main
        if key not in self._cache:
            self._cache[key] = self.problem.with_sizes(sizes)
        return self._cache[key]

    def init(self, spec: TrialSpec) -> list[Any]:
        prob = self.at(spec.sizes) if spec.instance == "new" else self.main
        return prob.init_inputs(self.opts.seed)

    def state(self, spec: TrialSpec) -> dict[str, torch.Tensor]:
        prob = self.at(spec.sizes) if spec.instance == "new" else self.main
        fresh = prob.make_model(self.init(spec), spec.seed)
        redraw_parameters(fresh, spec.seed)
        state = fresh.state_dict()
        state.update(_tensor_attributes(fresh))
        dtype = _LOW.get(self.opts.precision)
        return {k: (v.to(dtype) if dtype is not None and v.is_floating_point() else v)
                for k, v in state.items()}

    def inputs(self, spec: TrialSpec, seed: int | None = None, dist: str | None = None
               ) -> list[Any]:
        prob = self.at(spec.sizes)
        raw = prob.sample_inputs(spec.seed if seed is None else seed, dist or spec.dist,
                                 device=self.device)
        return [to_device(x, self.device, self.opts.precision) for x in raw]

    def model(self, cls: Any, init: list[Any]) -> nn.Module:
        return self._placed(cls(*init))

    def ref_model(self, spec: TrialSpec) -> nn.Module:
        prob = self.at(spec.sizes) if spec.instance == "new" else self.main
        return self._placed(prob.make_model(self.init(spec), spec.seed))

    def _placed(self, m: nn.Module) -> nn.Module:
        m = m.to(self.device)
        dtype = _LOW.get(self.opts.precision)
        return m.to(dtype) if dtype is not None else m


# --------------------------------------------------------- candidate worker
def run_candidate(problem: Problem, cand_cls: type, opts: VerifyOptions,
                  specs: list[TrialSpec], out_dir: Path) -> list[dict[str, Any]]:
    """Run the candidate on every trial; save outputs and facts. Untrusted process."""
    b = _Builder(problem, opts)
    counter = LaunchCounter()
    facts: list[dict[str, Any]] = []
    history: list[tuple[list[torch.Tensor], list[torch.Tensor]]] = []
    main_inst: nn.Module | None = None
    facts_path = out_dir / "facts.json"

    def make(spec: TrialSpec) -> nn.Module:
        init = b.init(spec)
        try:
            inst = b.model(cand_cls, init)
        except TypeError as exc:
            raise InputError(
                f"candidate: ModelNew does not take Model's constructor arguments ({exc})"
            ) from exc
        if not isinstance(inst, nn.Module):
            raise InputError("candidate: ModelNew is not an nn.Module")
        return inst

    for k, spec in enumerate(specs):
        fact: dict[str, Any] = {"name": spec.name, "index": k}
        facts.append(fact)
        try:
            if spec.instance == "main":
                if main_inst is None:
                    main_inst = make(spec)
                inst = main_inst
            else:
                inst = make(spec)
            _load_state(inst, b.state(spec))
            if spec.kind == "stream":
                outs = _stream_call(b, spec, inst, counter, fact)
            else:
                inputs = b.inputs(spec)
                outs = _plain_call(inputs, inst, counter, fact, b.device, opts)
                if spec.main:
                    for j, (prev, clones) in enumerate(history):
                        if not all(same_bits(o, c) for o, c in zip(prev, clones, strict=True)):
                            fact["reused_output"] = j
                            break
                    history.append((tensors_of([outs]), [o.clone()
                                                         for o in tensors_of([outs])]))
            _save_outputs(outs, out_dir / f"trial{k}.pt")
        except InputError as exc:
            if spec.kind != "other-size":
                raise
            # the problem's own get_inputs may fail at other sizes (an index built for sizes
            # that divide): the reference side skips that trial
            fact["error"] = str(exc)
        except _Stop as stop:
            fact["error"] = stop.detail
            break
        except Exception as exc:  # the candidate raised: recorded, the worker goes on
            fact["error"] = f"forward raised {one_line(exc)}"
            if spec.kind != "other-size":
                break
            # at other sizes the reference may not run either (that trial is skipped), so
            # the trials after it still need the candidate's results
        finally:
            facts_path.write_text(json.dumps(facts))
    return facts


class _Stop(Exception):
    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


#: state keys of plain tensor attributes (``_tensor_attributes``), beside the state dict's
_ATTR = "attribute:"


def _tensor_attributes(model: nn.Module) -> dict[str, torch.Tensor]:
    """Plain tensor attributes (neither parameter nor buffer: an LSTM's initial state drawn
    in the constructor) and non-persistent buffers, by dotted name. They are part of what
    the program computes with but not of its state dict, so the candidate and the
    reference get the same ones here (before, each kept its own draw: a correct module
    was judged wrong)."""
    out = {f"{_ATTR}{path + '.' if path else ''}{name}": x
           for _, path, name, x in _plain_tensors(model)}
    for path, m in model.named_modules():
        for name in m._non_persistent_buffers_set:
            if isinstance(m._buffers.get(name), torch.Tensor):
                out[f"{_ATTR}{path + '.' if path else ''}{name}"] = m._buffers[name]
    return out


def _plain_tensors(model: nn.Module) -> Iterator[tuple[nn.Module, str, str, torch.Tensor]]:
    """(module, its path, attribute name, tensor) of every tensor attribute that is neither
    a parameter nor a buffer (those live in the module's own tables, not its ``__dict__``)."""
    for path, m in model.named_modules():
        for name, x in vars(m).items():
            if isinstance(x, torch.Tensor) and not isinstance(x, nn.Parameter):
                yield m, path, name, x


def _load_state(inst: nn.Module, state: dict[str, torch.Tensor]) -> None:
    attrs = {k[len(_ATTR):]: v for k, v in state.items() if k.startswith(_ATTR)}
    try:
        inst.load_state_dict({k: v for k, v in state.items() if not k.startswith(_ATTR)})
    except RuntimeError as exc:
        lines = str(exc).strip().splitlines()
        raise InputError(
            "candidate: ModelNew's parameters and buffers differ from Model's: "
            + " ".join(line.strip() for line in lines[1:3])
        ) from exc
    for fqn, x in attrs.items():
        path, _, name = fqn.rpartition(".")
        try:
            owner = inst.get_submodule(path) if path else inst
        except AttributeError:  # a candidate built otherwise: it keeps what it has
            continue
        # on the device the instance's own tensor is on (the state is drawn on the CPU)
        own = vars(owner).get(name)
        if isinstance(own, torch.Tensor):  # the program's own attribute
            setattr(owner, name, x.to(own.device, copy=True))
        elif name in owner._non_persistent_buffers_set and isinstance(
                own := owner._buffers.get(name), torch.Tensor):
            owner._buffers[name] = x.to(own.device, copy=True)


def _plain_call(inputs: list[Any], inst: nn.Module, counter: LaunchCounter,
                fact: dict[str, Any], device: torch.device, opts: VerifyOptions) -> Any:
    backups = [x.clone() for x in tensors_of(inputs)]
    before = counter.count
    counter.reset_trace()
    poison_device_cache(device)
    with torch.no_grad(), counter.active(), PoisonAllocations(counter) as tracker:
        out = inst(*inputs)
    synchronize(device)
    fact["launches"] = counter.count - before
    fact["input_modified"] = [i for i, (x, bk) in enumerate(zip(tensors_of(inputs), backups,
                                                                 strict=True))
                              if not same_bits(x, bk)]
    outs = tensors_of([out])
    ins = tensors_of(inputs)
    fact["alias"] = [[i, j] for i, o in enumerate(outs) for j, x in enumerate(ins)
                     if overlaps(o, x)]
    fact["torch_written"] = []
    if opts.kernel_outputs:
        for i, o in enumerate(outs):
            if any(overlaps(o, x) for x in ins):
                continue
            key = storage_key(o)
            last_kernel = counter.last_launch.get(key, -1)
            last_torch = tracker.last_write.get(key, -1)
            if last_kernel < 0 or last_torch > last_kernel:
                fact["torch_written"].append(i)
    return out


def _stream_call(b: _Builder, spec: TrialSpec, inst: nn.Module, counter: LaunchCounter,
                 fact: dict[str, Any]) -> Any:
    """Inputs become ready on the calling stream only after a long GPU sleep.

    A candidate whose kernels run on another stream without ordering against the calling
    stream reads the old input values, or hands back outputs still being written.
    """
    stale = b.inputs(spec, seed=spec.seed + 1, dist="normal")
    fresh = b.inputs(spec)
    synchronize(b.device)
    before = counter.count
    with torch.no_grad(), counter.active(), PoisonAllocations(counter):
        torch.cuda._sleep(100_000_000)  # ~50 ms on the calling stream
        for dst, src in zip(tensors_of(stale), tensors_of(fresh), strict=True):
            dst.copy_(src, non_blocking=True)
        out = inst(*stale)
        snapshot = [o.clone() for o in tensors_of([out])]
    synchronize(b.device)
    fact["launches"] = counter.count - before
    leaves, spec_tree = torch.utils._pytree.tree_flatten(out)
    it = iter(snapshot)
    leaves = [next(it) if isinstance(x, torch.Tensor) else x for x in leaves]
    return torch.utils._pytree.tree_unflatten(leaves, spec_tree)


def _save_outputs(out: Any, path: Path) -> None:
    leaves = flatten(out)
    plain = []
    for x in leaves:
        if isinstance(x, torch.Tensor):
            # a plain tensor copy on the CPU: subclasses and hooks stay behind
            plain.append(x.detach().to("cpu").as_subclass(torch.Tensor).clone())
        elif isinstance(x, (int, float, bool)) or x is None:
            plain.append(x)
        else:
            plain.append(repr(type(x)))
    torch.save({"leaves": plain}, path)


# --------------------------------------------------------- reference worker
def judge_trials(problem: Problem, opts: VerifyOptions, specs: list[TrialSpec],
                 facts: list[dict[str, Any]], out_dir: Path, notes: list[str]) -> Verdict:
    """Decide the verdict from the candidate's saved outputs. Trusted process."""
    b = _Builder(problem, opts)
    verdict = Verdict(True, None, "", sizes=dict(b.main.sizes), reduced=b.main is not problem,
                      notes=list(notes))
    earlier: list[list[Any]] = []
    other_checked = {"same": False, "new": False}
    for k, spec in enumerate(specs):
        if spec.kind == "other-size":
            slot = "new" if spec.instance == "new" else "same"
            if other_checked[slot]:
                continue
        fact = facts[k] if k < len(facts) else None
        trial = Trial(spec.name, spec.seed, spec.dist, dict(spec.sizes), ok=True)
        reject = _judge_one(b, spec, fact, trial, earlier, opts, out_dir / f"trial{k}.pt")
        if reject == "skip":
            verdict.notes.append(f"{spec.name}: the reference does not run at sizes "
                                 f"{spec.sizes}; trial skipped")
            continue
        verdict.trials.append(trial)
        if trial.ok and trial.detail:  # passed only through the moved references' values
            verdict.notes.append(f"{spec.name}: {trial.detail}")
        if spec.kind == "other-size":
            other_checked["new" if spec.instance == "new" else "same"] = True
        if not trial.ok:
            verdict.correct, verdict.reason, verdict.detail = False, trial.reason, trial.detail
            return verdict
    if opts.other_sizes and not any(other_checked.values()) and not any(
            "could not be varied" in n for n in verdict.notes):
        verdict.notes.append("no other-size trial could run: shape-generality not checked")
    return verdict


def _fail(trial: Trial, reason: str, detail: str) -> str:
    trial.ok, trial.reason, trial.detail = False, reason, detail
    return reason


def _judge_one(b: _Builder, spec: TrialSpec, fact: dict[str, Any] | None, trial: Trial,
               earlier: list[list[Any]], opts: VerifyOptions, path: Path) -> str | None:
    where = f"{spec.name} ({spec.dist} inputs)"
    if spec.kind == "other-size":
        where = f"at other sizes ({', '.join(f'{k}={v}' for k, v in spec.sizes.items())})"
    # The reference first: if it cannot run at these sizes, the trial does not count.
    try:
        state = b.state(spec)
        inputs = b.inputs(spec)
        r, r64 = _references(b, spec, state, inputs, opts)
    except InputError:
        if spec.kind == "other-size":  # the problem's own code fails at these sizes
            return "skip"
        raise
    except Exception:
        if spec.kind == "other-size":
            return "skip"
        raise
    if fact is None:
        return _fail(trial, "error", f"{where}: the candidate produced no result")
    trial.launches = int(fact.get("launches", 0))
    if fact.get("error"):
        return _fail(trial, "error", f"{where}: {fact['error']}")
    # A model built with other constructor arguments must compute the right thing; whether
    # it runs generated kernels is not required: Python constants of a program (a scale of
    # 1/sqrt(head_dim), a view size) are specialised at capture, as torch.compile does, and a
    # module may run the reference forward for a model it was not generated for. Kernels at
    # other batch-like sizes (same instance) and at the problem's own sizes are required.
    launches_required = spec.instance != "new"
    if launches_required and trial.launches < opts.min_launches:
        return _fail(trial, "no-kernel", f"{where}: forward launched {trial.launches} Triton "
                                         f"kernels (at least {opts.min_launches} required)")
    if fact.get("input_modified"):
        return _fail(trial, "input-modified",
                     f"{where}: input {fact['input_modified'][0]} was modified by forward")
    if fact.get("reused_output") is not None:
        return _fail(trial, "reused-output",
                     f"an output of call {fact['reused_output'] + 1} changed during a later call")
    r_outs = tensors_of([r])
    ins = tensors_of(inputs)
    for i, j in fact.get("alias", []):
        ref_alias = i < len(r_outs) and j < len(ins) and overlaps(r_outs[i], ins[j])
        if not ref_alias:
            return _fail(trial, "alias", f"{where}: output {i} shares memory with input {j}")
    if launches_required and fact.get("torch_written"):
        return _fail(trial, "no-kernel", f"{where}: output {fact['torch_written'][0]} was not "
                                         "last written by a Triton kernel (computed by PyTorch?)")
    try:
        saved = torch.load(path, weights_only=True)
        leaves = saved["leaves"]
    except Exception as exc:
        return _fail(trial, "shape", f"{where}: outputs are not plain tensors ({one_line(exc)})")
    out = _as_device(leaves, r, b.device)
    cmp = compare(out, r, r64, opts.precision)
    if not cmp.ok and cmp.reason == "wrong":  # equal values in another valid order?
        ties = StableTies()
        try:
            r_t, r64_t = _references(b, spec, state, b.inputs(spec), opts, ties)
        except Exception:  # the program does not run under the mode: the first verdict
            ties.used = False
        if ties.used:
            alt = compare(out, r_t, r64_t, opts.precision)
            cmp = alt if alt.ok else cmp
    if not cmp.ok and cmp.reason == "wrong" and _few_elements_off(cmp):
        near = _nearby_references(b, spec, state, opts)
        alt = compare(out, r, r64, opts.precision, near)
        if alt.ok:
            cmp = alt
            trial.detail = "; ".join(o.detail for o in alt.outputs if o.n_near)
    worst = cmp.worst
    if worst is not None:
        trial.rel_l2, trial.tol_rel = worst.rel_l2, worst.tol_rel
        trial.max_abs, trial.tol_abs = worst.max_abs, worst.tol_abs
        trial.ref_rel_l2 = worst.ref_rel_l2
    if cmp.ok:
        if spec.main:
            earlier.append([x for x in leaves if isinstance(x, torch.Tensor)])
        return None
    if spec.kind == "stream":
        return _fail(trial, "stream", "output not ready on the calling stream when forward "
                                      f"returned (work on another stream?): {cmp.detail}")
    if spec.kind == "other-size":
        reason = "other-size" if cmp.reason in ("wrong", "nonfinite", "shape") else cmp.reason
        return _fail(trial, reason or "other-size", f"{where}: {cmp.detail}")
    now = [x for x in leaves if isinstance(x, torch.Tensor)]
    for prev in earlier:
        if len(prev) == len(now) and all(same_bits(a, c) for a, c in zip(now, prev,
                                                                          strict=True)):
            return _fail(trial, "repeat", f"{spec.name}: returned an earlier call's result for "
                                          f"new inputs ({cmp.detail})")
    return _fail(trial, cmp.reason or "wrong", f"{where}: {cmp.detail}")


def _references(b: _Builder, spec: TrialSpec, state: dict[str, torch.Tensor],
                inputs: list[Any], opts: VerifyOptions,
                ties: StableTies | None = None) -> tuple[Any, Any]:
    """The reference's outputs in the mode's precision and in float64, from fresh models
    (``ties``: with equal values ranked lowest index first)."""
    ref = b.ref_model(spec)
    _load_state(ref, state)
    ref64 = _float64_model(copy.deepcopy(ref))
    with contextlib.ExitStack() as stack:
        if ties is not None:
            stack.enter_context(ties)
        with torch.no_grad(), precision_mode(opts.precision):
            r = ref(*inputs)
            with float64_program():
                r64 = ref64(*[to_double(x) for x in inputs])
    synchronize(b.device)
    return r, r64


def _few_elements_off(cmp: Any) -> bool:
    """Whether the output that failed ``cmp`` failed by a few elements (at most a tenth, or
    16): the only failure a reference moved by rounding units can explain (a value rounded
    at a step, an argmax of near-equal values); a broadly wrong candidate is not run
    against eight more references."""
    if not cmp.outputs:
        return False
    o = cmp.outputs[-1]
    return 0 < o.n_bad <= max(16, o.numel // 10)


#: operator methods that compute a new tensor (others: indexing, attributes, in-place)
_ARITHMETIC = frozenset(
    f"__{r}{op}__" for op in ("add", "sub", "mul", "truediv", "div", "pow", "matmul", "mod",
                              "floordiv") for r in ("", "r"))


#: operations that copy or select values without rounding them (their results are the
#: operands' values, already moved where those were computed)
_MOVES_DATA = frozenset((
    "clone", "contiguous", "to", "detach", "type", "double", "float", "cat", "concat",
    "concatenate", "stack", "hstack", "vstack", "flatten", "reshape", "gather",
    "index_select", "take_along_dim", "take", "masked_fill", "masked_select", "where", "pad",
    "roll", "flip", "fliplr", "flipud", "repeat", "repeat_interleave", "tile", "expand",
    "expand_as", "broadcast_to", "movedim", "permute", "transpose", "t", "squeeze",
    "unsqueeze", "view", "view_as", "narrow", "select", "unfold", "tril", "triu", "diagonal",
    "diag", "diag_embed", "max", "min", "amax", "amin", "maximum", "minimum", "clamp", "clip",
    "relu", "sort", "topk", "kthvalue", "median", "abs", "neg", "sign", "zeros_like",
    "ones_like", "full_like", "pixel_shuffle", "pixel_unshuffle", "channel_shuffle",
))


class _Jitter(TorchFunctionMode):
    """Each floating result of an operation multiplied by ``1 + sign * rel * s``, ``s`` a
    random sign per element: the standard model of floating-point arithmetic (every
    operation's result off by a relative error of at most a rounding unit), with ``rel``
    well above the unit, so a run shows where the program's outputs depend on how its
    operations round. Views, in-place and ``out=`` results are left as they are (they
    compute nothing, and a copy would break the program's aliasing), as are results holding
    only integers (a rounded value, a mask, positions made by ``arange``: exact, not
    rounded). Draws follow the operations' order, so the same seed with the other sign
    moves every result the other way."""

    def __init__(self, rel: float, sign: float, seed: int) -> None:
        super().__init__()
        self.rel, self.sign, self.seed = rel, sign, seed
        self.gens: dict[torch.device, torch.Generator] = {}

    def move(self, x: Any, args: Sequence[Any]) -> Any:
        if not (isinstance(x, torch.Tensor) and x.is_floating_point()) or x.numel() == 0:
            return x
        if x._is_view() or isinstance(x, nn.Parameter) or any(
                isinstance(a, torch.Tensor) and a.numel() and overlaps(x, a) for a in args):
            return x
        if not bool((x != x.round()).any()):
            return x
        gen = self.gens.get(x.device)
        if gen is None:
            gen = self.gens[x.device] = torch.Generator(x.device).manual_seed(self.seed)
        s = torch.randint(0, 2, x.shape, generator=gen, device=x.device).to(x.dtype) * 2 - 1
        return x * (1 + self.sign * self.rel * s)

    def __torch_function__(self, func: Any, types: Any, args: tuple = (),
                           kwargs: dict | None = None) -> Any:
        kwargs = dict(kwargs or {})
        out = func(*args, **kwargs)
        name = getattr(func, "__name__", "")
        computes = name in _ARITHMETIC if name.startswith("__") else not (
            name.endswith("_") or name in _MOVES_DATA)
        if not computes or "out" in kwargs:  # attribute access, indexing, copies, in-place
            return out
        flat = tensors_of(list(args) + list(kwargs.values()))
        if isinstance(out, torch.Tensor):
            return self.move(out, flat)
        if isinstance(out, tuple) and not hasattr(out, "_fields"):
            return tuple(self.move(x, flat) for x in out)
        return out


def _nearby_references(b: _Builder, spec: TrialSpec, state: dict[str, torch.Tensor],
                       opts: VerifyOptions) -> list[Any]:
    """The float64 reference with float inputs, state and every operation's result moved
    by ``NEARBY_REL`` (random signs, :class:`_Jitter`): four draws, each taken both ways, so
    an output that rounding-sized changes flip (a float rounded to int16 within 1e-3 of a
    half-integer, an argmax of near-equal values, a fake-quantised value at a step) is
    flipped by one of a pair. A candidate's integer element that differs from both
    references must lie between the values these and the two references give there, a
    float element where they jump by more than the tolerance is measured to the nearest of
    them (``compare``): a kernel whose float sum or tanh rounds otherwise than PyTorch's is
    right there, one that truncates instead of rounding is not. Integer-valued floats
    (masks, indices kept as floats) are not moved."""
    rel = NEARBY_REL[opts.precision]
    inputs = [to_double(x) for x in b.inputs(spec)]
    base = {k: to_double(v) for k, v in state.items()}
    outs: list[Any] = []
    for k in range(4):
        seed = spec.seed * 7919 + 17 * k + 1
        for sign in (1.0, -1.0):
            jitter = _Jitter(rel, sign, seed)
            moved_in = [jitter.move(x, []) for x in inputs]
            moved_st = {key: jitter.move(v, []) for key, v in base.items()}
            ref = _float64_model(b.ref_model(spec))
            _load_state(ref, moved_st)
            try:
                with torch.no_grad(), float64_program(), jitter:
                    outs.append(ref(*moved_in))
            except Exception:  # the program does not run moved: no nearby reference
                continue
    synchronize(b.device)
    return outs


def _as_device(leaves: list[Any], ref: Any, device: torch.device) -> Any:
    """Saved leaves in the reference's structure (so compare() sees the same shape)."""
    moved = [x.to(device) if isinstance(x, torch.Tensor) else x for x in leaves]
    r_leaves, spec = torch.utils._pytree.tree_flatten(ref)
    if len(r_leaves) != len(moved):
        return moved  # compare() reports the structure mismatch
    return torch.utils._pytree.tree_unflatten(moved, spec)


