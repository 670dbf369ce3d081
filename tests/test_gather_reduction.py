"""Gathers inside reduction kernels: a rolled or flipped map normalised in the same pass,
embedding rows summed and layer-normed in one kernel, gathers along the reduced dim, and
the rewrites that turn ``flip`` and a gather of a gather into one gather."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import torch

from kernelcraft.capture import capture
from kernelcraft.codegen.ops import op_name
from kernelcraft.generate import GenerateOptions, generate
from kernelcraft.rewrite import flip_gathers, merge_gathers

SWIN = """
import torch, torch.nn as nn

class Model(nn.Module):
    def __init__(self, dim, shift):
        super().__init__()
        self.shift = shift
        self.norm = nn.LayerNorm(dim)
    def forward(self, x):
        shifted = torch.roll(x, shifts=(-self.shift, self.shift), dims=(1, 2))
        return self.norm(shifted) + x.flip(2)

b, h, w, c = 2, 5, 7, 24
def get_inputs(): return [torch.randn(b, h, w, c)]
def get_init_inputs(): return [c, 3]
"""

EMBED = """
import torch, torch.nn as nn

class Model(nn.Module):
    def __init__(self, vocab, positions, hidden):
        super().__init__()
        self.words = nn.Embedding(vocab, hidden)
        self.pos = nn.Embedding(positions, hidden)
        self.types = nn.Embedding(2, hidden)
        self.norm = nn.LayerNorm(hidden)
        self.register_buffer("position_ids", torch.arange(positions)[None])
    def forward(self, ids, types):
        where = self.position_ids[:, :ids.shape[1]]
        e = self.words(ids) + self.types(types) + self.pos(where)
        return self.norm(e)

batch, seq, vocab, hidden = 3, 10, 50, 32
def get_inputs():
    return [torch.randint(0, vocab, (batch, seq)), torch.randint(0, 2, (batch, seq))]
def get_init_inputs(): return [vocab, 16, hidden]
"""

ALONG = """
import torch, torch.nn as nn

class Model(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.register_buffer("perm", torch.randperm(n) - n * (torch.arange(n) % 2))
    def forward(self, x):
        # a permutation (half its entries negative) and a roll of the reduced dim
        return torch.softmax(x[:, self.perm], -1) + torch.roll(x, 5, -1).amax(-1, keepdim=True)

rows, n = 6, 40
def get_inputs(): return [torch.randn(rows, n)]
def get_init_inputs(): return [n]
"""

TAKE = """
import torch, torch.nn as nn

class Model(nn.Module):
    def forward(self, x, idx):
        return torch.gather(x, 1, idx).sum(-1)

rows, n, k = 9, 30, 12
def get_inputs(): return [torch.randn(rows, n), torch.randint(0, n, (rows, k))]
def get_init_inputs(): return []
"""

FLIPS = """
import torch, torch.nn as nn

class Model(nn.Module):
    def forward(self, x, y):
        return x.flip(0, 2) * 2 + y.flip(-1).flip(-2)

def get_inputs(): return [torch.randn(3, 4, 5), torch.randn(3, 4, 5)]
def get_init_inputs(): return []
"""


def _opts(tmp_path):
    return GenerateOptions(out_dir=tmp_path / "out", targets="sm_90", device="cpu",
                           build=False)


_CHECK = """
import json, sys, torch
from pathlib import Path
from kernelcraft.measure.instrument import LaunchCounter
from kernelcraft.problem import load_module

module = load_module(Path(sys.argv[1]), "generated")
init = json.loads(sys.argv[2])
counter = LaunchCounter()
launches = set()
for case in json.loads(sys.argv[3]):
    torch.manual_seed(0)
    inputs = eval(case)
    ref = module.Model(*init)
    model = module.ModelNew(*init)
    model.load_state_dict(ref.state_dict())
    before = counter.count
    with counter.active():
        out = model(*inputs)
    launches.add(counter.count - before)
    torch.testing.assert_close(out, ref(*inputs), rtol=1e-5, atol=1e-5)
print(json.dumps(sorted(launches)))
"""


def _runs(gen, init, cases):
    """The module against the problem on other inputs (Python expressions), under the
    interpreter in a process of its own; the kernel launches per forward seen."""
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run([sys.executable, "-c", _CHECK, str(gen.module_path),
                           json.dumps(init), json.dumps(cases)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def test_rolled_and_flipped_map_normalised_in_one_kernel(write, tmp_path):
    gen = generate(write("swin.py", SWIN), _opts(tmp_path))
    assert gen.judge.correct, gen.judge.detail
    kinds = [k.config.get("template") for k in gen.kernels.values()]
    assert kinds == ["row"], kinds
    launches = _runs(gen, [24, 3], [f"[torch.randn({b}, {h}, {w}, 24)]"
                                    for b, h, w in ((1, 1, 1), (2, 9, 4), (1, 3, 6))])
    assert launches == {1}


def test_embedding_sum_and_layernorm_in_one_kernel(write, tmp_path):
    gen = generate(write("embed.py", EMBED), _opts(tmp_path))
    assert gen.judge.correct, gen.judge.detail
    assert [k.config.get("template") for k in gen.kernels.values()] == ["row"]
    text = gen.module_path.read_text()
    assert "_RV: tl.constexpr" in text  # the token ids: loaded once per row

    cases = [f"[torch.randint(0, 50, ({b}, {s})), torch.randint(0, 2, ({b}, {s}))]"
             for b, s in ((1, 1), (4, 16))]
    assert _runs(gen, [50, 16, 32], cases) == {1}


def test_gathers_along_the_reduced_dim(write, tmp_path):
    """Index views that vary along the reduced dims are read per element (negative
    entries wrap), computed positions too."""
    gen = generate(write("along.py", ALONG), _opts(tmp_path))
    assert gen.judge.correct, gen.judge.detail
    # the two reductions read different gathers of x: two kernels
    assert [k.config.get("template") for k in gen.kernels.values()] == ["row", "row"]
    assert _runs(gen, [40], ["[torch.randn(1, 40)]", "[torch.randn(33, 40)]"]) == {2}


def test_take_along_dim_then_sum(write, tmp_path):
    gen = generate(write("take.py", TAKE), _opts(tmp_path))
    assert gen.judge.correct, gen.judge.detail
    assert [k.config.get("template") for k in gen.kernels.values()] == ["row"]

    cases = [f"[torch.randn({r}, {n}), torch.randint(0, {n}, ({r}, {k}))]"
             for r, n, k in ((1, 1, 1), (4, 50, 33))]
    assert _runs(gen, [], cases) == {1}


def test_flips_become_gathers(write, tmp_path):
    gen = generate(write("flips.py", FLIPS), _opts(tmp_path))
    assert gen.judge.correct, gen.judge.detail
    assert "flip" not in " ".join(r for k in gen.kernels.values() for r in k.config)
    assert not any(g.kind == "extern" for g in gen.plan.groups)


def _decomposed(model, *inputs):
    """The exported, decomposed graph of ``model`` (runnable on real tensors)."""
    cap = capture(model, list(inputs))
    return cap.gm, [p for _, p in model.named_parameters()]


def test_rewrites_leave_one_gather_and_are_exact():
    class Roll(torch.nn.Module):
        def forward(self, x):
            return torch.roll(x, (2, -3), (1, 2)) * x.flip(2)

    x = torch.randn(2, 5, 7, 3)
    gm, _ = _decomposed(Roll(), x)
    assert flip_gathers(gm) == 1
    assert merge_gathers(gm) == 1
    names = [op_name(n.target) for n in gm.graph.nodes if n.op == "call_function"]
    assert "flip" not in names
    assert names.count("index") == 2  # the roll over two dims, the flip
    torch.testing.assert_close(gm(x)[0], Roll()(x))


@pytest.mark.parametrize("dims", [(0,), (1, 2), (0, 2), (-1,)])
def test_flip_rewrite_is_exact(dims):
    class M(torch.nn.Module):
        def forward(self, x):
            return x.flip(dims) + 1

    x = torch.randn(3, 4, 5)
    gm, _ = _decomposed(M(), x)
    assert flip_gathers(gm) == 1
    assert not any(op_name(n.target) == "flip" for n in gm.graph.nodes
                   if n.op == "call_function")
    torch.testing.assert_close(gm(x)[0], M()(x))


LONG = """
import torch, torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, -1)

def get_inputs(): return [torch.randn(4, 100000)]
def get_init_inputs(): return []
"""


@pytest.mark.parametrize(("src", "idx64"), [(SWIN, False), (LONG, True)])
def test_int32_index_math_for_resident_rows(write, tmp_path, src, idx64):
    """Rows kept in one chunk index in int32; rows walked in chunks keep int64 (slower in
    int32 on the H200)."""
    from kernelcraft import launches
    from kernelcraft.problem import load_problem
    from kernelcraft.target import resolve

    path = write("p.py", src)
    gen = generate(path, GenerateOptions(out_dir=tmp_path / "out", targets="sm_90",
                                         device="cpu", build=False, judge=False))
    from kernelcraft.build import _import

    specs = launches.record(_import(str(gen.module_path)), load_problem(path),
                            resolve("sm_90"))
    rows = [s for s in specs if "reduction" in s["name"]]
    assert rows and all(s["constexprs"]["IDX64"] is idx64 for s in rows), rows


WIDE = """
import torch, torch.nn as nn

class Model(nn.Module):
    def __init__(self, vocab, hidden):
        super().__init__()
        self.embed = nn.Embedding(vocab, hidden)
        self.norm = nn.LayerNorm(hidden)
    def forward(self, ids):
        return self.norm(self.embed(ids)) * 2

def get_inputs(): return [torch.randint(0, 10, (1, 3))]
def get_init_inputs(): return [10, 5000]
"""


def test_gathers_in_looped_and_split_rows(write, tmp_path):
    """Rows longer than the interpreter's chunk (looped passes) and too few to fill the
    machine (R split over programs, a kernel per pass): the gathers' views in every pass."""
    gen = generate(write("wide.py", WIDE), _opts(tmp_path))
    assert gen.judge.correct, gen.judge.detail
    assert [k.config.get("template") for k in gen.kernels.values()] == ["row"]
    text = gen.module_path.read_text()
    assert "_s1(" in text  # split passes exist
    # one pass, its combine, the storing pass: nothing but the one group's kernels
    assert _runs(gen, [10, 5000], ["[torch.randint(0, 10, (1, 1))]",
                                   "[torch.randint(0, 10, (2, 7))]"]) == {3}


TABLE = """
import torch, torch.nn as nn

class Model(nn.Module):
    def forward(self, table, ids):
        return table[ids] * 2

def get_inputs(): return [torch.randn(64, 16), torch.randint(0, 64, (5,))]
def get_init_inputs(): return []
"""


def test_a_huge_gather_source_takes_int64_offsets(write, tmp_path):
    """Index math is int32 only where no offset can pass 2**31: a gather's source counts
    whole (its view over the domain has stride 0 on the gathered dims)."""
    from kernelcraft.build import _import

    gen = generate(write("table.py", TABLE), GenerateOptions(
        out_dir=tmp_path / "out", targets="sm_90", device="cpu", build=False, judge=False))
    module = _import(str(gen.module_path))
    (plan,) = [getattr(module, n) for n in dir(module) if n.endswith("pointwise_plan")]
    ids = torch.zeros(5, dtype=torch.int64, device="meta")
    # the plan's arguments: the index tensor, then the gather's source
    small = plan(ids, torch.empty(64, 16, device="meta"))
    huge = plan(ids, torch.empty(2**21, 1024, device="meta"))
    assert small[3]["IDX64"] is False and huge[3]["IDX64"] is True


POSITION_READ_TWICE = """
import torch, torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        n = x.shape[1]
        p = (torch.arange(n, device=x.device) + 3) % n
        return (x[:, p] * p).sum(-1)

def get_inputs(): return [torch.randn(6, 40)]
def get_init_inputs(): return []
"""


def test_an_index_also_read_elementwise_stays_a_tensor(write, tmp_path):
    """A reduction kernel computes a gather's index from its position only where nothing
    else in it reads the index (it would have to be computed per element); otherwise the
    index is a small kernel of its own and the reduction still runs as a kernel."""
    gen = generate(write("twice.py", POSITION_READ_TWICE), _opts(tmp_path))
    assert gen.judge.correct, gen.judge.detail
    assert not any(g.kind == "extern" for g in gen.plan.groups)
    assert sorted(k.config.get("template") or "" for k in gen.kernels.values()) == ["", "row"]


ROW_GATHERS = {
    # cross entropy with ignored targets: the logit at the target beside the row's
    # log-sum-exp, its index from outside the row kernel
    "ce": ("""
import torch, torch.nn as nn, torch.nn.functional as F

class Model(nn.Module):
    def forward(self, x, t):
        return F.cross_entropy(x, t, ignore_index=-100, reduction="none")

def get_inputs():
    t = torch.randint(0, 37, (11,))
    t[::4] = -100
    return [torch.randn(11, 37), t]
def get_init_inputs(): return []
""", ["[torch.randn(1, 5), torch.tensor([3])]",
      "[torch.randn(70, 300), torch.randint(0, 300, (70,))]"]),
    # the index computed in the kernel: each row's maximum picked back by its argmax
    "argmax": ("""
import torch, torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return x.gather(1, x.argmax(1, keepdim=True)) - x.logsumexp(1, keepdim=True)

def get_inputs(): return [torch.randn(9, 40)]
def get_init_inputs(): return []
""", ["[torch.randn(1, 1)]", "[torch.randn(33, 700)]"]),
    # one value per column (the reduced dim first), and a middle reduced dim
    "columns": ("""
import torch, torch.nn as nn

class Model(nn.Module):
    def forward(self, x, i, y, j):
        a = x.gather(0, i) / x.abs().sum(0, keepdim=True)
        b = y.gather(1, j) - y.amax(1, keepdim=True)
        return a, b

def get_inputs():
    return [torch.randn(13, 6), torch.randint(0, 13, (1, 6)), torch.randn(2, 7, 5),
            torch.randint(0, 7, (2, 1, 5))]
def get_init_inputs(): return []
""", ["[torch.randn(40, 3), torch.randint(0, 40, (1, 3)), torch.randn(3, 90, 4), "
      "torch.randint(0, 90, (3, 1, 4))]"]),
}


@pytest.mark.parametrize("name", sorted(ROW_GATHERS))
def test_row_gather_in_the_reduction_kernel(write, tmp_path, name):
    """``aten.gather`` of one value per row joins the row's reduction kernel: no pointwise
    kernel reads the gathered value back, on other sizes too."""
    text, cases = ROW_GATHERS[name]
    gen = generate(write(f"{name}.py", text), _opts(tmp_path))
    assert gen.judge.correct, gen.judge.detail
    gathers = [g for g in gen.plan.groups if any(op_name(n.target) == "gather" for n in g.nodes)]
    assert gathers and all(g.kind == "reduction" for g in gathers), gen.plan.groups
    kernels = len(gen.kernels)
    assert _runs(gen, [], cases) == {kernels}
