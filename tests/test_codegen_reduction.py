"""The reduction ("row") template: generated modules judged correct under the interpreter.

Each problem is generated end to end (capture, plan, codegen, export) and judged on fresh
inputs, at reduced and at other sizes; the reduction groups must become kernels.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from kernelcraft.generate import GenerateOptions, generate

SOFTMAX_DIM1_3D = """
    import torch, torch.nn as nn

    class Model(nn.Module):
        def forward(self, x):
            return torch.softmax(x, dim=1)

    batch, classes, positions = 4, 37, 24
    def get_inputs(): return [torch.randn(batch, classes, positions)]
    def get_init_inputs(): return []
"""

BATCHNORM_STYLE = """
    import torch, torch.nn as nn

    class Model(nn.Module):
        def __init__(self, channels):
            super().__init__()
            self.weight = nn.Parameter(torch.randn(channels))
            self.bias = nn.Parameter(torch.randn(channels))
        def forward(self, x):
            mean = x.mean((0, 2, 3), keepdim=True)
            var = ((x - mean) ** 2).mean((0, 2, 3), keepdim=True)
            y = (x - mean) * torch.rsqrt(var + 1e-5)
            return y * self.weight.view(1, -1, 1, 1) + self.bias.view(1, -1, 1, 1)

    batch, channels, height, width = 3, 8, 17, 16
    def get_inputs(): return [torch.randn(batch, channels, height, width)]
    def get_init_inputs(): return [channels]
"""

GROUPNORM_ALIGNED = """
    import torch, torch.nn as nn

    class Model(nn.Module):
        def __init__(self, channels):
            super().__init__()
            self.norm = nn.GroupNorm(2, channels)
            self.bn = nn.BatchNorm2d(channels)
        def forward(self, x):
            # R = (channels of a group, positions) and (batch, positions): two reduced dims
            # whose inner extent (4096) is a multiple of the chunk, so only chunk starts
            # are divided into indices
            return self.norm(x), self.bn(x)

    batch, channels, height, width = 3, 4, 64, 64
    def get_inputs(): return [torch.randn(batch, channels, height, width) * 2 + 3]
    def get_init_inputs(): return [channels]
"""

ARGMAX_AMIN = """
    import torch, torch.nn as nn

    class Model(nn.Module):
        def forward(self, x):
            # argmin/amin over 4500 rows of 5 columns: R split over several programs
            return torch.argmax(x, dim=1), torch.argmin(x, dim=0), torch.amin(x, dim=0)

    rows, cols = 4500, 5
    def get_inputs(): return [torch.randn(rows, cols)]
    def get_init_inputs(): return []
"""

MSE_SUM = """
    import torch, torch.nn as nn

    class Model(nn.Module):
        def forward(self, pred, target):
            return ((pred - target) ** 2).sum() * 0.5

    batch, features = 96, 257  # R = 24672: partial sums from several programs, then combined
    def get_inputs(): return [torch.randn(batch, features), torch.randn(batch, features)]
    def get_init_inputs(): return []
"""

PRODUCTS = """
    import torch, torch.nn as nn

    class Model(nn.Module):
        def forward(self, x, y):
            # per row, over dim 0 with keepdim, of a whole tensor (split, then combined)
            return torch.prod(x, dim=1), torch.prod(x * 1.01, dim=0, keepdim=True), \\
                torch.prod(y)

    def get_inputs():
        return [torch.rand(6, 32, 48) + 0.5, torch.rand(30, 40) * 0.1 + 0.97]
    def get_init_inputs(): return []
"""

COUNTS = """
    import torch, torch.nn as nn

    class Model(nn.Module):
        def forward(self, p, t, idx):
            # sums of booleans and integers are int64 counts, exact past 2**24
            return ((p.argmax(1) == t).sum(), (p > 0).sum(1), idx.sum(0),
                    (idx % 3 == 0).sum())

    def get_inputs():
        return [torch.randn(300, 50), torch.randint(0, 50, (300,)),
                torch.randint(-1000, 1000, (300, 7))]
    def get_init_inputs(): return []
"""


PAIRED_ROWS = """
    import torch, torch.nn as nn
    import torch.nn.functional as F

    class Model(nn.Module):
        def forward(self, a, b, c):
            # independent row reductions of different tensors that a later op combines:
            # cosine similarity's two norms, a Pearson correlation, a ratio of row sums
            cos = F.cosine_similarity(a, b, dim=1)
            am, bm = a - a.mean(-1, keepdim=True), b - b.mean(-1, keepdim=True)
            r = (am * bm).sum(-1) / (am.norm(dim=-1) * bm.norm(dim=-1) + 1e-6)
            return cos, r, a.exp().sum(-1) / c.abs().sum(-1)

    def get_inputs(): return [torch.randn(37, 300), torch.randn(37, 300), torch.randn(37, 300)]
    def get_init_inputs(): return []
"""


MASKED_ROW_VECTORS = """
    import torch, torch.nn as nn

    class Model(nn.Module):
        def forward(self, rel, gate, keep):
            # EGNN's coordinate update: [B, N, N, 3] messages summed over neighbours, then
            # masked by a [B, N, 1] float cast of the atom mask (a broadcast of the row's
            # [B, N, 3] result, computed in the reduction's kernel)
            upd = (rel * gate).sum(dim=2) / 7.0
            return upd * keep.unsqueeze(-1).float()

    def get_inputs():
        return [torch.randn(3, 20, 20, 3), torch.randn(3, 20, 20, 1),
                torch.rand(3, 20) > 0.3]
    def get_init_inputs(): return []
"""


INT_ARG = """
    import torch, torch.nn as nn

    class Model(nn.Module):
        def forward(self, x, lab):
            # integer inputs the fp32 lanes hold exactly: an int32 mask (values 0 and 1),
            # uint8, int8, and an int64 clamped to [0, 9]; ties pick the first index
            first = (x < 0.1).int().argmax(-1)
            hit = (x > 0.97).to(torch.uint8).argmax(-1)
            small = (x * 10).to(torch.int8).amin(-1)
            return first, hit, small, torch.clamp(lab, 0, 9).amax(-1)

    def get_inputs(): return [torch.rand(64, 300), torch.randint(-5, 20, (64, 300))]
    def get_init_inputs(): return []
"""


def _interpret(check: str, *args: object) -> str:
    """``check`` run with ``args`` in a fresh interpreter under Triton's interpreter (kernels
    launch under it only when it is on before triton is imported); its stdout."""
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    run = subprocess.run([sys.executable, "-c", check, *map(str, args)], env=env,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stdout.strip()


def _generate(write, tmp_path: Path, name: str, source: str, judge: bool = True):
    """Generated without cross-compiling; judged on the CPU unless ``judge`` is off (a
    test of its own checks the module against float64 references where the judge would run
    its interpreted trials at the problem's full sizes, minutes of interpreted reductions)."""
    path = write(f"{name}.py", source)
    gen = generate(path, GenerateOptions(out_dir=tmp_path / "out", device="cpu",
                                         build=False, judge=judge))
    kinds = [g.kind for g in gen.plan.groups if g.kind not in ("glue", "pointwise")]
    return gen, kinds


@pytest.mark.parametrize(
    "name, source, n_reductions",
    [
        ("softmax_dim1_3d", SOFTMAX_DIM1_3D, 1),
        ("batchnorm_style", BATCHNORM_STYLE, 1),
        ("groupnorm_aligned", GROUPNORM_ALIGNED, 2),
        ("argmax_amin", ARGMAX_AMIN, 2),  # argmin and amin over dim 0 share a kernel
        ("mse_sum", MSE_SUM, 1),
        ("products", PRODUCTS, 3),
        # argmax(1) and (p > 0).sum(1) read the same rows: one kernel; the eq, then the count
        # of its hits; idx.sum(0); the count of idx % 3 == 0
        ("counts", COUNTS, 4),
        # every row reduction of a and b in one pass (their normalised copies never written
        # out); c's rows have sizes of their own (other symbols in the capture): a second
        ("paired_rows", PAIRED_ROWS, 2),
        ("masked_row_vectors", MASKED_ROW_VECTORS, 1),
        ("int_arg", INT_ARG, 2),
    ],
)
def test_reduction_judged_correct(write, tmp_path: Path, name: str, source: str,
                                  n_reductions: int) -> None:
    gen, kinds = _generate(write, tmp_path, name, source)
    assert kinds == ["reduction"] * n_reductions, gen.extern_reasons
    assert gen.judge.correct, (gen.judge.reason, gen.judge.detail)
    text = gen.module_path.read_text()
    assert "ONE_CHUNK" in text and "_kc_row_config" in text
    if name in ("argmax_amin", "mse_sum", "products", "counts"):
        assert "_combine[" in text


def test_config_is_reported(write) -> None:
    import torch

    from kernelcraft.capture import capture
    from kernelcraft.codegen.reduction import emit_reduction
    from kernelcraft.plan import build_plan
    from kernelcraft.problem import load_problem
    from kernelcraft.target import resolve

    problem = load_problem(write("softmax.py", SOFTMAX_DIM1_3D))
    with torch.device("meta"):
        model = problem.make_model(problem.init_inputs(0), 0)
        inputs = problem.template_inputs(0)
    plan = build_plan(capture(model, inputs, problem.name).gm)
    (group,) = [g for g in plan.groups if g.kind == "reduction"]
    ks = emit_reduction(group, resolve("sm_90"))
    # short rows: the max, the sum, then the store
    assert ks.config["template"] == "row" and ks.config["passes"] == 3
    at = ks.config["at_capture_sizes"]
    assert at["K"] == 4 * 24 and at["R"] == 37 and at["one_chunk"]


ONLINE_PAIRS = """
    import torch, torch.nn as nn

    class Model(nn.Module):
        def forward(self, y, z):
            # rows longer than one chunk, few of them: the sum of exp and the squared
            # deviations are folded into the pass of their max and mean, then R is split
            return (torch.logsumexp(y, dim=-1), torch.std(z, dim=1),
                    torch.var(y, dim=1, keepdim=True), torch.softmax(y, dim=1))

    def get_inputs(): return [torch.randn(6, 40000) * 4, torch.randn(3, 5000, 7) + 1000]
    def get_init_inputs(): return []
"""


def test_online_pairs_fold_a_pass(write, tmp_path: Path) -> None:
    """sum(exp(x - max)) and sum((x - mean)**2) share their partner's pass, exactly.

    Checked on long rows (looped and split over R, one-pass and two-pass groups) with
    infinities, NaN and a large offset, where a naive one-pass variance (sum of squares)
    would cancel.
    """
    gen, kinds = _generate(write, tmp_path, "online_pairs", ONLINE_PAIRS, judge=False)
    text = gen.module_path.read_text()
    assert "_combine[" in text  # one-pass groups split over R
    assert "_s2[" in text and "_c1[" in text  # two passes over few rows: each split
    assert "# pass 2: sum" not in text and "# pass 3" not in text
    assert _interpret(ONLINE_CHECK, gen.module_path) == "4 outputs match"


#: a subprocess check of a generated module (argv[1]): loaded, then (after the inputs and
#: references) its outputs against float64 references, NaN and infinities where they are
_LOAD_KERNEL = """
import importlib.util, sys
import torch
spec = importlib.util.spec_from_file_location("kernel", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
torch.manual_seed(0)
"""
_OUTPUTS_MATCH = """
for o, r in zip(outs, refs, strict=True):
    r = r.float()
    assert torch.equal(torch.isnan(o), torch.isnan(r))
    inf = torch.isinf(r)
    assert torch.equal(o[inf], r[inf])
    fin = torch.isfinite(r)
    torch.testing.assert_close(o[fin], r[fin], rtol=2e-5, atol=1e-6)
print(len(outs), "outputs match")
"""

ONLINE_CHECK = _LOAD_KERNEL + """
y, z = torch.randn(6, 40000) * 4, torch.randn(3, 5000, 7) + 1000
y[0, 5] = float("inf")
y[1] = float("-inf")
y[2, 7] = float("nan")
y[4, 30000:] = 1e4
z[1] = z[1] * 1e-3 + 5e4  # offset 5e4, spread 1e-3: sums of squares would lose every digit
outs = mod.ModelNew()(y, z)
refs = (torch.logsumexp(y.double(), -1), torch.std(z.double(), 1),
        torch.var(y.double(), 1, keepdim=True), torch.softmax(y.double(), 1))
""" + _OUTPUTS_MATCH


LOOPED_ONLINE = """
    import torch, torch.nn as nn
    import torch.nn.functional as F

    class Model(nn.Module):
        def forward(self, y):
            # rows longer than a chunk, enough of them that R is not split: each lane's
            # running maximum shifts its sum of exp as the chunks go by
            target = torch.zeros(y.shape[0], dtype=torch.long, device=y.device)
            return (torch.logsumexp(y, dim=-1), torch.softmax(y, dim=1),
                    F.cross_entropy(y, target))

    def get_inputs(): return [torch.randn(16, 20000) * 4]
    def get_init_inputs(): return []
"""


def test_online_softmax_over_looped_rows(write, tmp_path: Path) -> None:
    """The online sum over chunks of rows that are not split (each lane its running maximum
    and its sum, plain maximum and minimum per element), exact with infinities, NaN, rows of
    -inf, tiny and large values."""
    gen, _ = _generate(write, tmp_path, "looped_online", LOOPED_ONLINE, judge=False)
    text = gen.module_path.read_text()
    assert "rm_sum" in text and "tl.maximum(rm_sum" in text
    assert _interpret(LOOPED_CHECK, gen.module_path) == "3 outputs match"


LOOPED_CHECK = _LOAD_KERNEL + """
import torch.nn.functional as F
y = torch.randn(16, 20000) * 4
y[0, 5] = float("inf")
y[1] = float("-inf")
y[2, 7] = float("nan")
y[4, 9000:] = 1e4  # the maximum jumps in a late chunk
y[5, 19000:] = float("-inf")
y[6, :100] = -1e30
y[7] = -1e4
y[7, 15000] = 3.0
y[8, 19999] = float("inf")  # in the last, partial chunk
outs = mod.ModelNew()(y)
yd = y.double()
target = torch.zeros(16, dtype=torch.long)
refs = (torch.logsumexp(yd, -1), torch.softmax(yd, 1), F.cross_entropy(yd, target))
""" + _OUTPUTS_MATCH


#: a subprocess prologue: the problem (argv[1]) and its generated module (argv[2]) loaded,
#: the reference model built and its state given to ModelNew
_BOTH_MODELS = """
import importlib.util, sys
import torch
def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
prob, kern = load(sys.argv[1], "problem"), load(sys.argv[2], "kernel")
torch.manual_seed(0)
ref = prob.Model(*prob.get_init_inputs())
new = kern.ModelNew(*prob.get_init_inputs())
new.load_state_dict(ref.state_dict())
"""

FULL_SIZE_CHECK = _BOTH_MODELS + """
inputs = prob.get_inputs()
outs = new(*inputs)
refs = ref.double()(*[x.double() for x in inputs])
for o, r in zip(outs, refs, strict=True):
    torch.testing.assert_close(o, r.float(), rtol=2e-5, atol=2e-5)
print("match")
"""


def test_aligned_chunks_at_full_size(write, tmp_path: Path) -> None:
    """The problem's own sizes (the judge's CPU trials are reduced): chunks of 4096 in runs
    of 4096 take the ALIGNED index path, split over R, and stay exact."""
    gen, _ = _generate(write, tmp_path, "groupnorm_aligned", GROUPNORM_ALIGNED)
    assert gen.judge.correct, (gen.judge.reason, gen.judge.detail)
    text = gen.module_path.read_text()
    assert "if ALIGNED:" in text and "aligned = rdim >= 2" in text
    assert _interpret(FULL_SIZE_CHECK, tmp_path / "groupnorm_aligned.py",
                      gen.module_path) == "match"


TRAIN_BATCHNORM = """
    import torch, torch.nn as nn

    class Model(nn.Module):
        def __init__(self, c):
            super().__init__()
            self.bn2, self.bn1 = nn.BatchNorm2d(c, momentum=0.3), nn.BatchNorm1d(c)
        def forward(self, x, y):
            return torch.relu(self.bn2(x)), self.bn1(y)

    batch, c, h, w = 6, 12, 9, 7
    def get_inputs(): return [torch.randn(batch, c, h, w) * 3 + 1, torch.randn(batch * 5, c)]
    def get_init_inputs(): return [c]
"""

RUNNING_STATS_CHECK = _BOTH_MODELS + """
for step in range(2):
    inputs = prob.get_inputs()
    outs = new(*inputs)
    refs = ref(*inputs)
    for o, r in zip(outs, refs, strict=True):
        torch.testing.assert_close(o, r, rtol=2e-5, atol=2e-5)
for (name, a), (_, b) in zip(new.state_dict().items(), ref.state_dict().items(), strict=True):
    torch.testing.assert_close(a, b, rtol=2e-5, atol=1e-6, msg=name)
print("state matches")
"""


def test_train_mode_batchnorm_updates_running_stats_in_its_reduction(write,
                                                                     tmp_path: Path) -> None:
    """BatchNorm in training mode: the running mean and variance are updated from the batch
    statistics inside the reduction kernel that computes them (the [C] re-view of the
    [1, C, 1, 1] statistics moves no data), not by two more kernels; the module's buffers
    follow the reference's over two steps."""
    gen, kinds = _generate(write, tmp_path, "train_bn", TRAIN_BATCHNORM)
    assert gen.judge.correct, (gen.judge.reason, gen.judge.detail)
    assert kinds.count("reduction") == 2, kinds
    reductions = [g for g in gen.plan.groups if g.kind == "reduction"]
    for g in reductions:
        # the new running statistics ([C]) are the reduction's outputs
        assert sum(o.meta["val"].dim() == 1 for o in g.outputs) == 2
    rows = [g for g in gen.plan.groups if g.kind == "pointwise"
            and all(n.meta["val"].dim() == 1 for n in g.nodes)]
    assert rows == [], [g.describe() for g in rows]  # no [C] kernel beside them
    assert _interpret(RUNNING_STATS_CHECK, write("train_bn_problem.py", TRAIN_BATCHNORM),
                      gen.module_path) == "state matches"


def test_short_rows_are_not_split_on_a_gpu():
    """A row of 16384 values is one program on a GPU (a second launch costs more host time
    than the split saves); long rows still split, and the interpreter splits short rows so
    the split path stays tested without a GPU."""
    from types import SimpleNamespace

    from kernelcraft.codegen import runtime
    from kernelcraft.codegen.reduction import _policy

    class Gpu:  # a device as the wrappers see it, with its SM count known
        type = "cuda"

    gpu = Gpu()
    runtime._KC_SMS[gpu] = 132
    try:
        policy = _policy()
        assert runtime._kc_row_split(1, 16384, 1, 8192, gpu, policy) == (1, 16384)
        split, chunk = runtime._kc_row_split(1, 1 << 22, 1, 8192, gpu, policy)
        assert split > 1 and split * chunk >= 1 << 22
        assert runtime._kc_row_split(1, 16384, 1, 4096, SimpleNamespace(type="cpu"),
                                     policy)[0] > 1
        # the planner's estimate for a target applies the GPU's rule (one rule, two callers)
        assert runtime._kc_row_split_on(1, 16384, 1, 8192, 132, True, policy) == (1, 16384)
        assert runtime._kc_row_split_on(1, 1 << 22, 1, 8192, 132, True, policy) == (split, chunk)
    finally:
        del runtime._KC_SMS[gpu]


ROW_LOSSES = """
    import torch, torch.nn as nn
    import torch.nn.functional as F

    class Model(nn.Module):
        def forward(self, logits, target):
            # losses over every element of a log-softmax: KL divergence (batchmean) and a
            # mean over all log-probabilities (a label-smoothing term)
            logp = F.log_softmax(logits, dim=1)
            return F.kl_div(logp, target, reduction="batchmean") - 0.1 * logp.mean()

    def get_inputs(): return [torch.randn(24, 300), torch.softmax(torch.randn(24, 300), 1)]
    def get_init_inputs(): return []
"""


ARGMAX_ONE_HOT = """
    import torch, torch.nn as nn
    import torch.nn.functional as F

    class Model(nn.Module):
        def forward(self, logits, labels):
            # the one-hot of each row's argmax, unsqueezed back against the classes
            pred = F.one_hot(logits.argmax(dim=-1), logits.shape[-1])
            agree = pred * (labels.unsqueeze(-1) >= 0)
            return agree.float() * logits

    def get_inputs(): return [torch.randn(40, 300), torch.randint(-1, 5, (40,))]
    def get_init_inputs(): return []
"""


@pytest.mark.parametrize("name, source", [("row_losses", ROW_LOSSES),
                                          ("argmax_one_hot", ARGMAX_ONE_HOT)])
def test_row_values_used_per_element_stay_in_the_row_kernel(write, tmp_path: Path, name: str,
                                                            source: str) -> None:
    """One kernel reads the logits: a loss over every element of a log-softmax is summed per
    row there (``rewrite.split_row_reductions``, the log-softmax never written out), and the
    one-hot of an argmax is computed per element where the argmax is."""
    from kernelcraft.plan import shape_key, val

    gen, _ = _generate(write, tmp_path, name, source)
    assert gen.judge.correct, (gen.judge.reason, gen.judge.detail)
    readers = [g for g in gen.plan.kernels if any(n.name == "logits" for n in g.inputs)]
    assert len(readers) == 1, [g.describe() for g in gen.plan.kernels]
    (row,) = readers
    assert row.kind == "reduction" and row.rdims == (1,)
    if name == "row_losses":  # no kernel writes a tensor of the logits' shape
        assert not [o for g in gen.plan.kernels for o in g.outputs
                    if shape_key(val(o).shape) == row.domain]


ONE_HOT_LABELS = """
    import torch, torch.nn as nn
    import torch.nn.functional as F

    class Model(nn.Module):
        def __init__(self, classes):
            super().__init__()
            self.classes = classes

        def forward(self, logits, labels):
            # agreement of the prediction with labels shifted by one and clamped to the
            # classes: every one-hot index is in range by construction
            c = self.classes
            hit = F.one_hot(logits.argmax(-1), c) * F.one_hot((labels - 1).clamp(0, c - 1), c)
            return hit.float() * logits

    def get_inputs(): return [torch.randn(48, 200), torch.randint(0, 202, (48,))]
    def get_init_inputs(): return [200]
"""


def test_one_hots_of_bounded_indices_are_one_row_kernel(write, tmp_path: Path) -> None:
    """``F.one_hot``'s range checks on an argmax and on clamped labels are proven and
    dropped (no whole-tensor reductions, no asserts), and the labels' shift and clamp is
    computed per row in the row kernel that reads it (``plan._absorb_row_producer``): one
    kernel, where there were four reductions, a pointwise kernel and four asserts."""
    gen, _ = _generate(write, tmp_path, "one_hot_labels", ONE_HOT_LABELS)
    assert gen.judge.correct, (gen.judge.reason, gen.judge.detail)
    assert [g.kind for g in gen.plan.kernels] == ["reduction"]
    asserts = [n for g in gen.plan.groups for n in g.nodes if "assert" in str(n.target)]
    assert not asserts


MASKED_LOGSUMEXP = """
    import torch, torch.nn as nn

    class Model(nn.Module):
        def forward(self, x, keys):
            # FX names the masked_fill's where "where" and logsumexp's own guard "where_1":
            # the resident row's element values must not take the row values' names
            x = x.masked_fill(keys[:, None, :] > 30, -1e4)
            return x.logsumexp(dim=-1, keepdim=True), torch.softmax(x, dim=-1)

    def get_inputs(): return [torch.randn(4, 32, 64), torch.randint(0, 64, (4, 64))]
    def get_init_inputs(): return []
"""


def test_one_chunk_values_keep_names_apart_from_row_values(write, tmp_path: Path) -> None:
    gen, kinds = _generate(write, tmp_path, "masked_logsumexp", MASKED_LOGSUMEXP)
    assert gen.judge.correct, (gen.judge.reason, gen.judge.detail)
    assert kinds == ["reduction"]
    text = gen.module_path.read_text()
    assert "v_where_1 = " in text and "v_where_oc = " in text  # the row's, the element's


PER_ROW_COUNT = """
    import torch, torch.nn as nn

    class Model(nn.Module):
        def forward(self, points, num_points):
            # a mean over each pillar's valid points, divided by its count cast per row
            n_max = points.shape[1]
            valid = torch.arange(n_max, device=points.device)[None, :] < num_points[:, None]
            count = num_points.type_as(points).view(-1, 1, 1)
            mean = (points * valid[..., None]).sum(1, keepdim=True) / count
            return points - mean

    def get_inputs(): return [torch.randn(96, 20, 4), torch.randint(1, 21, (96,))]
    def get_init_inputs(): return []
"""


def test_a_per_row_cast_is_computed_per_row(write, tmp_path: Path) -> None:
    """The count's cast, moved below its view (``rewrite.hoist_unit_views``), joins the row
    kernel and is computed once per row there (a value constant along the reduced dims)."""
    gen, kinds = _generate(write, tmp_path, "per_row_count", PER_ROW_COUNT)
    assert gen.judge.correct, (gen.judge.reason, gen.judge.detail)
    (row,) = [g for g in gen.plan.kernels if g.kind == "reduction"]
    assert "_to_copy" in row.describe()
    assert all(g.describe() != "_to_copy" for g in gen.plan.kernels)


EXTREMES = """
    import torch, torch.nn as nn

    class Model(nn.Module):
        def forward(self, x, y, z):
            # resident rows, looped rows split over programs, rows side by side (columns)
            return x.amax(1), x.amin(1), y.amax(-1), y.amin(-1), z.amin(0), z.amax(0)

    def get_inputs(): return [torch.randn(6, 300), torch.randn(4, 70000), torch.randn(50, 9)]
    def get_init_inputs(): return []
"""

EXTREMES_CHECK = _LOAD_KERNEL + """
x, y, z = torch.randn(6, 300), torch.randn(4, 70000), torch.randn(50, 9)
x[0, 5] = float("inf")
x[1] = float("-inf")
x[2, 7] = float("nan")
x[3, 299] = float("nan")
x[3, 0] = float("-inf")
y[1, 65000] = float("nan")  # in a late chunk and split
y[2, :] = float("inf")
y[3, 3] = float("-inf")
z[49, 2] = float("nan")
z[0, 4] = float("inf")
outs = mod.ModelNew()(x, y, z)
refs = (x.amax(1), x.amin(1), y.amax(-1), y.amin(-1), z.amin(0), z.amax(0))
""" + _OUTPUTS_MATCH


def test_extremes_keep_nan_and_infinities(write, tmp_path: Path) -> None:
    """amax and amin fold each element with one NaN-propagating maximum (minimum): a NaN
    anywhere in a row wins, in resident, looped, split and side-by-side rows."""
    gen, kinds = _generate(write, tmp_path, "extremes", EXTREMES)
    assert gen.judge.correct, (gen.judge.reason, gen.judge.detail)
    text = gen.module_path.read_text()
    assert "propagate_nan=tl.PropagateNan.ALL)" in text and "_kc_max_nan)" in text
    assert _interpret(EXTREMES_CHECK, gen.module_path) == "6 outputs match"


INT_EXTREMES = """
    import torch, torch.nn as nn

    class Model(nn.Module):
        def forward(self, a, b, c, m):
            # int64 beyond 2**53 (a cumulative count, a hash), int32, uint8 and bool rows:
            # resident, looped and split, and side by side
            big = torch.cumsum(a, 1) * 4096 + (1 << 40)
            cdf_min = (big + (~m).long() * (1 << 62)).amin(1)
            return (cdf_min, big.amax(1), b.amin(-1), b.amax(-1), c.amax(0), m.amax(1),
                    c.amin(0))

    def get_inputs():
        return [torch.randint(0, 1 << 30, (6, 300)), torch.randint(-2**31, 2**31 - 1, (4, 70000),
                dtype=torch.int32), torch.randint(0, 256, (50, 9), dtype=torch.uint8),
                torch.rand(6, 300) < 0.5]
    def get_init_inputs(): return []
"""


def test_integer_extremes_are_exact_in_int64_lanes(write, tmp_path: Path) -> None:
    """amax and amin of integers of any width are row kernels in int64 lanes: exact beyond
    fp32's 2**24 (the judge compares integers exactly)."""
    gen, kinds = _generate(write, tmp_path, "int_extremes", INT_EXTREMES)
    assert kinds == ["scan"] + ["reduction"] * kinds.count("reduction"), kinds
    assert not gen.extern_reasons, gen.extern_reasons
    assert gen.judge.correct, (gen.judge.reason, gen.judge.detail)
    assert "-9223372036854775808" in gen.module_path.read_text()


HALF_ROW_MATH = """
    import torch, torch.nn as nn
    import torch.nn.functional as F

    class Model(nn.Module):
        def forward(self, x, y):
            # a 16-bit row norm's sqrt, a bf16 row maximum's exp: math on per-row values
            return F.normalize(x, dim=-1), torch.exp(y - y.amax(1, keepdim=True).sqrt())

    def get_inputs():
        return [torch.randn(64, 300).half(), (torch.rand(32, 200) * 4).bfloat16()]
    def get_init_inputs(): return []
"""


def test_half_row_values_compute_in_fp32(write, tmp_path: Path) -> None:
    """A 16-bit reduction's value is rounded to its dtype, then computes on in fp32 (Triton's
    math functions take fp32 only: a fp16 sqrt failed to compile)."""
    gen, kinds = _generate(write, tmp_path, "half_row_math", HALF_ROW_MATH)
    assert kinds == ["reduction", "reduction"], gen.extern_reasons
    assert gen.judge.correct, (gen.judge.reason, gen.judge.detail)
    assert ".to(tl.float16).to(tl.float32)" in gen.module_path.read_text()
