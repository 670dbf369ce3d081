"""Worker process: judges one candidate and writes the result as JSON.

Run as ``python -m kernelcraft.measure.worker JOB.json``. Untrusted candidate code only
ever runs here, so a crash, a hang or an illegal memory access ends this process and the
parent (``sandbox.py``) records it; the tuner and the CLI survive.
"""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path
from typing import Any

from kernelcraft.errors import InputError

#: A speedup beyond this is flagged for review rather than reported as a win.
SUSPICIOUS_SPEEDUP = 10.0


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    import torch

    from kernelcraft.measure.verify import VerifyOptions, verify
    from kernelcraft.problem import load_module, load_problem

    problem = load_problem(job["ref"])
    module = load_module(Path(job["candidate"]), "candidate")
    cand_cls = getattr(module, "ModelNew", None)
    if not isinstance(cand_cls, type) or not issubclass(cand_cls, torch.nn.Module):
        raise InputError(f"{job['candidate']}: no `ModelNew` nn.Module class defined")
    device = job["device"]
    opts = VerifyOptions(
        device=device,
        precision=job.get("precision", "fp32"),
        n_sets=int(job.get("n_sets", 5)),
        seed=int(job.get("seed", 0)),
        reduce=device == "cpu" or bool(job.get("reduce", False)),
        other_sizes=bool(job.get("other_sizes", True)),
        min_launches=int(job.get("min_launches", 1)),
        kernel_outputs=bool(job.get("kernel_outputs", True)),
    )
    verdict = verify(problem, cand_cls, opts)
    result: dict[str, Any] = {
        "status": "ok" if verdict.correct else "rejected",
        "correct": verdict.correct,
        "reason": verdict.reason,
        "detail": verdict.detail,
        "verdict": verdict.to_json(),
    }
    if device == "cuda":
        from kernelcraft.measure.timing import device_info

        result["env"] = device_info()
        if verdict.correct and job.get("timing", True):
            result.update(time_against_baselines(problem, cand_cls, opts, job))
    return result


def time_against_baselines(problem: Any, cand_cls: type, opts: Any,
                           job: dict[str, Any]) -> dict[str, Any]:
    """Time candidate, eager and torch.compile on the same rotating inputs, full size."""
    import torch

    from kernelcraft.measure.timing import time_cuda
    from kernelcraft.measure.verify import precision_mode, to_device
    from kernelcraft.problem import redraw_parameters

    device = torch.device("cuda")
    init = problem.init_inputs(opts.seed)
    ref = problem.make_model(init, opts.seed)
    redraw_parameters(ref, opts.seed)
    cand = cand_cls(*init)
    ref, cand = ref.to(device), cand.to(device)
    low = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(opts.precision)
    if low is not None:
        ref, cand = ref.to(low), cand.to(low)
    cand.load_state_dict(ref.state_dict())
    n_rot = int(job.get("rotate", 3))
    input_sets = [
        [to_device(x, device, opts.precision) for x in problem.sample_inputs(opts.seed + 50 + i)]
        for i in range(n_rot)
    ]
    out: dict[str, Any] = {"timing": {}}
    with torch.no_grad(), precision_mode(opts.precision):
        out["timing"]["candidate"] = time_cuda(cand, input_sets).to_json()
        out["timing"]["eager"] = time_cuda(ref, input_sets).to_json()
        if job.get("compile", True):
            try:
                compiled = torch.compile(ref)
                out["timing"]["compile"] = time_cuda(compiled, input_sets).to_json()
            except Exception as exc:  # a baseline that fails is reported, not fatal
                out["compile_error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
        out["roofline"] = roofline(ref, input_sets[0], opts.precision, job.get("target"))
    t = out["timing"]
    cand_ms = t["candidate"]["median_ms"]
    out["speedup_eager"] = t["eager"]["median_ms"] / cand_ms
    if "compile" in t:
        out["speedup_compile"] = t["compile"]["median_ms"] / cand_ms
    if out["roofline"].get("ms"):
        out["roofline"]["pct"] = 100.0 * out["roofline"]["ms"] / cand_ms
    flags = []
    for key in ("speedup_eager", "speedup_compile"):
        if out.get(key, 0) > SUSPICIOUS_SPEEDUP:
            flags.append(f"{key} {out[key]:.1f}x > {SUSPICIOUS_SPEEDUP:.0f}x: review")
    if out["roofline"].get("pct", 0) > 105:
        flags.append(f"faster than the roofline ({out['roofline']['pct']:.0f}%): review")
    out["flags"] = flags
    return out


def roofline(model: Any, inputs: list[Any], mode: str, target_name: str | None) -> dict[str, Any]:
    """The floor max(bytes / bandwidth, flops / peak) for the target, each byte moved once."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from kernelcraft import target as targets

    with FlopCounterMode(display=False) as counter:
        out = model(*inputs)
    flops = counter.get_total_flops()
    tensors = [x for x in inputs if isinstance(x, torch.Tensor)]
    tensors += list(model.parameters()) + list(model.buffers())
    tensors += [x for x in torch.utils._pytree.tree_leaves(out) if isinstance(x, torch.Tensor)]
    nbytes = sum(t.numel() * t.element_size() for t in tensors)
    tgt = targets.resolve(target_name) if target_name else targets.detect()
    result: dict[str, Any] = {"bytes": nbytes, "flops": flops}
    if tgt is None:
        return result
    peak = matmul_ceiling(tgt, mode)
    bw = tgt.bandwidth()
    mem_ms = nbytes / bw * 1e3
    flop_ms = flops / peak * 1e3 if flops else 0.0
    result.update(target=tgt.arch, bandwidth=bw, peak_flops=peak, ms=max(mem_ms, flop_ms),
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
    job_path = Path(argv[0])
    job = json.loads(job_path.read_text())
    out_path = Path(job["result"])
    try:
        result = run_job(job)
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


if __name__ == "__main__":
    sys.exit(main())
