"""Elementwise math beyond the Triton core (inverse trigonometric and hyperbolic functions,
atan2, hypot, erfc, erfinv, lgamma, ...): the vendor's math library on a GPU, torch on the
host under the interpreter. One kernel for the whole chain, correct, and the helpers in the
module only where a kernel calls them."""

from __future__ import annotations

from kernelcraft.codegen.ops import LIBM, POINTWISE, libm_helpers
from kernelcraft.generate import GenerateOptions, generate

HEADER = "import torch, torch.nn as nn\n"

CHAIN = (
    HEADER
    + """
class Model(nn.Module):
    def forward(self, x, y):
        a = torch.atan2(x - 0.5, y - 1.5) + torch.hypot(x, y) + torch.asin(x) * torch.acos(x)
        b = torch.atan(y) + torch.tan(x) + torch.sinh(x) * torch.cosh(y) + torch.asinh(y)
        c = torch.acosh(y) + torch.atanh(x - 0.5) + torch.log10(y) + torch.erfc(x)
        d = torch.erfinv(x - 0.5) + torch.lgamma(y) + torch.i0(x) + torch.special.erfcx(x)
        e = torch.copysign(y, x - 0.5) + torch.trunc(4 * x) + torch.nextafter(x, y)
        f = torch.fmax(x, torch.where(y > 1.5, float("nan"), y)) + torch.fmin(x, y)
        g = torch.logical_xor(x > 0.5, y > 1.5).float() + torch.signbit(x - 0.5).float()
        return (a + b) * c + d * e - f + g + torch.lerp(x, y, 0.25)

rows, cols = 48, 80
def get_inputs(): return [torch.rand(rows, cols) * 0.9 + 0.05, torch.rand(rows, cols) + 1.0]
def get_init_inputs(): return []
"""
)


def test_every_library_op_lowers():
    assert set(LIBM) <= set(POINTWISE)
    text = libm_helpers({"atan2", "hypot"})
    assert "def _kc_m_atan2(a, b)" in text and "_kc_libdevice.hypot(" in text
    assert "_kc_m_asin" not in text
    assert libm_helpers({"add"}) == ""


def test_math_chain_is_one_correct_kernel_for_both_vendors(write, tmp_path):
    gen = generate(write("chain.py", CHAIN),
                   GenerateOptions(targets="sm_90,gfx942", out_dir=tmp_path / "o",
                                   device="cpu"))
    assert gen.judge.correct, gen.judge.detail
    assert [g.kind for g in gen.plan.groups if g.kind != "glue"] == ["pointwise"]
    text = gen.module_path.read_text()
    assert "def _kc_m_erfinv(a)" in text and "def _kc_m_exp(" not in text
    # the libdevice (CUDA) and ocml (ROCm) calls compile for both vendors
    assert {b["target"] for b in gen.builds} == {"sm_90", "gfx942"}
    # (libdevice tan keeps its argument reduction in a local array: declared, not spilled)
    assert all(b["ok"] and b["spills"] == 0 for b in gen.builds), gen.builds


SHIFTS = (
    HEADER
    + """
class Model(nn.Module):
    def forward(self, a, b):
        s = (a >> b) ^ (a << b) ^ (a >> 3) ^ torch.bitwise_left_shift(a, 5)
        u = a.to(torch.uint8)
        v = (u >> (b & 15).to(torch.uint8)) + (u << 2)
        w = a.long() << (b % 70)
        return s, v, (w >> 9).float() * 0.5

rows, cols = 40, 72
def get_inputs():
    g = torch.Generator().manual_seed(3)
    a = torch.randint(-2**31, 2**31 - 1, (rows, cols), generator=g, dtype=torch.int32)
    return [a, torch.randint(-4, 40, (rows, cols), generator=g, dtype=torch.int32)]
def get_init_inputs(): return []
"""
)


def test_integer_shifts_follow_torch_outside_the_width(write, tmp_path):
    """Counts below 0 or at least the width (of the promoted type: int32, uint8, int64) give
    0, or the sign for a signed right shift, as torch; one kernel."""
    gen = generate(write("shifts.py", SHIFTS),
                   GenerateOptions(targets="sm_90,gfx942", out_dir=tmp_path / "o",
                                   device="cpu"))
    assert gen.judge.correct, gen.judge.detail
    assert not gen.extern_reasons
    assert all(b["ok"] for b in gen.builds), gen.builds
