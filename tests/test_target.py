"""Tests of the target table: name resolution, detection, ceilings, and cross-compilation."""

from __future__ import annotations

import dataclasses
import os
from types import SimpleNamespace

import pytest
import torch
import triton
import triton.language as tl
from rich.console import Console
from triton.backends.compiler import GPUTarget

from kernelcraft.errors import InputError
from kernelcraft.target import (
    ARCH_DEFAULTS,
    TARGETS,
    Target,
    detect,
    format_table,
    match_device,
    resolve,
    resolve_many,
)

ARCHS = ("sm_80", "sm_89", "sm_90", "sm_100", "gfx90a", "gfx942", "gfx950")
T = 1e12


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("sm_80", "a100"),
        ("sm80", "a100"),
        ("80", "a100"),
        ("8.0", "a100"),
        ("sm_89", "l40s"),
        ("sm_90", "h200"),
        ("SM90", "h200"),
        ("90", "h200"),
        ("9.0", "h200"),
        ("sm_90a", "h200"),
        ("compute_90", "h200"),
        ("sm_100", "b200"),
        ("sm_100a", "b200"),
        ("10.0", "b200"),
        ("gfx90a", "mi250x"),
        ("gfx942", "mi300x"),
        ("GFX942", "mi300x"),
        ("gfx942:sramecc+:xnack-", "mi300x"),
        ("gfx950", "mi355x"),
    ],
)
def test_arch_names_resolve(name: str, key: str) -> None:
    assert resolve(name) is TARGETS[key]


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("a100", "a100"),
        ("A100", "a100"),
        ("l40s", "l40s"),
        ("L40S", "l40s"),
        ("h100", "h100"),
        ("H100", "h100"),
        ("NVIDIA H100", "h100"),
        ("h100-sxm", "h100"),
        ("h200", "h200"),
        ("H200", "h200"),
        ("b200", "b200"),
        ("mi250x", "mi250x"),
        ("MI250", "mi250x"),
        ("mi300x", "mi300x"),
        ("MI300", "mi300x"),
        ("AMD Instinct MI300X", "mi300x"),
        ("mi355x", "mi355x"),
        ("Mi355", "mi355x"),
        ("  h200 ", "h200"),
    ],
)
def test_product_names_resolve_case_insensitively(name: str, key: str) -> None:
    assert resolve(name) is TARGETS[key]


def test_table_covers_required_arches() -> None:
    assert set(ARCH_DEFAULTS) == set(ARCHS)
    assert {t.arch for t in TARGETS.values()} == set(ARCHS)
    for arch, key in ARCH_DEFAULTS.items():
        assert TARGETS[key].arch == arch
    # sm_90 is one arch with two products; the arch name means the H200.
    assert TARGETS["h100"].arch == TARGETS["h200"].arch == "sm_90"
    assert TARGETS["h100"].peak == TARGETS["h200"].peak
    assert TARGETS["h200"].mem_bandwidth > TARGETS["h100"].mem_bandwidth
    assert TARGETS["h200"].memory_bytes > TARGETS["h100"].memory_bytes
    assert all(key == t.key for key, t in TARGETS.items())


@pytest.mark.parametrize("name", ["sm_75", "gfx1100", "v100", "", "mi", "9"])
def test_unknown_name_raises_input_error_listing_supported(name: str) -> None:
    with pytest.raises(InputError) as info:
        resolve(name)
    msg = str(info.value)
    assert "\n" not in msg
    assert repr(name) in msg
    for supported in (*ARCHS, *TARGETS):
        assert supported in msg


def test_resolve_many_dedupes_preserving_order() -> None:
    got = resolve_many("sm_90, h200,gfx942 ,MI300X,h100,sm_90")
    assert [t.key for t in got] == ["h200", "mi300x", "h100"]
    assert [t.key for t in resolve_many("gfx950")] == ["mi355x"]
    for spec in ("", " , "):
        with pytest.raises(InputError):
            resolve_many(spec)
    with pytest.raises(InputError, match="nope"):
        resolve_many("sm_90,nope")


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is present")
def test_detect_returns_none_without_gpu() -> None:
    assert detect() is None


def _fake_gpu(monkeypatch: pytest.MonkeyPatch, hip: str | None, **props: object) -> None:
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda i: SimpleNamespace(**props))
    monkeypatch.setattr(torch.version, "hip", hip)


def test_detect_prefers_product_name_then_arch(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_gpu(monkeypatch, None, name="NVIDIA H100 80GB HBM3", major=9, minor=0,
              multi_processor_count=132, gcnArchName="NVIDIA H100 80GB HBM3")
    assert detect() is TARGETS["h100"]
    _fake_gpu(monkeypatch, None, name="NVIDIA H200", major=9, minor=0, multi_processor_count=132)
    assert detect() is TARGETS["h200"]
    _fake_gpu(monkeypatch, None, name="NVIDIA A100-SXM4-80GB", major=8, minor=0,
              multi_processor_count=108)
    assert detect() is TARGETS["a100"]
    # ROCm reports major/minor 9/4 for gfx942: the arch must come from gcnArchName.
    _fake_gpu(monkeypatch, "6.2", name="AMD Instinct MI300X", major=9, minor=4,
              multi_processor_count=304, gcnArchName="gfx942:sramecc+:xnack-")
    assert detect() is TARGETS["mi300x"]
    _fake_gpu(monkeypatch, "6.2", name="AMD Instinct MI250X/MI250", major=9, minor=0,
              multi_processor_count=110, gcnArchName="gfx90a:sramecc+:xnack-")
    assert detect() is TARGETS["mi250x"]


def test_detect_unknown_or_broken_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_gpu(monkeypatch, None, name="Tesla T4", major=7, minor=5, multi_processor_count=40)
    with pytest.warns(UserWarning, match="sm_75"):
        assert detect() is None

    def broken(i: int) -> None:
        raise RuntimeError("CUDA driver initialization failed")

    monkeypatch.setattr(torch.cuda, "get_device_properties", broken)
    assert detect() is None


def test_match_device_derives_other_sku() -> None:
    # A product name of another arch never wins ("RTX A1000" contains "a100").
    assert match_device("NVIDIA RTX A1000", "sm_86", 20) is None
    t = match_device("NVIDIA H100 PCIe", "sm_90", 114)
    assert t is not None and t.sm_count == 114 and t.product == "NVIDIA H100 PCIe"
    assert t.peak["bf16"] == pytest.approx(TARGETS["h100"].peak["bf16"] * 114 / 132)
    assert not t.measured
    # Measured ceilings belong to the product they were measured on.
    t = match_device("AMD Instinct MI300A", "gfx942", 228)
    assert t is not None and t.key == "mi300x" and t.sm_count == 228


@pytest.mark.parametrize("key", list(TARGETS))
def test_gpu_target_builds(key: str) -> None:
    t = TARGETS[key]
    g = t.gpu_target()
    assert isinstance(g, GPUTarget)
    assert (g.backend, g.arch, g.warp_size) == (t.backend, t.triton_arch, t.warp_size)
    if t.backend == "cuda":
        assert isinstance(g.arch, int) and t.arch == f"sm_{g.arch}" and g.warp_size == 32
    else:
        assert t.backend == "hip" and g.arch == t.arch and g.warp_size == 64


@pytest.mark.parametrize("key", list(TARGETS))
def test_entries_are_consistent(key: str) -> None:
    t = TARGETS[key]
    assert t.smem_per_block <= t.smem_per_sm
    assert t.max_threads_per_block <= t.max_threads_per_sm
    assert set(t.peak) <= {"fp32", "fp32_matrix", "tf32", "bf16", "fp16", "fp8", "int8"}
    assert all(v > 1e12 for v in t.peak.values())
    assert t.peak["bf16"] == t.peak["fp16"] > t.peak["fp32"]
    assert ("tf32" in t.peak) == ("tf32" in t.matrix_dtypes) == ("tf32" in t.dot_precisions)
    assert 0.5e12 < t.mem_bandwidth < 10e12 and t.memory_bytes >= 48 * 2**30
    assert t.source


def test_dot_precisions_match_design() -> None:
    cuda = ("ieee", "tf32", "tf32x3", "bf16x3", "bf16x6")
    expected = {
        "sm_80": cuda,
        "sm_89": cuda,
        "sm_90": cuda,
        "sm_100": cuda,
        "gfx942": ("ieee", "tf32", "bf16x3", "bf16x6"),
        "gfx90a": ("ieee", "bf16x3", "bf16x6"),
        "gfx950": ("ieee", "bf16x3", "bf16x6"),
    }
    for t in TARGETS.values():
        assert t.dot_precisions == expected[t.arch], t.key


def test_h200_ceilings_are_the_measured_ones() -> None:
    h200 = resolve("sm_90")
    assert h200.bandwidth() == 4.25 * T
    assert h200.peak_flops("fp32") == 51 * T
    assert h200.peak_flops("tf32") == 367 * T
    assert h200.peak_flops("bf16") == 688 * T
    assert h200.peak_flops(torch.bfloat16) == 688 * T
    assert h200.peak_flops("float32") == 51 * T
    assert h200.is_measured("bandwidth") and h200.is_measured(torch.float32)
    # Not measured: the datasheet stands, and stays reachable.
    assert not h200.is_measured("fp8")
    assert h200.peak_flops("fp8") == h200.peak["fp8"]
    assert h200.mem_bandwidth == 4.8 * T and h200.peak["bf16"] > 688 * T
    h100 = resolve("h100")
    assert not h100.measured and h100.bandwidth() == h100.mem_bandwidth == 3.35 * T


def test_dot_peak_flops() -> None:
    h200 = TARGETS["h200"]
    assert h200.dot_peak_flops("ieee") == 51 * T
    assert h200.dot_peak_flops("tf32") == 367 * T
    assert h200.dot_peak_flops("tf32x3") == pytest.approx(367 * T / 3)
    assert h200.dot_peak_flops("bf16x6") == pytest.approx(688 * T / 6)
    mi300x = TARGETS["mi300x"]
    assert mi300x.dot_peak_flops("ieee") == mi300x.peak["fp32_matrix"]
    with pytest.raises(InputError, match="tf32"):
        TARGETS["mi355x"].dot_peak_flops("tf32")
    with pytest.raises(InputError, match="tf32"):
        TARGETS["mi250x"].peak_flops("tf32")


def test_targets_are_frozen_and_hashable() -> None:
    t = TARGETS["h200"]
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.sm_count = 1  # type: ignore[misc]
    with pytest.raises(TypeError):
        t.measured["bandwidth"] = 1.0  # type: ignore[index]
    assert {t, resolve("h200")} == {t}
    assert isinstance(t, Target) and "h200" in str(t)


def test_format_table_renders_every_target() -> None:
    console = Console(record=True, width=240)
    console.print(format_table())
    text = console.export_text()
    for arch in ARCHS:
        assert arch in text
    for t in TARGETS.values():
        assert t.product in text
    assert "4.25*" in text and "688.0*" in text and "measured" in text
    for col in ("SMs/CUs", "warp", "smem/LDS", "regs", "TB/s", "fp32", "tf32", "bf16", "dot"):
        assert col in text
    # Without measured rows there is nothing to explain.
    console = Console(record=True, width=240)
    console.print(format_table([TARGETS["mi300x"]]))
    text = console.export_text()
    assert "gfx942" in text and "*" not in text and "sm_90" not in text


@pytest.mark.skipif(
    os.environ.get("TRITON_INTERPRET", "0") not in ("", "0"),
    reason="@triton.jit functions are not compilable under TRITON_INTERPRET=1",
)
@pytest.mark.parametrize(("name", "asm_key", "marker"), [
    ("sm_90", "ptx", ".target sm_90"),
    ("gfx942", "amdgcn", "gfx942"),
])
def test_cross_compiles_vector_add(
    name: str, asm_key: str, marker: str, tmp_path: os.PathLike[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "1")

    # Defined here, not at import, so a TRITON_INTERPRET set for other tests cannot turn
    # it into an interpreted (uncompilable) function before the skip above applies.
    @triton.jit
    def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + offs, mask=mask)
        y = tl.load(y_ptr + offs, mask=mask)
        tl.store(out_ptr + offs, x + y, mask=mask)

    t = resolve(name)
    src = triton.compiler.ASTSource(
        fn=add,
        signature={"x_ptr": "*fp32", "y_ptr": "*fp32", "out_ptr": "*fp32", "n": "i32",
                   "BLOCK": "constexpr"},
        constexprs={"BLOCK": 1024},
    )
    kernel = triton.compile(src, target=t.gpu_target())
    assert marker in kernel.asm[asm_key]
