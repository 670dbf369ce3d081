"""Capture: a problem's Model -> a core-ATen FX graph with shapes, dtypes and strides.

``torch.export`` with automatic dynamic dimensions keeps batch-like sizes symbolic (so the
emitted module is shape-generic where the program is), then a decomposition table lowers
composite ops (softmax, norms, activations, losses) to the primitives the templates know:
pointwise ops, sum/mean/amax/amin/argmax/argmin reductions, matmuls and layout ops.
"""

from __future__ import annotations

import contextlib
import logging
import math
import traceback
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from kernelcraft.errors import InputError

aten = torch.ops.aten


@dataclass
class Captured:
    """The exported program and how its placeholders map to the module's state."""

    gm: torch.fx.GraphModule
    param_of: dict[str, str]  # placeholder name -> parameter/buffer FQN
    user_inputs: list[str]
    #: graph output index -> buffer or parameter FQN it updates (BatchNorm running stats in
    #: training, an Embedding's rows renormalised by ``max_norm``)
    mutations: dict[int, str] = field(default_factory=dict)
    #: every user argument in order: (name, is constant, captured value of a constant)
    user_args: list[tuple[str, bool, Any]] = field(default_factory=list)
    n_user_outputs: int = 1
    out_spec: Any = None
    example_inputs: list[Any] = field(default_factory=list)
    #: input size symbols export bounded beyond its defaults (at least 22, at most 64):
    #: a sign that the program derived a number from them (``specialize.baked_dims``)
    bounded: set[str] = field(default_factory=set)
    #: placeholders of plain tensor attributes (neither parameter nor buffer): ``.to()``
    #: and ``.cuda()`` leave them where they are, so the module moves them to the inputs
    constants: set[str] = field(default_factory=set)
    #: constants the program builds from Python data in ``forward`` (``torch.tensor(x)``):
    #: placeholder name -> value on the CPU (the module rebuilds them from the literal)
    lifted: dict[str, torch.Tensor] = field(default_factory=dict)

    @property
    def graph(self) -> torch.fx.Graph:
        return self.gm.graph


# ------------------------------------------------------------ decompositions
def _normalize(x, dims, eps, weight=None, bias=None, bshape=None):
    """(x - mean) * rsqrt(var + eps) * weight + bias over ``dims``: two reductions, fused
    by the planner into one kernel with the pointwise ops around them."""
    mean = torch.mean(x, dims, keepdim=True)
    xc = x - mean
    var = torch.mean(xc * xc, dims, keepdim=True)
    rstd = torch.rsqrt(var + eps)
    out = xc * rstd
    if weight is not None:
        out = out * (weight if bshape is None else weight.reshape(bshape))
    if bias is not None:
        out = out + (bias if bshape is None else bias.reshape(bshape))
    return out, mean, rstd


def _layer_norm(x, normalized_shape, weight, bias, eps):
    dims = list(range(x.dim() - len(normalized_shape), x.dim()))
    return _normalize(x, dims, eps, weight, bias)


def _group_norm(x, weight, bias, n, c, hw, group, eps):
    """Statistics over (channels of the group, positions) of x viewed as [N, G, C/G, HW]:
    the per-channel affine is then a broadcast on that same domain, so normalisation and
    affine are one kernel writing the output once (not a normalised copy, then the affine)."""
    shape = x.shape
    xg = x.reshape(shape[0], group, shape[1] // group, -1)
    mean = torch.mean(xg, [2, 3], keepdim=True)
    xc = xg - mean
    var = torch.mean(xc * xc, [2, 3], keepdim=True)
    rstd = torch.rsqrt(var + eps)
    out = xc * rstd
    bshape = [1, group, shape[1] // group, 1]
    if weight is not None:
        out = out * weight.reshape(bshape)
    if bias is not None:
        out = out + bias.reshape(bshape)
    return out.reshape(shape), mean.reshape(shape[0], group), rstd.reshape(shape[0], group)


def _batch_norm_functional(x, weight, bias, running_mean, running_var, training, momentum, eps):
    dims = [0] + list(range(2, x.dim()))
    bshape = [1, x.shape[1]] + [1] * (x.dim() - 2)
    if training:
        mean = torch.mean(x, dims, keepdim=True)
        xc = x - mean
        var = torch.mean(xc * xc, dims, keepdim=True)
        count = x.numel() // x.shape[1]
        unbiased = var * (count / max(count - 1, 1))
        new_rm = running_mean * (1 - momentum) + mean.reshape(-1) * momentum
        new_rv = running_var * (1 - momentum) + unbiased.reshape(-1) * momentum
    else:
        mean = running_mean.reshape(bshape)
        var = running_var.reshape(bshape)
        xc = x - mean
        new_rm, new_rv = running_mean, running_var
    rstd = torch.rsqrt(var + eps)
    out = xc * rstd
    if weight is not None:
        out = out * weight.reshape(bshape)
    if bias is not None:
        out = out + bias.reshape(bshape)
    return out, mean.reshape(-1), rstd.reshape(-1), new_rm, new_rv


def _batch_norm_no_training(x, weight, bias, running_mean, running_var, momentum, eps):
    out, m, r, _, _ = _batch_norm_functional(
        x, weight, bias, running_mean, running_var, False, momentum, eps
    )
    return out, m, r


def _gelu(x, approximate="none"):
    if approximate == "tanh":
        inner = math.sqrt(2.0 / math.pi) * (x + 0.044715 * x * x * x)
        return 0.5 * x * (1.0 + torch.tanh(inner))
    return 0.5 * x * (1.0 + torch.erf(x * (1.0 / math.sqrt(2.0))))


def _silu(x):
    return x * torch.sigmoid(x)


def _mish(x):
    return x * torch.tanh(torch.nn.functional.softplus(x))


def _softplus(x, beta=1.0, threshold=20.0):
    scaled = x * beta
    return torch.where(scaled > threshold, x, torch.log1p(torch.exp(scaled)) / beta)


def _hardswish(x):
    return x * torch.clamp(x + 3.0, 0.0, 6.0) / 6.0


def _hardsigmoid(x):
    return torch.clamp(x + 3.0, 0.0, 6.0) / 6.0


def _leaky_relu(x, negative_slope=0.01):
    return torch.where(x > 0, x, x * negative_slope)


def _rrelu_eval(x, noise, lower=0.125, upper=1.0 / 3.0, training=False, generator=None):
    """Randomised leaky ReLU at inference: the fixed slope (lower + upper) / 2. Training
    draws a slope per element: PyTorch's own decomposition (random, left to torch)."""
    if training:
        from torch._decomp import decomposition_table as torch_decomps

        return torch_decomps[aten.rrelu_with_noise_functional.default](
            x, noise, lower, upper, training, generator)
    return _leaky_relu(x, (lower + upper) / 2), noise


def _pad_circular(x, pad):
    """Circular padding as one gather (``_wrapped_gather``): on each padded dim, index
    ``(arange(size + l + r) - l) mod size``. PyTorch's decomposition copies through an
    empty tensor and five slice_scatters per dim. Negative pads crop first, and the
    positive ones wrap around what is left (as PyTorch does)."""
    n = len(pad) // 2
    sides = []
    for d in range(x.dim()):
        i = x.dim() - 1 - d
        lo, hi = (pad[2 * i], pad[2 * i + 1]) if i < n else (0, 0)
        if lo < 0 or hi < 0:
            x = x.narrow(d, max(-lo, 0), x.shape[d] - max(-lo, 0) - max(-hi, 0))
        sides.append((max(lo, 0), max(hi, 0)))
    return _wrapped_gather(x, [(lo, x.shape[d] + lo + hi) if lo or hi else None
                               for d, (lo, hi) in enumerate(sides)])


def _wrapped_gather(x, wraps):
    """``x`` gathered at ``(arange(length) - shift) mod size`` on each dim whose entry of
    ``wraps`` is ``(shift, length)`` (shift None: no subtraction; None: the dim as it is),
    as one ``_unsafe_index`` from the first such dim on (indices stay adjacent): the form
    of nearest upsampling the pointwise template loads with positions computed in the
    kernel."""
    wrapped = [d for d, w in enumerate(wraps) if w is not None]
    if not wrapped:
        return x.clone()
    indices: list[Any] = [None] * wrapped[0]
    for d in range(wrapped[0], x.dim()):
        if wraps[d] is None:
            pos = torch.arange(x.shape[d], device=x.device)
        else:
            shift, length = wraps[d]
            pos = torch.arange(length, device=x.device)
            pos = torch.remainder(pos if shift is None else pos - shift, x.shape[d])
        indices.append(pos.reshape([-1] + [1] * (x.dim() - 1 - d)))
    return aten._unsafe_index.Tensor(x, indices)


def _repeat(x, repeats):
    """``x.repeat(*repeats)`` as one gather (``_wrapped_gather``), index ``arange(size * r)
    mod size`` on each repeated dim, where PyTorch copies the tiles into a new tensor (a
    repeated affine parameter of an instance norm, tiled positions)."""
    reps = list(repeats)
    x = x.reshape([1] * (len(reps) - x.dim()) + list(x.shape))
    return _wrapped_gather(x, [(None, x.shape[d] * r) if r != 1 else None
                               for d, r in enumerate(reps)])


def _elu(x, alpha=1.0, scale=1.0, input_scale=1.0):
    return torch.where(x > 0, x * scale, torch.expm1(x * input_scale) * (alpha * scale))


def _log_softmax(x, dim, half_to_float):
    m = torch.amax(x, dim, keepdim=True)
    shifted = x - m
    return shifted - torch.log(torch.sum(torch.exp(shifted), dim, keepdim=True))


def _softmax(x, dim, half_to_float):
    m = torch.amax(x, dim, keepdim=True)
    e = torch.exp(x - m)
    return e / torch.sum(e, dim, keepdim=True)


def _logsumexp(x, dim, keepdim=False):
    m = torch.amax(x, dim, keepdim=True)
    m = torch.where(torch.isinf(m), torch.zeros_like(m), m)
    out = torch.log(torch.sum(torch.exp(x - m), dim, keepdim=True)) + m
    return out if keepdim else out.squeeze(dim)


def _var(x, dim=None, *, correction=None, keepdim=False):
    dims = list(range(x.dim())) if dim is None else list(dim)
    mean = torch.mean(x, dims, keepdim=True)
    xc = x - mean
    count = 1
    for d in dims:
        count = count * x.shape[d]
    corr = 1 if correction is None else correction
    out = torch.sum(xc * xc, dims, keepdim=keepdim) / (count - corr)
    return out


def _var_mean(x, dim=None, *, correction=None, keepdim=False):
    dims = list(range(x.dim())) if dim is None else list(dim)
    return _var(x, dims, correction=correction, keepdim=keepdim), torch.mean(x, dims, keepdim)


def _vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    # every order as the reductions the row template fuses (raising here would not hand
    # the op back to PyTorch: it fails the whole decomposition)
    if dtype is not None:
        x = x.to(dtype)
    dims = list(range(x.dim())) if dim is None else [dim] if isinstance(dim, int) else list(dim)
    if ord == 2:
        return torch.sqrt(torch.sum(x * x, dims, keepdim=keepdim))
    a = torch.abs(x)
    if ord == math.inf:
        return torch.amax(a, dims, keepdim=keepdim)
    if ord == -math.inf:
        return torch.amin(a, dims, keepdim=keepdim)
    if ord == 0:
        return torch.sum((x != 0).to(a.dtype), dims, keepdim=keepdim)
    if ord == 1:
        return torch.sum(a, dims, keepdim=keepdim)
    return torch.pow(torch.sum(torch.pow(a, ord), dims, keepdim=keepdim), 1.0 / ord)


def _max_dim(x, dim, keepdim=False):
    return torch.amax(x, [dim], keepdim=keepdim), torch.argmax(x, dim, keepdim=keepdim)


def _min_dim(x, dim, keepdim=False):
    return torch.amin(x, [dim], keepdim=keepdim), torch.argmin(x, dim, keepdim=keepdim)


def _hardtanh(x, min_val=-1.0, max_val=1.0):
    return torch.clamp(x, min_val, max_val)


def _any(x, dim=None, keepdim=False):
    # a max over (x != 0): the row template's reduction, a bool again after it
    dims = [] if dim is None else [dim] if isinstance(dim, int) else list(dim)
    return torch.amax((x != 0).to(torch.float32), dims, keepdim=keepdim) > 0


def _all(x, dim=None, keepdim=False):
    dims = [] if dim is None else [dim] if isinstance(dim, int) else list(dim)
    return torch.amin((x != 0).to(torch.float32), dims, keepdim=keepdim) > 0


def _index_select(x, dim, index):
    # the gather the pointwise template loads (an embedding of 1-D ids decomposes to this)
    idx = [None] * (dim % max(x.dim(), 1)) + [index.reshape(-1)]
    return aten.index.Tensor(x, idx)


def _batch_norm_no_stats(x, weight, bias, training, momentum, eps):
    dims = [0] + list(range(2, x.dim()))
    bshape = [1, x.shape[1]] + [1] * (x.dim() - 2)
    out, mean, rstd = _normalize(x, dims, eps, weight, bias, bshape)
    return out, mean.reshape(-1), rstd.reshape(-1)


def _sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
          enable_gqa=False):
    """SDPA through its math form on every device. Left to torch, the op picks a backend by
    device: the math ops on CPU and meta, but a fused flash/efficient op (one opaque node)
    on CUDA; the same program would then plan differently per device. The math form is the
    ops the attention template recognises. A boolean mask is first turned into 0 / -inf, as
    SDPA itself does before it calls the math form."""
    if attn_mask is not None and attn_mask.dtype == torch.bool:
        zero = torch.scalar_tensor(0.0, dtype=query.dtype, device=attn_mask.device)
        attn_mask = torch.where(attn_mask, zero, float("-inf"))
    return aten._scaled_dot_product_attention_math.default(
        query, key, value, attn_mask, dropout_p, is_causal, None, scale=scale,
        enable_gqa=enable_gqa)[0]


#: whole recurrent layers (nn.LSTM, nn.GRU, nn.RNN), kept undecomposed: extern groups
RECURRENT = tuple(getattr(getattr(aten, name), form)
                  for name in ("lstm", "gru", "rnn_tanh", "rnn_relu")
                  for form in ("input", "data"))


def decomposition_table() -> dict[Any, Any]:
    """Core ATen decompositions plus kernelcraft's own for ops its templates fuse."""
    from torch.export import default_decompositions

    table = dict(default_decompositions())
    ours = {
        aten.native_layer_norm.default: _layer_norm,
        aten.native_group_norm.default: _group_norm,
        aten._native_batch_norm_legit_functional.default: _batch_norm_functional,
        aten._native_batch_norm_legit_no_training.default: _batch_norm_no_training,
        aten.gelu.default: _gelu,
        aten.silu.default: _silu,
        aten.mish.default: _mish,
        aten.softplus.default: _softplus,
        aten.hardswish.default: _hardswish,
        aten.hardsigmoid.default: _hardsigmoid,
        aten.leaky_relu.default: _leaky_relu,
        aten.elu.default: _elu,
        aten.rrelu_with_noise_functional.default: _rrelu_eval,
        aten._pad_circular.default: _pad_circular,
        aten.repeat.default: _repeat,
        aten._softmax.default: _softmax,
        aten._log_softmax.default: _log_softmax,
        aten.logsumexp.default: _logsumexp,
        aten.var.correction: _var,
        aten.var_mean.correction: _var_mean,
        aten.linalg_vector_norm.default: _vector_norm,
        aten.max.dim: _max_dim,
        aten.min.dim: _min_dim,
        aten.hardtanh.default: _hardtanh,
        aten.index_select.default: _index_select,
        aten.any.default: _any,
        aten.any.dim: _any,
        aten.any.dims: _any,
        aten.all.default: _all,
        aten.all.dim: _all,
        aten.all.dims: _all,
        aten._native_batch_norm_legit.no_stats: _batch_norm_no_stats,
        aten.scaled_dot_product_attention.default: _sdpa,
    }
    table.update(ours)
    # recurrent layers stay whole: unrolled, each step is a matmul and a gate kernel (three
    # launches per step and direction, thousands of kernels to build for a long sequence),
    # where the vendor library runs the layer as one fused persistent kernel
    for op in RECURRENT:
        table.pop(op, None)
    # gathers the pointwise template loads (upsampling, embeddings), from PyTorch's own
    # decompositions into aten.index / aten._unsafe_index
    from torch._decomp import decomposition_table as torch_decomps

    for op in (aten.upsample_nearest2d.vec, aten.upsample_nearest2d.default,
               aten.upsample_bilinear2d.vec, aten.upsample_bilinear2d.default,
               aten.embedding.default):
        if op in torch_decomps:
            table[op] = torch_decomps[op]
    return table


# ------------------------------------------------------------------ capture
def export_program(model: nn.Module, inputs: Sequence[Any]) -> Any:
    """``torch.export`` with every input dim dynamic (before any decomposition)."""
    from torch.export import Dim, export

    dyn = tuple(
        {i: Dim.AUTO for i in range(x.dim())} if isinstance(x, torch.Tensor) else None
        for x in inputs
    )
    with (_quiet_torch(), _symbolic_math(), _symbolic_sizes(), _size_free_einsum(),
          _positional_std_mean(), _no_value_checks(), _meta_autocast(), _bilinear_einsum()):
        return export(model, tuple(inputs), dynamic_shapes=dyn)


def capture(model: nn.Module, inputs: Sequence[Any], name: str = "model") -> Captured:
    """Export ``model`` on ``inputs`` (real or fake tensors) and decompose to core ATen."""
    try:
        ep = export_program(model, inputs)
    except Exception as exc:  # noqa: BLE001 - any export failure is reported the same way
        raise InputError(f"{name}: cannot capture the program: {_where(exc)}") from exc
    bounded = {str(k) for k, r in ep.range_constraints.items()
               if getattr(k, "is_Symbol", False) and (_finite(r.upper) or _finite(r.lower)
                                                      and int(r.lower) > 2)}
    try:
        with _quiet_torch():
            ep = ep.run_decompositions(decomposition_table())
    except Exception as exc:  # noqa: BLE001
        raise InputError(f"{name}: cannot decompose the program: {_where(exc)}") from exc
    if any(spec.kind.name == "TOKEN" for spec in ep.graph_signature.output_specs):
        ep = _without_effect_tokens(ep, name)
    _drop_metadata_asserts(ep.graph_module)
    unify_sizes(ep.graph_module)
    sig = ep.graph_signature
    param_of = dict(sig.inputs_to_parameters)
    param_of.update(sig.inputs_to_buffers)
    lifted = dict(getattr(sig, "inputs_to_lifted_tensor_constants", {}))
    param_of.update(lifted)
    outputs = list(sig.output_specs)
    mutations = {}
    n_user = 0
    for i, spec in enumerate(outputs):
        kind = spec.kind.name
        if kind in ("BUFFER_MUTATION", "PARAMETER_MUTATION"):  # (Embedding's max_norm)
            mutations[i] = spec.target
        elif kind == "USER_OUTPUT":
            n_user += 1
        else:
            raise InputError(f"{name}: unsupported program output kind {kind}")
    user_args = []
    for spec in sig.input_specs:
        if spec.kind.name != "USER_INPUT":
            continue
        const = type(spec.arg).__name__ == "ConstantArgument"
        user_args.append((spec.arg.name, const, getattr(spec.arg, "value", None)))
    return Captured(
        gm=ep.graph_module,
        user_args=user_args,
        param_of=param_of,
        user_inputs=list(sig.user_inputs),
        mutations=mutations,
        n_user_outputs=n_user,
        out_spec=ep.call_spec.out_spec,
        example_inputs=list(inputs),
        bounded=bounded,
        constants=set(lifted),
    )


def _without_effect_tokens(ep: Any, name: str) -> Any:
    """The program with its effect tokens removed: export threads a token through ops with
    side effects (``torch.linalg.cholesky``'s error check), which the generated module runs
    in program order anyway; the ops become plain calls."""
    try:
        from torch.export._remove_effect_tokens_pass import _remove_effect_tokens

        return _remove_effect_tokens(ep)
    except Exception as exc:  # noqa: BLE001 - a private pass: any failure is reported
        raise InputError(f"{name}: cannot remove the effect tokens of an op with side "
                         f"effects: {_where(exc)}") from exc


def _finite(bound: Any) -> bool:
    """A range bound that is a number (not ``int_oo``)."""
    try:
        return math.isfinite(float(bound))
    except (TypeError, ValueError, OverflowError):
        return False


def unify_sizes(gm: torch.fx.GraphModule) -> None:
    """Sizes the program requires equal as one size for the planner (``plan.shape_key``).

    Export gives each input dim its own symbol and records what the program requires of
    them as guards; a simple symbol-for-symbol equality becomes a replacement, but one
    like ``s57 + s9 == 2*s9`` (a cat of two batches masked by an eye of twice one batch:
    SimCLR's similarity matrix) stays a guard, and the two spellings of one size kept the
    masked log-softmax from being a reduction kernel. Each linear equality is solved for
    its newest symbol; the substitutions live on the shape environment."""
    import sympy

    env = None
    for n in gm.graph.nodes:
        v = n.meta.get("val")
        for s in (v.shape if isinstance(v, torch.Tensor) else ()):
            if isinstance(s, torch.SymInt):
                env = s.node.shape_env
                break
        if env is not None:
            break
    if env is None:
        return
    subs: dict[Any, Any] = {}
    for guard in env.guards:
        e = guard.expr
        if not isinstance(e, sympy.Eq):
            continue
        diff = sympy.expand((e.lhs - e.rhs).xreplace(subs))
        free = sorted(diff.free_symbols, key=lambda x: (len(str(x)), str(x)))
        if (len(free) < 2 or not diff.is_polynomial(*free)
                or sympy.Poly(diff, *free).total_degree() != 1):
            continue  # a size fixed to a number, or not linear: left as it is
        newest = free[-1]
        sol = sympy.solve(diff, newest)
        if len(sol) == 1 and all(c.is_integer for c in sympy.Poly(sol[0], *free[:-1]).coeffs()):
            subs = {k: v.xreplace({newest: sol[0]}) for k, v in subs.items()}
            subs[newest] = sol[0]
    env.kc_equal_sizes = subs


def _drop_metadata_asserts(gm: torch.fx.GraphModule) -> None:
    """Erase ``_assert_tensor_metadata`` nodes (export leaves one after each ``.to(dtype)``):
    they check dtypes the capture already knows, and as readers of a kernel's intermediate
    they made it an output of that kernel (a T5 RMSNorm's ``x.to(bfloat16)`` wrote two
    extra full-size tensors nothing read)."""
    for n in list(gm.graph.nodes):
        if (n.op == "call_function" and n.target is aten._assert_tensor_metadata.default
                and not n.users):
            gm.graph.erase_node(n)
    gm.recompile()


@contextlib.contextmanager
def _quiet_torch():
    """torch.export logs its internals (graphs, guard failures) at warning level; the user
    gets kernelcraft's one-line error instead."""
    import io

    logger = logging.getLogger("torch")
    old = logger.level
    logger.setLevel(logging.CRITICAL)
    sink = io.StringIO()
    try:
        with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink), \
                warnings.catch_warnings():
            # torch's own deprecation notices about its internals are not the user's
            warnings.simplefilter("ignore", FutureWarning)
            yield
    finally:
        logger.setLevel(old)


@contextlib.contextmanager
def _symbolic_math():
    """``math.sqrt`` of a symbolic size stays symbolic while the program is exported.

    export turns ``math.sqrt(x.shape[-1])`` (the scale of most hand-written attention) into
    a constant and the size into a constant with it; ``torch.sym_sqrt`` keeps both
    symbolic, so one capture serves every head size. Plain numbers go to math.sqrt.
    """
    import math

    plain = math.sqrt

    def sqrt(v: Any) -> Any:
        if isinstance(v, (torch.SymInt, torch.SymFloat)):
            return torch.sym_sqrt(v)
        return plain(v)

    math.sqrt = sqrt
    try:
        yield
    finally:
        math.sqrt = plain


@contextlib.contextmanager
def _symbolic_sizes():
    """``torch.linspace(a, b, n)`` and ``F.one_hot(t, n)`` with a symbolic ``n``, and
    ``torch.take_along_dim`` of symbolic sizes, stay symbolic while exporting.

    Both take ``n`` as a plain int, so export bakes ``torch.linspace(-1, 1, x.shape[-1])``
    (a coordinate grid) or ``F.one_hot(t, logits.shape[-1])`` and the size with it: the
    module then runs kernels at that size only. ``arange`` takes a symbolic size: the
    one-hot is ``t[..., None] == arange(n)``, as torch decomposes it, and the linspace has
    torch's values (the step in the output's precision, the upper half counted back from
    ``b``), which the kernels compute from the element's position. Other calls (tensor end
    points, integer dtypes, ``out=``) go to torch as they are."""
    import torch.nn.functional as F

    plain, plain_one_hot = torch.linspace, F.one_hot

    def linspace(start: Any, end: Any, steps: Any, *args: Any, **kwargs: Any) -> Any:
        dtype = kwargs.get("dtype") or torch.get_default_dtype()
        if (args or not isinstance(steps, torch.SymInt) or not dtype.is_floating_point
                or set(kwargs) - {"dtype", "device", "layout", "requires_grad"}
                or not all(isinstance(v, (int, float)) for v in (start, end))):
            return plain(start, end, steps, *args, **kwargs)
        i = torch.arange(steps, dtype=dtype, device=kwargs.get("device"))
        step = torch.full((), (end - start), dtype=dtype, device=i.device) / (steps - 1)
        return torch.where(i < steps // 2, start + i * step, end - (steps - 1 - i) * step)

    def one_hot(tensor: Any, num_classes: Any = -1) -> Any:
        if not isinstance(num_classes, torch.SymInt) or tensor.dtype != torch.int64:
            return plain_one_hot(tensor, num_classes)
        classes = torch.arange(num_classes, device=tensor.device)
        return (tensor.unsqueeze(-1) == classes).to(torch.int64)

    plain_take = torch.take_along_dim

    def take_along_dim(input: Any, indices: Any, dim: Any = None, **kwargs: Any) -> Any:
        # torch's own broadcasts with plain ints and wraps indices by ``% size(dim)`` with
        # a plain int: the sizes were baked; the same steps on symbolic sizes
        if kwargs or dim is None or input.dim() != indices.dim():
            return plain_take(input, indices, dim, **kwargs)
        d = dim % input.dim()
        rest = torch.broadcast_shapes(
            tuple(s for k, s in enumerate(input.shape) if k != d),
            tuple(s for k, s in enumerate(indices.shape) if k != d))
        shape_in, shape_ix = list(rest), list(rest)
        shape_in.insert(d, input.shape[d])
        shape_ix.insert(d, indices.shape[d])
        return torch.gather(input.expand(shape_in), d,
                            indices.expand(shape_ix) % input.shape[d])

    torch.linspace, F.one_hot, torch.take_along_dim = linspace, one_hot, take_along_dim
    try:
        yield
    finally:
        torch.linspace, F.one_hot, torch.take_along_dim = plain, plain_one_hot, plain_take


@contextlib.contextmanager
def _bilinear_einsum():
    """``F.bilinear`` (``nn.Bilinear``) exports as the einsum it computes.

    Its ATen op, ``_trilinear``, has no decomposition: the layer ran in PyTorch. Here
    ``out[.., o] = sum_i x1[.., i] * (x2 @ W[o, i, :])``: one matmul of ``x2`` by the weight
    viewed ``[O * I, J]`` (no copy of it), then a row reduction, which the templates take."""
    import torch.nn.functional as F

    plain = F.bilinear

    def bilinear(input1: Any, input2: Any, weight: Any, bias: Any = None) -> Any:
        if weight.dim() != 3 or input1.dim() != input2.dim():
            return plain(input1, input2, weight, bias)
        o, i, j = weight.shape
        t = torch.matmul(input2, weight.reshape(o * i, j).t())
        out = (t.view(*t.shape[:-1], o, i) * input1.unsqueeze(-2)).sum(-1)
        return out if bias is None else out + bias

    F.bilinear = bilinear
    try:
        yield
    finally:
        F.bilinear = plain


@contextlib.contextmanager
def _meta_autocast():
    """``torch.autocast(device_type=x.device.type)`` while exporting on the meta device.

    Autocast has no meta backend and raised, so such a program failed to capture. The
    region is exported as an autocast of "cuda" is on meta tensors: without casts, its ops
    at the module's precision mode (strict fp32 by default, or ``--precision``)."""
    from torch.amp.autocast_mode import autocast

    plain = autocast.__init__

    def init(self: Any, device_type: str, *args: Any, **kwargs: Any) -> None:
        plain(self, "cuda" if device_type == "meta" else device_type, *args, **kwargs)

    autocast.__init__ = init  # type: ignore[method-assign]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (CUDA is not available: autocast disabled)
            yield
    finally:
        autocast.__init__ = plain  # type: ignore[method-assign]


@contextlib.contextmanager
def _no_value_checks():
    """Checks of input values that raise in eager PyTorch are left out while exporting.

    ``if torch.any(var < 0): raise`` (``F.gaussian_nll_loss``) and the argument validation
    of ``torch.distributions`` branch on tensor values, which export cannot trace: such
    programs failed to capture. Valid inputs compute the same values without the check;
    invalid ones raise in eager PyTorch, and the generated module computes on them."""
    import torch.nn.functional as F
    from torch.distributions import Distribution

    plain_nll, validate = F.gaussian_nll_loss, Distribution._validate_args

    def gaussian_nll_loss(input: Any, target: Any, var: Any, full: bool = False,
                          eps: float = 1e-6, reduction: str = "mean") -> Any:
        if isinstance(var, float) or reduction not in ("none", "mean", "sum"):
            return plain_nll(input, target, var, full, eps, reduction)
        if var.shape != input.shape and var.shape == input.shape[:-1]:
            var = var.unsqueeze(-1)  # one variance per row of the input's last dim
        elif var.shape != input.shape and not (input.dim() == var.dim() and sum(
                v for i, v in zip(input.shape, var.shape, strict=True) if i != v) == 1):
            return plain_nll(input, target, var, full, eps, reduction)  # (its size error)
        v = var.clamp(min=eps)  # torch clamps a copy without autograd: the same values
        loss = 0.5 * (torch.log(v) + (input - target) ** 2 / v)
        if full:
            loss = loss + 0.5 * math.log(2 * math.pi)
        return loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" \
            else loss

    F.gaussian_nll_loss = gaussian_nll_loss
    Distribution.set_default_validate_args(False)
    try:
        yield
    finally:
        F.gaussian_nll_loss = plain_nll
        Distribution.set_default_validate_args(validate)


@contextlib.contextmanager
def _positional_std_mean():
    """``std_mean`` / ``var_mean`` over dims traced with dynamic sizes.

    The fake tensors of export run ``aten.std_mean.dim(x, dim, unbiased, keepdim)`` through
    its decomposition, which torch 2.13 registers as the reference ``std_mean`` whose
    ``unbiased`` and ``keepdim`` are keyword-only: every ``torch.std_mean(x, dim=...)``
    failed to capture. While exporting, the overloads with positional flags call the
    reference with keywords; the graph still records the aten op.
    """
    from torch._decomp import decomposition_table as table

    saved = {}
    for op in (aten.std_mean.dim, aten.var_mean.dim):
        ref = table.get(op)
        if ref is None:
            continue

        def keyworded(x: Any, dim: Any = None, unbiased: bool = True, keepdim: bool = False,
                      *, _ref: Any = ref) -> Any:
            return _ref(x, dim, unbiased=unbiased, keepdim=keepdim)

        saved[op] = ref
        table[op] = keyworded
    try:
        yield
    finally:
        table.update(saved)


def _size_free_einsum() -> contextlib.AbstractContextManager[Any]:
    """``torch.einsum`` of three or more operands contracts left to right while exporting.

    Where the opt_einsum package is installed, einsum picks its contraction order from the
    operands' sizes, and export then specialises those sizes: the H200's torch 2.11 baked
    the batch of a bilinear ``einsum("bi,oij,bj->bo")`` into the graph, so the module ran
    the problem's forward at every other batch. Left to right is the order torch takes
    without opt_einsum, the same for every size.
    """
    return torch.backends.opt_einsum.flags(enabled=False)


def _where(exc: BaseException) -> str:
    """The exception's first line, plus the user's source line when the trace names one."""
    msg = str(exc).strip().splitlines()
    first = f"{type(exc).__name__}: {msg[0] if msg else ''}"
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if "site-packages" not in frame.filename and "kernelcraft" not in frame.filename:
            return f"{first} (at {frame.filename}:{frame.lineno})"
    return first
