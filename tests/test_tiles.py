"""Launch shapes: the pointwise template's row x column tiles, the arg-reduction chunks, and
the kernel outputs a capture's metadata assertions no longer force."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from kernelcraft.codegen.reduction import ARG_TILE
from kernelcraft.codegen.runtime import _kc_row_config, _kc_tile
from kernelcraft.generate import GenerateOptions, _interpreted, generate
from kernelcraft.measure.instrument import LaunchCounter
from kernelcraft.problem import load_module

UPSAMPLE = """
import torch, torch.nn as nn, torch.nn.functional as F

class Model(nn.Module):
    def forward(self, coarse, skip):
        up = F.interpolate(coarse, scale_factor=2, mode="bilinear", align_corners=False)
        return torch.relu(up + skip)

n, c, h, w = 2, 3, 8, 12
def get_inputs(): return [torch.randn(n, c, h, w), torch.randn(n, c, 2 * h, 2 * w)]
def get_init_inputs(): return []
"""

RMS_CAST = """
import torch, torch.nn as nn

class Model(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden))
    def forward(self, x):
        v = x.to(torch.float32).pow(2).mean(-1, keepdim=True)
        y = (x * torch.rsqrt(v + 1e-6)).to(torch.bfloat16).to(torch.float32)
        return self.weight * y

batch, hidden = 64, 256
def get_inputs(): return [torch.randn(batch, hidden)]
def get_init_inputs(): return [hidden]
"""


def _opts(tmp_path, **kw):
    return GenerateOptions(out_dir=tmp_path / "out", targets="sm_90", device="cpu",
                           build=False, **kw)


@pytest.mark.parametrize(("numel", "inner", "block", "tile"), [
    (1 << 20, 1 << 20, 1024, (1024, 1)),  # one contiguous dim: a row of BLOCK columns
    (64 * 3136, 3136, 1024, (512, 2)),  # 3136-wide rows: 7 blocks of 512, 87.5% used
    (4096 * 256, 256, 1024, (256, 4)),  # whole rows, four per program
    (1000 * 7, 7, 1024, (8, 128)),  # short rows: many per program
    (3 * 56, 56, 1024, (64, 4)),  # few rows: no more tile rows than there are
    (1, 1, 1024, (1, 1)),
])
def test_pointwise_tile(numel, inner, block, tile):
    xb, yb = _kc_tile(numel, inner, block)
    assert (xb, yb) == tile
    assert xb * yb <= block and xb & (xb - 1) == 0 and yb & (yb - 1) == 0


def test_position_chains_follow_the_rows_and_columns(write, tmp_path):
    """Bilinear upsampling's source rows are computed per tile row and its source columns
    per tile column (launch flags), and the module is right at sizes whose coalescing moves
    the dims: width 1 (the rows' dim becomes the innermost), odd and unit sizes."""
    gen = generate(write("up.py", UPSAMPLE), _opts(tmp_path))
    assert gen.judge.correct, gen.judge.detail
    text = gen.module_path.read_text()
    assert "_R: tl.constexpr" in text and "_C: tl.constexpr" in text
    with _interpreted(True):
        module = load_module(gen.module_path, "generated_up")
    model, ref = module.ModelNew(), module.Model()
    counter = LaunchCounter()
    for n, c, h, w in ((1, 1, 5, 1), (2, 3, 1, 7), (3, 2, 9, 13), (1, 1, 1, 1)):
        coarse, skip = torch.randn(n, c, h, w), torch.randn(n, c, 2 * h, 2 * w)
        before = counter.count
        with counter.active():
            out = model(coarse, skip)
        assert counter.count > before  # the kernel ran, not the problem's forward
        torch.testing.assert_close(out, ref(coarse, skip))
        torch.testing.assert_close(out, torch.relu(F.interpolate(
            coarse, scale_factor=2, mode="bilinear", align_corners=False) + skip))


def test_metadata_assertions_add_no_kernel_outputs(write, tmp_path):
    """``.to(dtype)`` leaves ``_assert_tensor_metadata`` nodes in the export; they are
    dropped, so the norm writes its result only (it wrote two intermediates nothing read)."""
    gen = generate(write("rms.py", RMS_CAST), _opts(tmp_path))
    assert gen.judge.correct, gen.judge.detail
    (k,) = gen.kernels.values()
    assert len(k.outputs) == 1
    assert "_assert_tensor_metadata" not in gen.module_path.read_text()


def test_arg_reductions_walk_small_chunks():
    """One-pass arg reductions loop over ARG_TILE-lane chunks with 4 warps; other
    reductions keep whole rows of up to 8192 resident."""
    base = {"LANES": 3, "CPU_TILE": 16384, "CPU_BLOCK_R": 4096, "GPU_TILE": 4096,
            "GPU_BLOCK_R": 8192, "GPU_BLOCK_K_COLUMNS": 64,
            "GPU_BLOCK_K_COLUMNS_MIN": 8, "GPU_COLUMNS_SHORT_R": 64, "GPU_COLUMNS_CHUNK_R": 64,
            "GPU_COLUMNS_PROGRAMS": 1024,
            "GPU_PERSIST_TILE": 8192, "SPLIT_WAVES": 4, "MAX_SPLIT": 1024, "CPU_SMS": 4}
    rows = ([[8192]], 1, [[1]], 1)  # kept dim strided, reduced dim contiguous
    arg = {**base, "ARG_TILE": ARG_TILE}
    assert _kc_row_config(16384, 8192, rows[0], 1, rows[2], 1, False, arg) == (1, ARG_TILE, 4)
    assert _kc_row_config(4096, 100, [[100]], 1, [[1]], 1, False, arg) == (4, 128, 4)
    assert _kc_row_config(16384, 8192, rows[0], 1, rows[2], 1, False, {**base, "ARG_TILE": 0}
                          )[1] == 8192


@pytest.mark.parametrize("body", [
    "torch.argmin(x, dim=-1)",  # one pass
    "torch.softmax(x, -1).argmax(-1)",  # the argmax reads the softmax: passes after it
])
def test_arg_tile_only_for_one_pass_groups(write, tmp_path, body):
    src = f"""
import torch, torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return {body}

def get_inputs(): return [torch.randn(64, 1000)]
def get_init_inputs(): return []
"""
    gen = generate(write("arg.py", src), _opts(tmp_path))
    assert gen.judge.correct, gen.judge.detail
    reductions = [k.config for k in gen.kernels.values() if k.config.get("template") == "row"]
    assert reductions
    for cfg in reductions:
        assert cfg["ARG_TILE"] == (ARG_TILE if cfg["passes"] == 1 else 0), cfg


def test_an_unused_stack_frame_is_not_a_spill(write, tmp_path):
    """Triton 3.9's PTX for the arg-reduction chunk declares a one-byte local array it never
    touches; ptxas reserves an 8-byte frame for it. Counted as a spill, it made the target
    ranking replace the chunked config by a resident 8192-lane one (195 registers) in every
    module made without the GPU. Only frames the SASS stores to or loads from count."""
    src = """
import torch, torch.nn as nn

class Model(nn.Module):
    def forward(self, x):
        return torch.argmin(x, dim=-1)

def get_inputs(): return [torch.randn(256, 8192)]
def get_init_inputs(): return []
"""
    gen = generate(write("argmin.py", src), GenerateOptions(
        out_dir=tmp_path / "out", targets="sm_90", device="cpu", judge=False))
    (b,) = [b for b in gen.builds if b["target"] == "sm_90"]
    assert b["ok"] and b["spills"] == 0, b
    assert not gen.ranked and "_KC_TUNED.update" not in gen.module_path.read_text()


@pytest.mark.parametrize(("meta", "spills"), [
    ({"vgpr_spill_count": 0, "sgpr_spill_count": 15, "private_segment_fixed_size": 0}, 0),
    ({"vgpr_spill_count": 0, "sgpr_spill_count": 15, "private_segment_fixed_size": 64}, 60),
    ({"vgpr_spill_count": 3, "sgpr_spill_count": 0, "private_segment_fixed_size": 12}, 12),
])
def test_amd_spills_are_scratch_bytes(meta, spills):
    """AMD spill counts are registers: a VGPR spilled goes to scratch (4 bytes a lane); an
    SGPR spilled goes to a VGPR lane, memory only where the kernel has scratch at all."""
    from types import SimpleNamespace

    from kernelcraft.build import _resources_hip

    text = "\n".join(f"    .{k}: {v}" for k, v in {"vgpr_count": 73, "sgpr_count": 106,
                                                     "agpr_count": 0, **meta}.items())
    res = _resources_hip(SimpleNamespace(asm={"amdgcn": text}, metadata=SimpleNamespace()))
    assert res["spills"] == spills and res["registers"] == 73
    assert ("sgpr spilled" in res["note"]) == bool(meta["sgpr_spill_count"])


def test_split_rows_take_short_chunks():
    """Few long rows split over programs: chunks halve until the split reaches
    SPLIT_WAVES programs per SM (4 elements a thread); many rows keep their tile."""
    from kernelcraft.codegen.runtime import _kc_split_tile_on

    pol = {"SPLIT_WAVES": 4, "SPLIT_MIN_R": 32768, "MAX_SPLIT": 1024}
    assert _kc_split_tile_on(1, 1 << 21, 1, 8192, 16, 132, pol) == (1, 2048, 16)
    assert _kc_split_tile_on(4, 1 << 21, 1, 8192, 16, 132, pol) == (1, 8192, 16)
    assert _kc_split_tile_on(1, 1 << 16, 1, 8192, 16, 132, pol) == (1, 1024, 8)
    assert _kc_split_tile_on(1024, 1 << 21, 1, 8192, 16, 132, pol) == (1, 8192, 16)
    assert _kc_split_tile_on(1, 16384, 1, 8192, 16, 132, pol) == (1, 8192, 16)  # short


def test_reduced_extent_in_columns_fills_the_tile():
    """Three channels reduced across a channel stride: many pixels a program, resident."""
    base = {"LANES": 1, "CPU_TILE": 16384, "CPU_BLOCK_R": 4096, "GPU_TILE": 4096,
            "GPU_BLOCK_R": 8192, "GPU_BLOCK_K_COLUMNS": 64,
            "GPU_BLOCK_K_COLUMNS_MIN": 8, "GPU_COLUMNS_SHORT_R": 64, "GPU_COLUMNS_CHUNK_R": 64,
            "GPU_COLUMNS_PROGRAMS": 1024,
            "GPU_PERSIST_TILE": 8192, "SPLIT_WAVES": 4, "MAX_SPLIT": 1024, "CPU_SMS": 4}
    cols = ([[1]], 1, [[1 << 18]], 1)  # kept dim contiguous, reduced dim strided
    assert _kc_row_config(1 << 23, 3, *cols, False, base) == (1024, 4, 8)
    # a longer one: 4096-element tiles on 4 warps, 64 rows side by side in chunks of 64 (128
    # resident), not 8 or 32 resident rows of 32 bytes; fewer rows a program when few
    assert _kc_row_config(1 << 23, 256, *cols, False, base) == (64, 64, 4)
    assert _kc_row_config(1 << 16, 1024, *cols, False, base) == (64, 64, 4)
    assert _kc_row_config(1 << 19, 128, *cols, False, base) == (32, 128, 4)
    assert _kc_row_config(1 << 14, 4096, *cols, False, base) == (16, 64, 4)
    # a softmax over the columns (two passes) keeps them resident: read once, not twice
    assert _kc_row_config(1 << 16, 1024, *cols, False, {**base, "PASSES": 2}) == (8, 1024, 8)
