"""Pointwise template: a fused elementwise DAG over one domain, one pass over memory.

Each program takes BLOCK consecutive elements of the (coalesced) output domain; operands
are read through their own strides, so broadcasting, transposed and strided inputs cost no
copy. Knobs: BLOCK, num_warps.

Gathers (``aten.index`` with integer index tensors over adjacent dims: ``x[idx]``,
``x[:, rows, cols]``, the upsampling decompositions, embeddings) are loads too: the
source is viewed over the domain with stride 0 on the gathered dims (the wrapper's
``as_strided``), and each element adds ``index * stride`` of the dims it gathers, with
negative indices wrapped as PyTorch does.

``cat`` and ``constant_pad_nd`` of tensors in memory are loads too: the element's index on
the concatenated (padded) dim, taken from its linear index, picks the source (or the pad
value), and the source is read through its own strides over the domain shifted by where it
starts, so the concatenated or padded tensor is never written.

A scatter (``Group.kind == "scatter"``: an accumulating ``index_put``, ``scatter_add``,
``scatter_reduce`` of a sum, amax or amin, ``scatter`` of a number) is this template over
its values' domain whose store is an atomic add (max, min; a plain store of the number) at
the position its index tensors give: the dual of a gather, addressed the same way (the
target viewed over the domain with stride 0 on the indexed dims, plus index * stride). The
target is a contiguous copy of the base, or the base itself where the forward hands over an
intermediate nothing else reads (``donate``).

Position values (``Group.positions``: ``arange`` and pointwise ops of it, as upsampling's
source rows or a mask from lengths) are computed, not loaded: a stand-in of the value's
shape on the meta device gives the element's position through the same strides a load of
it would use, and the chain is evaluated there (an index or an elementwise operand).
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
    operand_expr,
    ptr_type,
    scalar_type,
    tl_dtype,
    var,
)
from kernelcraft.codegen.ops import is_view, literal, op_name
from kernelcraft.codegen.ranges import narrowed, ni_lines
from kernelcraft.plan import (
    Group,
    gather_dims,
    gather_indices,
    hint,
    in_place_index,
    is_arange,
    is_load,
    is_tensor_node,
    piecewise_load,
    scatter_combine,
    scatter_dims,
    scatter_shape,
    scatter_values,
    shape_key,
    val,
)


def _index_dims(n: fx.Node) -> tuple[int, ...]:
    """The dims a gather reads or a scatter writes by index."""
    dims = gather_dims(n)
    if dims is None:
        dims = scatter_dims(n)
    assert dims is not None, n
    return dims


def emit_pointwise(g: Group, config: dict[str, Any] | None = None) -> KernelSource:
    with narrowed(list(g.nodes)) as narrow:
        return _emit_pointwise(g, config, bool(narrow))


def _emit_pointwise(g: Group, config: dict[str, Any] | None, narrow: bool) -> KernelSource:
    scatter = g.anchor if g.kind == "scatter" else None
    # scatters: small programs (H200: 256 elements on 2 warps took a GNN's message scatter
    # from 0.57 to 0.20 ms and a contended segment sum from 0.64 to 0.42 against 1024 on 4)
    cfg: dict[str, Any] = {"BLOCK": 1024 if scatter is None else 256,
                           "num_warps": 4 if scatter is None else 2, "BLOCK_CPU": 4096}
    cfg.update(config or {})
    try:  # the size the tuner tunes at (the capture's; symbolic dims by their hints)
        shape = val(g.outputs[0]).shape if scatter is None else scatter_shape(scatter)
        cfg["at"] = {"numel": math.prod(hint(d) for d in shape)}
    except (TypeError, ValueError, AttributeError):
        pass
    kname, wname = f"_kc_{g.name}_kernel", f"_kc_{g.name}"
    # sizes and strides for as many dims as the domain has, not MAX_RANK: Triton's launcher
    # specialises every argument on every call (~0.5 us each on the H200's host), and a
    # three-operand 2-D kernel passed 37 integers where 13 do
    if scatter is not None and g.outputs != [scatter]:
        raise NotImplementedError("a scatter whose kernel has other outputs")
    R = max(1, min(MAX_RANK, max([len(g.domain)] + [val(o).dim() for o in g.outputs
                                                     if o is not scatter])))
    members = set(g.nodes)
    positions = g.positions  # value -> the nodes computing it from arange
    pos_nodes = {m for ch in positions.values() for m in ch}
    regular = [n for n in g.nodes if n not in pos_nodes and n is not scatter]
    gathers = [n for n in regular if gather_dims(n) is not None]
    for n in gathers:
        if n.args[0] in members:
            raise NotImplementedError(f"{n.name} gathers from a value of its own kernel")
    sources = []  # gather sources: wrapper arguments, not domain operands
    for n in gathers:
        if n.args[0] not in sources:
            sources.append(n.args[0])
    pieces = [n for n in regular if piecewise_load(n)]
    piece_src = [list(n.args[0]) if op_name(n.target) == "cat" else [n.args[0]] for n in pieces]
    for n, srcs in zip(pieces, piece_src, strict=True):
        if any(t in members for t in srcs):
            raise NotImplementedError(f"{n.name} reads a value of its own kernel")
    elementwise = {a for m in regular for a in _elementwise_inputs(m) if a not in members}
    indexed = gathers + ([scatter] if scatter is not None else [])  # by index tensors
    if scatter is not None:
        values = scatter_values(scatter)
        if is_tensor_node(values) and values not in members:
            elementwise.add(values)  # the values, read on the domain
        if any(t in positions for t in gather_indices(scatter)):
            raise NotImplementedError("a scatter to computed positions")
    tensors = [a for a in g.inputs if is_tensor_node(a) and a in elementwise]
    velem = [t for t in positions if any(t in _elementwise_inputs(m) for m in regular)]
    scalars = [a for a in g.inputs if not is_tensor_node(a)]
    # Fills whose sizes the kernel knows (literals, the group's scalars) take part in the
    # domain: where no operand gives it, one spanning it does (a time embedding's
    # torch.full over the batch, then sin and cos), and a fill of more dims than the
    # operands widens it (a [1, 1] noise level times a [32] frequency buffer is [1, 32]).
    fills = [m for m in regular if op_name(m.target) == "full"
             and all(not isinstance(x, fx.Node) or x in scalars for x in m.args[0])
             and _broadcasts_into(shape_key(val(m).shape), g.domain)]
    if not tensors and not gathers and not pieces and not velem and scatter is None and not any(
            shape_key(val(m).shape) == g.domain for m in fills):
        raise NotImplementedError("a pointwise group without tensor inputs")
    # no tensor to take the device from (a mask computed from positions alone): the
    # forward passes its own device
    device_arg = not tensors and not sources and not pieces and scatter is None
    outs = g.outputs
    # index tensors: wrapper arguments (unless also elementwise operands), each viewed over
    # the domain at the dims its gather (scatter) puts them (not right-aligned: gi views)
    index_only: list[fx.Node] = []
    for n in indexed:
        for t in gather_indices(n):
            if t not in tensors and t not in index_only and t not in positions:
                index_only.append(t)
    pc_names = [f"pc{i}s{k}" for i, srcs in enumerate(piece_src) for k in range(len(srcs))]
    in_names = [f"in{i}" for i in range(len(tensors))]
    ix_names = [f"ix{i}" for i in range(len(index_only))]
    src_names = [f"src{i}" for i in range(len(sources))]
    arg = dict(zip(tensors + index_only + sources, in_names + ix_names + src_names,
                   strict=True))
    base_new = scatter is not None and scatter.args[0] not in arg
    if base_new:  # the scatter's base: copied (or handed over) as the target
        arg[scatter.args[0]] = "bs0"
    g_names = [f"gx{i}" for i in range(len(gathers))]  # one strided view per gather
    canon = gather_canon(indexed)
    gi_names = list(dict.fromkeys(canon.values()))
    # computed index views: no pointer, only the strides that give the position
    vgi = {canon[(i, k)]: t for i, n in enumerate(gathers)
           for k, t in enumerate(gather_indices(n)) if t in positions}
    vp_names = [f"vp{i}" for i in range(len(velem))]
    out_names = [f"out{i}" for i in range(len(outs))]
    sc_names = [f"sc{i}" for i in range(len(scalars))]
    params = in_names + src_names + [x for x in gi_names if x not in vgi] + pc_names
    params += out_names + sc_names + ["numel"]
    params += [f"size{d}" for d in range(R)]
    params += [f"size{d}_{x}" for d in range(R) for x in "ms"]  # _kc_magic of each size
    for nm in in_names + vp_names + g_names + gi_names + pc_names + out_names:
        params += [f"{nm}_st{d}" for d in range(R)]
    for i, n in enumerate(gathers):
        params += [f"{g_names[i]}_n{k}" for k in range(len(gather_dims(n)))]
        params += [f"{g_names[i]}_s{k}" for k in range(len(gather_dims(n)))]
    if scatter is not None:  # the target's sizes, then strides, on the indexed dims
        params += [f"sx_{x}{k}" for x in "ns" for k in range(len(_index_dims(scatter)))]
    for i, n in enumerate(pieces):  # per piecewise dim: elements inside it, its size
        dims = _piece_dims(n)
        params += [f"pc{i}_in{j}" for j in range(len(dims))]
        params += [f"pc{i}_n{j}" for j in range(len(dims))]
        for k in range(len(piece_src[i])):  # per source: its range on each dim, its shift
            params += [f"pc{i}s{k}_{x}{j}" for j in range(len(dims)) for x in "be"]
            params.append(f"pc{i}s{k}_sh")
    # computed views: whether they vary along the rows, along the columns (launch flags)
    pos_views = vp_names + [x for x in gi_names if x in vgi]
    # loaded views too: an operand constant along the columns (a per-row scale, an
    # embedding's token ids) is loaded once per tile row, one along the rows once per column
    ld_views = in_names + [x for x in gi_names if x not in vgi]
    params += [f"{nm}_{x}: tl.constexpr" for nm in pos_views + ld_views for x in "RC"]
    # per piece dim: how the kernel finds its index there (launch flag, _kc_piece_modes)
    pm_names = [f"pc{i}_M{j}" for i, n in enumerate(pieces) for j in range(len(_piece_dims(n)))]
    params += [f"{nm}: tl.constexpr" for nm in pm_names]
    params += ["NDIM: tl.constexpr", "IDX64: tl.constexpr", "FASTDIV: tl.constexpr",
               "XBLOCK: tl.constexpr", "YBLOCK: tl.constexpr"]
    L = R - 1  # the innermost dim: the tile's columns; the dims outside it: its rows
    body = [
        "    pid = tl.program_id(0)",
        "    if IDX64:",  # int64 index math only where an offset needs it
        "        pid = pid.to(tl.int64)",
        *(ni_lines() if narrow else []),
        f"    nxb = (size{L} + XBLOCK - 1) // XBLOCK",
        "    pid_r = pid // nxb",
        "    row = pid_r * YBLOCK + tl.arange(0, YBLOCK)[:, None]",
        "    col = (pid - pid_r * nxb) * XBLOCK + tl.arange(0, XBLOCK)[None, :]",
        f"    rmask = row < numel // size{L}",
        f"    cmask = col < size{L}",
        "    mask = rmask & cmask",
        f"    lin = row * size{L} + col",
    ]
    # a row's dims are split once per row, not per element
    body += decompose_lines("row", "i", "size", L, "(NDIM - 1)", "    ", fast="FASTDIV")
    body.append(f"    i{L} = col")
    env: dict[fx.Node, str] = {}
    for nm, a in zip(in_names, tensors, strict=True):
        body += _load_offset_lines(nm, R)
        body.append(f"    {var(a)} = tl.load({nm} + {nm}_off, mask={nm}_m, other=0)"
                    f".to({compute_dtype(a)})")
        env[a] = var(a)
    for nm, a in zip(sc_names, scalars, strict=True):
        env[a] = nm
    for nm, t in zip(vp_names, velem, strict=True):
        body += _position_offset_lines(nm, R)
        lines, env[t] = position_lines(positions[t], f"{nm}_off", nm, env)
        body += lines
    loaded: set[str] = set()
    for n in regular:
        if n in pieces:
            body += _piece_lines(n, pieces.index(n), len(piece_src[pieces.index(n)]), R)
        elif n in gathers:
            nm = g_names[gathers.index(n)]
            body += offset_lines(f"{nm}_off", "i", f"{nm}_st", R, "NDIM", "row * 0", "    ")
            for k in range(len(gather_dims(n))):
                ix, gi = f"{nm}_i{k}", canon[(gathers.index(n), k)]
                body += _index_lines(gi, loaded, vgi, positions, env, R)
                body.append(f"    {ix} = tl.where({gi}_v < 0, {gi}_v + {nm}_n{k}, {gi}_v)")
                body.append(f"    {nm}_off += {ix} * {nm}_s{k}")
            src = src_names[sources.index(n.args[0])]
            body.append(f"    {var(n)} = tl.load({src} + {nm}_off, mask=mask, other=0)"
                        f".to({compute_dtype(n)})")
        else:
            body.append("    " + lower_pointwise(n, env))
        env[n] = var(n)
    for nm, o in zip(out_names, outs, strict=True):
        body += offset_lines(f"{nm}_off", "i", f"{nm}_st", R, "NDIM", "row * 0", "    ")
        if o is not scatter:
            value = f"{env[o]}.to({tl_dtype(o)})"
            body.append(f"    tl.store({nm} + {nm}_off, tl.broadcast_to({value}, "
                        "[YBLOCK, XBLOCK]), mask=mask)")
            continue
        for k in range(len(_index_dims(o))):  # the target element the index sends it to
            gi = canon[(len(gathers), k)]
            body += _index_lines(gi, loaded, vgi, positions, env, R)
            body.append(f"    sx_i{k} = tl.where({gi}_v < 0, {gi}_v + sx_n{k}, {gi}_v)")
            body.append(f"    {nm}_off += sx_i{k} * sx_s{k}")
        v = scatter_values(o)
        v = env[v] if isinstance(v, fx.Node) else f"tl.full([1, 1], {literal(v)}, tl.float32)"
        ptr = f"{nm} + tl.broadcast_to({nm}_off, [YBLOCK, XBLOCK])"
        v = f"tl.broadcast_to({v}.to({tl_dtype(o)}), [YBLOCK, XBLOCK])"
        op = scatter_combine(o)
        if op == "set":  # one number: duplicates store the same value
            body.append(f"    tl.store({ptr}, {v}, mask=mask)")
        else:  # duplicates combine: relaxed atomics (a sum's order is free, as fp32 allows)
            body.append(f"    tl.atomic_{op}({ptr}, {v}, mask=mask, sem='relaxed')")
    source = "@triton.jit\ndef " + kname + "(" + ", ".join(params) + "):\n" + "\n".join(body)

    # ---- wrapper
    domain_arg = "shape"
    pc_args = [f"pa{i}" for i in range(len({t for srcs in piece_src for t in srcs}))]
    pc_arg: dict[fx.Node, str] = {}
    for srcs in piece_src:
        for t in srcs:
            if t not in pc_arg:  # one argument per distinct source (cat((x, x)))
                pc_arg[t] = pc_args[len(pc_arg)]
    args_in = in_names + ix_names + src_names + pc_args + sc_names + (["bs0"] if base_new
                                                                      else [])
    # the launch plan (domain, grid, integer arguments, constexprs) from the arguments'
    # shapes, strides and scalars; the wrapper caches it per signature (``_kc_signature``)
    if scatter is not None:  # (it may have no other tensor argument)
        dev_src = f"{arg[scatter.args[0]]}.device"
    else:
        dev_src = "dev" if device_arg else f"{(in_names + src_names + pc_args)[0]}.device"
    plan_args = ", ".join(args_in + (["dev"] if device_arg else []))
    w = [f"def {wname}_plan({plan_args}):"]
    w.append(f"    dev = {dev_src}")
    sc_of = dict(zip(scalars, sc_names, strict=True))
    for k, t in enumerate(positions):  # stand-ins: the position values' shapes, no memory
        w.append(f"    vs{k} = {stand_in(t, positions[t], sc_of)}")
        arg[t] = f"vs{k}"
    # scatter_add's src may be larger than its index: read where the index is
    narrow = {arg[scatter_values(scatter)]} if (
        scatter is not None and in_place_index(scatter)
        and is_tensor_node(scatter_values(scatter))
        and scatter_values(scatter) not in members) else set()
    shapes = [n + ".shape" for n in in_names if n not in narrow]
    shapes += [arg[t] + ".shape" for t in velem]
    for m in fills:
        dims = [sc_of[x] if isinstance(x, fx.Node) else literal(x) for x in m.args[0]]
        shapes.append(f"({', '.join(dims)}{',' if len(dims) == 1 else ''})")
    pextra: list[str] = []
    pmodes: list[str] = []  # per piece: its dims' index modes
    for i, n in enumerate(pieces):
        w += _piece_wrapper(n, i, [pc_arg[t] for t in piece_src[i]])
        shapes.append(f"pshape{i}")
    for i, n in enumerate(gathers):
        w += gather_shape_lines(i, n, arg)
        shapes.append(f"gs{i}")
    sarg = dict(arg)  # the scatter's target: the base's contiguous copy (its shape)
    if scatter is not None:
        w.append(f"    sb = torch.empty({arg[scatter.args[0]]}.shape, device='meta')")
        sarg[scatter.args[0]] = "sb"
        w += gather_shape_lines(len(gathers), scatter, sarg)
        shapes.append(f"gs{len(gathers)}")
    w.append(f"    {domain_arg} = _kc_broadcast({', '.join(shapes)})")
    for nm, o in zip(out_names, outs, strict=True):  # the outputs' strides (allocated
        if o is not scatter:  # contiguous by the wrapper)
            w.append(f"    {nm} = torch.empty({domain_arg}, device='meta')")
    views = [f"{nm}[tuple(slice(0, s) for s in {domain_arg})]" if nm in narrow
             else f"{nm}.expand({domain_arg})" for nm in in_names]
    views += [f"{arg[t]}.expand({domain_arg})" for t in velem]
    gextra, gi_views = [], []
    gi_raw: dict[str, str] = {}  # index view -> the tensor it views (the same pointer)
    for i, n in enumerate(gathers):
        gextra += gather_ints(n, arg)
        view, lines, raw = gather_view_lines(i, n, arg, domain_arg, canon)
        views.append(view)
        w += lines
        gi_views += list(raw)
        gi_raw.update(raw)
    pviews = []
    for i, srcs in enumerate(piece_src):  # each source over the domain, its own strides
        for t in srcs:
            pviews.append(f"torch.empty_strided({domain_arg}, _kc_piece_strides("
                          f"{pc_arg[t]}, pshape{i}, {domain_arg}), device='meta')")
        pextra.append(f"*_kc_piece_dims({domain_arg}, {_piece_dims(pieces[i])!r}), *pc{i}")
        pmodes.append(f"*_kc_piece_modes({domain_arg}, {_piece_dims(pieces[i])!r}, sizes[-1])")
    sextra: list[str] = []
    if scatter is not None:  # the target over the domain, then its index views
        view, lines, raw = gather_view_lines(len(gathers), scatter, sarg, domain_arg, canon)
        w += lines
        gi_views += list(raw)
        gi_raw.update(raw)
        sextra = gather_ints(scatter, sarg)
    views += gi_views + pviews + [view if o is scatter else nm
                                  for nm, o in zip(out_names, outs, strict=True)]
    w.append(f"    views = [{', '.join(views)}]")
    w.append("    numel = 1")
    w.append(f"    for s in {domain_arg}:")
    w.append("        numel *= s")
    w.append(f"    if numel == 0:\n        return {domain_arg}, None, None, None")
    w.append(f"    sizes, strides, ndim = _kc_coalesce(list({domain_arg}), "
             f"[list(v.stride()) for v in views], {R})")
    w.append(f"    block = {cfg['BLOCK_CPU']} if dev.type == 'cpu' else {cfg['BLOCK']}")
    w.append(f"    warps = {cfg['num_warps']}")
    w.append(f"    t = _kc_tuned('{wname}', dev, (numel,))")
    w.append("    if t is not None:")
    w.append("        block, warps = t['BLOCK'], t['num_warps']")
    # a tile of rows (the dims outside the innermost) by columns (the innermost dim)
    w.append("    xb, yb = _kc_tile(numel, sizes[-1], block, t and t.get('XBLOCK'))")
    w.append("    grid = (triton.cdiv(sizes[-1], xb) * triton.cdiv(numel // sizes[-1], yb),)")
    # a gather's view has stride 0 on the dims it indexes: its source counts as a whole
    # (a 256k x 8192 embedding table passes 2**31 elements)
    far_of = src_names + (["sb"] if scatter is not None else [])
    w.append(f"    far = _kc_far([*views{''.join(', ' + x for x in far_of)}])")
    w.append("    fast = not far and t is not None and t.get('FASTDIV', False)")
    # each flagged view's place in ``views``: the loaded inputs, the computed positions,
    # then (after the gathers' source views) every index view, computed or loaded
    first = len(in_names)
    flag_at = {nm: k for k, nm in enumerate(in_names)}
    flag_at.update({nm: first + k for k, nm in enumerate(vp_names)})
    gfirst = first + len(vp_names) + len(g_names)
    flag_at.update({x: gfirst + k for k, x in enumerate(gi_names)})
    flags = "".join(f", {nm}_R=any(strides[{i}][:-1]), {nm}_C=strides[{i}][-1] != 0"
                    for nm, i in flag_at.items())
    pc_ptrs = [pc_arg[t] for srcs in piece_src for t in srcs]
    w.append("    ints = [numel, *sizes, *[v for s in sizes for v in _kc_magic(s)], "
             f"*[s for st in strides for s in st]"
             f"{''.join(', ' + e for e in gextra + sextra + pextra)}]")
    if pmodes:
        w.append(f"    pm = [{', '.join(pmodes)}]")
        flags += "".join(f", {nm}=pm[{k}]" for k, nm in enumerate(pm_names))
    w.append(f"    return {domain_arg}, grid, ints, dict(NDIM=ndim, IDX64=far, FASTDIV=fast, "
             f"XBLOCK=xb, YBLOCK=yb, num_warps=warps{flags})")
    ptrs = in_names + src_names + [gi_raw[x] for x in gi_views if x not in vgi] + pc_ptrs
    extra = ["dev=None"] if device_arg else ["donate=False"] if scatter is not None else []
    w += ["", "", f"{wname}_plans = {{}}", "", "",
          f"def {wname}({', '.join(args_in + extra)}):",
          ("    dev = _kc_default_device() if dev is None else dev" if device_arg
           else f"    dev = {dev_src}"),
          f"    key = _kc_signature(({plan_args},))",
          f"    plan = {wname}_plans.get(key)",
          "    if plan is None:",
          f"        plan = {wname}_plans[key] = {wname}_plan({plan_args})",
          "    shape, grid, ints, kw = plan"]
    for nm, o in zip(out_names, outs, strict=True):
        if o is scatter:  # added into: the base's copy, or the base handed over
            b = arg[o.args[0]]
            w.append(f"    {nm} = {b} if donate and {b}.is_contiguous() else "
                     f"{b}.clone(memory_format=torch.contiguous_format)")
        else:
            w.append(f"    {nm} = torch.empty(shape, device=dev, dtype={val(o).dtype})")
    launch = ", ".join(ptrs + out_names + sc_names)
    w.append(f"    if grid is not None:\n        {kname}[grid]({launch}, *ints, **kw)")
    w.append(f"    return ({', '.join(out_names)},)")
    sig = {nm: ptr_type(a) for nm, a in zip(in_names, tensors, strict=True)}
    sig.update({nm: ptr_type(a) for nm, a in zip(src_names, sources, strict=True)})
    sig.update({f"gi{i}k{j}": ptr_type(t) for i, n in enumerate(indexed)
                for j, t in enumerate(gather_indices(n))
                if canon[(i, j)] == f"gi{i}k{j}" and t not in positions})
    sig.update({nm: ptr_type(t) for nm, t in zip(
        pc_names, [t for srcs in piece_src for t in srcs], strict=True)})
    sig.update({nm: ptr_type(o) for nm, o in zip(out_names, outs, strict=True)})
    sig.update({nm: scalar_type(a) for nm, a in zip(sc_names, scalars, strict=True)})
    for p in params:  # sizes and strides as the launch passes them under 2**31
        if ":" not in p and p not in sig:
            sig[p] = "i32"
    piece_args = list(pc_arg)
    # representative flags: a computed view along the columns
    pos_flags = {f"{nm}_{x}": x == "C" for nm in pos_views for x in "RC"}
    pos_flags.update({f"{nm}_{x}": True for nm in ld_views for x in "RC"})  # whole tiles
    pos_flags.update(dict.fromkeys(pm_names, 0))  # the general index
    base = [scatter.args[0]] if base_new else []
    return KernelSource(kname, wname, source, "\n".join(w),
                        tensors + index_only + sources + piece_args + scalars + base, list(outs),
                        cfg,
                        signature=sig, constexprs={"NDIM": 2, "IDX64": False,
                                                   "FASTDIV": False, "XBLOCK": cfg["BLOCK"],
                                                   "YBLOCK": 1, **pos_flags},
                        num_warps=cfg["num_warps"], device_arg=device_arg,
                        call_kwargs={"donate": "True"} if _donatable(scatter) else {})


def _donatable(scatter: fx.Node | None) -> bool:
    """Whether the forward may hand a scatter its base to add into: an intermediate that a
    functional op (not a view) made fresh and that nothing else reads."""
    if scatter is None:
        return False
    base = scatter.args[0]
    return (base.op == "call_function" and not is_view(base.target)
            and list(base.users) == [scatter])


def _index_lines(gi: str, loaded: set[str], vgi: dict[str, fx.Node],
                 positions: dict[fx.Node, list[fx.Node]], env: dict[fx.Node, str],
                 rank: int) -> list[str]:
    """Kernel lines giving index view ``gi``'s value ``{gi}_v`` at the element, once per
    kernel (``loaded``): loaded, or computed from the element's position."""
    if gi in loaded:
        return []
    loaded.add(gi)
    if gi in vgi:  # computed from the element's position, not loaded
        body = _position_offset_lines(gi, rank)
        lines, value = position_lines(positions[vgi[gi]], f"{gi}_off", gi, env)
        body += lines
    else:
        body = _load_offset_lines(gi, rank)
        value = f"tl.load({gi} + {gi}_off, mask={gi}_m, other=0)"
    # int32 offsets unless one can pass 2**31 (an index is below its dim's size, or the
    # program is wrong)
    return body + ["    if IDX64:", f"        {gi}_v = {value}.to(tl.int64)",
                   "    else:", f"        {gi}_v = {value}.to(tl.int32)"]


def _load_offset_lines(nm: str, rank: int) -> list[str]:
    """``{nm}_off`` and its mask ``{nm}_m`` for a view loaded from memory, shaped as
    ``_position_offset_lines`` shapes a computed one (by the launch's ``{nm}_R`` and
    ``{nm}_C``): the load of an operand that one of the tile's dims does not move is one per
    row or column, broadcast where it is used."""
    return _position_offset_lines(nm, rank) + [
        f"    if {nm}_R:", f"        if {nm}_C:", f"            {nm}_m = mask",
        "        else:", f"            {nm}_m = rmask", "    else:", f"        {nm}_m = cmask"]


def _position_offset_lines(nm: str, rank: int) -> list[str]:
    """``{nm}_off`` of a computed (position) view, shaped by the dims it varies along: a
    [YBLOCK, 1] column of row positions, a [1, XBLOCK] row of column positions, so that the
    chain computing the value from it runs once per row or per column, not per element
    (upsampling's source rows and interpolation weights). ``{nm}_R`` and ``{nm}_C`` are the
    launch's flags: the view has a stride on a row dim, on the column dim."""
    L = rank - 1
    lines = [f"    if {nm}_R:"]
    lines += offset_lines(f"{nm}_off", "i", f"{nm}_st", L, "(NDIM - 1)", "row * 0",
                          "        ")
    lines += [f"        if {nm}_C:", f"            {nm}_off += col * {nm}_st{L}",
              "    else:", f"        {nm}_off = col * {nm}_st{L}"]
    return lines


def _arange_args(n: fx.Node) -> tuple[Any, Any, Any]:
    """(start, end, step) of an ``arange`` node, whichever overload it is."""
    a = list(n.args)
    if len(a) == 1:
        return 0, a[0], 1
    return a[0], a[1], a[2] if len(a) > 2 else 1


def position_lines(chain: list[fx.Node], pos: str, tag: str, env: dict[fx.Node, str],
                    ind: str = "    ") -> tuple[list[str], str]:
    """Kernel lines evaluating a position chain at element ``pos`` of its 1-D shape (every
    node's value there depends on ``pos`` alone); its variables carry ``tag`` so that two
    uses at different positions do not collide. Returns the lines and the value's name."""
    local = dict(env)
    lines = []
    for m in chain:
        if is_view(m.target):  # size-1 dims only: the same element
            local[m] = local[m.args[0]]
            continue
        name = f"{var(m)}_{tag}"
        if is_arange(m):
            start, _, step = (operand_expr(x, local) for x in _arange_args(m))
            dt = compute_dtype(m)
            lines.append(f"{ind}{name} = ({start} + {step} * {pos}.to({dt})).to({dt})")
        else:
            lines.append(f"{ind}{name} = " + lower_pointwise(m, local).split(" = ", 1)[1])
        local[m] = name
    return lines, local[chain[-1]]


def _broadcasts_into(shape: tuple[str, ...], domain: tuple[str, ...]) -> bool:
    """Whether ``shape`` broadcasts to ``domain`` (right-aligned, each dim 1 or the same):
    a fill a view reshapes on its way (6 values seen as 2 x 3) does not."""
    return len(shape) <= len(domain) and all(
        s == "1" or s == d for s, d in zip(reversed(shape), reversed(domain), strict=False))


def stand_in(t: fx.Node, chain: list[fx.Node], sc_of: dict[fx.Node, str]) -> str:
    """Wrapper expression of a meta tensor shaped like position value ``t``: its length
    (the arange's, computed as PyTorch does) on its one non-1 dim, contiguous."""
    root = next(m for m in chain if is_arange(m))
    args = [sc_of[x] if isinstance(x, fx.Node) else literal(x) for x in _arange_args(root)]
    length = f"_kc_arange_len({', '.join(args)})"
    dims = [length if s != "1" else "1" for s in shape_key(val(t).shape)]
    return f"torch.empty(({', '.join(dims)}{',' if len(dims) == 1 else ''}), device='meta')"


def gather_shape_lines(i: int, n: fx.Node, arg: dict[fx.Node, str]) -> list[str]:
    """Wrapper lines of gather ``i``'s shape ``gs{i}`` (the source's dims around the
    indices' broadcast shape ``gb{i}``; ``aten.gather``: the index tensor's shape)."""
    first, k = _index_dims(n)[0], len(_index_dims(n))
    idx = [arg[t] for t in gather_indices(n)]
    src = arg[n.args[0]]
    if in_place_index(n):
        return [f"    gs{i} = gb{i} = {idx[0]}.shape"]
    return [f"    gb{i} = _kc_broadcast({', '.join(t + '.shape' for t in idx)})",
            f"    gs{i} = {src}.shape[:{first}] + gb{i} + {src}.shape[{first + k}:]"]


def gather_ints(n: fx.Node, arg: dict[fx.Node, str]) -> list[str]:
    """The launch's integers of a gather: its source's sizes, then strides, on the gathered
    dims (an index wraps below 0 by the size and moves by the stride)."""
    first, k = _index_dims(n)[0], len(_index_dims(n))
    src = arg[n.args[0]]
    return [f"*{src}.shape[{first}:{first + k}]", f"*{src}.stride()[{first}:{first + k}]"]


def gather_view_lines(i: int, n: fx.Node, arg: dict[fx.Node, str], domain: str,
                      canon: dict[tuple[int, int], str]) -> tuple[str, list[str], dict[str, str]]:
    """Gather ``i`` over the domain: the expression of its source's view (stride 0 on the
    gathered dims), the wrapper lines defining the views of its index tensors that no
    earlier gather defined (``canon``), and each such view's tensor (its pointer)."""
    first, k = _index_dims(n)[0], len(_index_dims(n))
    src = arg[n.args[0]]
    lines: list[str] = []
    raw: dict[str, str] = {}
    if in_place_index(n):
        if canon[(i, 0)] == f"gi{i}k0":
            lines.append(f"    gi{i}k0 = {arg[n.args[2]]}.expand({domain})")
            raw[f"gi{i}k0"] = arg[n.args[2]]
        return f"_kc_gather_view({src}, {first}, 1, gs{i}, {domain}, True)", lines, raw
    trail = f"(1,) * ({src}.dim() - {first + k})"
    for j, t in enumerate(gather_indices(n)):
        if canon[(i, j)] != f"gi{i}k{j}":
            continue  # the same view as an earlier gather's
        lines.append(f"    gi{i}k{j} = {arg[t]}.expand(gb{i}).reshape(tuple(gb{i}) + {trail})"
                     f".expand({domain})")
        raw[f"gi{i}k{j}"] = arg[t]
    return f"_kc_gather_view({src}, {first}, {k}, gs{i}, {domain})", lines, raw


def gather_canon(gathers: list[fx.Node]) -> dict[tuple[int, int], str]:
    """One index view (and one load) per distinct view of an index tensor over the domain:
    (gather, index) -> its view's name (bilinear upsampling's four gathers share two row
    and two column index tensors)."""
    canon: dict[tuple[int, int], str] = {}
    seen: dict[tuple[Any, ...], str] = {}
    for i, n in enumerate(gathers):
        for k in range(len(_index_dims(n))):
            canon[(i, k)] = seen.setdefault(_index_view_key(n, k), f"gi{i}k{k}")
    return canon


def _index_view_key(n: fx.Node, k: int) -> tuple[Any, ...]:
    """What the view of gather ``n``'s k-th index tensor over the domain depends on: the
    tensor, the gather's kind and dims, the source's rank and all its index shapes (they
    broadcast together). Equal keys, equal views."""
    idx = gather_indices(n)
    return (idx[k], in_place_index(n), _index_dims(n), val(n.args[0]).dim(),
            tuple(shape_key(val(t).shape) for t in idx))


def _elementwise_inputs(n: fx.Node) -> list[fx.Node]:
    """The inputs read at the element's own position (a gather's source is not one)."""
    if is_load(n):  # its sources (and index tensors) have views of their own
        return []
    return list(n.all_input_nodes)


def _piece_dims(n: fx.Node) -> list[int]:
    """The dims whose index picks a cat's source, or a padding's inside from its border."""
    rank = val(n).dim()
    if op_name(n.target) == "cat":
        dim = n.args[1] if len(n.args) > 1 else n.kwargs.get("dim", 0)
        return [dim % rank]
    pad = n.args[1]
    return [rank - 1 - q for q in range(len(pad) // 2) if pad[2 * q] or pad[2 * q + 1]]


def _piece_lines(n: fx.Node, i: int, nsrc: int, rank: int) -> list[str]:
    """Kernel lines of piecewise load ``i``: pick the source by the element's index on the
    piece's dims, load it shifted to where it starts (masked), else 0 or the pad value."""
    dims = _piece_dims(n)
    cdt = compute_dtype(n)
    out = var(n)
    lines = []
    for j in range(len(dims)):  # the index on the piece dim (mode: _kc_piece_modes)
        ix, sz = f"pc{i}_ix{j}", f"size{rank - 1}"
        lines += [f"    if pc{i}_M{j} == 1:", f"        {ix} = col",
                  f"    elif pc{i}_M{j} == 2:",
                  f"        {ix} = (row // (pc{i}_in{j} // {sz})) % pc{i}_n{j}",
                  "    else:", f"        {ix} = (lin // pc{i}_in{j}) % pc{i}_n{j}"]
    if op_name(n.target) == "cat":
        fill = "0.0" if val(n).dtype.is_floating_point else "0"
    else:
        value = n.args[2] if len(n.args) > 2 else n.kwargs.get("value", 0)
        fill = repr(float(value))
    lines.append(f"    {out} = tl.full([YBLOCK, XBLOCK], {fill}, {cdt})")
    for k in range(nsrc):
        nm = f"pc{i}s{k}"
        ok = " & ".join(f"(pc{i}_ix{j} >= {nm}_b{j}) & (pc{i}_ix{j} < {nm}_e{j})"
                        for j in range(len(dims))) or "mask"
        lines += offset_lines(f"{nm}_off", "i", f"{nm}_st", rank, "NDIM", "row * 0", "    ")
        lines.append(f"    {nm}_ok = {ok}")
        lines.append(f"    {out} = tl.where({nm}_ok, tl.load({nm} + {nm}_off - {nm}_sh, "
                     f"mask=mask & {nm}_ok, other=0).to({cdt}), {out})")
    return lines


def _piece_wrapper(n: fx.Node, i: int, srcs: list[str]) -> list[str]:
    """Wrapper lines of piecewise load ``i``: its shape (``pshape{i}``) and per source the
    begin and end of its range on each piece dim and its offset shift (``pc{i}``)."""
    dims = _piece_dims(n)
    rank = val(n).dim()
    if op_name(n.target) == "cat":
        d = dims[0]
        return [f"    pc{i}_src = [{', '.join(srcs)}]",
                f"    pshape{i} = list(pc{i}_src[0].shape)",
                f"    pshape{i}[{d}] = sum(t.shape[{d}] for t in pc{i}_src)",
                f"    pc{i}, _b = [], 0",
                f"    for t in pc{i}_src:",
                f"        pc{i} += [_b, _b + t.shape[{d}], _b * t.stride({d})]",
                f"        _b += t.shape[{d}]"]
    pad = list(n.args[1])
    before = {rank - 1 - q: pad[2 * q] for q in range(len(pad) // 2)}
    after = {rank - 1 - q: pad[2 * q + 1] for q in range(len(pad) // 2)}
    x = srcs[0]
    grow = [f"{x}.shape[{d}] + {before.get(d, 0) + after.get(d, 0)}" for d in range(rank)]
    bes = [f"{before[d]}, {before[d]} + {x}.shape[{d}]" for d in dims]
    shift = " + ".join(f"{before[d]} * {x}.stride({d})" for d in dims) or "0"
    return [f"    pshape{i} = ({', '.join(grow)},)", f"    pc{i} = [{', '.join(bes + [shift])}]"]
