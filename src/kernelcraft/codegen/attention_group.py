"""An attention group: the flash-attention kernel of ``attention.py`` in the emitted module.

The kernel library (``attention.py`` without its imports; ``attention`` renamed
``_kc_attention``) is copied into ``kernel.py`` once. Each group gets a wrapper that turns
the operands the planner found (``attention_pattern.py``) into the kernel's [B, H, S, D]
views without copying (a transpose, a broadcast of size-1 batch or head dims, a leading
unit dim for bmm-shaped [B*H, S, D] operands), multiplies the captured scale factors and
calls the kernel with the causal flag, the boolean or additive mask and the
fully-masked-row rule the pattern had. fp32 dots take the module's precision table (strict
fp32 emulated on tensor cores), 16-bit inputs native dots.
"""

from __future__ import annotations

import re
from typing import Any

import torch

from kernelcraft.attention_pattern import AttentionMatch, Operand
from kernelcraft.codegen import attention
from kernelcraft.codegen.common import KernelSource, module_body
from kernelcraft.plan import Group, hint, val

KERNEL = "_kc_attention_fwd"


def library_source() -> str:
    """attention.py's code for the emitted module (no docstring, no imports)."""
    return re.sub(r"(?<![\w.])attention\(", "_kc_attention(", module_body(attention))


def _operand(name: str, o: Operand) -> list[str]:
    return [f"    {name} = {name}.transpose(-1, -2)"] if o.swap else []


def emit_attention(g: Group, target: Any = None) -> KernelSource:
    """The wrapper launching the flash kernel for attention group ``g``."""
    m: AttentionMatch = g.template
    if m is None:
        raise NotImplementedError("attention group without a matched pattern")
    wname = f"_kc_{g.name}"
    scalars = m.scalars
    args = ["q", "k", "v"] + (["mask"] if m.mask is not None else [])
    args += [f"sc{i}" for i in range(len(scalars))]
    scale = ["1.0"]
    for f, divides in m.factors:
        term = f"sc{scalars.index(f)}" if f in scalars else repr(float(f))
        scale.append(f"{'/' if divides else '*'} {term}")
    w = [f"def {wname}({', '.join(args)}):"]
    w += _operand("q", m.q) + _operand("k", m.k) + _operand("v", m.v)
    if m.k.grouped:  # K and V [B, Hk, S, D]: each head serves H / Hk query heads
        w += [
            "    lead = _kc_broadcast(q.shape[:-2], k.shape[:1] + (1,), v.shape[:1] + (1,))",
            "    q = q.expand(*lead, -1, -1)",
            "    k, v = (t.expand(lead[0], -1, -1, -1) for t in (k, v))",
        ]
    else:
        w += [
            "    lead = _kc_broadcast(q.shape[:-2], k.shape[:-2], v.shape[:-2])",
            "    lead = (1,) * (2 - len(lead)) + tuple(lead)  # [B, H]; B = 1 for [B*H, S, D]",
            "    q, k, v = (t.expand(*lead, -1, -1) for t in (q, k, v))",
        ]
    mask = "None"
    if m.mask is not None:
        mask = "mask" if m.mask_keeps else "torch.logical_not(mask)"
    w += [
        f"    scale = float({' '.join(scale)})",
        f"    t = _kc_tuned('{wname}', q.device, tuple(q.shape) + (k.shape[2], v.shape[3]))",
        f"    out = _kc_attention(q, k, v, scale=scale, causal={m.causal}, attn_mask={mask},",
        "                        precision_table=_KC_DOT_PRECISION, "
        f"safe_softmax={m.safe}, fill_min={m.fill_min},",
        "                        config=None if t is None else dict(t))",
        f"    return (out{'[0]' if m.rank == 3 else ''},)",
    ]
    sizes = _sizes(m)
    backend = getattr(target, "backend", "cuda")
    smem = getattr(target, "smem_per_block", None)
    item = torch.empty((), dtype=m.dtype).element_size()
    prec = attention._KC_ATTN_DOT_PRECISION.get(backend, "ieee")
    split = attention._kc_attention_split_mode(item, backend, prec, sizes["D"], sizes["Dv"])
    layout = not split and _tma_layout(m)
    tma = tma_on({"tma_layout": layout}, target)
    bm, bn, nw, ns = attention._kc_attention_config(sizes["M"], sizes["N"], sizes["D"], item,
                                                    backend, smem, m.causal, split,
                                                    sizes["Dv"], tma)
    # unsplit: spaces.build_spec splits (bcast: batch / head dims each operand broadcasts)
    sig, consts, attrs, bcast = _build_spec(m, sizes, bm, bn)
    tma_spec(sig, consts, attrs, sizes, bn, tma)
    mask_kind = ("none" if m.mask is None else "additive tensor" if m.additive
                 else "boolean tensor, finfo.min fill" if m.fill_min else "boolean tensor")
    cfg: dict[str, Any] = {
        "template": "attention", "causal": m.causal, "mask": mask_kind,
        "BLOCK_M": bm, "BLOCK_N": bn, "num_warps": nw, "num_stages": ns, "SPLIT": split,
        "TMA": int(tma),
        "dot": ("per backend (_KC_DOT_PRECISION)" if m.dtype == torch.float32
                else "default (16-bit inputs)") + (
                    "; Q, K, V split into pieces beforehand (Q and K: fp16 of scaled "
                    "rows)" if split & 16 else
                    "; Q, K, V split into bf16 pieces beforehand" if split & 8 else ""),
        "chosen": "at run time from the sizes (heuristic)",
        "at": {**sizes, "itemsize": item, "target": getattr(target, "arch", backend),
               "key": [sizes[d] for d in ("B", "H", "M", "D", "N", "Dv")], "bcast": bcast,
               "tma_layout": layout},
    }
    what = "causal " if m.causal else ("masked " if m.mask is not None else "")
    notes = [f"{what}flash attention ({'SDPA' if m.safe else 'softmax'} semantics)"]
    if m.k.grouped:
        cfg["kv_heads"] = sizes["Hkv"]
        notes.append(f"grouped-query: {sizes['H'] // max(sizes['Hkv'], 1)} query heads per "
                     "K/V head, K and V read without their repeat")
    return KernelSource(KERNEL, wname, "", "\n".join(w), m.inputs, [m.output], cfg, notes,
                        signature=sig, constexprs=consts, num_warps=nw, num_stages=ns,
                        attrs=attrs)


def tma_on(at: dict[str, Any], target: Any) -> bool:
    """Whether the wrapper reads K and V through TMA descriptors on ``target``
    (``attention._kc_attention_tma_ok`` at run time): the captured layout allows it
    (``at["tma_layout"]``) and the target is NVIDIA sm_90 or later."""
    return (bool(at.get("tma_layout")) and getattr(target, "backend", "cuda") == "cuda"
            and int(getattr(target, "triton_arch", 90) or 0) >= 90)


def _tma_layout(m: AttentionMatch) -> bool:
    """16-bit K and V whose captured layout TMA can read: unit last stride, 16-byte
    strides, no broadcast dim, head dims up to 128."""
    if m.dtype not in (torch.float16, torch.bfloat16) or attention._KC_TENSOR_DESC is None:
        return False
    sizes = _sizes(m)
    if max(sizes["D"], sizes["Dv"]) > 128:
        return False
    for o in (m.k, m.v):
        shape, st = [hint(d) for d in val(o.base).shape], [hint(d) for d in val(o.base).stride()]
        if o.swap:
            shape[-2:], st[-2:] = shape[:-3:-1], st[:-3:-1]
        if len(shape) < 4 and shape[:-2] != [sizes["B"], sizes["H"]][4 - len(shape):]:
            return False  # a broadcast batch or head dim (stride 0)
        if not attention._kc_tma_strides(st, 2):
            return False
    return True


def tma_spec(sig: dict[str, str], consts: dict[str, Any], attrs: dict[str, Any],
             sizes: dict[str, Any], bn: int, on: bool) -> None:
    """K and V as the wrapper passes them: TMA descriptors of [1, 1, BLOCK_N, BLOCK_D]
    blocks (``on``) or pointers."""
    consts["TMA"] = on
    for ptr, d in (("K", sizes["D"]), ("V", sizes["Dv"])):
        if on:
            sig[ptr] = f"tensordesc<{_elem(sig[ptr])}[1, 1, {bn}, {_block(d)}]>"
            attrs.pop(ptr, None)
        elif sig[ptr].startswith("tensordesc<"):
            sig[ptr] = "*" + _elem(sig[ptr])
            attrs[ptr] = [["tt.divisibility", 16]]


def _block(d: int) -> int:
    """A head dim's tile (BLOCK_D), as the wrapper pads it."""
    return max(16, attention._kc_next_p2(d))


def _elem(ty: str) -> str:
    """The element type of a pointer ("*bf16") or descriptor ("tensordesc<bf16[...]>")."""
    return re.sub(r"^\*|^tensordesc<|\[.*$", "", ty)


def _sizes(m: AttentionMatch) -> dict[str, int]:
    """B, H, M, N, D, Dv at the captured sizes (as the kernel sees them)."""

    def last2(o: Operand) -> list[int]:
        s = [hint(d) for d in val(o.base).shape[-2:]]
        return s[::-1] if o.swap else s

    out = [hint(d) for d in val(m.output).shape]
    lead = out[:-2] if m.rank == 4 else [1, out[0]]
    (M, D), (N, _), (_, Dv) = last2(m.q), last2(m.k), last2(m.v)
    hkv = hint(val(m.k.base).shape[1]) if m.k.grouped else lead[1]
    return {"B": lead[0], "H": lead[1], "Hkv": hkv, "M": M, "N": N, "D": D, "Dv": Dv}


def _build_spec(m: AttentionMatch, sizes: dict[str, int], bm: int, bn: int
                ) -> tuple[dict[str, str], dict[str, Any], dict[str, Any], dict[str, list[bool]]]:
    """Signature, constexprs and attributes of the kernel as the wrapper launches it at the
    captured sizes, specialised as Triton's launcher does (an int equal to 1 becomes a
    constexpr, multiples of 16 and tensor pointers are marked divisible by 16): the
    cross-compiled code is the code that runs."""
    from kernelcraft.build import TRITON_DTYPE

    lead = (sizes["B"], sizes["H"])

    def strides(node: Any, swap: bool = False, heads: int | None = None) -> list[int]:
        shape, st = [hint(d) for d in val(node).shape], [hint(d) for d in val(node).stride()]
        if swap:
            shape[-2:], st[-2:] = shape[:-3:-1], st[:-3:-1]
        while len(shape) < 4:
            shape.insert(0, 1)
            st.insert(0, 0)
        want = (lead[0], lead[1] if heads is None else heads)
        return [0 if shape[i] == 1 and want[i] != 1 else st[i] for i in range(2)] + st[2:]

    H, M, N, D, Dv = (sizes[x] for x in ("H", "M", "N", "D", "Dv"))
    ints: dict[str, int] = {"H": H, "G": H // max(sizes["Hkv"], 1), "M": M, "N": N, "D": D,
                            "DV": Dv, "s_qp": 0, "s_kp": 0, "s_vp": 0}
    mask_st = strides(m.mask) if m.mask is not None else [0, 0, 0, 0]
    heads = {"q": H, "k": sizes["Hkv"], "v": sizes["Hkv"]}
    qkv = {x: strides(o.base, o.swap, heads[x])
           for x, o in (("q", m.q), ("k", m.k), ("v", m.v))}
    bcast = {x: [st[i] == 0 and (lead[0], heads[x])[i] > 1 for i in range(2)]
             for x, st in qkv.items()}
    for names, st in (("s_qb s_qh s_qm s_qd", qkv["q"]), ("s_kb s_kh s_kn s_kd", qkv["k"]),
                      ("s_vb s_vh s_vn s_vd", qkv["v"]),
                      ("s_mb s_mh s_mm s_mn", mask_st),
                      ("s_ob s_oh s_om s_od", [H * M * Dv, M * Dv, Dv, 1])):
        ints.update(zip(names.split(), st, strict=True))
    ptr = "*" + TRITON_DTYPE[str(m.dtype)]
    mptr = ptr if m.mask is None else (
        "*" + TRITON_DTYPE[str(val(m.mask).dtype)] if m.additive else "*u8")
    sig = {"Q": ptr, "K": ptr, "V": ptr, "Mask": mptr,
           "Out": ptr, "QS": ptr, "KS": ptr, "qk_scale": "fp32"}  # QS, KS: Out unless split
    attrs: dict[str, Any] = {p: [["tt.divisibility", 16]]
                             for p in ("Q", "K", "V", "Mask", "Out", "QS", "KS")}
    consts: dict[str, Any] = {}
    _specialize(ints, sig, consts, attrs)
    prec = attention._KC_ATTN_DOT_PRECISION["cuda"] if m.dtype == torch.float32 else "ieee"
    consts.update(BLOCK_M=bm, BLOCK_N=bn, BLOCK_D=_block(D), BLOCK_DV=_block(Dv),
                  CAUSAL=m.causal, MASK_KIND=(0 if m.mask is None else 1 if m.additive
                                              else 3 if m.fill_min else 2),
                  PREC=prec,
                  PREC_QK=attention._KC_ATTN_QK_PRECISION.get(prec, prec), UPCAST=False,
                  SAFE=m.safe, SPLIT=0, FOLD=_scale_sign(m) > 0, TMA=False)
    return sig, consts, attrs, bcast


def _scale_sign(m: AttentionMatch) -> float:
    """The sign of the captured scale: +1 where a factor is only known at run time (a
    softmax scale is positive in every attention the matcher saw)."""
    sign = 1.0
    for f, _ in m.factors:
        if isinstance(f, (int, float)):
            sign *= 1.0 if f > 0 else -1.0 if f < 0 else 0.0
    return sign


def _specialize(ints: dict[str, int], sig: dict[str, str], consts: dict[str, Any],
                attrs: dict[str, Any]) -> None:
    """Integer arguments as Triton's launcher specialises them (1 a constexpr, multiples of
    16 marked divisible), replacing what ``sig``, ``consts`` and ``attrs`` said of them."""
    for name, x in ints.items():
        sig.pop(name, None)
        consts.pop(name, None)
        attrs.pop(name, None)
        if x == 1:
            consts[name] = 1
            continue
        sig[name] = "i32" if -(2 ** 31) <= x < 2 ** 31 else "i64"
        if x % 16 == 0:
            attrs[name] = [["tt.divisibility", 16]]


def respec(sig: dict[str, str], consts: dict[str, Any], attrs: dict[str, Any],
           sizes: dict[str, int], split: int) -> None:
    """Rewrite a build spec for ``SPLIT=split``: the operands split beforehand arrive as
    [pieces, B, H, S, D] bf16 tensors (fp16 for Q and K with bit 16, their row scales fp32),
    contiguous over the dims they do not broadcast (``sizes["bcast"]``: those keep stride 0),
    with their piece stride."""
    consts["SPLIT"] = split
    if split & 16:
        sig["QS"] = sig["KS"] = "*fp32"
        consts["FOLD"] = False  # the score scale is per row and column
    B, H, M, N = (sizes[x] for x in ("B", "H", "M", "N"))
    ints: dict[str, int] = {}
    for ptr, x, rows, d, bit in (("Q", "q", M, sizes["D"], 8), ("K", "k", N, sizes["D"], 2),
                                 ("V", "v", N, sizes["Dv"], 4)):
        if not split & bit:
            continue
        sig[ptr] = "*fp16" if split & 16 and x != "v" else "*bf16"
        row = "m" if x == "q" else "n"
        bb, bh = sizes.get("bcast", {}).get(x, [False, False])
        hs = 1 if bh else H if x == "q" else sizes.get("Hkv", H)
        ints.update({f"s_{x}b": 0 if bb else hs * rows * d, f"s_{x}h": 0 if bh else rows * d,
                     f"s_{x}{row}": d, f"s_{x}d": 1,
                     f"s_{x}p": (1 if bb else B) * hs * rows * d})
    _specialize(ints, sig, consts, attrs)
