"""The GPU targets kernelcraft knows.

A target is what the search needs to know about a GPU without touching it: the resources
that prune the space (shared memory/LDS, registers, threads), the value Triton wants to
cross-compile for it (`GPUTarget`), which fp32 dot precisions Triton accepts there, and the
peaks that bound the roofline and seed the cost model. Numbers are per device as the
runtime sees it, dense (no 2:4 sparsity), from vendor datasheets and programming guides
(`Target.source`); ceilings measured on real hardware live apart in `Target.measured` and
win over the datasheet in `bandwidth()` and `peak_flops()`.

Units: bytes, bytes/s, FLOP/s (OP/s for int8). Memory capacities are the nominal
"GB" of the datasheet, which for HBM parts is binary (80 GB A100 = 80 GiB).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from kernelcraft.errors import InputError

if TYPE_CHECKING:
    from rich.table import Table
    from triton.backends.compiler import GPUTarget

__all__ = [
    "ARCH_DEFAULTS",
    "TARGETS",
    "Target",
    "detect",
    "format_table",
    "match_device",
    "resolve",
    "resolve_many",
]

KiB = 1024
MiB = 1024**2
GiB = 1024**3
T = 1e12  # tera: TFLOP/s and TB/s

# What Triton 3.9 accepts for `tl.dot(..., input_precision=...)` on fp32 operands,
# cross-compiled per target (DESIGN.md); the NVIDIA backend's default is "tf32", AMD's "ieee".
_CUDA_DOT = ("ieee", "tf32", "tf32x3", "bf16x3", "bf16x6")
_CDNA3_DOT = ("ieee", "tf32", "bf16x3", "bf16x6")
_HIP_DOT = ("ieee", "bf16x3", "bf16x6")

# NVIDIA: 64K 32-bit registers per SM, at most 255 per thread.
# AMD CDNA2-4: 512 KiB VGPR file per CU = 4 SIMDs x 512 VGPRs x 64 lanes x 4 bytes;
# a wave may use 512 VGPRs per lane (256 arch + 256 AGPR, one unified file). We model
# `regs_per_sm` as the CU total (131072) so it compares with NVIDIA's per-SM count, and
# `max_regs_per_thread` as the per-lane limit (512).
_NV_REGS, _NV_MAX_REGS = 65536, 255
_AMD_REGS, _AMD_MAX_REGS = 4 * 512 * 64, 512


@dataclass(frozen=True)
class Target:
    """One GPU product as a compile and cost-model target.

    Several products may share an arch (H100 and H200 are both sm_90): code is compiled
    per arch, but rooflines and tuning records differ per product, so each gets an entry.
    """

    key: str  # canonical key in TARGETS, e.g. "h200"
    product: str  # marketing name, e.g. "NVIDIA H200 SXM 141GB"
    arch: str  # "sm_90", "gfx942"
    backend: str  # "cuda" | "hip", as triton's GPUTarget spells it
    triton_arch: int | str  # 90 for cuda sm_90, "gfx942" for hip
    warp_size: int  # 32 (warp) or 64 (wavefront)
    sm_count: int  # SMs (NVIDIA) or CUs (AMD) of one device as the runtime sees it
    smem_per_block: int  # max shared memory / LDS one block may allocate (opt-in), bytes
    smem_per_sm: int  # shared memory / LDS per SM / CU, bytes
    regs_per_sm: int  # 32-bit registers per SM / CU (see _AMD_REGS for AMD)
    max_regs_per_thread: int  # 255 on NVIDIA; VGPRs per lane (arch + acc) on AMD
    max_threads_per_block: int
    max_threads_per_sm: int  # resident threads per SM / CU (AMD: 8 waves per SIMD x 4)
    l2_bytes: int  # whole-device L2 (AMD: sum over XCDs / per GCD)
    matrix_dtypes: tuple[str, ...]  # input dtypes the matrix units (tensor cores / MFMA) take
    peak: Mapping[str, float] = field(hash=False)  # datasheet dense FLOP/s per dtype
    mem_bandwidth: float  # datasheet bytes/s
    memory_bytes: int  # nominal device memory, bytes
    dot_precisions: tuple[str, ...]  # triton input_precision values accepted for fp32 dots
    llc_bytes: int = 0  # memory-side cache beyond L2 (AMD Infinity Cache), 0 if none
    measured: Mapping[str, float] = field(default_factory=dict, hash=False)
    aliases: tuple[str, ...] = ()  # other product names resolve() and detect() accept
    source: str = ""
    notes: str = ""

    def __post_init__(self) -> None:
        # Frozen means frozen: callers must not be able to edit a shared table entry.
        object.__setattr__(self, "peak", MappingProxyType(dict(self.peak)))
        object.__setattr__(self, "measured", MappingProxyType(dict(self.measured)))

    def __str__(self) -> str:
        return f"{self.key} ({self.arch}, {self.product})"

    def gpu_target(self) -> GPUTarget:
        """The value `triton.compile(..., target=...)` takes; no driver involved."""
        from triton.backends.compiler import GPUTarget

        return GPUTarget(self.backend, self.triton_arch, self.warp_size)

    @property
    def cache_bytes(self) -> int:
        """The largest cache a timing flush must overwrite (L2, or Infinity Cache on AMD)."""
        return max(self.l2_bytes, self.llc_bytes)

    def bandwidth(self) -> float:
        """Memory bandwidth ceiling in bytes/s: measured if known, else the datasheet."""
        return self.measured.get("bandwidth", self.mem_bandwidth)

    def peak_flops(self, dtype: Any) -> float:
        """Compute ceiling in FLOP/s for `dtype`: measured if known, else the datasheet.

        `dtype` is a key of `peak` ("fp32", "fp32_matrix", "tf32", "bf16", "fp16", "fp8",
        "int8"), a torch dtype, or its name ("float32", "bfloat16", "half", ...).
        """
        key = _dtype_key(dtype)
        if key in self.measured:
            return self.measured[key]
        if key in self.peak:
            return self.peak[key]
        raise InputError(
            f"{self.key} ({self.arch}) has no {key} peak; known: {', '.join(self.peak)}"
        )

    def is_measured(self, quantity: Any) -> bool:
        """Whether `bandwidth()` ("bandwidth") or `peak_flops(quantity)` is a measurement."""
        return (quantity if quantity == "bandwidth" else _dtype_key(quantity)) in self.measured

    def dot_peak_flops(self, input_precision: str) -> float:
        """Upper bound in FLOP/s for an fp32 `tl.dot` with this `input_precision`.

        Emulation modes issue several low-precision products per fp32 product (tf32x3 and
        bf16x3 three, bf16x6 six), so their ceiling is the matrix peak divided by that
        count; split and cast overhead is ignored. "ieee" runs on MFMA on AMD and on the
        FMA units on NVIDIA.
        """
        if input_precision not in self.dot_precisions:
            raise InputError(
                f"input_precision {input_precision!r} is not available on {self.key} "
                f"({self.arch}); choose one of: {', '.join(self.dot_precisions)}"
            )
        if input_precision == "ieee":
            return self.peak_flops("fp32_matrix" if "fp32_matrix" in self.peak else "fp32")
        base, _, times = input_precision.partition("x")
        return self.peak_flops(base) / (int(times) if times else 1)


_DTYPE_NAMES = {
    "float32": "fp32",
    "float": "fp32",
    "f32": "fp32",
    "tensorfloat32": "tf32",
    "bfloat16": "bf16",
    "float16": "fp16",
    "half": "fp16",
    "f16": "fp16",
}


def _dtype_key(dtype: Any) -> str:
    name = str(dtype).lower().removeprefix("torch.")
    if name.startswith(("float8", "fp8")):
        return "fp8"
    return _DTYPE_NAMES.get(name, name)


# H200 ceilings measured here (DESIGN.md, "Toolchain facts"): device-to-device copy and
# 8192^3 matmuls through PyTorch (cuBLAS).
_H200_MEASURED = {"bandwidth": 4.25 * T, "fp32": 51 * T, "tf32": 367 * T, "bf16": 688 * T}

_HOPPER_PEAK = {  # H100 SXM5 and H200 SXM share the GH100 SM count and clocks
    "fp32": 67 * T,
    "tf32": 494.7 * T,
    "bf16": 989.4 * T,
    "fp16": 989.4 * T,
    "fp8": 1978.9 * T,
    "int8": 1978.9 * T,
}

_NV_COMMON = dict(backend="cuda", warp_size=32, max_threads_per_block=1024)
_AMD_COMMON = dict(
    backend="hip",
    warp_size=64,
    regs_per_sm=_AMD_REGS,
    max_regs_per_thread=_AMD_MAX_REGS,
    max_threads_per_block=1024,
    max_threads_per_sm=2048,  # 8 waves per SIMD on gfx90a/942/950 (LLVM getMaxWavesPerEU)
)

_ALL: tuple[Target, ...] = (
    Target(
        key="a100",
        product="NVIDIA A100 SXM4 80GB",
        arch="sm_80",
        triton_arch=80,
        sm_count=108,
        smem_per_block=163 * KiB,
        smem_per_sm=164 * KiB,
        regs_per_sm=_NV_REGS,
        max_regs_per_thread=_NV_MAX_REGS,
        max_threads_per_sm=2048,
        l2_bytes=40 * MiB,
        matrix_dtypes=("tf32", "bf16", "fp16", "int8", "int4", "fp64"),
        peak={"fp32": 19.5 * T, "tf32": 156 * T, "bf16": 312 * T, "fp16": 312 * T,
              "int8": 624 * T},
        mem_bandwidth=2039e9,
        memory_bytes=80 * GiB,
        dot_precisions=_CUDA_DOT,
        aliases=("a100sxm", "a100sxm4", "a10080gb"),
        source="NVIDIA A100 datasheet (SXM 80GB); CUDA C++ Programming Guide, cc 8.0",
        **_NV_COMMON,
    ),
    Target(
        key="l40s",
        product="NVIDIA L40S",
        arch="sm_89",
        triton_arch=89,
        sm_count=142,
        smem_per_block=99 * KiB,
        smem_per_sm=100 * KiB,
        regs_per_sm=_NV_REGS,
        max_regs_per_thread=_NV_MAX_REGS,
        max_threads_per_sm=1536,
        l2_bytes=96 * MiB,
        matrix_dtypes=("tf32", "bf16", "fp16", "fp8", "int8", "int4"),
        peak={"fp32": 91.6 * T, "tf32": 183 * T, "bf16": 362.05 * T, "fp16": 362.05 * T,
              "fp8": 733 * T, "int8": 733 * T},
        mem_bandwidth=864e9,
        memory_bytes=48 * GiB,
        dot_precisions=_CUDA_DOT,
        source="NVIDIA L40S datasheet; CUDA C++ Programming Guide, cc 8.9",
        notes="GDDR6 (ECC), not HBM",
        **_NV_COMMON,
    ),
    Target(
        key="h100",
        product="NVIDIA H100 SXM5 80GB",
        arch="sm_90",
        triton_arch=90,
        sm_count=132,
        smem_per_block=227 * KiB,
        smem_per_sm=228 * KiB,
        regs_per_sm=_NV_REGS,
        max_regs_per_thread=_NV_MAX_REGS,
        max_threads_per_sm=2048,
        l2_bytes=50 * MiB,
        matrix_dtypes=("tf32", "bf16", "fp16", "fp8", "int8", "fp64"),
        peak=_HOPPER_PEAK,
        mem_bandwidth=3.35 * T,
        memory_bytes=80 * GiB,
        dot_precisions=_CUDA_DOT,
        aliases=("h100sxm", "h100sxm5"),
        source="NVIDIA H100 datasheet (SXM5, dense = half the sparse figures); "
        "CUDA C++ Programming Guide, cc 9.0",
        **_NV_COMMON,
    ),
    Target(
        key="h200",
        product="NVIDIA H200 SXM 141GB",
        arch="sm_90",
        triton_arch=90,
        sm_count=132,
        smem_per_block=227 * KiB,
        smem_per_sm=228 * KiB,
        regs_per_sm=_NV_REGS,
        max_regs_per_thread=_NV_MAX_REGS,
        max_threads_per_sm=2048,
        l2_bytes=60 * MiB,  # the H200 here reports 60 MiB; H100 SXM5 has 50
        matrix_dtypes=("tf32", "bf16", "fp16", "fp8", "int8", "fp64"),
        peak=_HOPPER_PEAK,
        mem_bandwidth=4.8 * T,
        memory_bytes=141 * GiB,
        dot_precisions=_CUDA_DOT,
        measured=_H200_MEASURED,
        aliases=("h200sxm",),
        source="NVIDIA H200 datasheet (SXM, dense = half the sparse figures); L2 and limits "
        "from torch.cuda.get_device_properties on the H200 here; measured: DESIGN.md "
        "(device-to-device copy; 8192^3 torch matmul)",
        notes="same GH100 compute as the H100 SXM; HBM3e 4.8 TB/s, 141 GB (139.8 GiB usable) "
        "and a 60 MiB L2 differ",
        **_NV_COMMON,
    ),
    Target(
        key="b200",
        product="NVIDIA B200 (HGX, 1000 W)",
        arch="sm_100",
        triton_arch=100,
        sm_count=148,
        smem_per_block=227 * KiB,
        smem_per_sm=228 * KiB,
        regs_per_sm=_NV_REGS,
        max_regs_per_thread=_NV_MAX_REGS,
        max_threads_per_sm=2048,
        l2_bytes=126 * MiB + 512 * KiB,
        matrix_dtypes=("tf32", "bf16", "fp16", "fp8", "fp6", "fp4", "int8", "fp64"),
        peak={"fp32": 80 * T, "tf32": 1100 * T, "bf16": 2250 * T, "fp16": 2250 * T,
              "fp8": 4500 * T, "int8": 4500 * T},
        mem_bandwidth=8 * T,
        memory_bytes=180 * GiB,
        dot_precisions=_CUDA_DOT,
        source="NVIDIA Blackwell technical brief, HGX B200 per GPU (dense); "
        "Blackwell tuning guide, cc 10.0; L2 as the driver reports it (126.5 MiB)",
        notes="fp32 is quoted as 75 TFLOP/s in older HGX B200 datasheets; the driver's bus "
        "width implies about 7.7 TB/s rather than 8; HGX B200 ships 180 GB of 192 GB HBM3e",
        **_NV_COMMON,
    ),
    Target(
        key="mi250x",
        product="AMD Instinct MI250X (one GCD)",
        arch="gfx90a",
        triton_arch="gfx90a",
        sm_count=110,
        smem_per_block=64 * KiB,
        smem_per_sm=64 * KiB,
        l2_bytes=8 * MiB,
        matrix_dtypes=("fp64", "fp32", "bf16", "fp16", "int8"),
        peak={"fp32": 23.95 * T, "fp32_matrix": 47.85 * T, "bf16": 191.5 * T,
              "fp16": 191.5 * T, "int8": 191.5 * T},
        mem_bandwidth=1.6384 * T,
        memory_bytes=64 * GiB,
        dot_precisions=_HIP_DOT,
        aliases=("mi250",),
        source="AMD Instinct MI250X datasheet halved per GCD; ROCm GPU specifications table",
        notes="the package is two GCDs that the runtime shows as two devices; one device "
        "(what a kernel runs on) is modelled. Packed fp32 reaches 2x the vector figure. "
        "'mi250' resolves here too though the MI250 has 104 CUs per GCD",
        **_AMD_COMMON,
    ),
    Target(
        key="mi300x",
        product="AMD Instinct MI300X",
        arch="gfx942",
        triton_arch="gfx942",
        sm_count=304,
        smem_per_block=64 * KiB,
        smem_per_sm=64 * KiB,
        l2_bytes=32 * MiB,
        llc_bytes=256 * MiB,
        matrix_dtypes=("fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "int8"),
        peak={"fp32": 163.4 * T, "fp32_matrix": 163.4 * T, "tf32": 653.7 * T,
              "bf16": 1307.4 * T, "fp16": 1307.4 * T, "fp8": 2614.9 * T, "int8": 2614.9 * T},
        mem_bandwidth=5.3 * T,
        memory_bytes=192 * GiB,
        dot_precisions=_CDNA3_DOT,
        aliases=("mi300",),
        source="AMD Instinct MI300X datasheet (dense); ROCm GPU specifications table",
        notes="L2 is 4 MiB per XCD x 8 (torch reports one XCD's 4 MiB); fp32 vector counts "
        "packed fp32; tf32 here is CDNA3 xf32",
        **_AMD_COMMON,
    ),
    Target(
        key="mi355x",
        product="AMD Instinct MI355X",
        arch="gfx950",
        triton_arch="gfx950",
        sm_count=256,
        smem_per_block=160 * KiB,
        smem_per_sm=160 * KiB,
        l2_bytes=32 * MiB,
        llc_bytes=256 * MiB,
        matrix_dtypes=("fp64", "fp32", "bf16", "fp16", "fp8", "fp6", "fp4", "int8"),
        peak={"fp32": 157.3 * T, "fp32_matrix": 157.3 * T, "bf16": 2516.6 * T,
              "fp16": 2516.6 * T, "fp8": 5033.2 * T, "int8": 5033.2 * T},
        mem_bandwidth=8 * T,
        memory_bytes=288 * GiB,
        dot_precisions=_HIP_DOT,
        aliases=("mi355",),
        source="AMD Instinct MI355X datasheet (dense); ROCm GPU specifications table",
        notes="CDNA4 drops xf32, hence no tf32; L2 is 4 MiB per XCD x 8",
        **_AMD_COMMON,
    ),
)

TARGETS: dict[str, Target] = {t.key: t for t in _ALL}

# The product an arch name stands for. sm_90 means the H200 because that is the GPU
# kernelcraft is measured and tuned on; ask for "h100" to get the H100.
ARCH_DEFAULTS: dict[str, str] = {
    "sm_80": "a100",
    "sm_89": "l40s",
    "sm_90": "h200",
    "sm_100": "b200",
    "gfx90a": "mi250x",
    "gfx942": "mi300x",
    "gfx950": "mi355x",
}


def _supported() -> str:
    return ", ".join([*ARCH_DEFAULTS, *TARGETS])


def _norm(name: str) -> str:
    """Lower-case, drop the ROCm feature suffix, separators and vendor words."""
    s = name.strip().lower().split(":")[0]
    s = re.sub(r"[\s_\-/]+", "", s)
    for prefix in ("nvidia", "amdinstinct", "amd", "instinct"):
        s = s.removeprefix(prefix)
    return s


_NAMES: dict[str, str] = {}
for _t in _ALL:
    for _n in (_t.key, *_t.aliases):
        _NAMES[_norm(_n)] = _t.key
for _arch, _key in ARCH_DEFAULTS.items():
    _NAMES[_norm(_arch)] = _key
del _t, _n, _arch, _key

# "sm_90", "sm90", "90", "9.0", "sm_90a", "compute_90", "10.0", "sm_100a"
_CUDA_ARCH = re.compile(r"(?:sm|compute|cuda)?(\d{1,3})(?:\.(\d))?[af]?")


def resolve(name: str) -> Target:
    """The target for an arch ("sm_90", "90", "9.0", "gfx942") or a product ("H100", "mi300").

    An arch stands for its default product (ARCH_DEFAULTS); unknown names raise InputError.
    """
    s = _norm(name)
    key = _NAMES.get(s)
    if key is None and (m := _CUDA_ARCH.fullmatch(s)):
        cc = int(m[1]) * 10 + int(m[2]) if m[2] is not None else int(m[1])
        key = ARCH_DEFAULTS.get(f"sm_{cc}")
    if key is None:
        raise InputError(f"unknown target {name!r}; supported: {_supported()}")
    return TARGETS[key]


def resolve_many(spec: str) -> list[Target]:
    """Targets of a comma-separated list, duplicates (by product) dropped, order kept."""
    out: dict[str, Target] = {}
    for part in spec.split(","):
        if part.strip():
            t = resolve(part)
            out.setdefault(t.key, t)
    if not out:
        raise InputError(f"no target given; supported: {_supported()}")
    return list(out.values())


def match_device(name: str, arch: str, sm_count: int | None = None) -> Target | None:
    """The table entry for a device the runtime describes, or None if its arch is unknown.

    The product name decides among entries of the device's arch (an "NVIDIA H100 80GB HBM3"
    is the H100, not sm_90's default H200); otherwise the arch's default. A device whose SM
    count differs from the entry's (H100 PCIe, MI300A, MI250) gets a copy with its own SM
    count, peaks scaled by it, and no measured ceilings, since those belong to the product
    they were measured on.
    """
    arch = arch.split(":")[0].strip().lower()
    dev = re.sub(r"[^a-z0-9]", "", name.lower())
    best: Target | None = None
    best_len = 0
    for t in _ALL:
        if t.arch != arch:
            continue
        for token in (t.key, *t.aliases):
            if token in dev and len(token) > best_len:
                best, best_len = t, len(token)
    if best is None and arch in ARCH_DEFAULTS:
        best = TARGETS[ARCH_DEFAULTS[arch]]
    if best is None or sm_count is None or sm_count == best.sm_count:
        return best
    scale = sm_count / best.sm_count
    return replace(
        best,
        product=name,
        sm_count=sm_count,
        peak={k: v * scale for k, v in best.peak.items()},
        measured={},
        notes=f"detected; derived from {best.product} with peaks scaled by SM/CU count "
        f"(clocks and bandwidth not known)",
    )


def detect() -> Target | None:
    """The target of GPU 0 as torch sees it, or None when there is no (known) GPU.

    Reads `torch.cuda.get_device_properties` only: triton's driver must not be touched on
    a machine without a GPU, and this must work on such a machine.
    """
    try:
        import torch
    except ImportError:
        return None
    try:
        if not torch.cuda.is_available():
            return None
        props = torch.cuda.get_device_properties(0)
    except Exception:  # a broken driver or runtime means no usable GPU here
        return None
    if getattr(torch.version, "hip", None):
        arch = str(getattr(props, "gcnArchName", "") or "").split(":")[0]
    else:
        arch = f"sm_{props.major}{props.minor}"
    t = match_device(props.name, arch, props.multi_processor_count)
    if t is None:
        warnings.warn(
            f"GPU {props.name!r} ({arch}) is not in kernelcraft's target table; "
            f"supported: {_supported()}",
            stacklevel=2,
        )
    return t


def _tflops(t: Target, dtype: str) -> str:
    if dtype not in t.peak and dtype not in t.measured:
        return "-"
    mark = "*" if t.is_measured(dtype) else ""
    return f"{t.peak_flops(dtype) / T:.1f}{mark}"


def format_table(targets: Iterable[Target] | None = None) -> Table:
    """A rich table of targets (all by default) for `kernelcraft targets`."""
    from rich.table import Table

    rows = list(TARGETS.values() if targets is None else targets)
    table = Table(title="kernelcraft targets")
    for col in ("arch", "product", "backend"):
        table.add_column(col)
    for col in ("SMs/CUs", "warp", "smem/LDS\nper block", "regs\nper SM/CU", "bandwidth\nTB/s",
                "fp32\nTFLOP/s", "tf32\nTFLOP/s", "bf16\nTFLOP/s"):
        table.add_column(col, justify="right")
    table.add_column("dot precisions")
    for t in rows:
        bw = f"{t.bandwidth() / T:.2f}{'*' if t.is_measured('bandwidth') else ''}"
        table.add_row(
            t.arch,
            t.product,
            t.backend,
            str(t.sm_count),
            str(t.warp_size),
            f"{t.smem_per_block // KiB} KiB",
            f"{t.regs_per_sm // 1024}K",
            bw,
            _tflops(t, "fp32"),
            _tflops(t, "tf32"),
            _tflops(t, "bf16"),
            ", ".join(t.dot_precisions),
        )
    caption = "datasheet peaks, dense; fp32 = vector units"
    if any(t.measured for t in rows):
        caption = "* measured (DESIGN.md); otherwise " + caption
    table.caption = caption
    return table
