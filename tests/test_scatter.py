"""The scatter template: accumulating ``index_put`` (``index_add``, ``index_put_(...,
accumulate=True)``) and ``scatter_add`` as one kernel with the pointwise ops computing their
values, duplicates added atomically; the base copied, or handed over where nothing else
reads it; what the template cannot take stays in PyTorch."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import torch

from kernelcraft.capture import capture
from kernelcraft.generate import GenerateOptions, generate
from kernelcraft.plan import build_plan

GNN = """
import torch, torch.nn as nn

class Model(nn.Module):
    def forward(self, x, src, dst, w):
        msg = torch.relu(x[src] * w[:, None])
        out = torch.zeros_like(x).index_add_(0, dst, msg)
        deg = torch.zeros(x.shape[0], device=x.device).index_add_(0, dst, torch.ones_like(w))
        return out / deg.clamp(min=1.0)[:, None]

nodes, edges, dim = 40, 300, 24
def get_inputs():
    return [torch.randn(nodes, dim), torch.randint(0, nodes, (edges,)),
            torch.randint(0, nodes, (edges,)), torch.rand(edges)]
def get_init_inputs(): return []
"""

INPUT_BASE = """
import torch, torch.nn as nn

class Model(nn.Module):
    def forward(self, x, rows, cols, v, idx, u):
        # two index tensors (negative entries wrap), and index_add along dim 1; the base
        # is the program's input, which must stay unchanged
        a = x.index_put((rows, cols - x.shape[1]), v * 2.0, accumulate=True)
        return a, x.index_add(1, idx, u.sigmoid())

n, m, k = 30, 20, 500
def get_inputs():
    return [torch.randn(n, m), torch.randint(0, n, (k,)), torch.randint(0, m, (k,)),
            torch.randn(k), torch.randint(0, m, (50,)), torch.randn(n, 50)]
def get_init_inputs(): return []
"""

SEGMENT = """
import torch, torch.nn as nn

class Model(nn.Module):
    def forward(self, x, index):
        # src larger than its index: only src[:index.shape] is read
        base = torch.zeros(16, x.shape[1], device=x.device) + 1.0
        return base.scatter_add(0, index, x[:, :24].exp()), base

n, d = 70, 40
def get_inputs(): return [torch.randn(n, d), torch.randint(0, 16, (n, 24))]
def get_init_inputs(): return []
"""

SHARED = """
import torch, torch.nn as nn

class Model(nn.Module):
    def forward(self, x, idx):
        msg = torch.tanh(x)
        out = torch.zeros(10, x.shape[1], device=x.device).index_add(0, idx, msg)
        plain = torch.zeros(10, x.shape[1], device=x.device).index_put((idx,), msg)
        return out, msg.sum(0), plain

n, d = 60, 12
def get_inputs(): return [torch.randn(n, d), torch.randint(0, 10, (n,))]
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
counter = LaunchCounter()
launches = set()
for case in json.loads(sys.argv[2]):
    torch.manual_seed(0)
    inputs = eval(case)
    before = [t.clone() for t in inputs]
    before_count = counter.count
    with counter.active():
        out = module.ModelNew()(*inputs)
    launches.add(counter.count - before_count)
    ref = module.Model()(*inputs)
    torch.testing.assert_close(out, ref, rtol=1e-5, atol=1e-5)
    for a, b in zip(inputs, before):
        assert torch.equal(a, b), "an input changed"
print(json.dumps(sorted(launches)))
"""


def _runs(gen, cases):
    """The module against the problem on other inputs (Python expressions), under the
    interpreter in a process of its own; the kernel launches per forward seen."""
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run([sys.executable, "-c", _CHECK, str(gen.module_path),
                           json.dumps(cases)], capture_output=True, text=True, env=env,
                          timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def _kinds(gen):
    return sorted(g.kind for g in gen.plan.groups if g.kind not in ("glue",))


def test_gnn_aggregation_scatters_its_messages_in_one_kernel(write, tmp_path):
    gen = generate(write("gnn.py", GNN), _opts(tmp_path))
    assert gen.judge.correct, gen.judge.detail
    scatters = [g for g in gen.plan.groups if g.kind == "scatter"]
    assert len(scatters) == 2
    ops = sorted(g.describe() for g in scatters)
    assert ops == ["full_like, index_put", "index, mul, relu, index_put"], ops
    text = gen.module_path.read_text()
    assert text.count("tl.atomic_add(") == 2
    assert text.count("donate=True)") == 2  # the zero bases are fresh intermediates
    # duplicates, an empty edge list, a single node
    cases = ["[torch.randn(5, 3), torch.randint(0, 5, (64,)), torch.zeros(64, dtype=torch.int64),"
             " torch.rand(64)]",
             "[torch.randn(7, 9), torch.zeros(0, dtype=torch.int64),"
             " torch.zeros(0, dtype=torch.int64), torch.rand(0)]",
             "[torch.randn(1, 4), torch.zeros(3, dtype=torch.int64),"
             " torch.zeros(3, dtype=torch.int64), torch.rand(3)]"]
    assert max(_runs(gen, cases)) <= 5


def test_scatter_into_an_input_copies_it(write, tmp_path):
    gen = generate(write("inbase.py", INPUT_BASE), _opts(tmp_path))
    assert gen.judge.correct, gen.judge.detail
    ops = sorted(g.describe() for g in gen.plan.groups if g.kind == "scatter")
    assert ops == ["mul, index_put", "sigmoid, index_put"], ops
    text = gen.module_path.read_text()
    assert "donate=True" not in text  # the base is the caller's tensor
    cases = ["[torch.randn(3, 5), torch.randint(0, 3, (40,)), torch.randint(0, 5, (40,)),"
             " torch.randn(40), torch.randint(0, 5, (7,)), torch.randn(3, 7)]"]
    assert _runs(gen, cases) == {3}  # cols - m is a small kernel of its own


def test_scatter_add_reads_its_src_where_the_index_is(write, tmp_path):
    gen = generate(write("segment.py", SEGMENT), _opts(tmp_path))
    assert gen.judge.correct, gen.judge.detail
    assert "scatter" in _kinds(gen)
    # the base is also returned: copied, not handed over
    assert "donate=True" not in gen.module_path.read_text()


def test_values_read_elsewhere_and_plain_index_put(write, tmp_path):
    gen = generate(write("shared.py", SHARED), _opts(tmp_path))
    assert gen.judge.correct, gen.judge.detail
    kinds = [g.kind for g in gen.plan.groups if "index_put" in g.describe()]
    # the accumulating one is a scatter (its values are stored: the sum reads them too);
    # the plain one (one write wins among duplicates) stays in PyTorch
    assert sorted(kinds) == ["extern", "scatter"], kinds
    assert any(g.kind == "extern" and "one write wins" in g.reason for g in gen.plan.groups)


def test_plan_takes_float32_and_integer_accumulating_scatters():
    class M(torch.nn.Module):
        def forward(self, x, idx, h):
            a = torch.zeros(8, dtype=torch.int64).index_add(0, idx, x)
            b = h.index_add(0, idx, h[:idx.shape[0]] * 2)
            c = torch.zeros(8, dtype=torch.float16).index_add(0, idx, x.half())
            return a, b, c

    cap = capture(M(), (torch.randint(0, 5, (6,)), torch.randint(0, 8, (6,)),
                        torch.randn(8, 3)), "m")
    plan = build_plan(cap.gm)
    kinds = [(g.describe(), g.kind) for g in plan.groups if "index_put" in g.describe()]
    # int64 and float32 sums are atomics; float16 has no atomic add of its own here
    assert sorted(k for _, k in kinds) == ["extern", "scatter", "scatter"], kinds
    ext = [g.reason for g in plan.groups if g.kind == "extern" and "index_put" in g.reason]
    assert ext and "float32, int32 or int64" in ext[0], ext
    assert any(k == "scatter" and "mul" in ops for ops, k in kinds), kinds


RESIDUAL = """
import torch, torch.nn as nn

class Model(nn.Module):
    def forward(self, h, out, idx, gate):
        # x + zeros.index_add(...): the scatter adds into a copy of h; the second zero base
        # is also returned, so its sum stays a sum
        combined = torch.zeros_like(h).index_add_(0, idx, out * gate[:, None])
        z = torch.zeros_like(h)
        kept = z.index_add(0, idx, out)
        return h + combined, kept + h, z

t, d, r = 12, 16, 30
def get_inputs():
    return [torch.randn(t, d), torch.randn(r, d), torch.randint(0, t, (r,)), torch.rand(r)]
def get_init_inputs(): return []
"""


def test_a_residual_added_to_a_zero_based_scatter_is_its_base(write, tmp_path):
    gen = generate(write("residual.py", RESIDUAL), _opts(tmp_path))
    assert gen.judge.correct, gen.judge.detail
    kinds = [(g.kind, g.describe()) for g in gen.plan.groups if g.kind not in ("glue",)]
    # the first add is folded (no fill, no add pass); the second zero base is returned too,
    # so it is filled, scattered into (a copy) and added as written
    assert sorted(kinds) == [("pointwise", "add"), ("pointwise", "full_like"),
                             ("scatter", "index_put"), ("scatter", "mul, index_put")], kinds
    text = gen.module_path.read_text()
    assert "donate=True" not in text  # h is the caller's, z is returned
    cases = ["[torch.randn(3, 5), torch.randn(9, 5), torch.randint(0, 3, (9,)), torch.rand(9)]"]
    assert _runs(gen, cases) == {4}


REDUCE = """
import torch, torch.nn as nn

class Model(nn.Module):
    def forward(self, x, src, dst, h, idx):
        # max aggregation of transformed neighbours (isolated nodes keep 0), a min into an
        # input that includes it, a sum without the base, a number written where idx
        # points (several rows per column: not one index per line), and a mean and a
        # product, which no atomic takes
        msg = torch.relu(x[src] * 2.0 - 0.5)
        index = dst.unsqueeze(1).expand_as(msg)
        agg = torch.zeros(x.shape[0], x.shape[1], device=x.device)
        mx = agg.scatter_reduce(0, index, msg, reduce="amax", include_self=False)
        y = h.tanh()
        mn = h.scatter_reduce(0, index, -y[src], reduce="amin")
        sm = h.scatter_reduce(0, index, y[src].exp(), reduce="sum", include_self=False)
        st = h.scatter(0, idx, 2.5)
        mean = h.scatter_reduce(0, index, y[src], reduce="mean", include_self=False)
        prod = h.scatter_reduce(0, index, y[src], reduce="prod")
        return mx, mn, sm, st, mean, prod

nodes, edges, dim = 30, 200, 12
def get_inputs():
    return [torch.randn(nodes, dim), torch.randint(0, nodes, (edges,)),
            torch.randint(0, nodes, (edges,)), torch.randn(nodes, dim),
            torch.randint(0, nodes, (5, dim))]
def get_init_inputs(): return []
"""


def test_scatter_reduce_max_min_sum_and_a_scattered_number(write, tmp_path):
    gen = generate(write("reduce.py", REDUCE), _opts(tmp_path))
    assert gen.judge.correct, gen.judge.detail
    groups = [(g.kind, g.describe()) for g in gen.plan.groups if g.kind != "glue"]
    scatters = sorted(ops for kind, ops in groups if kind == "scatter")
    # include_self=False: the identity scattered first, then the reduction (its messages'
    # gather and ops in the same kernel); the scattered number is a kernel of its own
    assert scatters.count("scatter") == 3, scatters
    assert "index, mul, sub, relu, scatter_reduce" in scatters, scatters
    assert sum(ops.endswith("scatter_reduce") for ops in scatters) == 3, scatters
    ext = [g.reason for g in gen.plan.groups if g.kind == "extern"]
    assert sum("scatter_reduce" in r and "mean" in r for r in ext) == 2, ext  # mean, prod
    text = gen.module_path.read_text()
    assert text.count("tl.atomic_max(") == 1 and text.count("tl.atomic_min(") == 1
    # duplicates, negative and -inf messages, an empty edge list
    cases = ["[torch.randn(4, 3), torch.randint(0, 4, (50,)), torch.zeros(50, dtype=torch.int64),"
             " torch.randn(4, 3), torch.randint(0, 4, (9, 3))]",
             "[torch.full((3, 2), -10.0), torch.randint(0, 3, (6,)), torch.randint(0, 3, (6,)),"
             " torch.randn(3, 2), torch.randint(0, 3, (1, 2))]",
             "[torch.randn(5, 4), torch.zeros(0, dtype=torch.int64),"
             " torch.zeros(0, dtype=torch.int64), torch.randn(5, 4),"
             " torch.zeros(0, 4, dtype=torch.int64)]"]
    _runs(gen, cases)


INT_SCATTERS = """
import torch, torch.nn as nn

class Model(nn.Module):
    def forward(self, pix, seg, val):
        # a histogram of int64 counts, an int32 sum by segment, an int64 maximum by segment
        hist = torch.zeros(pix.shape[0], 256, dtype=torch.int64, device=pix.device)
        hist = hist.scatter_add(1, pix, torch.ones_like(pix))
        sums = torch.zeros(8, dtype=torch.int32, device=pix.device).index_add(0, seg, val)
        big = val.long() * 3_000_000_000
        top = torch.full((8,), -2**62, dtype=torch.int64, device=pix.device)
        top = top.scatter_reduce(0, seg, big, "amax")
        return hist, sums, top

def get_inputs():
    return [torch.randint(0, 256, (4, 3000)), torch.randint(0, 8, (500,)),
            torch.randint(-1000, 1000, (500,), dtype=torch.int32)]
def get_init_inputs(): return []
"""


def test_integer_scatters_are_exact_atomics(write, tmp_path):
    """Histograms and integer sums or maxima by index are scatter kernels with integer
    atomics (exact, in any order), not PyTorch."""
    gen = generate(write("intscat.py", INT_SCATTERS), _opts(tmp_path))
    assert gen.judge.correct, gen.judge.detail
    assert not gen.extern_reasons or all("full" in r for r in gen.extern_reasons.values()), (
        gen.extern_reasons)
    assert len([g for g in gen.plan.groups if g.kind == "scatter"]) == 3
    text = gen.module_path.read_text()
    assert text.count("tl.atomic_add(") == 2 and text.count("tl.atomic_max(") == 1
    from dataclasses import replace

    built = generate(write("intscat.py", INT_SCATTERS), replace(
        _opts(tmp_path), targets="sm_90,gfx942", judge=False, build=True))
    scat = [b for b in built.builds if "scatter" in b["kernel"]]
    assert len(scat) == 6 and all(b["ok"] and b["spills"] == 0 for b in scat), built.builds
