"""What a generated module launches at full size, found without a GPU.

One build spec per group (its representative config) leaves out kernels a wrapper only
launches at some sizes (split passes, combines) and the specialisation Triton's launcher
applies: integer arguments equal to 1 become constants, multiples of 16 and 16-byte aligned
pointers get a divisibility attribute, and each such variant is a compilation of its own.
A compiler bug that only one of them hits (Triton 3.6 crashed on a batch norm's split pass
that compiled as the representative config) passes the usual cross-compile and fails on the
GPU. Here the module's forward runs on meta tensors (shapes, no data) with the target's
device properties, Triton's launch records each call instead of running it, and each
distinct launch becomes a build spec specialised as the launcher would.
"""

from __future__ import annotations

import json
import types
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch

from kernelcraft.problem import Problem
from kernelcraft.target import Target

_DTYPES = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16",
           torch.float64: "fp64", torch.int64: "i64", torch.int32: "i32", torch.int16: "i16",
           torch.int8: "i8", torch.uint8: "u8", torch.bool: "i1"}
_DIV16 = [["tt.divisibility", 16]]


def _props(target: Target) -> Any:
    """The device properties a wrapper reads, as the target's GPU reports them."""
    major, minor = ((int(str(target.triton_arch)[:-1]), int(str(target.triton_arch)[-1]))
                    if target.backend == "cuda" else (9, 4))
    return types.SimpleNamespace(
        name=f"{target.arch} (recorded)", multi_processor_count=target.sm_count,
        shared_memory_per_block_optin=target.smem_per_block, major=major, minor=minor,
        gcnArchName=target.arch, total_memory=1 << 40)


def _arg(value: Any) -> tuple[str, Any, bool]:
    """(signature type or "constexpr", constant, divisible by 16) of a runtime argument,
    as Triton's launcher specialises it."""
    if isinstance(value, torch.Tensor):
        aligned = value.storage_offset() * value.element_size() % 16 == 0
        return "*" + _DTYPES[value.dtype], None, aligned
    if isinstance(value, bool):
        return "i1", None, False
    if isinstance(value, int):
        if value == 1:
            return "constexpr", 1, False
        kind = "i32" if -2**31 <= value < 2**31 else ("i64" if value < 2**63 else "u64")
        return kind, None, value % 16 == 0
    if isinstance(value, float):
        return "fp32", None, False
    if value is None:
        return "constexpr", None, False
    if type(value).__name__ == "TensorDescriptor":  # triton.tools.tensor_descriptor (TMA)
        return (f"tensordesc<{_DTYPES[value.base.dtype]}{list(value.block_shape)}>", None,
                False)
    raise TypeError(f"cannot specialise a launch argument of type {type(value).__name__}")


def _spec(fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    bound = list(zip(fn.params, args, strict=False))  # positional, constexprs too
    bound += [(p, kwargs[p.name] if p.name in kwargs else p.default)
              for p in fn.params[len(args):] if p.name in kwargs or p.has_default]
    sig: dict[str, str] = {}
    consts: dict[str, Any] = {}
    attrs: dict[str, Any] = {}
    for param, value in bound:
        name = param.name
        if param.is_constexpr:
            consts[name] = value
            continue
        kind, const, div16 = _arg(value)
        sig[name] = kind
        if kind == "constexpr":
            consts[name] = const
        elif div16:
            attrs[name] = _DIV16
    names = {p.name for p in fn.params}
    options = {k: v for k, v in kwargs.items()
               if k not in names and k not in ("num_warps", "num_stages")}
    spec = {"name": fn.__name__, "signature": sig, "constexprs": consts,
            "num_warps": int(kwargs.get("num_warps", 4)),
            "num_stages": kwargs.get("num_stages"), "attrs": attrs}
    if options:
        spec["options"] = options
    return spec


@contextmanager
def _as_target(module: types.ModuleType, target: Target) -> Iterator[list[dict[str, Any]]]:
    """Within: the module's wrappers see ``target``'s GPU on meta tensors and every launch
    is recorded (not run)."""
    from triton.runtime.jit import JITFunction

    seen: list[dict[str, Any]] = []

    def record(self: Any, *args: Any, grid: Any = None, warmup: bool = False,
               **kwargs: Any) -> None:
        seen.append(_spec(self, args, kwargs))

    saved = (JITFunction.run, torch.cuda.get_device_properties, torch.version.hip,
             getattr(module, "_kc_arch", None))
    JITFunction.run = record
    torch.cuda.get_device_properties = lambda *a, **k: _props(target)
    torch.version.hip = "6.0" if target.backend == "hip" else None  # type: ignore[assignment]
    if saved[3] is not None:
        module._kc_arch = lambda dev: target.arch
    sms = getattr(module, "_KC_SMS", None)
    if isinstance(sms, dict):
        sms[torch.device("meta")] = target.sm_count
    try:
        yield seen
    finally:
        JITFunction.run, torch.cuda.get_device_properties = saved[0], saved[1]
        torch.version.hip = saved[2]  # type: ignore[assignment]
        if saved[3] is not None:
            module._kc_arch = saved[3]
        if isinstance(sms, dict):
            sms.pop(torch.device("meta"), None)


def record(module: types.ModuleType, problem: Problem, target: Target) -> list[dict[str, Any]]:
    """The distinct launches of ``module.ModelNew``'s forward on the problem's full-size
    inputs for ``target``, as build specs (``build.compile_kernel``'s format)."""
    model = module.ModelNew(*problem.init_inputs(0)).to("meta")
    inputs = problem.template_inputs(0, device="meta")
    with _as_target(module, target) as seen, torch.no_grad():
        model(*inputs)
    unique: dict[str, dict[str, Any]] = {}
    for spec in seen:
        unique.setdefault(json.dumps(spec, sort_keys=True, default=str), spec)
    return list(unique.values())
