"""Output comparison with a tolerance derived from the reference's own error.

The reference (PyTorch in the chosen precision mode) is itself compared with a float64
computation; a candidate may be a small factor worse than that, never worse than an
absolute floor per mode. Calibration (DESIGN.md): on a 4096^3 fp32 matmul PyTorch's own
relative L2 error is ~1e-6, 3xTF32 reaches <= 2e-5 and must pass, plain TF32 (~3e-4) and
fp16 arithmetic on pointwise work (~5e-4) must fail.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.utils._pytree import tree_flatten

#: How much worse than PyTorch's own error a candidate may be.
ERROR_FACTOR = 32.0

#: Relative error any candidate may have in each precision mode, whatever the reference's.
FLOOR = {"fp32": 2e-5, "tf32": 2e-5, "fp16": 1e-3, "bf16": 8e-3}

#: How far (relative) the judge moves the float inputs, state and every operation's result
#: of a "nearby" reference (:func:`compare`'s ``nearby``): eight rounding units of the
#: mode's arithmetic, above what another library's tanh or summation order puts on one
#: result (a unit or a few), far below the float tolerance's floor (2e-5 is 335 fp32 units).
NEARBY_REL = {"fp32": 8 * 2.0**-24, "tf32": 8 * 2.0**-24, "fp16": 8 * 2.0**-11,
              "bf16": 8 * 2.0**-8}


@dataclass
class OutputCheck:
    """The comparison of one output tensor."""

    index: int
    ok: bool
    reason: str | None = None
    detail: str = ""
    rel_l2: float = 0.0
    tol_rel: float = 0.0
    max_abs: float = 0.0
    tol_abs: float = 0.0
    ref_rel_l2: float = 0.0
    #: elements that differ (integers) or are off by more than ``tol_abs`` (floats)
    n_bad: int = 0
    numel: int = 0
    #: elements that passed only through the ``nearby`` references' values
    n_near: int = 0


@dataclass
class Comparison:
    ok: bool
    reason: str | None
    detail: str
    outputs: list[OutputCheck] = field(default_factory=list)

    @property
    def worst(self) -> OutputCheck | None:
        floats = [o for o in self.outputs if o.tol_rel > 0]
        if not floats:
            return None
        return max(floats, key=lambda o: o.rel_l2 / o.tol_rel)


def flatten(out: Any) -> list[Any]:
    leaves, _ = tree_flatten(out)
    return leaves


def compare(cand: Any, ref: Any, ref64: Any, mode: str = "fp32",
            nearby: Sequence[Any] = ()) -> Comparison:
    """Compare candidate outputs with the reference (mode precision) and float64 outputs.

    ``nearby``: float64 outputs of the reference with its inputs and operations' results
    moved by ``NEARBY_REL`` (see :func:`compare_one`): where these differ from the float64
    reference, an integer element may take any value between them, and a float element
    whose reference jumps by more than the tolerance is measured to the nearest of them."""
    c_leaves, r_leaves, d_leaves = flatten(cand), flatten(ref), flatten(ref64)
    if len(c_leaves) != len(r_leaves):
        return Comparison(
            False, "shape", f"returned {len(c_leaves)} outputs, reference returns {len(r_leaves)}"
        )
    near_leaves = [flatten(n) for n in nearby]
    checks = []
    for i, (c, r, d) in enumerate(zip(c_leaves, r_leaves, d_leaves, strict=True)):
        near = [n[i] for n in near_leaves if i < len(n)]
        check = compare_one(i, c, r, d, mode, near)
        checks.append(check)
        if not check.ok:
            return Comparison(False, check.reason, check.detail, checks)
    return Comparison(True, None, "", checks)


def compare_one(i: int, c: Any, r: Any, d: Any, mode: str, near: Sequence[Any] = ()
                ) -> OutputCheck:
    name = f"output {i}"
    if not isinstance(r, torch.Tensor):
        if isinstance(c, torch.Tensor):
            if c.numel() != 1:
                return OutputCheck(i, False, "shape", f"{name}: tensor where reference has scalar")
            c = c.item()
        if isinstance(r, (int, float)) and isinstance(c, (int, float)):
            tol = FLOOR[mode] * max(abs(float(d)), 1e-30)
            ok = abs(float(c) - float(d)) <= tol or c == r
            return OutputCheck(i, ok, None if ok else "wrong", f"{name}: {c!r} != {r!r}")
        ok = c == r
        return OutputCheck(i, ok, None if ok else "wrong", f"{name}: {c!r} != {r!r}")
    if not isinstance(c, torch.Tensor):
        return OutputCheck(i, False, "shape", f"{name}: {type(c).__name__} instead of a tensor")
    if tuple(c.shape) != tuple(r.shape):
        return OutputCheck(
            i, False, "shape", f"{name}: shape {tuple(c.shape)}, expected {tuple(r.shape)}"
        )
    if c.dtype != r.dtype:
        return OutputCheck(i, False, "shape", f"{name}: dtype {c.dtype}, expected {r.dtype}")
    c, r, d = c.detach(), r.detach(), d.detach()
    if not (r.is_floating_point() or r.is_complex()):
        # Integer/bool results (argmax, masks): each element must match the fp reference or
        # the float64 one (a near-tie may legitimately resolve either way), or, where the
        # reference itself changes when its inputs move by a rounding-sized step (a float
        # rounded to int16 near a half-integer), lie between the values it takes there.
        d = d.to(r.device)
        bad = (c != r) & (c != d.to(c.dtype))
        n_bad = int(bad.sum())
        n_near = 0
        moved = [x.to(c.device, c.dtype) for x in near
                 if isinstance(x, torch.Tensor) and x.shape == c.shape]
        if n_bad and moved:
            lo, hi = _envelope(r, [d.to(c.dtype), *moved])
            n_near = int((bad & (c >= lo) & (c <= hi)).sum())
            n_bad -= n_near
        ok = n_bad == 0
        detail = f"{name}: {n_bad} of {c.numel()} elements differ"
        if ok and n_near:
            detail = _near_detail(name, n_near, c.numel(), mode)
        return OutputCheck(i, ok, None if ok else "wrong", detail, n_bad=n_bad,
                           numel=c.numel(), n_near=n_near if ok else 0)
    return _compare_float(i, c, r, d.to(r.device), mode, near)


def _envelope(first: torch.Tensor, others: Sequence[torch.Tensor]
              ) -> tuple[torch.Tensor, torch.Tensor]:
    """Elementwise smallest and largest of ``first`` and ``others``."""
    lo = hi = first
    for x in others:
        lo, hi = torch.minimum(lo, x), torch.maximum(hi, x)
    return lo, hi


def _near_detail(name: str, n_near: int, numel: int, mode: str) -> str:
    return (f"{name}: {n_near} of {numel} elements match the reference only with its "
            f"operations' results moved by {NEARBY_REL[mode]:.1e} (values at a rounding step)")


def _compare_float(i: int, c: torch.Tensor, r: torch.Tensor, d: torch.Tensor, mode: str,
                   near: Sequence[Any] = ()) -> OutputCheck:
    name = f"output {i}"
    c64, r64, d64 = c.double(), r.double(), d.double()
    for kind, fn in (("NaN", torch.isnan), ("+Inf", torch.isposinf), ("-Inf", torch.isneginf)):
        cm, rm = fn(c64), fn(r64)
        if not torch.equal(cm, rm):
            extra = int((cm & ~rm).sum())
            missing = int((rm & ~cm).sum())
            return OutputCheck(
                i, False, "nonfinite",
                f"{name}: {extra} unexpected {kind}, {missing} {kind} of the reference missing",
            )
    mask = torch.isfinite(r64) & torch.isfinite(d64)
    if not bool(mask.any()):
        return OutputCheck(i, True)
    cf, rf, df = c64[mask], r64[mask], d64[mask]
    denom = max(float(torch.linalg.vector_norm(df)), 1e-300)
    scale = float(df.abs().max())
    ref_rel = float(torch.linalg.vector_norm(rf - df)) / denom
    ref_abs = float((rf - df).abs().max())
    rel = float(torch.linalg.vector_norm(cf - df)) / denom
    mabs = float((cf - df).abs().max())
    floor = FLOOR[mode]
    tol_rel = max(ERROR_FACTOR * ref_rel, floor)
    tol_abs = max(ERROR_FACTOR * ref_abs, floor * scale, 1e-30)
    ok = rel <= tol_rel and mabs <= tol_abs and math.isfinite(rel)
    n_bad = int(((cf - df).abs() > tol_abs).sum())
    detail = ""
    n_near = 0
    if not ok:
        detail = (
            f"{name}: rel L2 error {rel:.2e} (tolerance {tol_rel:.2e}), "
            f"max abs error {mabs:.2e} (tolerance {tol_abs:.2e})"
        )
        moved = [x.to(c.device).double()[mask] for x in near
                 if isinstance(x, torch.Tensor) and x.shape == c.shape]
        if moved and math.isfinite(rel):
            # Where the reference itself jumps by more than a candidate may be off (a value
            # rounded to a quantisation step, then scaled back), the candidate is measured
            # to the nearest value the reference takes with its operations moved.
            lo, hi = _envelope(df, moved)
            jump = (hi - lo) > tol_abs
            e = torch.where(jump, cf - cf.clamp(lo, hi), cf - df)
            rel_j = float(torch.linalg.vector_norm(e)) / denom
            mabs_j = float(e.abs().max())
            if rel_j <= tol_rel and mabs_j <= tol_abs:
                n_near = int((jump & ((cf - df).abs() > tol_abs)).sum())
                detail = _near_detail(name, n_near, c.numel(), mode)
                ok, rel, mabs, n_bad = True, rel_j, mabs_j, 0
    return OutputCheck(i, ok, None if ok else "wrong", detail, rel, tol_rel, mabs, tol_abs, ref_rel,
                       n_bad, c.numel(), n_near if ok else 0)
