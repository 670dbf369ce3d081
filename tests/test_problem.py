"""Problem loading, bad problem files, the input sampler, reduced and perturbed sizes."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from kernelcraft.errors import InputError
from kernelcraft.problem import (
    DISTRIBUTIONS,
    INTERMEDIATE_SLACK,
    REDUCED_NUMEL,
    from_module,
    init_free_sizes,
    load_problem,
    perturbations,
    reduced,
)

GOOD = """
import torch, torch.nn as nn

class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden))
    def forward(self, x, p, idx):
        return torch.softmax(x, dim=-1) * self.weight + p.log().sum() + idx.float().mean()

batch, hidden, dim = 4096, 2048, 1
def get_inputs():
    return [torch.randn(batch, hidden), torch.rand(batch, 1) + 0.5,
            torch.randint(0, 10, (batch,))]
def get_init_inputs(): return [hidden]
"""


def test_load_and_sizes(write):
    p = load_problem(write("good.py", GOOD))
    assert p.name == "good"
    assert p.sizes == {"batch": 4096, "hidden": 2048}  # dim=1 is not a size
    assert p.init_inputs() == [2048]


def test_reduced_sizes_keep_problem_valid(write):
    p = load_problem(write("good.py", GOOD))
    small = reduced(p, budget=1 << 12)
    assert small.meta_numels()[0] <= 1 << 12
    assert set(small.sizes) == {"batch", "hidden"}
    model = small.make_model(small.init_inputs())
    out = model(*small.sample_inputs(0))
    assert out.shape == (small.sizes["batch"], small.sizes["hidden"])


CONSTANTS = """
import torch, torch.nn as nn

PRIME = (1 << 31) - 1
TABLE = 4096

class Model(nn.Module):
    def forward(self, x):
        return (x * 7919) % PRIME

N = 64
rows = 512
def _shape():
    return (rows, N, TABLE // 64)
def get_inputs():
    return [torch.randint(0, 1 << 20, _shape())]
"""


def test_upper_case_constants_are_sizes_only_where_the_inputs_read_them(write):
    # a modulus is no size; a one-letter N and a constant the inputs' helper reads are
    p = load_problem(write("consts.py", CONSTANTS))
    assert p.sizes == {"TABLE": 4096, "N": 64, "rows": 512}


PAIRWISE = """
import torch, torch.nn as nn

class Model(nn.Module):
    def forward(self, boxes):
        d = torch.cdist(boxes, boxes)  # [B, N, N] from [B, N, 4]
        return torch.exp(-d).sum(dim=-1)

batch, boxes = 16, 1024
def get_inputs():
    return [torch.rand(batch, boxes, 4)]
"""


def test_reduced_sizes_bound_a_large_intermediate_too(write):
    # inputs and outputs of 64K elements, but a 16M-element pairwise matrix in between
    p = load_problem(write("pairwise.py", PAIRWISE))
    small = reduced(p)
    n = small.sizes["batch"] * small.sizes["boxes"] ** 2
    assert n <= REDUCED_NUMEL * INTERMEDIATE_SLACK
    assert small.sizes["boxes"] < 512  # the inputs alone would have allowed 512


def test_perturbed_sizes_differ_and_free_sizes(write):
    p = reduced(load_problem(write("good.py", GOOD)), budget=1 << 12)
    others = list(perturbations(p))
    assert others and all(o.sizes != p.sizes for o in others)
    assert init_free_sizes(p) == ["batch"]  # hidden is a constructor argument
    blocks = load_problem(Path(__file__).parent / "cases" / "problems" / "block_sum_pos.py")
    # (height // 8) * (width // 8) sizes the constructor; one probe can miss it at 37 // 8
    assert init_free_sizes(blocks.with_sizes({"height": 32, "width": 32})) == ["batch"]
    only_batch = next(perturbations(p, ["batch"]))
    assert only_batch.sizes["hidden"] == p.sizes["hidden"]
    assert only_batch.sizes["batch"] != p.sizes["batch"]


@pytest.mark.parametrize("dist", DISTRIBUTIONS)
def test_sampler_keeps_domain_and_dtype(write, dist):
    p = reduced(load_problem(write("good.py", GOOD)), budget=1 << 12)
    x, prob, idx = p.sample_inputs(3, dist)
    assert x.dtype == torch.float32 and idx.dtype == torch.int64
    assert bool((prob > 0).all()), "non-negative inputs stay positive (log stays finite)"
    assert x.abs().max() > 0 and prob.abs().max() > 0
    assert int(idx.min()) >= 0 and int(idx.max()) < 10


def test_sampler_seeds_and_distributions_differ(write):
    p = reduced(load_problem(write("good.py", GOOD)), budget=1 << 12)
    a = p.sample_inputs(1, "normal")[0]
    b = p.sample_inputs(2, "normal")[0]
    c = p.sample_inputs(1, "uniform")[0]
    assert not torch.equal(a, b) and not torch.equal(a, c)
    assert torch.equal(a, p.sample_inputs(1, "normal")[0])  # reproducible
    assert float(c.abs().max()) <= 1.0


def test_zero_inputs_are_replaced(write):
    src = GOOD.replace("torch.randn(batch, hidden)", "torch.zeros(batch, hidden)")
    p = reduced(load_problem(write("z.py", src)), budget=1 << 12)
    assert p.sample_inputs(0, "problem")[0].abs().max() > 0


def test_from_module():
    p = from_module(torch.nn.Linear(8, 4), [torch.randn(3, 8)])
    m = p.make_model(p.init_inputs())
    assert m(*p.sample_inputs(0, "uniform")).shape == (3, 4)
    f = from_module(lambda x: x * 2, [torch.randn(5)], name="double")
    assert f.name == "double"


@pytest.mark.parametrize(
    "source, message",
    [
        ("def broken(:\n", "syntax error"),
        ("import torch\ndef get_inputs(): return []\n", "no `Model`"),
        ("import torch.nn as nn\nclass Model(nn.Module): pass\n", "no `get_inputs`"),
        ("raise RuntimeError('boom')\n", "error while importing: RuntimeError: boom"),
        (GOOD.replace("def get_inputs():\n", "def get_inputs():\n    raise ValueError('no')\n"),
         "get_inputs() raised ValueError: no"),
        (GOOD.replace("torch.randn(batch, hidden)",
                      "torch.randn(batch, hidden).to(torch.complex64)"),
         "unsupported dtype"),
    ],
)
def test_bad_problem_files(write, source, message):
    with pytest.raises(InputError, match=None) as info:
        load_problem(write("bad.py", source))
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_missing_file(tmp_path):
    with pytest.raises(InputError, match="not found"):
        load_problem(tmp_path / "nope.py")


def test_judge_workers_take_the_main_sizes_the_trial_plan_found(write) -> None:
    from dataclasses import replace

    from kernelcraft.measure.verify import VerifyOptions, main_problem, plan_trials

    problem = load_problem(write("big.py", """
        import torch, torch.nn as nn
        class Model(nn.Module):
            def forward(self, x): return x.softmax(-1)
        batch, dim = 512, 4096
        def get_inputs(): return [torch.randn(batch, dim)]
        def get_init_inputs(): return []
    """))
    opts = VerifyOptions(device="cpu")
    specs, _ = plan_trials(problem, opts)
    sizes = next(s.sizes for s in specs if s.main)
    assert sizes != problem.sizes  # reduced for the interpreter
    assert main_problem(problem, replace(opts, main_sizes=sizes)).sizes == sizes
    assert main_problem(problem, replace(opts, main_sizes=dict(problem.sizes))) is problem


def test_sizes_that_must_divide_are_divided_by_the_powers_of_two_they_hold(write) -> None:
    # graph ids assume graphs divides nodes: rounding both up (6250 nodes, 63 graphs) would
    # index past the last graph; each divided by the power of two it holds keeps it dividing
    problem = load_problem(write("graphs.py", """
        import torch, torch.nn as nn
        class Model(nn.Module):
            def __init__(self, graphs):
                super().__init__()
                self.graphs = graphs
            def forward(self, x, graph_id):
                return torch.zeros(self.graphs, x.shape[1]).index_add(0, graph_id, x)
        nodes, graphs, dim = 50000, 500, 64
        def get_inputs():
            return [torch.randn(nodes, dim), torch.arange(nodes) // (nodes // graphs)]
        def get_init_inputs(): return [graphs]
    """))
    small = reduced(problem)
    assert small.sizes["nodes"] < 50000 and small.sizes["nodes"] % small.sizes["graphs"] == 0
    # many nodes a graph, as in the program (the gentler fallback ended at 8 nodes of 8)
    assert small.sizes["nodes"] // small.sizes["graphs"] >= 8
    assert small.sizes["nodes"] * small.sizes["dim"] <= REDUCED_NUMEL


def test_a_size_a_constructor_argument_bounds_is_held_while_others_shrink(write) -> None:
    # top-k of 600 needs rows of at least 600: halving `length` stops the forward, so it
    # stays at 1024 while `batch` and `dim` shrink (the budget cannot be met: the least the
    # program takes)
    problem = load_problem(write("held.py", """
        import torch, torch.nn as nn
        class Model(nn.Module):
            def __init__(self, k):
                super().__init__()
                self.k = k
            def forward(self, x):
                return torch.topk(x.sum(-1), self.k, dim=-1).values
        batch, length, dim = 64, 1024, 256
        def get_inputs(): return [torch.randn(batch, length, dim)]
        def get_init_inputs(): return [600]
    """))
    small = reduced(problem)
    assert small.sizes["length"] == 1024
    assert small.sizes["batch"] < 64 and small.sizes["dim"] < 256
    # the judge reduces the main problem again for its new-instance trials: the least the
    # program takes is its own reduction
    assert reduced(small).sizes == small.sizes
