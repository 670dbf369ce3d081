"""Correctness of a candidate against its problem: the checks DESIGN.md lists, in order.

Each trial draws fresh parameters and inputs (its own seed and distribution), calls the
candidate first (allocations poisoned, Triton launches counted), synchronises the whole
device, then checks inputs, aliasing and earlier outputs, and only then runs the reference
(in the mode's precision and in float64) so nothing of the reference's can leak into the
candidate's result. Extra trials follow: a stream-ordering trial on CUDA and trials at
other sizes, with the same instance and with a new one.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import torch
from torch import nn

from kernelcraft.errors import InputError
from kernelcraft.measure.compare import Comparison, compare, flatten
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
    kernel_outputs: bool = True  # every output must be memory a Triton kernel was given


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


class _Reject(Exception):
    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail


# --------------------------------------------------------------------- helpers
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


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def _tensors(xs: Sequence[Any]) -> list[torch.Tensor]:
    return [x for x in flatten(list(xs)) if isinstance(x, torch.Tensor)]


def _span(t: torch.Tensor) -> tuple[int, int]:
    start = t.data_ptr()
    if t.numel() == 0:
        return start, start
    extent = sum((s - 1) * st for s, st in zip(t.shape, t.stride(), strict=True)) + 1
    return start, start + extent * t.element_size()


def _overlaps(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.device != b.device or a.numel() == 0 or b.numel() == 0:
        return False
    (a0, a1), (b0, b1) = _span(a), _span(b)
    return a0 < b1 and b0 < a1


def _same_bits(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.is_floating_point() or a.is_complex():
        return bool(torch.equal(torch.nan_to_num(a, nan=0.125), torch.nan_to_num(b, nan=0.125))
                    and torch.equal(torch.isnan(a), torch.isnan(b)))
    return bool(torch.equal(a, b))


# ------------------------------------------------------------------------ judge
class Verifier:
    """Runs the trials for one problem and one candidate class in this process."""

    def __init__(self, problem: Problem, cand_cls: type, opts: VerifyOptions) -> None:
        if opts.precision not in PRECISIONS:
            raise InputError(
                f"unknown precision {opts.precision!r}; choose from {', '.join(PRECISIONS)}"
            )
        self.problem = reduced(problem) if opts.reduce else problem
        self.full_problem = problem
        self.cand_cls = cand_cls
        self.opts = opts
        self.device = torch.device(opts.device)
        self.counter = LaunchCounter()
        self.history: list[tuple[list[torch.Tensor], list[torch.Tensor]]] = []

    # .................................................................. setup
    def _models(self, problem: Problem) -> tuple[list[Any], nn.Module, nn.Module]:
        init = problem.init_inputs(self.opts.seed)
        ref = problem.make_model(init, self.opts.seed)
        try:
            cand = self.cand_cls(*init)
        except TypeError as exc:
            raise InputError(
                f"candidate: ModelNew does not take Model's constructor arguments ({exc})"
            ) from exc
        except Exception as exc:
            raise _Reject("error", f"ModelNew(...) raised {type(exc).__name__}: {exc}") from exc
        if not isinstance(cand, nn.Module):
            raise InputError("candidate: ModelNew is not an nn.Module")
        dtype = _LOW.get(self.opts.precision)
        ref = ref.to(self.device)
        cand = cand.to(self.device)
        if dtype is not None:
            ref, cand = ref.to(dtype), cand.to(dtype)
        self._load(cand, ref.state_dict())
        return init, ref, cand

    @staticmethod
    def _load(cand: nn.Module, state: dict[str, torch.Tensor]) -> None:
        try:
            cand.load_state_dict(state)
        except RuntimeError as exc:
            first = str(exc).strip().splitlines()
            raise InputError(
                "candidate: ModelNew's parameters and buffers differ from Model's: "
                + " ".join(line.strip() for line in first[1:3])
            ) from exc

    def _redraw(self, problem: Problem, init: list[Any], ref: nn.Module, cand: nn.Module,
                seed: int) -> nn.Module:
        fresh = problem.make_model(init, seed)
        redraw_parameters(fresh, seed)
        state = fresh.state_dict()
        ref.load_state_dict(state)
        self._load(cand, ref.state_dict())
        return copy.deepcopy(fresh).to(self.device).double()

    # .................................................................. trials
    def run(self) -> Verdict:
        verdict = Verdict(True, None, "", sizes=dict(self.problem.sizes),
                          reduced=self.problem is not self.full_problem)
        try:
            self._main_trials(verdict)
            if self.device.type == "cuda":
                self._stream_trial(verdict)
            if self.opts.other_sizes:
                self._other_size_trials(verdict)
        except _Reject as rej:
            verdict.correct, verdict.reason, verdict.detail = False, rej.reason, rej.detail
        return verdict

    def _main_trials(self, verdict: Verdict) -> None:
        init, ref, cand = self._models(self.problem)
        self.main = (init, ref, cand)
        for t in range(self.opts.n_sets):
            seed = self.opts.seed + 1 + t
            dist = DISTRIBUTIONS[t % len(DISTRIBUTIONS)]
            ref64 = self._redraw(self.problem, init, ref, cand, seed)
            inputs = [to_device(x, self.device, self.opts.precision)
                      for x in self.problem.sample_inputs(seed, dist)]
            trial = self._trial(f"set {t + 1}", self.problem, seed, dist, ref, ref64, cand, inputs,
                                check_history=True)
            verdict.trials.append(trial)
            if not trial.ok:
                raise _Reject(trial.reason or "wrong", trial.detail)

    def _call_candidate(self, cand: nn.Module, inputs: list[Any]) -> tuple[Any, int]:
        before = self.counter.count
        self.counter.storages.clear()
        poison_device_cache(self.device)
        try:
            with torch.no_grad(), self.counter.active(), PoisonAllocations():
                out = cand(*inputs)
            synchronize(self.device)
        except _Reject:
            raise
        except Exception as exc:
            msg = str(exc).strip().splitlines()
            raise _Reject("error", f"forward raised {type(exc).__name__}: "
                                   f"{msg[0] if msg else ''}") from exc
        return out, self.counter.count - before

    def _reference(self, ref: nn.Module, ref64: nn.Module, inputs: list[Any]) -> tuple[Any, Any]:
        with torch.no_grad(), precision_mode(self.opts.precision):
            r = ref(*inputs)
            r64 = ref64(*[to_double(x) for x in inputs])
        synchronize(self.device)
        return r, r64

    def _trial(self, name: str, problem: Problem, seed: int, dist: str, ref: nn.Module,
               ref64: nn.Module, cand: nn.Module, inputs: list[Any], *,
               check_history: bool = False) -> Trial:
        trial = Trial(name, seed, dist, dict(problem.sizes), ok=True)
        backups = [x.clone() for x in _tensors(inputs)]
        out, launches = self._call_candidate(cand, inputs)
        trial.launches = launches
        if launches < self.opts.min_launches:
            return self._fail(trial, "no-kernel",
                              f"forward launched {launches} Triton kernels "
                              f"(at least {self.opts.min_launches} required)")
        for i, (x, b) in enumerate(zip(_tensors(inputs), backups, strict=True)):
            if not _same_bits(x, b):
                return self._fail(trial, "input-modified", f"input {i} was modified by forward")
        if check_history and self.history:
            for k, (outs, clones) in enumerate(self.history):
                for o, c in zip(outs, clones, strict=True):
                    if not _same_bits(o, c):
                        return self._fail(trial, "reused-output",
                                          f"an output of call {k + 1} changed during a later call")
        r, r64 = self._reference(ref, ref64, inputs)
        outs = _tensors([out])
        r_outs = _tensors([r])
        for i, o in enumerate(outs):
            for x in _tensors(inputs):
                if _overlaps(o, x):
                    ref_alias = i < len(r_outs) and _overlaps(r_outs[i], x)
                    if not ref_alias:
                        return self._fail(trial, "alias",
                                          f"output {i} shares memory with an input")
        if self.opts.kernel_outputs and self.opts.min_launches > 0:
            for i, o in enumerate(outs):
                aliases_input = any(_overlaps(o, x) for x in _tensors(inputs))
                if not aliases_input and storage_key(o) not in self.counter.storages:
                    return self._fail(trial, "no-kernel",
                                      f"output {i} was not written by a Triton kernel "
                                      "(computed by PyTorch?)")
        cmp: Comparison = compare(out, r, r64, self.opts.precision)
        worst = cmp.worst
        if worst is not None:
            trial.rel_l2, trial.tol_rel = worst.rel_l2, worst.tol_rel
            trial.max_abs, trial.tol_abs = worst.max_abs, worst.tol_abs
            trial.ref_rel_l2 = worst.ref_rel_l2
        if not cmp.ok:
            reason = cmp.reason or "wrong"
            if check_history and self._repeats(outs):
                reason = "repeat"
                return self._fail(trial, reason,
                                  f"{name}: returned an earlier call's result for new inputs "
                                  f"({cmp.detail})")
            return self._fail(trial, reason, f"{name} ({dist} inputs): {cmp.detail}")
        if check_history:
            self.history.append((outs, [o.clone() for o in outs]))
        return trial

    def _repeats(self, outs: list[torch.Tensor]) -> bool:
        for _, clones in self.history:
            if len(clones) == len(outs) and all(
                _same_bits(o, c) for o, c in zip(outs, clones, strict=True)
            ):
                return True
        return False

    @staticmethod
    def _fail(trial: Trial, reason: str, detail: str) -> Trial:
        trial.ok, trial.reason, trial.detail = False, reason, detail
        return trial

    def _stream_trial(self, verdict: Verdict) -> None:
        """Inputs become ready on the calling stream only after a long GPU sleep.

        A candidate whose kernels run on another stream without ordering against the calling
        stream reads the old input values, or hands back outputs still being written.
        """
        init, ref, cand = self.main
        seed = self.opts.seed + 101
        ref64 = self._redraw(self.problem, init, ref, cand, seed)
        stale = [to_device(x, self.device, self.opts.precision)
                 for x in self.problem.sample_inputs(seed + 1, "normal")]
        fresh = [to_device(x, self.device, self.opts.precision)
                 for x in self.problem.sample_inputs(seed, "uniform")]
        synchronize(self.device)
        before = self.counter.count
        try:
            with torch.no_grad(), self.counter.active(), PoisonAllocations():
                torch.cuda._sleep(100_000_000)  # ~50 ms on the calling stream
                for dst, src in zip(_tensors(stale), _tensors(fresh), strict=True):
                    dst.copy_(src, non_blocking=True)
                out = cand(*stale)
                snapshot = [o.clone() for o in _tensors([out])]
            synchronize(self.device)
        except Exception as exc:
            raise _Reject("error", f"forward raised {type(exc).__name__}: {exc}") from exc
        trial = Trial("stream order", seed, "uniform", dict(self.problem.sizes), ok=True,
                      launches=self.counter.count - before)
        r, r64 = self._reference(ref, ref64, fresh)
        cmp = compare(_rebuild(out, snapshot), r, r64, self.opts.precision)
        if not cmp.ok:
            self._fail(trial, "stream", "output not ready on the calling stream when forward "
                                        f"returned (work on another stream?): {cmp.detail}")
        verdict.trials.append(trial)
        if not trial.ok:
            raise _Reject(trial.reason or "stream", trial.detail)

    def _other_size_trials(self, verdict: Verdict) -> None:
        """Same instance at other batch-like sizes, then a new instance at other sizes."""
        checked = False
        init, ref, cand = self.main
        free = init_free_sizes(self.problem)
        for other in perturbations(self.problem, free) if free else ():
            if self._try_other(verdict, other, (init, ref, cand), "other sizes, same instance"):
                checked = True
                break
        base = reduced(self.problem) if self.problem.resizable else self.problem
        for other in perturbations(base):
            try:
                models = self._models(other)
            except _Reject as rej:
                raise _Reject(rej.reason, f"at other sizes: {rej.detail}") from rej
            except Exception:
                continue
            if self._try_other(verdict, other, models, "other sizes, new instance"):
                checked = True
                break
        if not checked:
            verdict.notes.append("sizes could not be varied: shape-generality not checked")

    def _try_other(self, verdict: Verdict, other: Problem, models: tuple[Any, Any, Any],
                   name: str) -> bool:
        init, ref, cand = models
        seed = self.opts.seed + 202
        try:
            ref64 = self._redraw(other, init, ref, cand, seed)
            inputs = [to_device(x, self.device, self.opts.precision)
                      for x in other.sample_inputs(seed, "normal")]
            self._reference(ref, ref64, inputs)  # the reference must run at these sizes
        except InputError:
            raise
        except Exception:
            return False
        trial = self._trial(name, other, seed, "normal", ref, ref64, cand, inputs)
        verdict.trials.append(trial)
        if not trial.ok:
            reason = "other-size" if trial.reason in ("wrong", "nonfinite", "shape") else (
                trial.reason or "other-size")
            sizes = ", ".join(f"{k}={v}" for k, v in other.sizes.items())
            raise _Reject(reason, f"at other sizes ({sizes}): {trial.detail}")
        return True


def _rebuild(out: Any, tensors: list[torch.Tensor]) -> Any:
    """``out`` with its tensor leaves replaced, in order, by ``tensors``."""
    from torch.utils._pytree import tree_flatten, tree_unflatten

    leaves, spec = tree_flatten(out)
    it = iter(tensors)
    leaves = [next(it) if isinstance(x, torch.Tensor) else x for x in leaves]
    return tree_unflatten(leaves, spec)


def verify(problem: Problem, cand_cls: type, opts: VerifyOptions,
           progress: Callable[[str], None] | None = None) -> Verdict:
    """Judge ``cand_cls`` (a ModelNew class) against ``problem``."""
    del progress
    return Verifier(problem, cand_cls, opts).run()
