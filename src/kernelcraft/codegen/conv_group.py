"""A convolution group: the implicit-GEMM kernel of ``conv.py`` in the emitted module.

The kernel library (``conv.py`` without its imports) is copied into ``kernel.py`` once,
its top-level names prefixed with ``_kc_conv_`` so they cannot clash with the problem's;
each group gets a wrapper calling it with the captured stride, padding, dilation and
groups. Strict fp32 runs on tensor cores through the module's dot-precision table.
"""

from __future__ import annotations

import re
from typing import Any

import torch.fx as fx

from kernelcraft.codegen import conv
from kernelcraft.codegen.common import KernelSource, module_body
from kernelcraft.plan import Group, hint, val

#: conv.py's top-level names that are not already private to kernelcraft.
_RENAME = ("ACTIVATIONS", "DEFAULT_PRECISION", "_PRECISIONS", "_CONFIG_KEYS", "_MAX_GRID_Y",
           "_pair", "_padding", "_precision", "_check_config", "_launch_config")


def library_source() -> str:
    """conv.py's code for the emitted module (no docstring, no imports, names prefixed)."""
    text = module_body(conv)
    for name in _RENAME:
        new = "_kc_conv" + (name if name.startswith("_") else "_" + name)
        text = re.sub(rf"(?<![\w.]){re.escape(name)}\b", new, text)
    return re.sub(r"(?<![\w.])(conv[12]d)\(", r"_kc_conv_\1(", text)


def conv_supported(n: fx.Node) -> str | None:
    """Why the template cannot take convolution node ``n`` (None: it can)."""
    args = list(n.args) + [None] * (9 - len(n.args))
    x, w, _b, stride, padding, dilation, transposed, output_padding, groups = args[:9]
    if transposed:
        return "transposed convolution (no template yet)"
    if len(stride or ()) not in (1, 2):
        return f"{len(stride or ())}-D convolution (the template does 1-D and 2-D)"
    if any(p for p in (output_padding or ())):
        return "output padding"
    vx, vw = val(x), val(w)
    if vx.dim() != len(stride) + 2:
        return "unbatched input"
    if vx.dtype != vw.dtype or str(vx.dtype) not in ("torch.float32", "torch.float16",
                                                     "torch.bfloat16"):
        return f"dtype {vx.dtype}"
    if not all(isinstance(v, int) for v in (*stride, *padding, *dilation, groups)):
        return "symbolic stride, padding, dilation or groups"
    return None


def emit_conv(g: Group, target: Any = None) -> KernelSource:
    n = g.anchor
    why = conv_supported(n)
    if why:
        raise NotImplementedError(why)
    x, w, b, stride, padding, dilation, _t, _op, groups = n.args[:9]
    dims = len(stride)
    inputs = [x, w] + ([b] if isinstance(b, fx.Node) else [])
    wname = f"_kc_{g.name}"
    args = ["x", "w"] + (["b"] if len(inputs) == 3 else [])
    fn = "_kc_conv_conv1d" if dims == 1 else "_kc_conv_conv2d"
    one = (lambda v: v[0]) if dims == 1 else tuple
    wrapper = "\n".join([
        f"def {wname}({', '.join(args)}):",
        f"    t = _kc_tuned('{wname}', x.device, tuple(x.shape) + tuple(w.shape))",
        f"    return ({fn}(x, w, {'b' if len(args) == 3 else 'None'}, "
        f"stride={one(stride)!r}, padding={one(padding)!r}, dilation={one(dilation)!r}, "
        f"groups={groups!r}, precision_table=_KC_DOT_PRECISION, "
        "config=None if t is None else dict(t)),)",
    ])
    sig, consts, warps, stages = _build_spec(n, target)
    vx, vw = val(x), val(w)
    cfg = {"template": "conv", "dims": dims, "stride": list(stride),
           "padding": list(padding), "dilation": list(dilation), "groups": groups,
           "chosen": "at run time from the sizes (heuristic)",
           "at": {**_gemm_sizes(n), "itemsize": vx.element_size(),
                  "key": [hint(d) for d in vx.shape] + [int(d) for d in vw.shape]}}
    notes = [f"{dims}-D implicit-GEMM convolution"]
    return KernelSource("_kc_conv2d_kernel", wname, "", wrapper, inputs, [n], cfg, notes,
                        signature=sig, constexprs=consts, num_warps=warps, num_stages=stages)


def _build_spec(n: fx.Node, target: Any) -> tuple[dict[str, str], dict[str, Any], int, int]:
    """Signature and the heuristic's constexprs at the captured sizes (cross-compilation)."""
    from kernelcraft.build import TRITON_DTYPE

    x, w, b = n.args[:3]
    vx = val(x)
    at = _gemm_sizes(n)
    M, cout_g, K = at["M"], at["N"], at["K"]
    backend = getattr(target, "backend", "cuda")
    bm, bn, bk, warps, stages = conv._kc_conv_config(M, cout_g, K, vx.element_size(), backend)
    ptr = "*" + TRITON_DTYPE[str(vx.dtype)]
    sig = {"x_ptr": ptr, "w_ptr": ptr, "b_ptr": ptr, "o_ptr": ptr, "scale": "fp32"}
    for p in ("M H W H_out W_out CIN_G COUT_G KH KW K stride_h stride_w pad_h pad_w dil_h "
              "dil_w g0 s_xn s_xc s_xh s_xw s_wo s_wc s_wh s_ww s_on s_oc s_oh s_ow s_b"
              ).split():
        sig[p] = "i64"
    fp32 = str(vx.dtype) == "torch.float32"
    consts = {"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "CIN_INNER": False,
              "HAS_BIAS": isinstance(b, fx.Node), "ACT": "none", "HAS_SCALE": False,
              "NATIVE": not fp32, "PREC": "bf16x3" if fp32 else "ieee"}
    return sig, consts, warps, stages


def _gemm_sizes(n: fx.Node) -> dict[str, int]:
    """The implicit GEMM's M (output pixels), N (output channels per group), K (taps)."""
    w, groups = n.args[1], n.args[8]
    vw, vo = val(w), val(n)
    out = [hint(d) for d in vo.shape]
    M = out[0] * out[2] * (out[3] if len(out) > 3 else 1)
    K = int(vw.shape[1]) * int(vw.shape[2]) * (int(vw.shape[3]) if vw.dim() > 3 else 1)
    return {"M": M, "N": int(vw.shape[0]) // groups, "K": K, "groups": int(groups)}
