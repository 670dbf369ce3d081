"""int64 indices computed in int32 where their ranges allow (codegen/ranges.py)."""

from __future__ import annotations

import re

import pytest

from kernelcraft.codegen.ranges import INT32, value_ranges
from kernelcraft.generate import GenerateOptions, generate

ONE_HOT = """
import torch, torch.nn as nn, torch.nn.functional as F

class Model(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.classes = classes
    def forward(self, logits, labels):
        pred = F.one_hot(logits.argmax(dim=-1), self.classes)
        lab = F.one_hot(torch.clamp(labels - 1, 0, self.classes - 1), self.classes)
        return torch.where(pred == lab, pred + lab, torch.zeros_like(pred)).float() * logits

batch, classes = 96, 37
def get_inputs():
    return [torch.randn(batch, classes), torch.randint(0, classes + 1, (batch,))]
def get_init_inputs(): return [classes]
"""

UPSAMPLE = """
import torch, torch.nn as nn, torch.nn.functional as F

class Model(nn.Module):
    def forward(self, x, skip):
        up = F.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)
        return torch.relu(up + skip)

batch, height, width = 2, 19, 24
def get_inputs():
    return [torch.randn(batch, 3, height, width), torch.randn(batch, 3, 2 * height, 2 * width)]
"""

# positions times a step past int32 and an int64 input: the product and the sum stay int64,
# the remainder and the clamp fit int32 again
WIDE = """
import torch, torch.nn as nn

class Model(nn.Module):
    def forward(self, ids):
        pos = torch.arange(ids.shape[-1], device=ids.device) * (1 << 40)
        return (ids + pos) % 1000003 + torch.clamp(ids, 0, 7)

rows, cols = 16, 40
def get_inputs():
    return [torch.randint(-(1 << 50), 1 << 50, (rows, cols))]
"""


def _gen(write, tmp_path, name, src):
    return generate(write(f"{name}.py", src), GenerateOptions(
        out_dir=tmp_path / "out", targets="sm_90", device="cpu", build=False))


@pytest.mark.parametrize(("name", "src"), [
    ("one_hot", ONE_HOT), ("upsample", UPSAMPLE), ("wide", WIDE)])
def test_index_chains_compute_in_int32_only_where_they_fit(write, tmp_path, name, src):
    gen = _gen(write, tmp_path, name, src)
    assert gen.judge.correct, gen.judge.detail
    text = gen.module_path.read_text()
    assert "KC_NI: tl.constexpr = tl.int32" in text
    for v in gen.variants:
        for g in v.plan.groups:
            for n, (lo, hi) in value_ranges(g.nodes).items():
                assert lo <= hi, n
    if name == "wide":  # the position widened before its product, which stays int64
        assert re.search(r"v_arange\w*\.to\(tl\.int64\) \* 1099511627776\)\)\.to\(tl\.int64\)",
                         text)
        assert re.search(r"v_remainder = .*\.to\(KC_NI\)", text)


def test_ranges_follow_casts_clamps_and_positions(write, tmp_path):
    gen = _gen(write, tmp_path, "up_ranges", UPSAMPLE)
    nodes = [n for g in gen.variants[0].plan.groups for n in g.nodes]
    ranges = value_ranges(nodes)
    by_op = {}
    for n, r in ranges.items():
        by_op.setdefault(str(n.target).split(".")[1], []).append(r)
    # the source rows: clamp(floor((i + 0.5) * 0.5 - 0.5), 0) of a position, in int32
    assert all(lo >= INT32[0] and hi <= INT32[1] for lo, hi in by_op["_to_copy"])
    assert any(lo == 0 for lo, _ in by_op["clamp"])
