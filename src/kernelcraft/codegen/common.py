"""Shared pieces of the emitters: operand expressions, pointwise lowering, index math.

Every generated kernel addresses its operands through runtime sizes and strides. Index
arithmetic is emitted for a fixed maximum rank with compile-time guards (``NDIM``), and
the Python wrapper coalesces dimensions first, so a contiguous tensor costs one dimension.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.fx as fx

from kernelcraft.codegen.ops import POINTWISE, TL_DTYPE, is_pointwise, literal, op_name
from kernelcraft.plan import broadcasts_to, inline_constant, is_tensor_node, shape_key, val

#: Largest rank of a domain after coalescing that the kernels index (more is rare).
MAX_RANK = 6


@dataclass
class Operand:
    """An external input of a group as the kernel sees it."""

    node: fx.Node
    name: str  # kernel argument / variable stem
    ctx: str  # full | keep | scalar
    tensor: bool = True


@dataclass
class KernelSource:
    """What an emitter returns: Triton source, the wrapper source, and its names."""

    kernel_name: str
    wrapper_name: str
    source: str  # @triton.jit kernel(s)
    wrapper: str  # Python wrapper that allocates outputs and launches
    inputs: list[fx.Node] = field(default_factory=list)  # wrapper arguments, in order
    outputs: list[fx.Node] = field(default_factory=list)  # wrapper results, in order
    config: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    #: for cross-compilation: Triton signature of the non-constexpr parameters, and
    #: representative constexpr values / launch options for a GPU
    signature: dict[str, str] = field(default_factory=dict)
    constexprs: dict[str, Any] = field(default_factory=dict)
    num_warps: int = 4
    num_stages: int | None = None
    #: parameter name -> Triton attributes (``[["tt.divisibility", 16]]``), as the launcher
    #: specialises them; without them a cross-compile may spill where the launch does not
    attrs: dict[str, Any] = field(default_factory=dict)
    #: the wrapper takes ``dev=`` (no tensor argument to take the device from)
    device_arg: bool = False
    #: keyword arguments the module's forward passes (a scatter's ``donate``: the base is
    #: an intermediate nothing else reads, added into in place); tools calling the wrapper
    #: on their own inputs leave them out
    call_kwargs: dict[str, str] = field(default_factory=dict)

    def build_spec(self) -> dict[str, Any]:
        spec = {"name": self.kernel_name, "signature": self.signature,
                "constexprs": self.constexprs, "num_warps": self.num_warps,
                "num_stages": self.num_stages}
        if self.attrs:
            spec["attrs"] = self.attrs
        return spec


def ptr_type(n: fx.Node) -> str:
    """Triton signature type of a tensor argument (``*fp32``)."""
    from kernelcraft.build import TRITON_DTYPE

    return "*" + TRITON_DTYPE[str(val(n).dtype)]


def scalar_type(n: fx.Node) -> str:
    v = val(n)
    return "fp32" if isinstance(v, (float, torch.SymFloat)) else "i64"


def tl_dtype(n: fx.Node) -> str:
    return TL_DTYPE[val(n).dtype]


def var(n: fx.Node) -> str:
    return f"v_{n.name}"


def opmath(n: fx.Node) -> str:
    """n's value as an op operand: 16-bit floats widened to fp32."""
    if val(n).dtype in (torch.float16, torch.bfloat16):
        return f"{var(n)}.to(tl.float32)"
    return var(n)


def emit_epilogue(body: list[str], anchor: fx.Node, epilogue: list[fx.Node],
                  loads: list[fx.Node], outs: list[fx.Node], env: dict[fx.Node, str],
                  load: Any, store: Any) -> None:
    """Append a tile epilogue (the pointwise ops after a matmul or convolution) to ``body``.

    ``env`` holds the anchor's and the scalars' expressions; ``load(node, i)`` gives the
    expression loading operand ``loads[i]`` and ``store(node, i)`` the statement storing
    ``outs[i]``. Operands are loaded right before their first use and outputs stored right
    after their value, so that few tiles are live next to the accumulator.
    """
    load_id = {a: i for i, a in enumerate(loads)}
    out_id = {o: i for i, o in enumerate(outs)}
    if anchor in out_id:
        body.append(store(anchor, out_id[anchor]))
    for n in epilogue:
        for a in n.all_input_nodes:
            if a in load_id and a not in env:
                body.append(f"    {var(a)} = {load(a, load_id[a])}")
                env[a] = opmath(a)
        body.append("    " + lower_pointwise(n, env))
        env[n] = opmath(n)
        if n in out_id:
            body.append(store(n, out_id[n]))


def check_epilogue(n: fx.Node, shape: tuple[Any, ...], anchor: str,
                   outputs: Collection[fx.Node] = ()) -> None:
    """Raise NotImplementedError unless ``n`` can be a node of a tile epilogue on the output
    ``shape`` of the ``anchor`` ("matmul", "convolution"): a pointwise op on that shape, or
    on a shape that broadcasts to it when only the epilogue reads it (the tile computes it
    from its operands' broadcast loads: a decay window ``exp(-t * rate)`` of a [L, 1]
    position column), or a literal the epilogue computes in place (any shape)."""
    if inline_constant(n):
        return
    if n.op != "call_function" or not is_pointwise(n.target):
        raise NotImplementedError(f"epilogue node {n.name} is not a pointwise op")
    v = val(n)
    if not isinstance(v, torch.Tensor):
        raise NotImplementedError(f"epilogue node {n.name} is not a tensor")
    mine, out = shape_key(v.shape), shape_key(shape)
    if mine != out and (n in outputs or not broadcasts_to(mine, out)):
        raise NotImplementedError(f"epilogue node {n.name} is not on the {anchor}'s output "
                                  "shape")
    if v.dtype not in TL_DTYPE:
        raise NotImplementedError(f"epilogue node {n.name} has dtype {v.dtype}")


def external_operands(nodes: list[fx.Node], members: set[fx.Node]
                      ) -> tuple[list[fx.Node], list[fx.Node]]:
    """The tensors and the scalars ``nodes`` read from outside the group, each once, in
    first-use order (a fused prologue's or epilogue's kernel arguments)."""
    tensors: list[fx.Node] = []
    scalars: list[fx.Node] = []
    for m in nodes:
        for a in m.all_input_nodes:
            if a in members:
                continue
            if is_tensor_node(a):
                if a not in tensors:
                    tensors.append(a)
            elif a not in scalars:
                scalars.append(a)
    return tensors, scalars


def operand_expr(a: Any, env: dict[fx.Node, str]) -> str:
    """The Triton expression of an op argument: a computed value or a literal."""
    if isinstance(a, fx.Node):
        return env[a]
    if isinstance(a, torch.dtype):
        return TL_DTYPE[a]
    return literal(a)


SHIFTS = ("bitwise_left_shift", "__lshift__", "bitwise_right_shift", "__rshift__")


def lower_pointwise(n: fx.Node, env: dict[fx.Node, str]) -> str:
    """One pointwise node as ``v = expr`` with its result cast to the node's dtype."""
    name = op_name(n.target)
    if name in ("scalar_tensor", "full"):  # a literal the plan put here (inline_constant)
        return f"{var(n)} = tl.full([], {operand_expr(n.args[-1], env)}, {compute_dtype(n)})"
    fn = POINTWISE[name]
    if wide_literal(n):  # an int32 index (ranges) meets a literal past int32: widen it
        env = {a: f"{v}.to(tl.int64)" if a.meta.get("kc_narrow") else v for a, v in env.items()}
    args = [operand_expr(a, env) for a in n.args]
    kwargs = {k: (operand_expr(v, env) if isinstance(v, fx.Node) else v)
              for k, v in n.kwargs.items() if k not in ("memory_format", "dtype")}
    if name in ("clamp",) and len(args) > 1:
        lo = n.args[1] if len(n.args) > 1 else n.kwargs.get("min")
        hi = n.args[2] if len(n.args) > 2 else n.kwargs.get("max")
        expr = fn(args[0], _opt(lo, env), _opt(hi, env))
    elif name == "clamp":
        expr = fn(args[0], _opt(n.kwargs.get("min"), env), _opt(n.kwargs.get("max"), env))
    elif name == "pow":
        if tl_dtype(n) not in ("tl.float32", "tl.float16", "tl.bfloat16") and (
                isinstance(n.args[1], fx.Node) or n.args[1] not in (1, 2, 3)):
            raise NotImplementedError(f"pow in {tl_dtype(n)}")  # exact integer powers
        expr = fn(args[0], args[1] if isinstance(n.args[1], fx.Node) else n.args[1])
    elif name in SHIFTS:  # both operands in the promoted type, which sets the width
        dt = compute_dtype(n)
        a, b = (f"({x}).to({dt})" if isinstance(v, fx.Node) else f"tl.full([], {x}, {dt})"
                for x, v in zip(args[:2], n.args[:2], strict=True))
        expr = fn(a, b)
    elif name in ("add", "sub", "rsub") and len(n.args) > 2:
        expr = fn(args[0], args[1], alpha=n.args[2])
    else:
        expr = fn(*args, **kwargs)
    return f"{var(n)} = ({expr}).to({compute_dtype(n)})"


def wide_literal(n: fx.Node) -> bool:
    """Whether an argument of ``n`` is an integer literal outside int32 (which Triton will
    not combine with an int32 tensor)."""
    return any(isinstance(a, int) and not isinstance(a, bool) and not -(2**31) <= a < 2**31
               for a in [*n.args, *n.kwargs.values()])


def compute_dtype(n: fx.Node) -> str:
    """Registers hold 16-bit floats as fp32 (Triton's math needs it; fusing keeps the extra
    precision, which only helps), an int64 index that fits int32 as KC_NI (see ranges);
    other dtypes as they are."""
    if n.meta.get("kc_narrow"):  # ranges.NARROW
        return "KC_NI"
    dt = tl_dtype(n)
    return "tl.float32" if dt in ("tl.float16", "tl.bfloat16") else dt


def _opt(v: Any, env: dict[fx.Node, str]) -> str | None:
    if v is None:
        return None
    return operand_expr(v, env)


def decompose_lines(idx: str, prefix: str, size_prefix: str, rank: int, ndim_name: str,
                    indent: str, fast: str | None = None) -> list[str]:
    """Split a linear index into per-dimension indices, innermost dimension last.

    Dimension d of ``rank`` exists when ``d >= rank - NDIM`` (shapes are padded in front);
    the guards are compile-time so unused dimensions cost nothing, and the outermost
    dimension takes what is left (no division). ``fast``: the name of a constexpr under
    which each division is a multiply-high by ``{size}_m``, ``{size}_s`` (``_kc_udiv``):
    a tuning knob, off by default (on the H200 it won on one pooling layer by 1.2x and
    lost on others by up to 1.4x; the compiler's division by a uniform value is cheap).
    """
    lines = [f"{indent}_rem = {idx}"]
    for d in reversed(range(rank)):
        inner = rank - 1 - d  # dimensions inside d
        size = f"{size_prefix}{d}"
        lines.append(f"{indent}if {ndim_name} == {inner + 1}:")
        lines.append(f"{indent}    {prefix}{d} = _rem")
        lines.append(f"{indent}if {ndim_name} > {inner + 1}:")
        slow = [f"{prefix}{d} = _rem % {size}", f"_rem = _rem // {size}"]
        if fast is None:
            lines += [f"{indent}    {x}" for x in slow]
            continue
        lines.append(f"{indent}    if {fast}:")
        lines += [f"{indent}        {x}" for x in (
            f"_q = _kc_udiv(_rem, {size}, {size}_m, {size}_s)",
            f"{prefix}{d} = _rem - _q * {size}", "_rem = _q")]
        lines.append(f"{indent}    else:")
        lines += [f"{indent}        {x}" for x in slow]
    return lines


def offset_lines(target: str, prefix: str, stride_prefix: str, rank: int, ndim_name: str,
                 base: str, indent: str) -> list[str]:
    """``target = sum_d idx_d * stride_d`` over the dimensions that exist."""
    lines = [f"{indent}{target} = {base}"]
    for d in range(rank):
        lines.append(f"{indent}if {ndim_name} > {rank - 1 - d}:")
        lines.append(f"{indent}    {target} += {prefix}{d} * {stride_prefix}{d}")
    return lines


def row_walk_params(IN: list[str], OUT: list[str], SC: list[str],
                    constexprs: list[str]) -> list[str]:
    """Kernel parameters of a template walking rows (every dim but one, decomposed at run
    time) along one dim (the scan and top-k templates): operands, K rows, R along the dim,
    row sizes, each tensor's row strides and stride along the dim, then ``constexprs``."""
    params = IN + OUT + SC + ["K", "R"] + [f"size{i}" for i in range(MAX_RANK)]
    for t in IN + OUT:
        params += [f"{t}_st{i}" for i in range(MAX_RANK)] + [f"{t}_sr"]
    return params + ["NDIM: tl.constexpr"] + [f"{c}: tl.constexpr" for c in constexprs]


def row_walk_head(tensors: list[str]) -> list[str]:
    """Kernel lines of a row walk: this program's BLOCK_K rows and each tensor's row offset
    (``{t}_off``, a column)."""
    body = ["    pid = tl.program_id(0).to(tl.int64)",
            "    rows = pid * BLOCK_K + tl.arange(0, BLOCK_K)",
            "    rmask = rows < K"]
    body += decompose_lines("rows", "i", "size", MAX_RANK, "NDIM", "    ")
    for t in tensors:
        body += offset_lines(f"{t}_off", "i", f"{t}_st", MAX_RANK, "NDIM", "rows * 0", "    ")
        body.append(f"    {t}_off = {t}_off[:, None]")
    return body


def row_walk_launch(kname: str, wname: str, SC: list[str], config: str, dev: str,
                    ref: str, constexprs: str = "") -> list[str]:
    """Wrapper lines of a row walk over ``views`` along dim ``d`` of ``dom``: rows coalesced,
    ``bk, br, warps`` from ``config`` (an expression of ``nrows``, ``rsz`` and ``inner``,
    whether ``ref`` is contiguous along the dim) unless the tuned table has the sizes, then
    the launch."""
    return ["    rsz = dom[d]",
            "    rows = [s for i, s in enumerate(dom) if i != d]",
            "    sizes, strides, ndim = _kc_coalesce(rows, "
            "[[s for i, s in enumerate(v.stride()) if i != d] for v in views])",
            "    nrows = _kc_prod(rows)",
            f"    inner = {ref}.stride(d) == 1 or rsz == 1",
            f"    bk, br, warps = {config}",
            f"    t = _kc_tuned('{wname}', {dev}, (nrows, rsz))",
            "    if t is not None:",
            "        bk, br, warps = t['BLOCK_K'], t['BLOCK_R'], t['num_warps']",
            "    grid = (triton.cdiv(nrows, bk),)",
            f"    {kname}[grid](*views, {''.join(s + ', ' for s in SC)}nrows, rsz, *sizes,",
            "        *[s for st, v in zip(strides, views) for s in (*st, v.stride(d))],",
            f"        NDIM=ndim, {constexprs}BLOCK_K=bk, BLOCK_R=br, num_warps=warps)"]


def launch_signature(params: list[str], pointers: dict[str, fx.Node],
                     scalars: dict[str, fx.Node]) -> dict[str, str]:
    """Triton signature of a kernel's non-constexpr parameters: pointers and scalar operands
    by their nodes' types, every other runtime parameter (sizes, strides) i64."""
    sig = {t: ptr_type(a) for t, a in pointers.items()}
    sig.update({t: scalar_type(a) for t, a in scalars.items()})
    for p in params:
        if ":" not in p and p not in sig:
            sig[p] = "i64"
    return sig


def signature(names: list[str]) -> str:
    return ", ".join(names)


def module_body(module: Any) -> str:
    """A module's code without its docstring and imports, to be copied into kernel.py
    (which imports torch and triton itself)."""
    import ast
    import inspect

    src = inspect.getsource(module)
    lines = src.splitlines()
    keep = []
    for node in ast.parse(src).body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue
        start = node.lineno - 1 - len(getattr(node, "decorator_list", []))
        keep.append("\n".join(lines[start:node.end_lineno]))
    return "\n\n\n".join(keep) + "\n"
