"""Generated modules of two (or more) versions of kernelcraft, side by side on the GPU.

For each problem: eager PyTorch, ``torch.compile`` (default mode) and every given module's
``ModelNew`` (made elsewhere, e.g. by ``kernelcraft generate --no-judge --no-build`` on a
machine without a GPU: every group a kernel, no kernel-or-eager choice), all on the judge's
timing inputs and parameters, timed with the judge's timer (L2 flushed, inputs rotated,
median) in one process; each module checked against a float64 run with the judge's strict
comparison first. Bandwidth counts each input, parameter and output moved once (% of the
measured 4.25 TB/s). One JSON line per measurement, a table at the end.

With ``--sweep LABEL``, that module's row reductions and pointwise kernels are also timed
at a grid of launch configs (rows per program, chunk, warps; elements per program, column
block, warps), set through its tuned table.

Usage (repository root, a CUDA machine):
  python benchmarks/modules_ab_gpu.py --out rows.jsonl --modules old=DIR_A new=DIR_B \\
      benchmarks/problems/upsample_bilinear_skip_relu.py ...
where DIR/<problem name>/kernel.py is each version's module.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch
from gpu_rows import recorder, versions

from kernelcraft.codegen.reduction import MAX_SPLIT, SPLIT_WAVES
from kernelcraft.codegen.runtime import _kc_row_split_on
from kernelcraft.measure.compare import compare_one, flatten
from kernelcraft.measure.timing import host_ms, time_cuda
from kernelcraft.measure.verify import float64_program
from kernelcraft.measure.worker import timed_model, timing_inputs
from kernelcraft.problem import load_module, load_problem

ROOFLINE_TBS = 4.25


def _bytes(model: torch.nn.Module, inputs: list, out: object) -> int:
    tensors = [t for t in inputs if isinstance(t, torch.Tensor)]
    tensors += list(model.parameters()) + list(model.buffers())
    tensors += [t for t in flatten(out) if isinstance(t, torch.Tensor)]
    return sum(t.numel() * t.element_size() for t in tensors)


def run_problem(path: Path, modules: dict[str, Path], budget_ms: float, emit,
                sweep: str | None = None, sweep_only: str | None = None) -> dict[str, float]:
    problem = load_problem(path)
    sets = timing_inputs(problem, "fp32", 0, 3)
    ref_model = timed_model(problem, "fp32", 0, None)
    with torch.no_grad():
        ref = ref_model(*sets[0])
        with float64_program():  # the program's own casts give float64 too
            ref64 = timed_model(problem, "fp32", 0, None).double()(
                *[t.double() if isinstance(t, torch.Tensor) and t.is_floating_point() else t
                  for t in sets[0]])
    nbytes = _bytes(ref_model, sets[0], ref)
    base = {"problem": path.stem, "mbytes": nbytes / 1e6}
    times: dict[str, float] = {}

    def row(impl: str, model, **extra) -> None:
        try:
            with torch.no_grad():
                got = model(*sets[0])
                checks = [compare_one(i, c, r, d, "fp32") for i, (c, r, d) in enumerate(
                    zip(flatten(got), flatten(ref), flatten(ref64), strict=True))]
                ms = time_cuda(model, sets, budget_ms=budget_ms).median_ms
                host = host_ms(model, sets)
            ok = all(c.ok for c in checks)
            emit(base | dict(impl=impl, ms=ms, host_ms=host, ok=ok,
                             rel_l2=max((c.rel_l2 or 0.0) for c in checks),
                             roofline=nbytes / ms / 1e9 / ROOFLINE_TBS) | extra)
            if ok and ":" not in impl:  # sweep rows are rows, not the table's columns
                times[impl] = ms
        except Exception as exc:  # noqa: BLE001 - one failure is a row, the run goes on
            emit(base | dict(impl=impl, error=f"{type(exc).__name__}: {exc}"[:300]) | extra)

    row("eager", ref_model)
    row("compile", torch.compile(ref_model))
    for label, root in modules.items():
        module_path = root / path.stem / "kernel.py"
        try:
            module = load_module(module_path, f"candidate_{label}")
        except Exception as exc:  # noqa: BLE001
            emit(base | dict(impl=label, error=f"{type(exc).__name__}: {exc}"[:300]))
            continue
        model = timed_model(problem, "fp32", 0, module.ModelNew)
        row(label, model, module=str(module_path))
        if label == sweep:
            for name, key in _tuned_keys(module, model, sets[0]):
                if sweep_only and sweep_only not in name:
                    continue
                arch = module._kc_arch(sets[0][0].device)
                grid = (_row_configs(*key) if "reduction" in name
                        else _tile_configs("scatter" in name))
                for cfg in grid:
                    module._KC_TUNED.clear()
                    module._KC_TUNED[(name, arch, key)] = cfg
                    row(f"{label}:sweep", model, wrapper=name, key=list(key), config=cfg)
                module._KC_TUNED.clear()
    torch.cuda.empty_cache()
    return times


def _tuned_keys(module, model, inputs) -> list[tuple[str, tuple[int, ...]]]:
    """(wrapper, key) of every row-reduction ((K, R)) and pointwise ((numel,)) launch of one
    forward."""
    seen: list[tuple[str, tuple[int, ...]]] = []
    real = module._kc_tuned

    def spy(name, dev, key):
        if (("reduction" in name and len(key) == 2) or "pointwise" in name
                or "scatter" in name) and (
                name, tuple(key)) not in seen:
            seen.append((name, tuple(key)))
        return real(name, dev, key)

    module._kc_tuned = spy
    module._KC_TUNED[("", "", ())] = {}  # a new table version: the wrappers plan again
    del module._KC_TUNED[("", "", ())]
    try:
        with torch.no_grad():
            model(*inputs)
    finally:
        module._kc_tuned = real
    return seen


def _tile_configs(scatter: bool = False) -> list[dict]:
    """Pointwise tiles: elements per program, column block (None: the heuristic's), warps
    (scatters: smaller blocks too, atomics in flight per program)."""
    sizes = ((64, 1), (128, 1), (128, 2), (256, 1), (256, 2), (512, 2)) if scatter else (
        (1024, 4), (2048, 8), (4096, 8))
    cols = (None,) if scatter else (None, 32, 64, 128, 256)
    return [dict(BLOCK=b, XBLOCK=x, num_warps=w, FASTDIV=False) for b, w in sizes for x in cols]


#: the row template's split policy (the sweep splits rows of any length, as the interpreter
#: does; the GPU heuristic keeps rows under SPLIT_MIN_R whole)
SPLIT_POLICY = {"SPLIT_WAVES": SPLIT_WAVES, "MAX_SPLIT": MAX_SPLIT}


def _row_configs(K: int, R: int) -> list[dict]:
    """Rows per program, chunk and warps of the row template, 4 to 32 elements per thread;
    a short reduced extent (at most 64) also as many rows side by side (columns), a longer one
    also 16 to 128 rows side by side in looped chunks of 16 to 128; few rows
    also split over programs (the heuristic's count of programs per row and twice it)."""
    out = []
    r2 = 1 << max(0, R - 1).bit_length()
    sms = (torch.cuda.get_device_properties(0).multi_processor_count
           if torch.cuda.is_available() else 4)  # the interpreter's smoke test
    tiles = [(bk, br) for bk in (1, 2, 4, 8)
             for br in sorted({min(r2, b) for b in (512, 1024, 2048, 4096, 8192, 16384)})]
    if r2 <= 64:
        tiles += [(bk, r2) for bk in (64, 256, 1024, 2048) if bk * r2 >= 256]
    else:  # many rows side by side, a short chunk looped (a kept dim innermost in memory)
        tiles += [(bk, br) for bk in (16, 32, 64, 128) for br in (16, 32, 64, 128)
                  if 1024 <= bk * br <= 8192 and bk <= max(K, 1)]
    for bk, br in tiles:
        if bk > max(K, 1) and bk <= 8:
            continue
        chunks = -(-R // br)
        one = _kc_row_split_on(K, R, bk, br, sms, False, SPLIT_POLICY)[0]
        for split in sorted({one, min(chunks, 2 * one) if one > 1 else 1}):
            for warps in (2, 4, 8, 16):
                if 1 <= bk * br // (32 * warps) <= 32 and (warps > 2 or bk * br <= 1024):
                    out.append(dict(BLOCK_K=bk, BLOCK_R=br, num_warps=warps, SPLIT=split))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--modules", nargs="+", required=True, metavar="LABEL=DIR")
    ap.add_argument("--budget-ms", type=float, default=400.0)
    ap.add_argument("--sweep", metavar="LABEL", help="also sweep the row-reduction launch "
                    "configs of this module (through its tuned table)")
    ap.add_argument("--sweep-only", metavar="TEXT", help="sweep only the wrappers whose name "
                    "holds TEXT (e.g. scatter)")
    ap.add_argument("problems", nargs="+", type=Path)
    args = ap.parse_args()
    modules = versions(args.modules)
    emit, _ = recorder(args.out, args.budget_ms)
    table = []
    for path in args.problems:
        try:
            table.append((path.stem, run_problem(path, modules, args.budget_ms, emit,
                                                    args.sweep, args.sweep_only)))
        except Exception as exc:  # noqa: BLE001 - a problem that cannot run is a row
            emit({"problem": path.stem, "error": f"{type(exc).__name__}: {exc}"[:300]})
    labels = ["eager", "compile", *modules]
    print("| problem | " + " | ".join(f"{x} ms" for x in labels) + " | "
          + " | ".join(f"{x} vs compile" for x in modules) + " |")
    for name, t in table:
        cells = [f"{t[x]:.3f}" if x in t else "-" for x in labels]
        ratios = [f"{t['compile'] / t[x]:.2f}x" if x in t and "compile" in t else "-"
                  for x in modules]
        print(f"| {name} | " + " | ".join(cells + ratios) + " |")


if __name__ == "__main__":
    main()
