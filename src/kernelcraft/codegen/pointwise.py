"""Pointwise template: a fused elementwise DAG over one domain, one pass over memory.

Each program takes BLOCK consecutive elements of the (coalesced) output domain; operands
are read through their own strides, so broadcasting, transposed and strided inputs cost no
copy. Knobs: BLOCK, num_warps.
"""

from __future__ import annotations

import math
from typing import Any

import torch.fx as fx

from kernelcraft.codegen.common import (
    MAX_RANK,
    KernelSource,
    compute_dtype,
    decompose_lines,
    lower_pointwise,
    offset_lines,
    ptr_type,
    scalar_type,
    tl_dtype,
    var,
)
from kernelcraft.plan import Group, hint, is_tensor_node, val


def emit_pointwise(g: Group, config: dict[str, Any] | None = None) -> KernelSource:
    cfg: dict[str, Any] = {"BLOCK": 1024, "num_warps": 4, "BLOCK_CPU": 4096}
    cfg.update(config or {})
    try:  # the size the tuner tunes at (the capture's; symbolic dims by their hints)
        shape = val(g.outputs[0]).shape
        cfg["at"] = {"numel": math.prod(hint(d) for d in shape)}
    except (TypeError, ValueError, AttributeError):
        pass
    kname, wname = f"_kc_{g.name}_kernel", f"_kc_{g.name}"
    R = MAX_RANK
    tensors = [a for a in g.inputs if is_tensor_node(a)]
    scalars = [a for a in g.inputs if not is_tensor_node(a)]
    if not tensors:
        raise NotImplementedError("a pointwise group without tensor inputs")
    outs = g.outputs
    in_names = [f"in{i}" for i in range(len(tensors))]
    out_names = [f"out{i}" for i in range(len(outs))]
    sc_names = [f"sc{i}" for i in range(len(scalars))]
    params = in_names + out_names + sc_names + ["numel"]
    params += [f"size{d}" for d in range(R)]
    for nm in in_names + out_names:
        params += [f"{nm}_st{d}" for d in range(R)]
    params += ["NDIM: tl.constexpr", "BLOCK: tl.constexpr"]
    body = [
        "    pid = tl.program_id(0).to(tl.int64)",
        "    lin = pid * BLOCK + tl.arange(0, BLOCK)",
        "    mask = lin < numel",
    ]
    body += decompose_lines("lin", "i", "size", R, "NDIM", "    ")
    env: dict[fx.Node, str] = {}
    for nm, a in zip(in_names, tensors, strict=True):
        body += offset_lines(f"{nm}_off", "i", f"{nm}_st", R, "NDIM", "lin * 0", "    ")
        body.append(f"    {var(a)} = tl.load({nm} + {nm}_off, mask=mask, other=0)"
                    f".to({compute_dtype(a)})")
        env[a] = var(a)
    for nm, a in zip(sc_names, scalars, strict=True):
        env[a] = nm
    for n in g.nodes:
        body.append("    " + lower_pointwise(n, env))
        env[n] = var(n)
    for nm, o in zip(out_names, outs, strict=True):
        body += offset_lines(f"{nm}_off", "i", f"{nm}_st", R, "NDIM", "lin * 0", "    ")
        body.append(f"    tl.store({nm} + {nm}_off, {env[o]}.to({tl_dtype(o)}), mask=mask)")
    source = "@triton.jit\ndef " + kname + "(" + ", ".join(params) + "):\n" + "\n".join(body)

    # ---- wrapper
    domain_arg = "shape"
    w = [f"def {wname}({', '.join(in_names + sc_names)}):"]
    w.append(f"    dev = {in_names[0]}.device")
    shapes = ", ".join(n + ".shape" for n in in_names)
    w.append(f"    {domain_arg} = torch.broadcast_shapes({shapes})")
    for nm, o in zip(out_names, outs, strict=True):
        w.append(f"    {nm} = torch.empty({domain_arg}, device=dev, dtype={val(o).dtype})")
    views = [f"{nm}.expand({domain_arg})" for nm in in_names] + out_names
    w.append(f"    views = [{', '.join(views)}]")
    w.append("    numel = 1")
    w.append(f"    for s in {domain_arg}:")
    w.append("        numel *= s")
    w.append(f"    if numel == 0:\n        return ({', '.join(out_names)},)")
    w.append(f"    sizes, strides, ndim = _kc_coalesce(list({domain_arg}), "
             "[list(v.stride()) for v in views])")
    w.append(f"    block = {cfg['BLOCK_CPU']} if dev.type == 'cpu' else {cfg['BLOCK']}")
    w.append(f"    warps = {cfg['num_warps']}")
    w.append(f"    t = _kc_tuned('{wname}', dev, (numel,))")
    w.append("    if t is not None:")
    w.append("        block, warps = t['BLOCK'], t['num_warps']")
    w.append("    grid = (triton.cdiv(numel, block),)")
    args = in_names + out_names + sc_names + ["numel", "*sizes"]
    w.append(f"    {kname}[grid]({', '.join(args)}, *[s for st in strides for s in st], "
             "NDIM=ndim, BLOCK=block, num_warps=warps)")
    w.append(f"    return ({', '.join(out_names)},)")
    sig = {nm: ptr_type(a) for nm, a in zip(in_names, tensors, strict=True)}
    sig.update({nm: ptr_type(o) for nm, o in zip(out_names, outs, strict=True)})
    sig.update({nm: scalar_type(a) for nm, a in zip(sc_names, scalars, strict=True)})
    for p in params:
        if ":" not in p and p not in sig:
            sig[p] = "i64"
    return KernelSource(kname, wname, source, "\n".join(w), tensors + scalars, list(outs), cfg,
                        signature=sig, constexprs={"NDIM": 2, "BLOCK": cfg["BLOCK"]},
                        num_warps=cfg["num_warps"])
