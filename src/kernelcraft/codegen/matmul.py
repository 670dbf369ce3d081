"""Matmul template: mm / addmm / bmm with the group's pointwise epilogue, one kernel.

Each program computes one BM x BN tile of the output (of one batch for bmm) with a K loop
of ``tl.dot`` on an fp32 accumulator; programs are ordered in groups of GROUP_M tile rows
so that neighbouring programs share A rows and B columns in L2. Operands are read through
their strides, so transposed views (``A.T @ B``, nn.Linear's permuted weight) cost no
copy. Rows and columns past the edge are clamped (``% M``, ``% N``) for the loads, which
keeps the K loop free of M/N masks; only K is masked, and the epilogue store is masked.

The epilogue (bias, activations, scales, residuals, ...) runs on the accumulator tile
before the store: external tensors it reads are broadcast to the output shape in the
wrapper and loaded at the tile's (m, n) offsets through their strides; scalar inputs are
kernel arguments. Every group output is stored (the matmul itself too when used outside).

Sizes and strides are runtime arguments; tiles, GROUP_M, the dot precision, num_warps and
num_stages are compile-time. The wrapper picks them from the runtime sizes with
:func:`_kc_mm_heuristic` (copied into the emitted module). fp32 dots use the
``input_precision`` the module's table gives for the backend (``bf16x3`` by default: fp32
accuracy on tensor cores), "ieee" under the interpreter.
"""

from __future__ import annotations

import inspect
from typing import Any

import torch
import torch.fx as fx

from kernelcraft.codegen.common import (
    KernelSource,
    check_epilogue,
    emit_epilogue,
    opmath,
    ptr_type,
    scalar_type,
    var,
)
from kernelcraft.codegen.ops import TL_DTYPE, op_name
from kernelcraft.codegen.runtime import _KC_IEEE_INTENSITY
from kernelcraft.plan import Group, batch_operand_chain, hint, is_tensor_node, val

_FLOATS = (torch.float32, torch.float16, torch.bfloat16)

#: largest grid axis 1 (batch) CUDA and HIP accept; more batches are launched in chunks
_MAX_GRID_Y = 65535


def _kc_mm_heuristic(M, N, K, itemsize, backend, sms, smem):
    """Launch config (BM, BN, BK, GROUP_M, num_warps, num_stages) for an M x N x K matmul.

    cpu (Triton's interpreter): 64-wide tiles at most; its cost is per program and per
    K step, not per element.
    cuda: 128 x 128 tiles; 64 where the grid would not fill the ``sms`` SMs; 16-64 rows
    for skinny M (or columns for skinny N), with a longer K step. hip: smaller fp32 tiles
    (a 128 x 128 fp32 tile with bf16x3 spills on CDNA3). Stages are cut to fit ``smem``
    bytes of shared memory / LDS per block.
    """

    def fit(x, lo, hi):
        v = lo
        while v < x and v < hi:
            v *= 2
        return v

    def tiles(bm, bn):
        return ((M + bm - 1) // bm) * ((N + bn - 1) // bn)

    if backend == "cpu":
        return fit(M, 16, 64), fit(N, 16, 64), fit(K, 16, 64), 8, 4, 1
    wide = itemsize < 4
    bk = 64 if wide else 32
    if backend == "hip":
        bm = fit(M, 16, 128 if wide else 64)
        bn = fit(N, 16, 128)
        if tiles(bm, bn) < sms and bn > 64:
            bn = 64
        warps, stages = (4 if bm * bn <= 64 * 128 else 8), 2
    elif M <= 64:
        bm, bk = fit(M, 16, 64), 64
        bn = 128 if tiles(bm, 128) >= sms else 64
        warps, stages = 4, 3
    elif N <= 64:
        bn, bk = fit(N, 16, 64), 64
        bm = 128 if tiles(128, bn) >= sms else 64
        warps, stages = 4, 3
    else:
        bm, bn = 128, 128
        if tiles(bm, bn) < sms:
            bn = 64
        if tiles(bm, bn) < sms:
            bm = 64
        warps, stages = (8 if bm * bn >= 128 * 128 else 4), (4 if wide else 3)
    while stages > 1 and stages * (bm + bn) * bk * itemsize > smem:
        stages -= 1
    while bk > 16 and stages * (bm + bn) * bk * itemsize > smem:
        bk //= 2
    return bm, bn, bk, 8, warps, stages


def _heuristic_source(name: str) -> str:
    src = inspect.getsource(_kc_mm_heuristic)
    return src.replace("def _kc_mm_heuristic(", f"def {name}(", 1)


def emit_matmul(g: Group, target: Any = None, config: dict[str, Any] | None = None) -> KernelSource:
    """A tiled matmul kernel with g's epilogue fused, and its launching wrapper."""
    anchor = g.anchor
    if anchor is None:
        raise NotImplementedError("matmul group without an anchor")
    kind = op_name(anchor.target)
    if kind not in ("mm", "addmm", "bmm"):
        raise NotImplementedError(f"{kind}: not a matmul the template covers")
    beta: Any = 1
    alpha: Any = 1
    bias: fx.Node | None = None
    if kind == "addmm":
        bias, a, b = anchor.args[:3]
        beta = anchor.kwargs.get("beta", anchor.args[3] if len(anchor.args) > 3 else 1)
        alpha = anchor.kwargs.get("alpha", anchor.args[4] if len(anchor.args) > 4 else 1)
        if isinstance(beta, fx.Node) or isinstance(alpha, fx.Node):
            raise NotImplementedError("addmm with symbolic beta/alpha")
        if not is_tensor_node(bias) or val(bias).dim() > 2:
            raise NotImplementedError("addmm bias is not a tensor of rank <= 2")
    else:
        a, b = anchor.args[:2]
    if not (is_tensor_node(a) and is_tensor_node(b)):
        raise NotImplementedError("matmul operands are not tensors")
    dtype = val(a).dtype
    if dtype not in _FLOATS or val(b).dtype != dtype or val(anchor).dtype != dtype:
        raise NotImplementedError(f"operand dtypes {val(a).dtype}/{val(b).dtype} not supported")
    if bias is not None and val(bias).dtype not in _FLOATS:
        raise NotImplementedError(f"bias dtype {val(bias).dtype}")
    batched = kind == "bmm"
    rank = 3 if batched else 2
    if val(a).dim() != rank or val(b).dim() != rank:
        raise NotImplementedError(f"{kind} operands of rank {val(a).dim()}/{val(b).dim()}")
    shape = tuple(val(anchor).shape)
    members = set(g.nodes)
    # a bmm operand viewed from a copy of y the group holds is read from y (its batch dims
    # split by the kernel): see plan.batch_operand_chain
    chains = {x: c for x in (a, b) if batched and (c := batch_operand_chain(x)) is not None
              and all(m in members for m in c)}
    operand = {x: chains[x][0].args[0] if x in chains else x for x in (a, b)}
    nbatch = {x: val(operand[x]).dim() - 2 if batched else 0 for x in (a, b)}
    prologue = {m for c in chains.values() for m in c}
    epilogue = [n for n in g.nodes if n is not anchor and n not in prologue]
    for n in epilogue:
        check_epilogue(n, shape, "matmul", g.outputs)
        for x in n.all_input_nodes:
            if x in members:
                continue
            if is_tensor_node(x) and val(x).dim() > rank:
                raise NotImplementedError(f"epilogue input {x.name} has a higher rank")
    for o in g.outputs:
        if o is not anchor and o not in epilogue:
            raise NotImplementedError(f"output {o.name} is not in the group")

    kname, wname = f"_kc_{g.name}_kernel", f"_kc_{g.name}"
    cname = f"_kc_{g.name}_config"
    # (the sizes a prologue's view takes are not needed: the kernel reads the view's source)
    used = {x for n in g.nodes if n not in prologue for x in n.all_input_nodes}
    used |= {operand[a], operand[b]}
    tensors = [x for x in g.inputs if is_tensor_node(x) and x in used]
    scalars = [x for x in g.inputs if not is_tensor_node(x) and x in used]
    in_name = {x: f"in{i}" for i, x in enumerate(tensors)}
    sc_name = {x: f"sc{i}" for i, x in enumerate(scalars)}
    # external tensors the epilogue reads, each loaded once at the tile's (m, n) offsets
    loads: list[fx.Node] = []
    for n in epilogue:
        for x in n.all_input_nodes:
            if x not in members and is_tensor_node(x) and x not in loads:
                loads.append(x)
    outs = list(g.outputs)
    fp32 = dtype == torch.float32

    # ---- kernel
    ptrs = ["a_ptr", "b_ptr"] + (["c_ptr"] if bias is not None else [])
    ptrs += [f"e{i}_ptr" for i in range(len(loads))] + [f"o{i}_ptr" for i in range(len(outs))]

    def batch_strides(stem: str, x: fx.Node) -> list[str]:
        nb = nbatch[x]
        if not batched:
            return []
        if nb == 1:
            return [f"s_{stem}b"]
        return [f"s_{stem}b{d}" for d in range(nb)] + [f"{stem}_n{d}" for d in range(1, nb)]

    strides = (batch_strides("a", a) + ["s_am", "s_ak"] + batch_strides("b", b)
               + ["s_bk", "s_bn"])
    if bias is not None:
        strides += ["s_cm", "s_cn"]
    for stem in [f"e{i}" for i in range(len(loads))] + [f"o{i}" for i in range(len(outs))]:
        strides += ([f"s_{stem}b"] if batched else []) + [f"s_{stem}m", f"s_{stem}n"]
    consts = ["BM", "BN", "BK", "GROUP_M"] + (["PREC"] if fp32 else ["UPCAST"])
    params = ptrs + [sc_name[x] for x in scalars] + ["M", "N", "K"] + strides
    params += ["b_base"] if batched else []
    params += [f"{c}: tl.constexpr" for c in consts]

    def batch_offset(stem: str, x: fx.Node) -> tuple[list[str], str]:
        """Lines computing operand ``x``'s offset of batch ``pid_b``, and its term."""
        nb = nbatch[x]
        if not batched:
            return [], ""
        if nb == 1:
            return [], f"pid_b * s_{stem}b + "
        lines = ["    _r = pid_b", f"    {stem}_boff = pid_b * 0"]
        for d in range(nb - 1, 0, -1):
            lines += [f"    {stem}_boff += (_r % {stem}_n{d}) * s_{stem}b{d}",
                      f"    _r = _r // {stem}_n{d}"]
        lines.append(f"    {stem}_boff += _r * s_{stem}b0")
        return lines, f"{stem}_boff + "

    split_a, boff_a = batch_offset("a", a)
    split_b, boff_b = batch_offset("b", b)
    dot = ["        acc = tl.dot(a, b, acc=acc, input_precision=PREC)"]
    if not fp32:
        # 16-bit operands: the native dot on GPUs; exact fp32 products under the interpreter,
        # whose bf16 dot is wrong in Triton 3.9
        dot = [
            "        if UPCAST:",
            "            acc = tl.dot(a.to(tl.float32), b.to(tl.float32), acc=acc,",
            "                         input_precision='ieee')",
            "        else:",
            "            acc = tl.dot(a, b, acc=acc)",
        ]
    body = [
        "    pid = tl.program_id(0)",
    ]
    if batched:  # (b_base: the first batch of this launch, for more than a grid axis holds)
        body.append("    pid_b = tl.program_id(1).to(tl.int64) + b_base")
        body += split_a + split_b
    body += [
        "    grid_m = tl.cdiv(M, BM)",
        "    grid_n = tl.cdiv(N, BN)",
        "    width = GROUP_M * grid_n",
        "    first_m = (pid // width) * GROUP_M",
        "    size_m = tl.minimum(grid_m - first_m, GROUP_M)",
        "    pid_m = first_m + (pid % width) % size_m",
        "    pid_n = (pid % width) // size_m",
        "    offs_m = pid_m * BM + tl.arange(0, BM)",
        "    offs_n = pid_n * BN + tl.arange(0, BN)",
        "    offs_k = tl.arange(0, BK)",
        "    # rows/columns past the edge read row/column (i mod size): in bounds, never stored",
        "    am = (offs_m % M).to(tl.int64)",
        "    bn = (offs_n % N).to(tl.int64)",
        "    kk = offs_k.to(tl.int64)",
        f"    a_ptrs = a_ptr + {boff_a}am[:, None] * s_am + kk[None, :] * s_ak",
        f"    b_ptrs = b_ptr + {boff_b}kk[:, None] * s_bk + bn[None, :] * s_bn",
        "    a_step = tl.cast(s_ak, tl.int64) * BK",
        "    b_step = tl.cast(s_bk, tl.int64) * BK",
        "    acc = tl.zeros((BM, BN), dtype=tl.float32)",
        "    for k0 in range(0, K, BK):",
        "        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k0, other=0.0)",
        "        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k0, other=0.0)",
        *dot,
        "        a_ptrs += a_step",
        "        b_ptrs += b_step",
        "    rm = offs_m.to(tl.int64)[:, None]",
        "    rn = offs_n.to(tl.int64)[None, :]",
        "    mask = (offs_m < M)[:, None] & (offs_n < N)[None, :]",
    ]
    out_dt = TL_DTYPE[dtype]
    value = "acc" if alpha in (1, 1.0) else f"acc * {float(alpha)!r}"
    if bias is not None and beta not in (0, 0.0):
        body.append("    c = tl.load(c_ptr + rm * s_cm + rn * s_cn, mask=mask, other=0.0)")
        cterm = "c.to(tl.float32)" if beta in (1, 1.0) else f"c.to(tl.float32) * {float(beta)!r}"
        value = f"{value} + {cterm}"
    body.append(f"    {var(anchor)} = ({value}).to({out_dt})")
    # 16-bit values enter each op in fp32 (PyTorch's opmath) and leave it rounded
    env: dict[fx.Node, str] = {anchor: opmath(anchor)}
    env.update({x: sc_name[x] for x in scalars})
    boff = "pid_b * s_{0}b + " if batched else ""

    def at(stem: str) -> str:
        return boff.format(stem) + f"rm * s_{stem}m + rn * s_{stem}n"

    emit_epilogue(body, anchor, epilogue, loads, outs, env,
                  lambda x, i: f"tl.load(e{i}_ptr + {at(f'e{i}')}, mask=mask, other=0)",
                  lambda o, i: f"    tl.store(o{i}_ptr + {at(f'o{i}')}, {var(o)}, mask=mask)")
    source = ("@triton.jit\ndef " + kname + "(" + ", ".join(params) + "):\n"
              + "\n".join(body))

    # ---- wrapper
    A, B = in_name[operand[a]], in_name[operand[b]]
    args = [in_name[x] for x in tensors] + [sc_name[x] for x in scalars]
    w = [_heuristic_source(cname), "", f"def {wname}({', '.join(args)}):"]
    if batched:
        w += [
            f"    Bt, M, K = _kc_prod({A}.shape[:-2]), *{A}.shape[-2:]",
            f"    if _kc_prod({B}.shape[:-2]) != Bt or {B}.shape[-2] != K:",
            f"        raise ValueError(f'bmm: shapes {{tuple({A}.shape)}} and "
            f"{{tuple({B}.shape)}}')",
            f"    N = {B}.shape[-1]",
            "    dom = (Bt, M, N)",
        ]
    else:
        w += [
            f"    M, K = {A}.shape",
            f"    if {B}.dim() != 2 or {B}.shape[0] != K:",
            f"        raise ValueError(f'mm: shapes {{tuple({A}.shape)}} and "
            f"{{tuple({B}.shape)}}')",
            f"    N = {B}.shape[1]",
            "    dom = (M, N)",
        ]
    w.append(f"    dev = {A}.device")
    onames = [f"o{i}" for i in range(len(outs))]
    for nm, o in zip(onames, outs, strict=True):
        w.append(f"    {nm} = torch.empty(dom, device=dev, dtype={val(o).dtype})")
    w.append("    if M == 0 or N == 0" + (" or Bt == 0" if batched else "") + ":")
    w.append(f"        return ({', '.join(onames)},)")
    views = [A, B]
    if bias is not None:
        w.append(f"    c = {in_name[bias]}.expand(M, N)")
        views.append("c")
    for i, x in enumerate(loads):
        w.append(f"    e{i} = {in_name[x]}.expand(dom)")
        views.append(f"e{i}")
    views += onames

    def operand_strides(T: str, x: fx.Node) -> list[str]:
        nb = nbatch[x]
        out = [f"{T}.stride({d})" for d in range(nb)]
        out += [f"{T}.shape[{d}]" for d in range(1, nb)] if nb > 1 else []
        return out + [f"{T}.stride({nb})", f"{T}.stride({nb + 1})"]

    st: list[str] = operand_strides(A, a) + operand_strides(B, b)
    if bias is not None:
        st += ["c.stride(0)", "c.stride(1)"]
    for v in views[2 + (bias is not None):]:
        st.append(f"*{v}.stride()")
    # the launch config per sizes, device and tuned table: computed once, then looked up
    # (the heuristic and the device query cost a launch-bound forward tens of microseconds)
    cfg_fn = [
        f"def {wname}_launch(A, dom, K, dev):",
        "    if dev.type == 'cpu':",
        "        backend, sms, smem = 'cpu', 1, 1 << 30",
        "    else:",
        "        backend = 'hip' if getattr(torch.version, 'hip', None) else 'cuda'",
        "        props = torch.cuda.get_device_properties(dev)",
        "        sms = props.multi_processor_count",
        "        smem = getattr(props, 'shared_memory_per_block_optin', 0) or 49152",
        "    M, N = dom[-2], dom[-1]",
        f"    BM, BN, BK, GM, nw, ns = {cname}(M, N, K, A.element_size(), backend, sms, smem)",
        f"    t = _kc_tuned('{wname}', dev, dom + (K,))",
        "    amd = {}",
        "    if t is not None:",
        "        BM, BN, BK, GM = t['BM'], t['BN'], t['BK'], t['GROUP_M']",
        "        nw, ns = t['num_warps'], t['num_stages']",
        "        if backend == 'hip':",
        "            amd = {k: t[k] for k in ('waves_per_eu', 'matrix_instr_nonkdim', 'kpack')",
        "                   if k in t}",
        "    kw = dict(BM=BM, BN=BN, BK=BK, GROUP_M=GM, num_warps=nw, num_stages=ns, **amd)",
        ("    kw['PREC'] = _kc_dot_precision(A, _KC_DOT_PRECISION, M, N, K)" if fp32
         else "    kw['UPCAST'] = backend == 'cpu'"),
        "    return BM, BN, kw",
        "",
        "",
        f"{wname}_launches = {{}}",
        "",
        "",
    ]
    w[1:1] = ["", *cfg_fn]
    w += [
        f"    key = (dom, K, {A}.dtype, dev, _KC_TUNED.version)",
        f"    hit = {wname}_launches.get(key)",
        "    if hit is None:",
        f"        hit = {wname}_launches[key] = {wname}_launch({A}, dom, K, dev)",
        "    BM, BN, kw = hit",
    ]
    launch_kw = "**kw"
    sizes = ", ".join([sc_name[x] for x in scalars] + ["M", "N", "K"])
    w.append("    tiles = triton.cdiv(M, BM) * triton.cdiv(N, BN)")
    if batched:
        w += [
            f"    step = {_MAX_GRID_Y}",
            "    for b0 in range(0, Bt, step):",
            f"        {kname}[(tiles, min(step, Bt - b0))]({', '.join(views)}, {sizes}, "
            f"{', '.join(st)}, b0, {launch_kw})",
        ]
    else:
        w.append(f"    {kname}[(tiles,)]({', '.join(views)}, {sizes}, {', '.join(st)}, "
                 f"{launch_kw})")
    w.append(f"    return ({', '.join(onames)},)")

    # the config the heuristic picks at the captured sizes on the first target
    cap = [hint(s) for s in shape]
    Mh, Nh = cap[-2], cap[-1]
    Kh = hint(val(a).shape[-1])
    backend = getattr(target, "backend", "cuda")
    sms = getattr(target, "sm_count", 132)
    smem = getattr(target, "smem_per_block", 227 * 1024)
    bm, bn, bk, gm, nw, ns = _kc_mm_heuristic(Mh, Nh, Kh, val(a).element_size(), backend, sms,
                                              smem)
    item = val(a).element_size()
    exact = 2 * Mh * Nh * Kh < _KC_IEEE_INTENSITY * item * (Mh * Kh + Kh * Nh + Mh * Nh)
    cfg: dict[str, Any] = {
        "BM": bm, "BN": bn, "BK": bk, "GROUP_M": gm, "num_warps": nw, "num_stages": ns,
        "at": {"M": Mh, "N": Nh, "K": Kh, "batch": cap[0] if batched else 1,
               "target": getattr(target, "arch", backend)},
        "dot": (("ieee (exact: a memory-bound matmul)" if exact else
                 "per backend (_KC_DOT_PRECISION)") if fp32 else "default (16-bit inputs)"),
        "chosen": "at run time from the sizes (heuristic)",
        "itemsize": val(a).element_size(), "batched": batched,
    }
    cfg.update(config or {})
    notes = [f"{kind} + {len(epilogue)} epilogue op(s)"]
    sig = {"a_ptr": ptr_type(operand[a]), "b_ptr": ptr_type(operand[b])}
    if bias is not None:
        sig["c_ptr"] = ptr_type(bias)
    sig.update({f"e{i}_ptr": ptr_type(x) for i, x in enumerate(loads)})
    sig.update({f"o{i}_ptr": ptr_type(x) for i, x in enumerate(outs)})
    sig.update({sc_name[x]: scalar_type(x) for x in scalars})
    sig.update({p: "i64" for p in ["M", "N", "K"] + strides + (["b_base"] if batched else [])})
    consts_cc: dict[str, Any] = {"BM": bm, "BN": bn, "BK": bk, "GROUP_M": gm}
    consts_cc.update({"PREC": "ieee" if exact else "bf16x3"} if fp32 else {"UPCAST": False})
    return KernelSource(kname, wname, source, "\n".join(w), tensors + scalars, outs, cfg, notes,
                        signature=sig, constexprs=consts_cc, num_warps=nw, num_stages=ns)
