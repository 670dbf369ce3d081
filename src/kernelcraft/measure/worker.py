"""Worker processes of the judge, one role each: ``candidate`` or ``reference``.

Run as ``python -m kernelcraft.measure.worker JOB.json``. The candidate worker is the only
process that imports candidate code; a crash, a hang or an illegal memory access ends it
and the parent (``sandbox.py``) records that. The reference worker starts after the
candidate's process has ended, recomputes every trial from its seed and decides.
"""

from __future__ import annotations

import json
import sys
import traceback
from dataclasses import asdict
from pathlib import Path
from typing import Any

from kernelcraft.errors import InputError
from kernelcraft.measure import gpulock

#: A speedup beyond this is flagged for review rather than reported as a win.
SUSPICIOUS_SPEEDUP = 10.0


def _opts(job: dict[str, Any]) -> Any:
    from kernelcraft.measure.verify import VerifyOptions

    return VerifyOptions(**job["verify"])


def _specs(job: dict[str, Any]) -> list[Any]:
    from kernelcraft.measure.verify import TrialSpec

    return [TrialSpec(**s) for s in job["specs"]]


def timing_inputs(problem: Any, precision: str, seed: int, n: int,
                  device: Any = "cuda") -> list[list[Any]]:
    """The input sets the judge times on (seeds ``seed + 50 ...``), in the mode's dtype."""
    import torch

    from kernelcraft.measure.verify import to_device

    device = torch.device(device)
    return [
        [to_device(x, device, precision)
         for x in problem.sample_inputs(seed + 50 + i, device=device)]
        for i in range(n)
    ]


def timed_model(problem: Any, precision: str, seed: int, cls: Any | None,
                device: Any = "cuda") -> Any:
    """The model the judge times: the reference (constant parameters redrawn from ``seed``),
    or the candidate class holding the reference's state, in the mode's dtype."""
    import torch

    from kernelcraft.problem import redraw_parameters

    init = problem.init_inputs(seed)
    ref = problem.make_model(init, seed)
    redraw_parameters(ref, seed)
    model = ref if cls is None else cls(*init)
    model = model.to(device)
    low = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(precision)
    if low is not None:
        model, ref = model.to(low), ref.to(low)
    if cls is not None:
        model.load_state_dict(ref.to(device).state_dict())
    return model


def run_candidate_job(job: dict[str, Any]) -> dict[str, Any]:
    import torch

    from kernelcraft.measure.verify import precision_mode, run_candidate
    from kernelcraft.problem import load_module, load_problem

    problem = load_problem(job["ref"])
    module = load_module(Path(job["candidate"]), "candidate")
    cand_cls = getattr(module, "ModelNew", None)
    if not isinstance(cand_cls, type) or not issubclass(cand_cls, torch.nn.Module):
        raise InputError(f"{job['candidate']}: no `ModelNew` nn.Module class defined")
    opts = _opts(job)
    if opts.device == "cuda":
        gpulock.hold_shared()
    # The candidate runs under the mode's library settings, as the reference does: in
    # strict fp32 an extern cuDNN convolution must not run in TF32 (PyTorch's default).
    with precision_mode(opts.precision):
        facts = run_candidate(problem, cand_cls, opts, _specs(job), Path(job["out_dir"]))
    result: dict[str, Any] = {"status": "ran", "facts": facts}
    failed = any(f.get("error") for f in facts)
    if opts.device == "cuda" and job.get("timing", True) and not failed:
        from kernelcraft.measure.timing import time_cuda

        model = timed_model(problem, opts.precision, opts.seed, cand_cls)
        inputs = timing_inputs(problem, opts.precision, opts.seed, int(job.get("rotate", 3)))
        with torch.no_grad(), precision_mode(opts.precision):
            result["timing"] = {"candidate": time_cuda(model, inputs).to_json()}
    return result


def run_reference_job(job: dict[str, Any]) -> dict[str, Any]:
    import torch

    from kernelcraft.measure.verify import judge_trials, precision_mode
    from kernelcraft.problem import load_problem

    problem = load_problem(job["ref"])
    opts = _opts(job)
    if opts.device == "cuda":
        gpulock.hold_shared()
    facts = job.get("facts", [])
    verdict = judge_trials(problem, opts, _specs(job), facts, Path(job["out_dir"]),
                           job.get("notes", []))
    result: dict[str, Any] = {
        "status": "ok" if verdict.correct else "rejected",
        "correct": verdict.correct,
        "reason": verdict.reason,
        "detail": verdict.detail,
        "verdict": verdict.to_json(),
    }
    if opts.device != "cuda":
        return result
    from kernelcraft.measure.timing import device_info, time_cuda

    result["env"] = device_info()
    cand_timing = job.get("candidate_timing")
    if not (verdict.correct and cand_timing):
        return result
    model = timed_model(problem, opts.precision, opts.seed, None)
    inputs = timing_inputs(problem, opts.precision, opts.seed, int(job.get("rotate", 3)))
    timing = dict(cand_timing)
    with torch.no_grad(), precision_mode(opts.precision):
        timing["eager"] = time_cuda(model, inputs).to_json()
        if job.get("compile", True):
            try:
                compiled = torch.compile(model)
                timing["compile"] = time_cuda(compiled, inputs).to_json()
            except Exception as exc:  # a baseline that fails is reported, not fatal
                result["compile_error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
        result["roofline"] = roofline(model, inputs[0], opts.precision, job.get("target"))
    result["timing"] = timing
    result.update(speedups(timing, result["roofline"]))
    return result


def speedups(timing: dict[str, Any], roof: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    cand_ms = timing["candidate"]["median_ms"]
    out["speedup_eager"] = timing["eager"]["median_ms"] / cand_ms
    if "compile" in timing:
        out["speedup_compile"] = timing["compile"]["median_ms"] / cand_ms
    if roof.get("ms"):
        roof["pct"] = 100.0 * roof["ms"] / cand_ms
    flags = []
    for key in ("speedup_eager", "speedup_compile"):
        if out.get(key, 0) > SUSPICIOUS_SPEEDUP:
            flags.append(f"{key} {out[key]:.1f}x > {SUSPICIOUS_SPEEDUP:.0f}x: review")
    if roof.get("pct", 0) > 105:
        flags.append(f"faster than the roofline ({roof['pct']:.0f}%): review")
    out["flags"] = flags
    return out


def roofline(model: Any, inputs: list[Any], mode: str, target_name: str | None) -> dict[str, Any]:
    """The floor max(bytes / bandwidth, flops / peak) for the target, each byte moved once."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from kernelcraft import target as targets

    # the counter's module tracker hooks every tensor argument that requires grad; a view of
    # a parameter made under no_grad requires grad with no grad function (a Perceiver's
    # latents expanded over the batch), and the hook fails on it: parameters are frozen here
    frozen = [p for p in model.parameters() if p.requires_grad]
    try:
        for p in frozen:
            p.requires_grad_(False)
        with FlopCounterMode(display=False) as counter:
            out = model(*inputs)
    finally:
        for p in frozen:
            p.requires_grad_(True)
    flops = counter.get_total_flops()
    tensors = [x for x in inputs if isinstance(x, torch.Tensor)]
    tensors += list(model.parameters()) + list(model.buffers())
    tensors += [x for x in torch.utils._pytree.tree_leaves(out) if isinstance(x, torch.Tensor)]
    nbytes = sum(t.numel() * t.element_size() for t in tensors)
    # timings on a GPU are that GPU's: its ceilings, not those of the product the target
    # arch names (sm_90 means the H200; an H100 has 3.35 TB/s, not 4.25)
    tgt = targets.detect() or (targets.resolve(target_name) if target_name else None)
    result: dict[str, Any] = {"bytes": nbytes, "flops": flops}
    if tgt is None:
        return result
    peak = matmul_ceiling(tgt, mode)
    bw = tgt.bandwidth()
    mem_ms = nbytes / bw * 1e3
    flop_ms = flops / peak * 1e3 if flops else 0.0
    result.update(target=tgt.arch, product=tgt.product, bandwidth=bw, peak_flops=peak,
                  ms=max(mem_ms, flop_ms),
                  bound="memory" if mem_ms >= flop_ms else "compute")
    return result


def matmul_ceiling(tgt: Any, mode: str) -> float:
    """FLOP/s ceiling of matrix work in a precision mode.

    Strict fp32 may use tensor cores through precision emulation (3 low-precision products
    per fp32 product), so its ceiling is the best of plain fp32 and the emulated rates.
    """
    if mode in ("bf16", "fp16", "tf32"):
        return tgt.peak_flops(mode)
    best = tgt.peak_flops("fp32")
    for prec in ("tf32x3", "bf16x3", "ieee"):
        if prec in tgt.dot_precisions:
            best = max(best, tgt.dot_peak_flops(prec))
    return best


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    job = json.loads(Path(argv[0]).read_text())
    out_path = Path(job["result"])
    if job.get("device") == "cpu":  # Triton's interpreter: reductions on whole blocks
        from kernelcraft.measure.interpreter import install

        install()
    try:
        if job["role"] == "candidate":
            result = run_candidate_job(job)
        else:
            result = run_reference_job(job)
    except InputError as exc:
        result = {"status": "input-error", "correct": False, "reason": None, "detail": str(exc)}
    except Exception as exc:  # a bug in the judge itself: report with its traceback
        result = {
            "status": "judge-error",
            "correct": False,
            "reason": None,
            "detail": f"{type(exc).__name__}: {exc}",
            "traceback": traceback.format_exc(),
        }
    out_path.write_text(json.dumps(result, default=str))
    return 0


def spec_json(specs: list[Any]) -> list[dict[str, Any]]:
    return [asdict(s) for s in specs]


if __name__ == "__main__":
    sys.exit(main())
