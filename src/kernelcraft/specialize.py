"""Input sizes a capture baked into the program, found by capturing twice.

``torch.export`` keeps input sizes symbolic where it can, and silently makes one a constant
where the program turns it into a Python number: ``x / math.sqrt(x.shape[-1])`` becomes
``x / 8.0``, and a graph captured at head_dim 64 then computes the wrong thing at 80. The
placeholder shapes show which sizes became constants, not whether a constant was derived
from one (a size can be constant and harmless). So the program is captured again with the
constructor-free sizes moved; constant dims whose value moved while some literal of the
graph (a scale, a view or expand size, an arange end) moved with them are baked. The
emitted module checks them on every call and runs the problem's own forward elsewhere.

A size can also stay symbolic while a number derived from it is baked: ``int(H // 2 * f)``
Fourier modes became a literal slice end with no guard, only bounds on ``H`` in the
export's range constraints. Dims with such bounds are probed the same way (programs
without them pay no second capture).
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice
from typing import Any

import torch
from torch import fx

from kernelcraft.capture import Captured, capture, export_program
from kernelcraft.errors import InputError
from kernelcraft.problem import Problem, init_free_sizes, perturbations

#: (forward argument index, dim, size): the sizes a variant was captured for
Guard = tuple[tuple[int, int, int], ...]


def capture_at(problem: Problem) -> Captured:
    """The problem's program captured at its sizes, on the meta device."""
    init = problem.init_inputs(0)
    try:
        with torch.device("meta"):
            model = problem.make_model(init, 0)
    except Exception:  # noqa: BLE001 - any constructor that needs real values
        # (``.item()`` of a constant it computes, numpy): built on the host, then moved
        model = problem.make_model(init, 0).to("meta")
    try:
        with torch.device("meta"):
            inputs = problem.template_inputs(0)
    except Exception:  # noqa: BLE001
        inputs = problem.template_inputs(0)
    inputs = [x.to("meta") if isinstance(x, torch.Tensor) else x for x in inputs]
    cap = capture(model, inputs, problem.name)
    made = {c for c in cap.constants if not _has_attribute(model, cap.param_of[c])}
    if made:
        cap.lifted = _lifted_values(problem, {cap.param_of[c]: c for c in made})
        _inline_scalars(cap)
    return cap


def _inline_scalars(cap: Captured) -> None:
    """A 0-d constant built in ``forward`` (``torch.tensor(finfo.min)`` as a mask fill)
    becomes the literal node ``scalar_tensor(value)``: kernels read it as a number (no
    buffer), the attention matcher sees the fill, and a value derived from a size is a
    literal that ``baked_dims`` compares."""
    from torch.ops import aten

    places = {n.name: n for n in cap.graph.nodes if n.op == "placeholder"}
    anchor = next(n for n in cap.graph.nodes if n.op != "placeholder")
    for name, value in list(cap.lifted.items()):
        if value.dim() != 0 or value.dtype not in (torch.float32, torch.float16, torch.bfloat16,
                                                   torch.int64, torch.int32, torch.bool):
            continue
        ph = places[name]
        with cap.graph.inserting_before(anchor):
            lit = cap.graph.call_function(aten.scalar_tensor.default, (value.item(),),
                                          {"dtype": value.dtype, "layout": torch.strided,
                                           "device": ph.meta["val"].device})
        lit.meta["val"] = ph.meta["val"]
        ph.replace_all_uses_with(lit)
        cap.graph.erase_node(ph)
        del cap.lifted[name], cap.param_of[name]
        cap.constants.discard(name)
    cap.gm.recompile()


#: elements of a constant built in ``forward`` that the module may carry as a literal
MAX_LIFTED = 1 << 16


def _has_attribute(model: torch.nn.Module, fqn: str) -> bool:
    path, _, name = fqn.rpartition(".")
    try:
        owner = model.get_submodule(path) if path else model
    except AttributeError:
        return False
    return isinstance(getattr(owner, name, None), torch.Tensor)


def _lifted_values(problem: Problem, names: dict[str, str]) -> dict[str, torch.Tensor]:
    """Values of the tensors ``forward`` builds from Python data: on the meta device they
    have none, so the program is exported once more on fake CPU tensors (nothing is
    allocated; the constants come out real)."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode(allow_non_fake_inputs=True):
        model = problem.make_model(problem.init_inputs(0), 0)
        inputs = problem.template_inputs(0)
    ep = export_program(model, inputs)
    out = {}
    for fqn, placeholder in names.items():
        value = ep.constants.get(fqn)
        if not isinstance(value, torch.Tensor) or value.device.type == "meta":
            raise InputError(f"{problem.name}: the tensor forward builds as {fqn} has no value "
                             "the capture can read")
        if value.numel() > MAX_LIFTED:
            raise InputError(f"{problem.name}: forward builds a {tuple(value.shape)} tensor from "
                             f"Python data ({fqn}); at most {MAX_LIFTED} elements are carried "
                             "as a literal: make it a buffer")
        out[placeholder] = value.detach().to("cpu").clone()
    return out


def _input_dims(cap: Captured) -> Iterator[tuple[int, int, Any]]:
    """(argument index, dim, captured size) of every dim of the user's tensor inputs."""
    nodes = {n.name: n for n in cap.graph.nodes if n.op == "placeholder"}
    for i, (name, const, _) in enumerate(cap.user_args):
        val = None if const else nodes[name].meta.get("val")
        if isinstance(val, torch.Tensor):
            for d, s in enumerate(val.shape):
                yield i, d, s


def bounded_dims(cap: Captured) -> dict[tuple[int, int], int]:
    """(argument index, dim) -> captured size of every user-input dim whose symbol export
    bounded (``Captured.bounded``): a number derived from it may be baked with no guard
    (``int(H // 2 * 0.5)`` modes kept: the size stays symbolic, the count a literal)."""
    return {(i, d): int(s.node.hint) for i, d, s in _input_dims(cap)
            if isinstance(s, torch.SymInt) and str(s.node.expr) in cap.bounded}


def constant_dims(cap: Captured) -> dict[tuple[int, int], int]:
    """(argument index, dim) -> size of every user-input dim the capture made a constant."""
    return {(i, d): int(s) for i, d, s in _input_dims(cap)
            if isinstance(s, int) or s.node.expr.is_number}


def baked_dims(problem: Problem, cap: Captured) -> Guard:
    """The dims of ``cap``'s inputs whose captured sizes the program depends on (see above).

    Empty when nothing is baked, when no input dim is constant or bounded, or when no size
    can move without changing the constructor's arguments (another model, another capture).
    """
    consts = _fixed_dims(cap)
    floats = _made_floats(problem, cap)
    if not consts:  # nothing else to probe (most programs): no second capture
        return floats
    free = init_free_sizes(problem)
    # several sizes: a literal derived by a step function (``int(W // 2 * 0.5)`` modes
    # kept) can stay put for one of them
    others = islice(perturbations(problem, free), BAKED_PROBES) if free else iter(())
    moved = next((moved for other in others if (moved := _baked_at(cap, consts, other))), ())
    return tuple(sorted({*moved, *floats}))


def _made_floats(problem: Problem, cap: Captured) -> Guard:
    """The input dims behind a size the program made a float (``float(support)`` as a
    clamp bound): export keeps the dim symbolic, with neither a constant nor a bound, yet
    writes the number into the op as a literal (a two-hot encoding captured at 601 bins
    clamped at +-300 at 21 bins). Each constructor-free size is moved alone; the dims it
    moves are baked where the graph's literals move with them. Only graphs holding a
    ``sym_float`` pay for the captures."""
    if not _has_sym_float(cap):
        return ()
    with torch.device("meta"):
        base = problem.template_inputs(0)
    baked: set[tuple[int, int, int]] = set()
    for key in init_free_sizes(problem):
        other = next(iter(perturbations(problem, [key])), None)
        if other is None:
            continue
        with torch.device("meta"):
            ins = other.template_inputs(0)
        moved = {(i, d, s) for i, x in enumerate(base) if isinstance(x, torch.Tensor)
                 and isinstance(ins[i], torch.Tensor) and ins[i].dim() == x.dim()
                 for d, s in enumerate(x.shape) if ins[i].shape[d] != s}
        if moved and _literals_move(cap, other):
            baked |= moved
    return tuple(sorted(baked))


def _has_sym_float(cap: Captured) -> bool:
    return any(n.op == "call_function" and getattr(n.target, "__name__", "") == "sym_float"
               for n in cap.graph.nodes)


def _literals_move(cap: Captured, other: Problem) -> bool:
    """Whether the program captured at ``other``'s sizes runs other ops or literals (or
    cannot be captured there)."""
    try:
        cap2 = capture_at(other)
    except Exception:  # noqa: BLE001 - any program the capture cannot take there
        return True
    return not _same_literals(cap.graph, cap2.graph)


def structural_sizes(problem: Problem, keys: list[str]) -> list[str]:
    """The size globals among ``keys`` the program's captured graph depends on: moved alone,
    they change its ops or literals (a Python loop over a dim, a size made a number).

    The judge holds them at the problem's values where it requires kernels at other sizes:
    no fixed graph, hence no generated module, serves every value of such a size. Empty
    when the program cannot be captured (the judge judges programs it cannot).
    """
    if not keys:
        return []
    try:
        cap = capture_at(problem)
    except Exception:  # noqa: BLE001 - any program the capture cannot take
        return []
    consts = _fixed_dims(cap)
    floats = _has_sym_float(cap)  # a size made a float: literals may move with any key
    if not consts and not floats:
        return []
    # (where literals move with a key, its fixed dims' test holds too: one capture a key)
    return [k for k in keys if any(
        _literals_move(cap, other) if floats else _baked_at(cap, consts, other)
        for other in islice(perturbations(problem, [k]), 1))]


def _fixed_dims(cap: Captured) -> dict[tuple[int, int], int]:
    """(argument index, dim) -> size of the input dims a literal could be derived from: the
    constant ones above 1 and the bounded ones."""
    return {**{k: v for k, v in constant_dims(cap).items() if v > 1}, **bounded_dims(cap)}


def _baked_at(cap: Captured, consts: dict[tuple[int, int], int], other: Problem) -> Guard:
    """The dims of ``consts`` (``cap``'s fixed dims) that ``other``'s sizes move while the
    graph captured there differs in its ops or literals (all moved ones if it cannot be
    captured)."""
    with torch.device("meta"):
        ins = other.template_inputs(0)
    moved = tuple(sorted((i, d, s) for (i, d), s in consts.items()
                         if isinstance(ins[i], torch.Tensor) and ins[i].shape[d] != s))
    if not moved:  # constant dims tied to the constructor (a Linear's in_features)
        return ()
    return moved if _literals_move(cap, other) else ()


#: sizes ``baked_dims`` captures the program at, besides its own
BAKED_PROBES = 3


def _same_literals(a: fx.Graph, b: fx.Graph) -> bool:
    """Whether two captures run the same ops with the same Python constants."""
    na = [n for n in a.nodes if n.op == "call_function"]
    nb = [n for n in b.nodes if n.op == "call_function"]
    if [n.target for n in na] != [n.target for n in nb]:
        return False
    return all(list(_literals((x.args, x.kwargs))) == list(_literals((y.args, y.kwargs)))
               for x, y in zip(na, nb, strict=True))


def _literals(a: Any) -> Iterator[Any]:
    if isinstance(a, (list, tuple)):
        for x in a:
            yield from _literals(x)
    elif isinstance(a, dict):
        for k in sorted(a):
            yield k
            yield from _literals(a[k])
    elif isinstance(a, (bool, int, float)):
        yield a


def holds(guard: Guard, inputs: list[Any]) -> bool:
    """Whether ``inputs`` have the sizes ``guard`` was captured for."""
    return all(isinstance(inputs[i], torch.Tensor) and inputs[i].dim() > d
               and inputs[i].shape[d] == s for i, d, s in guard)


def guard_source(guard: Guard) -> str:
    """The emitted test of ``guard`` on a forward's ``args``."""
    return " and ".join(f"args[{i}].shape[{d}] == {s}" for i, d, s in guard) or "True"
