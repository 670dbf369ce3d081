"""Build: compile generated kernels for explicit targets, no GPU needed, and read resources.

Compilation runs in a subprocess without Triton's interpreter (under the interpreter
``@triton.jit`` functions cannot be compiled). NVIDIA: registers, stack and local memory
(spills) from the wheel's ``cuobjdump --dump-resource-usage``; AMD: VGPR/SGPR/AGPR counts,
spills and LDS from the AMDGCN text.
"""

from __future__ import annotations

import ast
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import tokenize
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from kernelcraft.cache import cache_dir

TRITON_DTYPE = {
    "torch.float32": "fp32", "torch.float16": "fp16", "torch.bfloat16": "bf16",
    "torch.float64": "fp64", "torch.int64": "i64", "torch.int32": "i32", "torch.int16": "i16",
    "torch.int8": "i8", "torch.uint8": "u8", "torch.bool": "i1",
}


@dataclass
class BuildResult:
    kernel: str
    target: str
    ok: bool
    registers: int | None = None
    spills: int | None = None
    shared: int | None = None
    note: str = ""
    occupancy: float | None = None  # resident warps / the SM's (CU's) maximum, from resources


def _resources_cuda(compiled: Any) -> dict[str, Any]:
    import triton

    out: dict[str, Any] = {"shared": int(getattr(compiled.metadata, "shared", 0) or 0)}
    cuobj = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"
    if not cuobj.exists():
        return out
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "k.cubin"
        path.write_bytes(compiled.asm["cubin"])
        text = subprocess.run([str(cuobj), "--dump-resource-usage", str(path)],
                              capture_output=True, text=True, timeout=60).stdout
        m = re.search(r"REG:(\d+)\s+STACK:(\d+)\s+SHARED:(\d+)\s+LOCAL:(\d+)", text)
        stack = int(m.group(2)) if m else 0
        if stack:  # a frame no instruction touches is not a spill (see below)
            sass = subprocess.run([str(cuobj), "-sass", str(path)], capture_output=True,
                                  text=True, timeout=60).stdout
            if "Function" in sass and not re.search(r"\b(STL|LDL)(\.|\s)", sass):
                stack = 0
    if m:
        out["registers"] = int(m.group(1))
        # local memory, and the stack frame where the code stores to or loads from it
        # (spilled registers): Triton's PTX can declare a one-byte local array it never
        # uses, for which ptxas reserves an 8-byte frame that costs nothing. Arrays the PTX
        # itself declares are not spills either: libdevice's tan/sin/cos keep the Payne-Hanek
        # argument reduction's 28 bytes there, touched only for huge arguments.
        arrays = sum(int(n) for n in re.findall(r"\.local\s+\.align\s+\d+\s+\.b8\s+"
                                                r"\S+\[(\d+)\]", compiled.asm.get("ptx", "")))
        if arrays:
            out["note"] = f"{arrays} bytes of local arrays the PTX declares (not spills)"
        out["spills"] = int(m.group(4)) + max(0, stack - -(-arrays // 8) * 8)
    return out


def _resources_hip(compiled: Any) -> dict[str, Any]:
    text = compiled.asm.get("amdgcn", "")
    vals = dict(re.findall(r"\.(vgpr_count|sgpr_count|agpr_count|vgpr_spill_count|"
                           r"sgpr_spill_count|group_segment_fixed_size|"
                           r"private_segment_fixed_size):\s*(\d+)", text))
    get = lambda k: int(vals.get(k, 0))  # noqa: E731
    # in bytes per lane, as on CUDA: a spilled VGPR goes to scratch memory; a spilled SGPR
    # goes to a VGPR lane (v_writelane) and costs memory traffic only where the kernel
    # has scratch at all (a row kernel with 60 integer arguments spilled 15 SGPRs, no
    # scratch, and counted as spilling lost its resident config to a looped one)
    scratch = get("private_segment_fixed_size") > 0
    note = f"vgpr {get('vgpr_count')}, agpr {get('agpr_count')}, sgpr {get('sgpr_count')}"
    if get("sgpr_spill_count"):
        note += f", {get('sgpr_spill_count')} sgpr spilled" + (
            " to scratch" if scratch else " to vgpr lanes")
    return {
        "registers": get("vgpr_count") + get("agpr_count"),
        "spills": 4 * (get("vgpr_spill_count") + (get("sgpr_spill_count") if scratch else 0)),
        "shared": max(get("group_segment_fixed_size"),
                      int(getattr(compiled.metadata, "shared", 0) or 0)),
        "note": note,
    }


#: Resident warps (wavefronts) per SM (CU) at most; sm_89 holds 48.
_MAX_WARPS = {"sm_89": 48}


def occupancy(target: Any, registers: int | None, shared: int | None,
              num_warps: int) -> float | None:
    """Share of the SM's (CU's) warp slots that blocks of this kernel can fill, limited by
    registers, shared memory/LDS and warp slots (allocation granularity ignored)."""
    if not registers:
        return None
    most = _MAX_WARPS.get(target.arch, 64 if target.backend == "cuda" else 32)
    blocks = most // num_warps
    blocks = min(blocks, target.regs_per_sm // (registers * target.warp_size) // num_warps)
    if shared:
        blocks = min(blocks, target.smem_per_sm // shared)
    return round(max(0, blocks) * num_warps / most, 3)


def compile_kernel(fn: Any, spec: dict[str, Any], target: Any) -> BuildResult:
    """Compile one kernel (a JITFunction) for one kernelcraft Target."""
    import triton
    from triton.compiler import ASTSource

    sig = dict(spec["signature"])
    consts = dict(spec.get("constexprs", {}))
    for name in consts:
        sig[name] = "constexpr"
    opts = {"num_warps": int(spec.get("num_warps", 4))}
    if spec.get("num_stages"):
        opts["num_stages"] = int(spec["num_stages"])
    if target.backend == "hip":  # AMD-only launch options (waves_per_eu, MFMA shape, kpack)
        opts.update(spec.get("options") or {})
    name = spec["name"]
    attrs = {(fn.arg_names.index(p),): [list(a) for a in v]
             for p, v in (spec.get("attrs") or {}).items()}
    try:
        src = ASTSource(fn=fn, signature=sig, constexprs=consts, attrs=attrs)
        compiled = triton.compile(src, target=target.gpu_target(), options=opts)
    except Exception as exc:  # a build failure is a result, not a crash
        msg = str(exc).strip().splitlines()
        return BuildResult(name, target.arch, False, note=(msg[-1] if msg else type(exc).__name__)
                           [:200])
    res = _resources_cuda(compiled) if target.backend == "cuda" else _resources_hip(compiled)
    occ = occupancy(target, res.get("registers"), res.get("shared"), opts["num_warps"])
    return BuildResult(name, target.arch, True, res.get("registers"), res.get("spills"),
                       res.get("shared"), res.get("note", ""), occ)


def _import(module_path: str) -> Any:
    """The generated module, imported under a private name (compiled, not interpreted)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_kc_build_module", module_path)
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


def _run(module_path: str, items: list[list[Any]]) -> list[dict]:
    from kernelcraft.target import resolve

    module = _import(module_path)
    return [asdict(compile_kernel(getattr(module, k["name"]), k, resolve(t))) for k, t in items]


#: the kernel name of a row saying the forward could not run on meta tensors (or died)
UNRECORDED = "(forward on meta tensors)"


def _run_launches(module_path: str, problem_path: str, target: str) -> list[dict]:
    """Record what the module launches at the problem's full size for ``target`` (see
    ``launches``) and compile each launch as specialised."""
    from kernelcraft.errors import one_line
    from kernelcraft.launches import record
    from kernelcraft.problem import load_problem
    from kernelcraft.target import resolve

    module = _import(module_path)
    t = resolve(target)
    try:
        specs = record(module, load_problem(problem_path), t)
    except Exception as exc:  # a wrapper that needs real data: say so, build nothing
        return [{"kernel": UNRECORDED, "target": t.arch, "ok": False,
                 "note": f"launches not recorded: {one_line(exc)[:180]}", "launch": True}]
    rows = []
    twins: dict[str, dict[str, Any]] = {}  # a repeated layer's launches compile once
    for s in specs:
        fn = getattr(module, s["name"])
        src = getattr(fn, "src", None)  # (without it, no twin: the name stays in the key)
        key = twin_key(src, s["name"], s, t.key) if src else s["name"]
        if key not in twins:
            twins[key] = asdict(compile_kernel(fn, s, t))
        row = {**twins[key], "kernel": s["name"]}
        row["launch"] = True
        row["num_warps"] = s["num_warps"]
        row["constants"] = sorted(k for k, v in s["signature"].items() if v == "constexpr")
        rows.append(row)
    return rows


def twin_key(source: str, name: str, spec: dict[str, Any], target: str) -> str:
    """What compiling kernel ``name`` of ``source`` with ``spec`` for ``target`` depends on:
    equal for twins, kernels whose sources differ only in their names (the function's, its
    parameters' and locals', which carry the graph's node names: a repeated block's layers),
    built with the same spec."""
    text = _canonical_source(source.replace(name, "_kc_twin"))
    rest = json.dumps({**spec, "name": None}, sort_keys=True, default=str)
    return hashlib.sha256("\0".join((text, rest, target)).encode()).hexdigest()


def _canonical_source(source: str) -> str:
    """``source`` with every parameter and assigned local renamed by order of first
    appearance (nothing else renamed: ``tl.exp`` and ``tl.log`` stay apart)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    local = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)
             and isinstance(n.ctx, ast.Store)}
    local |= {a.arg for n in ast.walk(tree) if isinstance(n, ast.arguments)
              for a in (*n.posonlyargs, *n.args, *n.kwonlyargs)}
    names: dict[str, str] = {}
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        text = tok.string
        if tok.type == tokenize.NAME and text in local:
            text = names.setdefault(text, f"_n{len(names)}")
        out.append((tok.type, text))
    return tokenize.untokenize(out)


def _build_env() -> dict[str, str]:
    """The environment of a build subprocess: compiled kernels, never the interpreter."""
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env.setdefault("TRITON_CACHE_DIR", str(cache_dir() / "triton"))
    env.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    return env


def _spawn(job: dict[str, Any], tmp: str, n: int, env: dict[str, str]
           ) -> tuple[subprocess.Popen, Path]:
    """Start ``python -m kernelcraft.build`` on ``job``; its rows go to the returned path."""
    path, result = Path(tmp) / f"job{n}.json", Path(tmp) / f"result{n}.json"
    path.write_text(json.dumps(job | {"result": str(result)}))
    return subprocess.Popen([sys.executable, "-m", "kernelcraft.build", str(path)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True), result


def _collect(proc: subprocess.Popen, result: Path, timeout_s: float
             ) -> tuple[list[dict] | None, str]:
    """(rows, last line of stderr): rows is None when the subprocess died or timed out."""
    try:
        _, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        err = "build timed out"
    tail = ((err or "").strip().splitlines()[-1:] or ["no output"])[0][:200]
    return (json.loads(result.read_text()) if result.exists() else None), tail


def compile_launches(module_path: Path, problem_path: Path, targets: list[str],
                     timeout_s: float = 600.0) -> list[dict[str, Any]]:
    """Every distinct launch of the module's forward at the problem's full size, compiled
    for each target as Triton's launcher specialises it; one subprocess per target."""
    env = _build_env()
    out: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="kernelcraft-launches-") as tmp:
        procs = [(*_spawn({"module": str(module_path), "problem": str(problem_path),
                           "target": t}, tmp, n, env), t) for n, t in enumerate(targets)]
        for proc, result, t in procs:
            rows, tail = _collect(proc, result, timeout_s)
            out += rows if rows is not None else [
                {"kernel": UNRECORDED, "target": _arch(t), "ok": False,
                 "note": tail, "launch": True}]
    return out


def cross_compile(module_path: Path, specs: list[dict[str, Any]], targets: list[str],
                  timeout_s: float = 600.0, jobs: int = 1) -> list[dict[str, Any]]:
    """Compile every kernel of a generated module for every target; results in
    (target, spec) order."""
    return compile_pairs(module_path, [(s, t) for t in targets for s in specs], timeout_s,
                         jobs)


def compile_pairs(module_path: Path, pairs: list[tuple[dict[str, Any], str]],
                  timeout_s: float = 600.0, jobs: int = 1) -> list[dict[str, Any]]:
    """Compile each (spec, target) pair, spread over ``jobs`` subprocesses (each imports the
    module once); one result per pair, in order. A subprocess that dies or times out
    reports its pairs as failed builds."""
    if not pairs:
        return []
    env = _build_env()
    jobs = max(1, min(jobs, len(pairs)))
    parts = [list(range(i, len(pairs), jobs)) for i in range(jobs)]
    out: list[dict[str, Any] | None] = [None] * len(pairs)
    with tempfile.TemporaryDirectory(prefix="kernelcraft-build-") as tmp:
        procs = [(*_spawn({"module": str(module_path),
                           "items": [list(pairs[i]) for i in idx]}, tmp, n, env), idx)
                 for n, idx in enumerate(parts)]
        for proc, result, idx in procs:
            rows, tail = _collect(proc, result, timeout_s)
            if rows is None:
                rows = [{"kernel": pairs[i][0]["name"], "target": _arch(pairs[i][1]),
                         "ok": False, "note": tail} for i in idx]
            for i, row in zip(idx, rows, strict=True):
                out[i] = row
    return [r for r in out if r is not None]


def _arch(target: str) -> str:
    from kernelcraft.target import resolve

    return resolve(target).arch


def main() -> int:
    job = json.loads(Path(sys.argv[1]).read_text())
    if "problem" in job:
        res = _run_launches(job["module"], job["problem"], job["target"])
    else:
        res = _run(job["module"], job["items"])
    Path(job["result"]).write_text(json.dumps(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
