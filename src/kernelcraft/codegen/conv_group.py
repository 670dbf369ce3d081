"""A convolution group: the implicit-GEMM main loop of ``conv.py`` with the group's epilogue.

The kernel library (``conv.py`` without its imports) is copied into ``kernel.py`` once,
its top-level names prefixed with ``_kc_conv_`` so they cannot clash with the problem's.
Each group gets its own kernel: ``_kc_conv_mainloop`` (inlined by Triton) gives the fp32
tile of ``aten.convolution`` without its bias; the kernel adds the bias and runs the
group's pointwise ops on the tile before storing, the way matmul groups take epilogues.
External tensors the epilogue reads are broadcast to the output shape in the wrapper and
loaded at each tile element's (pixel, channel) offset through their strides; scalars are
kernel arguments. The wrapper validates the call and derives sizes, strides and knobs with
the library's ``_prepare`` (the heuristic, or the tuned config of ``_KC_TUNED``). Strict
fp32 runs on tensor cores through the module's dot-precision table.
"""

from __future__ import annotations

import ast
import io
import tokenize
from typing import Any

import torch
import torch.fx as fx

from kernelcraft.codegen import conv
from kernelcraft.codegen.common import (
    KernelSource,
    check_epilogue,
    emit_epilogue,
    external_operands,
    module_body,
    opmath,
    ptr_type,
    scalar_type,
    var,
)
from kernelcraft.codegen.ops import TL_DTYPE
from kernelcraft.plan import Group, hint, is_tensor_node, val

_PREFIX = "_kc_conv_"
_FLOATS = ("torch.float32", "torch.float16", "torch.bfloat16")


def _library_names() -> list[str]:
    """conv.py's top-level names that are not already private to kernelcraft."""
    import inspect

    names = []
    for node in ast.parse(inspect.getsource(conv)).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.append(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names += [t.id for t in targets if isinstance(t, ast.Name)]
    return [n for n in names if not n.startswith(_PREFIX)]


def renamed(name: str) -> str:
    """The name of conv.py's ``name`` in the emitted module."""
    return name if name.startswith(_PREFIX) else _PREFIX + name.lstrip("_")


def library_source() -> str:
    """conv.py's code for the emitted module (no docstring, no imports, names prefixed).

    Only name tokens are renamed (strings such as error messages keep their words), and
    not attribute names (``triton.cdiv``) or keyword arguments."""
    text = module_body(conv)
    names = set(_library_names())
    lines = text.splitlines(keepends=True)
    edits: list[tuple[int, int, int, str]] = []
    prev: tokenize.TokenInfo | None = None
    toks = list(tokenize.generate_tokens(io.StringIO(text).readline))
    for i, tok in enumerate(toks):
        if tok.type == tokenize.NAME and tok.string in names:
            after = toks[i + 1] if i + 1 < len(toks) else None
            attr = prev is not None and prev.string == "."
            kwarg = (after is not None and after.string == "=" and prev is not None
                     and prev.string in ("(", ","))
            if not attr and not kwarg:
                edits.append((tok.start[0], tok.start[1], tok.end[1], renamed(tok.string)))
        if tok.type not in (tokenize.NL, tokenize.COMMENT):
            prev = tok
    for row, c0, c1, new in sorted(edits, reverse=True):
        line = lines[row - 1]
        lines[row - 1] = line[:c0] + new + line[c1:]
    return "".join(lines)


CONV_MODES = ("auto", "always", "never")


def conv_mode(value: str | bool) -> str:
    """``FusionOptions.conv_template`` as one of :data:`CONV_MODES`."""
    if isinstance(value, bool):
        return "always" if value else "never"
    if value not in CONV_MODES:
        raise ValueError(f"conv_template must be one of {', '.join(CONV_MODES)} (or a bool), "
                         f"got {value!r}")
    return value


def _plane_of(n: fx.Node) -> int:
    """``conv._plane`` of convolution ``n`` at the captured sizes and strides (whether its
    epilogue's tensors are flat, which all but odd broadcasts are, is the wrapper's check)."""
    vx, vw = val(n.args[0]), val(n.args[1])
    return conv._plane([hint(d) for d in vx.shape], [hint(d) for d in vx.stride()],
                       [int(d) for d in vw.shape], tuple(n.args[3]), tuple(n.args[4]),
                       int(n.args[8]), bool(n.args[6]))


def _input_copied(n: fx.Node, plane: int | None = None) -> bool:
    """Whether the wrapper copies convolution ``n``'s input channels-innermost before the
    kernel (``conv._relayout`` at the captured sizes and strides; a layer the ``PLANE``
    walk takes is not copied). ``plane``: :func:`_plane_of` where the caller has it."""
    vx = val(n.args[0])
    return conv._relayout([hint(d) for d in vx.shape], [hint(d) for d in vx.stride()],
                          int(n.args[8]), _plane_of(n) if plane is None else plane)


def library_wins(n: fx.Node) -> str | None:
    """Why cuDNN/MIOpen keeps this convolution under ``--conv-template auto`` without a GPU
    to measure on (None: the template takes it). Measured on the H200 (benchmarks/README.md),
    the bare layers (a fused epilogue can still tip the balance): a strided 1x1 layer over
    an NCHW input spends as long copying the input channels-innermost as on its GEMM (0.57x
    cuDNN before unstrided ones took the ``PLANE`` walk, which needs no copy), and a strided
    transposed layer that cannot run phase by phase (dilated, or direct) gathers, so its
    MMAs do stride^dims times the work."""
    stride, dilation, transposed = n.args[3], n.args[5], bool(n.args[6])
    sizes = _gemm_sizes(n)
    if (transposed and any(int(s) > 1 for s in stride)
            and not conv._phase(True, tuple(stride), tuple(dilation),
                                conv._kc_conv_direct(sizes["C"], sizes["N"]))):
        return ("convolution: cuDNN/MIOpen (a strided transposed layer that cannot run phase "
                "by phase, being dilated or of few channels per group: the template's gather "
                "does stride^dims times the useful MMA work; --conv-template always forces it)")
    if sizes["taps"] == 1 and _input_copied(n):
        return ("convolution: cuDNN/MIOpen (a strided 1x1 layer over an NCHW input: the copy to "
                "channels-innermost costs as much as the GEMM; --conv-template always forces "
                "it)")
    return None


def conv_supported(n: fx.Node) -> str | None:
    """Why the template cannot take convolution node ``n`` (None: it can)."""
    args = list(n.args) + [None] * (9 - len(n.args))
    x, w, b, stride, padding, dilation, _transposed, _output_padding, groups = args[:9]
    nd = len(stride or ())
    if nd not in (1, 2, 3):
        return f"{nd}-D convolution (the template does 1-D to 3-D)"
    vx, vw = val(x), val(w)
    if vx.dim() != nd + 2:
        return "unbatched input"
    if vx.dtype != vw.dtype or str(vx.dtype) not in _FLOATS:
        return f"dtype {vx.dtype}"
    if isinstance(b, fx.Node) and val(b).dtype != vx.dtype:
        return f"bias dtype {val(b).dtype}"
    if not all(isinstance(v, int) for v in (*stride, *padding, *dilation, groups)):
        return "symbolic stride, padding, dilation or groups"
    if min(padding) < 0:
        return "negative padding"
    return None


def _per_channel(a: fx.Node, shape: tuple[Any, ...]) -> bool:
    """Whether epilogue operand ``a``, broadcast to the output ``shape``, varies only along
    the channels (a [C, 1, 1] parameter, a scalar tensor): loaded as a [BLOCK_N] vector, not
    gathered as a tile (whose channel-contiguous layout would also put the threads along
    the channels, each with its own copy of many pixels' index math)."""
    dims = [1] * (len(shape) - val(a).dim()) + [hint(d) for d in val(a).shape]
    return all(d == 1 for i, d in enumerate(dims) if i != 1)


_GEOMETRY = ("M CIN_G COUT_G K D H W OD OH OW KD KH KW sd sh sw pd ph pw dd dh dw g0 "
             "s_xn s_xc s_xd s_xh s_xw s_wg s_wo s_wc s_wd s_wh s_ww").split()
#: the kernel size: compile-time (the direct walk unrolls its taps)
_TAPS = ("KD", "KH", "KW")
_MAIN_CONSTS = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "NDIM", "TAP_MAJOR", "CIN_INNER",
                "TRANSPOSED", "IDX64", "PIX_MAJOR", "NATIVE", "PREC", "DIRECT", "PLANE",
                "PHASE")


def emit_conv(g: Group, target: Any = None) -> KernelSource:
    """A convolution kernel with g's pointwise epilogue fused, and its launching wrapper."""
    n = g.anchor
    if n is None:
        raise NotImplementedError("convolution group without an anchor")
    why = conv_supported(n)
    if why:
        raise NotImplementedError(why)
    args9 = list(n.args) + [None] * (9 - len(n.args))
    x, w, b, stride, padding, dilation, transposed, output_padding, groups = args9[:9]
    nd = len(stride)
    bias = b if isinstance(b, fx.Node) else None
    shape = tuple(val(n).shape)
    members = set(g.nodes)
    epilogue = [m for m in g.nodes if m is not n]
    for m in epilogue:
        check_epilogue(m, shape, "convolution", g.outputs)
        for a in m.all_input_nodes:
            if a not in members and is_tensor_node(a) and val(a).dim() > len(shape):
                raise NotImplementedError(f"epilogue input {a.name} has a higher rank")
    for o in g.outputs:
        if o is not n and o not in epilogue:
            raise NotImplementedError(f"output {o.name} is not in the group")

    kname, wname = f"_kc_{g.name}_kernel", f"_kc_{g.name}"
    # external tensors the epilogue reads, each loaded once
    loads, scalars = external_operands(epilogue, members)
    outs = list(g.outputs)
    fp32 = str(val(x).dtype) == "torch.float32"

    # ---- kernel
    ptrs = ["x_ptr", "w_ptr"] + (["b_ptr"] if bias is not None else [])
    ptrs += [f"e{i}_ptr" for i in range(len(loads))] + [f"o{i}_ptr" for i in range(len(outs))]
    sc_names = [f"sc{i}" for i in range(len(scalars))]
    strides = ["s_b"] if bias is not None else []
    for stem in [f"e{i}" for i in range(len(loads))] + [f"o{i}" for i in range(len(outs))]:
        strides += [f"s_{stem}{d}" for d in "ncdhw"]
    geometry = [f"{g}: tl.constexpr" if g in _TAPS else g for g in _GEOMETRY]
    params = ptrs + sc_names + geometry + strides + [f"{c}: tl.constexpr" for c in _MAIN_CONSTS]
    body = [
        "    pid = tl.program_id(0)",
        "    grp = tl.program_id(1) + g0",
        "    grid_n = tl.cdiv(COUT_G, BLOCK_N)",
        "    pid_m = pid // grid_n",
        "    pid_n = pid % grid_n",
        "    acc = _kc_conv_mainloop(",
        "        x_ptr, w_ptr, pid_m, pid_n, grp, M, CIN_G, COUT_G, K,",
        "        D, H, W, OD, OH, OW, KD, KH, KW, sd, sh, sw, pd, ph, pw, dd, dh, dw,",
        "        s_xn, s_xc, s_xd, s_xh, s_xw, s_wg, s_wo, s_wc, s_wd, s_wh, s_ww,",
        "        BLOCK_M, BLOCK_N, BLOCK_K, NDIM, TAP_MAJOR, CIN_INNER, TRANSPOSED, IDX64,",
        "        NATIVE, PREC, DIRECT, PLANE, PHASE)",
        "    acc, offs_m, nb, od, oh, ow, oc, mask = _kc_conv_epilogue_tile(",
        "        acc, pid_m, pid_n, grp, M, COUT_G, OD, OH, OW, sd, sh, sw, BLOCK_M, BLOCK_N,",
        "        NDIM, IDX64, PIX_MAJOR, PLANE, PHASE)",
    ]
    if bias is not None:
        body.append("    acc += _kc_conv_channels(tl.load(b_ptr + oc * s_b, mask=oc < (grp + 1) "
                    "* COUT_G, other=0.0), PIX_MAJOR).to(tl.float32)")
    body.append(f"    {var(n)} = acc.to({TL_DTYPE[val(n).dtype]})")
    env: dict[fx.Node, str] = {n: opmath(n)}
    env.update({s: sc_names[i] for i, s in enumerate(scalars)})

    def at(stem: str) -> str:
        return (f"_kc_conv_tile_offset(nb, od, oh, ow, oc, s_{stem}n, s_{stem}c, s_{stem}d, "
                f"s_{stem}h, s_{stem}w, NDIM, PIX_MAJOR)")

    def load(a: fx.Node, i: int) -> str:
        if _per_channel(a, shape):  # one value per channel: a vector, broadcast
            return (f"_kc_conv_channels(tl.load(e{i}_ptr + oc * s_e{i}c, "
                    "mask=oc < (grp + 1) * COUT_G, other=0), PIX_MAJOR)")
        return f"tl.load(e{i}_ptr + {at(f'e{i}')}, mask=mask, other=0)"

    emit_epilogue(body, n, epilogue, loads, outs, env, load,
                  lambda o, i: f"    tl.store(o{i}_ptr + {at(f'o{i}')}, {var(o)}, mask=mask)")
    source = f"@triton.jit\ndef {kname}({', '.join(params)}):\n" + "\n".join(body)

    # ---- wrapper
    tensors = [x, w] + ([bias] if bias is not None else [])
    tensors += [a for a in loads if a not in tensors]
    in_name = {a: f"in{i}" for i, a in enumerate(tensors)}
    X, Wt = in_name[x], in_name[w]
    B = in_name[bias] if bias is not None else "None"
    prepare = renamed("_prepare")
    prep_call = (f"{prepare}({X}, {Wt}, {B}, {list(stride)!r}, {list(padding)!r}, "
                 f"{list(dilation)!r}, {int(groups)!r}, {bool(transposed)!r}, "
                 f"{list(output_padding or [0] * nd)!r}, False, _KC_DOT_PRECISION, "
                 "None if t is None else dict(t), 'convolution'{})")
    wl = [
        f"def {wname}({', '.join([in_name[a] for a in tensors] + sc_names)}):",
        f"    t = _kc_tuned('{wname}', {X}.device, tuple({X}.shape) + tuple({Wt}.shape))",
        "    p = " + prep_call.format(""),
        "    conv = p['out']",
        "    dom = conv.shape",
    ]
    onames = []
    spare = n not in outs  # the convolution's own buffer, free for an output of its dtype
    for i, o in enumerate(outs):
        if o is n or (spare and val(o).dtype == val(n).dtype):
            spare = False
            onames.append("conv")
            continue
        onames.append(f"o{i}")
        wl.append(f"    o{i} = torch.empty(dom, device={X}.device, dtype={val(o).dtype})")
    views = []
    for i, a in enumerate(loads):
        wl.append(f"    e{i} = {in_name[a]}.expand(dom)")
        views.append(f"e{i}")
    if views:  # the PLANE walk addresses every tensor by flat pixel: else another walk
        wl += [f"    if p['consts']['PLANE'] and not all({renamed('_flat')}(list(v.shape), "
               f"list(v.stride())) for v in ({', '.join(views)},)):",
               "        p = " + prep_call.format(", False"),
               "        conv = p['out']"]
    if views:  # epilogue operands far from their base need 64-bit offsets too
        reach, limit = renamed("_reach"), renamed("_IDX32_LIMIT")
        wl.append(f"    if any({reach}(list(v.shape), list(v.stride())) >= {limit} "
                  f"for v in ({', '.join(views)},)):")
        wl.append("        p['consts']['IDX64'] = True")
    strides_of = ([f"{B}.stride(0)"] if bias is not None else [])
    strides_of += [f"*{renamed('_out_strides')}({v}, {nd})" for v in views + onames]
    launch_ptrs = ["p['x']", "p['w']"] + ([B] if bias is not None else []) + views + onames
    out_tuple = ", ".join(onames)
    wl += [
        "    if not p['empty']:",
        f"        for g0 in range(0, {int(groups)}, {renamed('_MAX_GRID_Y')}):",
        f"            {kname}[(p['tiles'], min({renamed('_MAX_GRID_Y')}, {int(groups)} - g0))](",
        f"                {', '.join(launch_ptrs + sc_names)},",
        "                *p['args'], g0, *p['strides'],",
        f"                {', '.join(strides_of)},",
        "                **p['consts'], num_warps=p['warps'], num_stages=p['stages'])",
        f"    return ({out_tuple},)",
    ]
    wrapper = "\n".join(wl)

    sig, consts, attrs, warps, stages = _build_spec(n, ptrs, sc_names, scalars, strides, loads,
                                                    outs, target)
    vx, vw = val(x), val(w)
    at_sizes = _gemm_sizes(n)
    cfg = {"template": "conv", "dims": nd, "stride": list(stride), "padding": list(padding),
           "dilation": list(dilation), "groups": int(groups), "transposed": bool(transposed),
           "epilogue": len(epilogue),
           "dot": "per backend (_KC_DOT_PRECISION)" if fp32 else "default (16-bit inputs)",
           "chosen": "at run time from the sizes (heuristic)",
           "walk": ("plane (a 1x1 GEMM over NCHW pixels, no copy)" if consts.get("PLANE") else
                    "phase by phase (strided transposed)" if consts.get("PHASE") else
                    "direct (fp32 FMAs)" if consts.get("DIRECT") else
                    "tap-major" if consts["TAP_MAJOR"] else "flat K"),
           "at": {**at_sizes, "itemsize": vx.element_size(),
                  "key": [hint(d) for d in vx.shape] + [int(d) for d in vw.shape]}}
    kind = "transposed " if transposed else ""
    notes = [f"{nd}-D {kind}implicit-GEMM convolution + {len(epilogue)} epilogue op(s)",
             "weight read in its own layout (rows along the input channels)"
             if consts.get("PLANE") else
             "weight packed output-channels-innermost once per weight version"]
    if _input_copied(n):
        notes.append("NCHW input copied channels-innermost before the kernel (one extra read "
                     "and write of the input, included in the measured time)")
    inputs = tensors + scalars
    return KernelSource(kname, wname, source, wrapper, inputs, outs, cfg, notes,
                        signature=sig, constexprs=consts, num_warps=warps, num_stages=stages,
                        attrs=attrs)


def _int_sig(v: int) -> str | int:
    """How Triton specialises an int argument at launch: 1 is a constant, else i32/i64."""
    if v == 1:
        return 1
    return "i32" if -2**31 <= v < 2**31 else "i64"


def _build_spec(n: fx.Node, ptrs: list[str], sc_names: list[str], scalars: list[fx.Node],
                strides: list[str], loads: list[fx.Node], outs: list[fx.Node], target: Any
                ) -> tuple[dict[str, str], dict[str, Any], dict[str, Any], int, int]:
    """Signature, constexprs and attributes as a launch at the captured sizes specialises
    them (ints of 1 become constants, others i32/i64; fresh tensors and ints that are
    multiples of 16 are marked divisible by 16), with the heuristic's config for
    ``target``."""
    from kernelcraft.build import TRITON_DTYPE

    x, w, b, stride, padding, dilation, transposed, _op, groups = (list(n.args) + [None] * 9)[:9]
    vx, vw, vo = val(x), val(w), val(n)
    backend = getattr(target, "backend", "cuda")
    shp = lambda t: [hint(d) for d in t.shape]  # noqa: E731
    std = lambda t: [hint(d) for d in t.stride()]  # noqa: E731
    out_strides = list(torch.empty(shp(vo), device="meta").stride())
    # the layouts the kernel runs on: the input maybe and the weight always re-laid out
    x_strides = std(vx)
    flat = all(conv._flat(shp(vo), list(torch.empty_strided(shp(val(a)), std(val(a)),
                                                              device="meta")
                                         .expand(shp(vo)).stride())) for a in loads)
    plane = conv._plane(shp(vx), x_strides, shp(vw), tuple(stride), tuple(padding), int(groups),
                        bool(transposed)) if flat else 0
    if conv._relayout(shp(vx), x_strides, int(groups), plane):
        x_strides = list(conv._channels_inner(torch.empty_strided(shp(vx), x_strides,
                                                                  device="meta")).stride())
    w_strides = std(vw) if plane else list(conv._channels_inner(
        torch.empty_strided(shp(vw), std(vw), device="meta"), 1 if transposed else 0).stride())
    launch = conv._launch(shp(vx), x_strides, shp(vw), w_strides, shp(vo), out_strides,
                          tuple(stride), tuple(padding), tuple(dilation), int(groups),
                          bool(transposed), vx.element_size(), backend, None,
                          {"cuda": "bf16x3", "hip": "bf16x3"}, "conv",
                          getattr(target, "triton_arch", None) if backend == "cuda" else None,
                          plane)
    sig: dict[str, Any] = {}
    ptr_of = {"x_ptr": x, "w_ptr": w, "b_ptr": b}
    ptr_of.update({f"e{i}_ptr": a for i, a in enumerate(loads)})
    ptr_of.update({f"o{i}_ptr": o for i, o in enumerate(outs)})
    for p in ptrs:
        sig[p] = ptr_type(ptr_of[p]) if p != "x_ptr" else "*" + TRITON_DTYPE[str(vx.dtype)]
    sig.update({nm: scalar_type(s) for nm, s in zip(sc_names, scalars, strict=True)})
    consts: dict[str, Any] = dict(launch["consts"])
    geometry = list(launch["args"]) + [0] + list(launch["strides"])
    values = dict(zip(_GEOMETRY, geometry, strict=True))
    values["g0"] = 0
    def five(st: list[int]) -> tuple[int, ...]:
        return (st[0], st[1], *conv._front3(tuple(st[2:]), 0))

    per = {f"e{i}": five(list(torch.empty_strided(shp(val(a)), std(val(a)), device="meta")
                              .expand(shp(vo)).stride())) for i, a in enumerate(loads)}
    per.update({f"o{i}": five(out_strides) for i in range(len(outs))})
    for name in strides:  # bias, then epilogue tensors (broadcast) and outputs (contiguous)
        values[name] = 1 if name == "s_b" else per[name[2:-1]]["ncdhw".index(name[-1])]
    div16 = [["tt.divisibility", 16]]
    attrs: dict[str, Any] = {p: div16 for p in ptrs}
    for name, v in values.items():
        s = _int_sig(int(v))
        if name in _TAPS:
            consts[name] = int(v)
        elif s == 1 and name != "g0":
            consts[name] = 1
        else:
            sig[name] = "i32" if name == "g0" else s
            if name != "g0" and int(v) % 16 == 0:
                attrs[name] = div16
    return sig, consts, attrs, launch["warps"], launch["stages"]


def _gemm_sizes(n: fx.Node) -> dict[str, int]:
    """The implicit GEMM's M (output pixels), N (output channels per group), K (reduction),
    the input channels per group (``C``: the tap-major walk pads them to BLOCK_K), whether
    the input's channels are innermost (its tiles lie the other way round), the pixels per
    image of a layer the ``PLANE`` walk takes (``pixels``) and the K of one phase of a layer
    the ``PHASE`` walk takes (``phase_k``); 0 where another walk runs."""
    x, w, groups, transposed = n.args[0], n.args[1], int(n.args[8]), bool(n.args[6])
    vx, vw, vo = val(x), val(w), val(n)
    out = [hint(d) for d in vo.shape]
    M = out[0]
    for d in out[2:]:
        M *= d
    taps = 1
    for d in vw.shape[2:]:
        taps *= int(d)
    cin_g = hint(vx.shape[1]) // groups
    cout_g = int(vw.shape[1]) if transposed else int(vw.shape[0]) // groups
    plane = _plane_of(n)
    cin_inner = cin_g > 1 and (hint(vx.stride()[1]) == 1 or _input_copied(n, plane))
    stride = tuple(int(s) for s in n.args[3])
    phase = conv._phase(transposed, stride, tuple(int(d) for d in n.args[5]),
                        conv._kc_conv_direct(cin_g, cout_g))
    return {"M": M, "N": cout_g, "K": cin_g * taps, "C": cin_g, "taps": taps,
            "groups": groups, "transposed": transposed, "cin_inner": cin_inner,
            "pixels": M // out[0] if plane and out[0] else 0,
            "phase_k": conv._phase_k(cin_g, tuple(int(d) for d in vw.shape[2:]), stride)
            if phase else 0}
