"""Space generators: the tunable knobs of each template family on a target.

The knobs are the launch configuration each generated wrapper otherwise picks with its
heuristic (and reads from ``_KC_TUNED`` when tuned), so every config runs through the same
kernel source. Constraints prune what cannot run or cannot pay off on the target (shared
memory/LDS, accumulator registers, tiles larger than the problem) before anything is
built; the heuristic's own pick is the space's default, the first seed of every search.
"""

from __future__ import annotations

import math
from typing import Any

from kernelcraft.codegen.common import KernelSource
from kernelcraft.space import Boolean, Choice, Config, PowerOfTwo, Space
from kernelcraft.target import Target

__all__ = ["AMD_OPTIONS", "Boolean", "build_spec", "space_for", "tuned_key"]

#: Launch options of Triton's AMD backend that matmul configs may carry.
AMD_OPTIONS = ("waves_per_eu", "matrix_instr_nonkdim", "kpack")


def _p2(x: int) -> int:
    return 1 << max(0, int(x) - 1).bit_length()


def _target_ctx(t: Target) -> dict[str, float]:
    return {"sms": t.sm_count, "warp": t.warp_size, "smem": t.smem_per_block,
            "bandwidth": t.bandwidth(), "amd": float(t.backend == "hip")}


def space_for(k: KernelSource, family: str, target: Target) -> Space | None:
    """The space of kernel ``k`` (a ``family`` template) on ``target``; None if not tunable."""
    if family == "matmul" and "at" in k.config:
        return _matmul(k, target)
    if family == "reduction" and k.config.get("at_capture_sizes"):
        return _reduction(k, target)
    if family in ("pointwise", "pool", "scatter") and "at" in k.config:
        return _pointwise(k, target, family)
    if family == "conv" and "at" in k.config:
        return _conv(k, target)
    if family == "attention" and "at" in k.config:
        return _attention(k, target)
    if family == "scan" and "at" in k.config:
        return _scan(k, target)
    if family == "topk" and "at" in k.config:
        return _topk(k, target)
    return None


def tuned_key(k: KernelSource, family: str) -> tuple[int, ...]:
    """The sizes key the wrapper looks its tuned config up by (see the wrappers)."""
    if family == "matmul":
        at = k.config["at"]
        dom = (at["batch"], at["M"], at["N"]) if k.config.get("batched") else (at["M"], at["N"])
        return (*dom, at["K"])
    if family == "reduction":
        at = k.config["at_capture_sizes"]
        return (at["K"], at["R"])
    if family in ("conv", "attention", "scan", "topk"):
        return tuple(k.config["at"]["key"])
    return (k.config["at"]["numel"],)


def _matmul(k: KernelSource, t: Target) -> Space:
    at = k.config["at"]
    M, N, K, B = at["M"], at["N"], at["K"], at.get("batch", 1)
    item = int(k.config.get("itemsize", 4))
    ctx = {"M": M, "N": N, "K": K, "batch": B, "itemsize": item,
           "flops": 2.0 * B * M * N * K, "bytes": float(item * B * (M * K + K * N + M * N)),
           **_target_ctx(t)}
    stages = (1, 2) if t.backend == "hip" else (1, 2, 3, 4, 5)
    knobs: tuple[Any, ...] = (
        PowerOfTwo("BM", 16, 256), PowerOfTwo("BN", 16, 256), PowerOfTwo("BK", 16, 128),
        Choice("GROUP_M", (1, 8)), Choice("num_warps", (2, 4, 8)), Choice("num_stages", stages))
    if t.backend == "hip":  # CDNA: occupancy hint and the MFMA instruction shape
        knobs += (Choice("waves_per_eu", (0, 1, 2, 4)), Choice("matrix_instr_nonkdim", (16, 32)))
        if t.arch != "gfx950":  # kpack is deprecated (forced to 1) from gfx950 on
            knobs += (Choice("kpack", (1, 2)),)

    def fits(c: Config) -> str | None:
        if c["BM"] > max(16, _p2(M)) or c["BN"] > max(16, _p2(N)) or c["BK"] > max(16, _p2(K)):
            return "tile larger than the problem"
        if max(1, c["num_stages"]) * (c["BM"] + c["BN"]) * c["BK"] * item > t.smem_per_block:
            return "operand buffers exceed shared memory"
        acc = c["BM"] * c["BN"] / (c["num_warps"] * t.warp_size)
        if acc > 128:
            return f"{acc:.0f} accumulators per thread (register spills)"
        if c["BM"] * c["BN"] < 64 * c["num_warps"] * t.warp_size // 32:
            return "tile too small for the warps"
        return None

    from kernelcraft.codegen.matmul import _kc_mm_heuristic

    pick = _kc_mm_heuristic(M, N, K, item, t.backend, t.sm_count, t.smem_per_block)
    default = dict(zip(("BM", "BN", "BK", "GROUP_M", "num_warps", "num_stages"), pick,
                       strict=True))
    default.update(waves_per_eu=0, matrix_instr_nonkdim=16, kpack=1)  # Triton's defaults
    return Space("matmul", knobs, (fits,), ctx, _default(knobs, default))


def _reduction(k: KernelSource, t: Target) -> Space:
    at = k.config["at_capture_sizes"]
    K, R = int(at["K"]), int(at["R"])
    split_ok = bool(k.config.get("splittable"))
    ctx = {"K": K, "R": R, "bytes": float(4 * K * R), "passes": k.config.get("passes", 1),
           **_target_ctx(t)}
    knobs: tuple[Any, ...] = (PowerOfTwo("BLOCK_K", 1, 1024), PowerOfTwo("BLOCK_R", 1, 16384),
                              Choice("num_warps", (1, 2, 4, 8, 16)))
    if split_ok:
        knobs += (PowerOfTwo("SPLIT", 1, 1024),)

    def fits(c: Config) -> str | None:
        if c["BLOCK_K"] > _p2(K) or c["BLOCK_R"] > _p2(R):
            return "tile larger than the problem"
        tile = c["BLOCK_K"] * c["BLOCK_R"]
        if tile > 16384:
            return "tile over 16384 elements (register spills)"
        if tile < c["num_warps"] * t.warp_size:
            return "fewer elements than threads"
        if tile > 64 * c["num_warps"] * t.warp_size:
            return "over 64 elements per thread (register spills)"
        if split_ok and c["SPLIT"] > 1 and c["SPLIT"] > math.ceil(R / c["BLOCK_R"]):
            return "more splits than row chunks"
        return None

    default = {"BLOCK_K": at.get("BLOCK_K"), "BLOCK_R": at.get("BLOCK_R"),
               "num_warps": at.get("num_warps")}
    if split_ok:
        default["SPLIT"] = _p2(int(at.get("split", 1)))
    return Space("reduction", knobs, (fits,), ctx, _default(knobs, default))


def _pointwise(k: KernelSource, t: Target, family: str = "pointwise") -> Space:
    """One output element per lane in blocks (pooling too: its window is the lane's)."""
    n = int(k.config["at"]["numel"])
    ctx = {"numel": n, "bytes": float(4 * n * (len(k.inputs) + len(k.outputs))),
           **_target_ctx(t)}
    knobs = (PowerOfTwo("BLOCK", 64, 16384), Choice("num_warps", (1, 2, 4, 8, 16)),
             Choice("FASTDIV", (False, True)))

    def fits(c: Config) -> str | None:
        per_thread = c["BLOCK"] / (c["num_warps"] * t.warp_size)
        if per_thread < 1:
            return "fewer elements than threads"
        if per_thread > 64:
            return "over 64 elements per thread (register spills)"
        if c["BLOCK"] > max(64, _p2(n)):
            return "block larger than the problem"
        return None

    default = {"BLOCK": k.config.get("BLOCK"), "num_warps": k.config.get("num_warps"),
               "FASTDIV": False}
    return Space(family, knobs, (fits,), ctx, _default(knobs, default))


def _scan(k: KernelSource, t: Target) -> Space:
    """Rows per program, chunk length and warps of a scan (each program walks its rows'
    chunks in order, so rows per program trade parallelism against chunk width)."""
    K, R = (int(v) for v in k.config["at"]["key"])
    ctx = {"K": K, "R": R, "bytes": float(4 * K * R * (len(k.inputs) + len(k.outputs))),
           "inner": float(bool(k.config["at"].get("inner"))), **_target_ctx(t)}
    knobs = (PowerOfTwo("BLOCK_K", 1, 128), PowerOfTwo("BLOCK_R", 8, 2048),
             Choice("num_warps", (1, 2, 4, 8)))

    def fits(c: Config) -> str | None:
        tile = c["BLOCK_K"] * c["BLOCK_R"]
        if tile < c["num_warps"] * t.warp_size:
            return "fewer elements than threads"
        if tile > 8192:
            return "over 8192 elements per tile (register spills)"
        if c["BLOCK_K"] > max(1, _p2(K)) or c["BLOCK_R"] > max(8, _p2(R)):
            return "tile larger than the problem"
        return None

    default = {n: k.config.get(n) for n in ("BLOCK_K", "BLOCK_R", "num_warps")}
    return Space("scan", knobs, (fits,), ctx, _default(knobs, default))


def _topk(k: KernelSource, t: Target) -> Space:
    """Rows per program, chunk length and warps of a top-k: the scan's knobs, with each
    row's buffer of KP 64-bit keys counted in the registers."""
    K, R = (int(v) for v in k.config["at"]["key"])
    KP = int(k.config["at"]["KP"])
    ctx = {"K": K, "R": R, "KP": KP, "bytes": float(4 * K * R * len(k.inputs)),
           "inner": float(bool(k.config["at"].get("inner"))), **_target_ctx(t)}
    knobs = (PowerOfTwo("BLOCK_K", 1, 128), PowerOfTwo("BLOCK_R", 8, 2048),
             Choice("num_warps", (1, 2, 4, 8)))

    def fits(c: Config) -> str | None:
        bk, br = c["BLOCK_K"], c["BLOCK_R"]
        if bk * max(br, KP) < c["num_warps"] * t.warp_size:
            return "fewer elements than threads"
        if bk * (br + KP) > 8192:
            return "over 8192 keys per tile (register spills)"
        if bk > max(1, _p2(K)) or br > max(8, _p2(R)):
            return "tile larger than the problem"
        return None

    default = {n: k.config.get(n) for n in ("BLOCK_K", "BLOCK_R", "num_warps")}
    return Space("topk", knobs, (fits,), ctx, _default(knobs, default))


def _conv(k: KernelSource, t: Target) -> Space:
    """Implicit-GEMM convolution tiles, warps and stages.

    The limits keep every config spill-free on sm_90 and gfx942; they are what the
    cross-compiled grid showed (without a GPU, Triton 3.9: the whole space of a 2-D NCHW
    layer, and the 20 heaviest configs of 1-D/3-D, transposed, flat-walk, channels-last and
    16-bit variants; tests/test_conv.py rebuilds a few). fp32 dots split both operands
    (bf16x3, tf32x3) and Triton keeps a second accumulator for the small terms, so on
    NVIDIA an fp32 tile holds at most 32 accumulators per thread (64 for the tap-major walk
    over NCHW inputs with 8 warps and BLOCK_K <= 32, and for channels-innermost inputs,
    which take vector loads; 16 below 64 rows, where there is no warp-group MMA) and at
    most 32 values of either operand tile; the flat walk (every
    dtype) takes BLOCK_K <= 32, 64 columns and 16 input values per thread at most; on
    CDNA 32 accumulators with BLOCK_K <= 32. 16-bit tiles take up to 64 accumulators per
    thread. On CDNA the flat walk runs unpipelined (3-D: at most 64 rows) and 3-D or
    transposed tap-major walks pipelined (else scalar registers spill). Direct groups (few
    channels per group, no dot) tune only the pixels per program and the warps.
    """
    from kernelcraft.codegen.conv import _kc_conv_config, _kc_conv_direct, _kc_conv_tap_major

    at = k.config["at"]
    M, N, K, item = at["M"], at["N"], at["K"], at["itemsize"]
    C, taps = at.get("C", K), at.get("taps", 1)
    transposed, cin_inner = bool(at.get("transposed")), bool(at.get("cin_inner"))
    plane = bool(at.get("pixels"))  # the PLANE walk: weight x input, so the MMA's M is N
    dims = int(k.config.get("dims", 2))
    ctx = {"M": M, "N": N, "K": K, "C": C, "taps": taps, "groups": at["groups"],
           "itemsize": item, "flops": 2.0 * M * N * K * at["groups"], **_target_ctx(t)}
    amd = t.backend == "hip"
    sm = t.triton_arch if isinstance(t.triton_arch, int) else None  # NVIDIA: 90 for sm_90
    pick = _kc_conv_config(M, N, K, item, t.backend, C, transposed, cin_inner, sm,
                           int(at.get("pixels", 0)), int(at.get("phase_k", 0)))
    default = dict(zip(("BLOCK_M", "BLOCK_N", "BLOCK_K", "num_warps", "num_stages"), pick,
                       strict=True))
    if _kc_conv_direct(C, N):  # no dot: pixels per program and warps; the rest is fixed
        direct = (PowerOfTwo("BLOCK_M", 64, 2048), Choice("BLOCK_N", (default["BLOCK_N"],)),
                  Choice("BLOCK_K", (16,)), Choice("num_warps", (2, 4, 8)),
                  Choice("num_stages", (1,)))

        def fits_direct(c: Config) -> str | None:
            if c["BLOCK_M"] * c["BLOCK_N"] > 32 * c["num_warps"] * t.warp_size:
                return "over 32 accumulators per thread (register spills)"
            return None

        return Space("conv", direct, (fits_direct,), ctx, _default(direct, default))
    stages = (1, 2, 3) if amd else (2, 3, 4)
    knobs = (PowerOfTwo("BLOCK_M", 16, 128), PowerOfTwo("BLOCK_N", 16, 128),
             PowerOfTwo("BLOCK_K", 16, 64), Choice("num_warps", (4, 8)),
             Choice("num_stages", stages))
    fp32 = item >= 4

    def fits(c: Config) -> str | None:
        bm, bn, bk, warps = c["BLOCK_M"], c["BLOCK_N"], c["BLOCK_K"], c["num_warps"]
        if bm > max(16, _p2(M)) or bn > max(16, _p2(N)) or bk > max(16, _p2(K)):
            return "tile larger than the problem"
        if max(1, c["num_stages"]) * (bm + bn) * bk * item > t.smem_per_block:
            return "operand buffers exceed shared memory"
        if warps == 8 and bm < 64:
            return "8 warps need 64 rows"
        threads = warps * t.warp_size
        acc = bm * bn / threads
        tap_major = _kc_conv_tap_major(C, taps, bk, transposed)
        if not fp32:
            most = 64
        elif amd:
            most = 32
        elif (bn if plane else bm) < 64:
            most = 16
        elif (cin_inner or plane) and (sm is None or sm >= 90):  # vector loads, wgmma
            most = 64
        else:
            most = 64 if warps == 8 and bk <= 32 and tap_major else 32
        if acc > most:
            return f"over {most} accumulators per thread (register spills)"
        if fp32 and not amd and max(bm, bn) * bk / threads > 32:
            return "operand tiles over 32 values per thread (register spills)"
        if not amd and bk > 32 and not tap_major:
            return "BLOCK_K over 32 with the flat walk (register spills)"
        if not amd and not tap_major and (bm * bk / threads > 16 or bn > 64):
            return "flat walk over 16 input values per thread or 64 columns (register spills)"
        if fp32 and amd and bk > 32:
            return "fp32 BLOCK_K over 32 on CDNA (register spills)"
        if amd and not tap_major and c["num_stages"] > 1:
            return "pipelined flat walk on CDNA (scalar register spills)"
        if amd and tap_major and (dims == 3 or transposed) and c["num_stages"] < 2:
            return "unpipelined 3-D or transposed tap-major walk on CDNA (scalar register spills)"
        if amd and not tap_major and dims == 3 and bm > 64:
            return "3-D flat walk over 64 rows on CDNA (scalar register spills)"
        return None

    return Space("conv", knobs, (fits,), ctx, _default(knobs, default))


def _attention(k: KernelSource, t: Target) -> Space:
    """Flash attention: query and key tiles, warps, stages (and CDNA's launch options)."""
    from kernelcraft.codegen.attention import (
        _KC_ATTN_DOT_PRECISION,
        _kc_attention_config,
        _kc_attention_split_mode,
    )

    at = k.config["at"]
    B, H, M, N, D, Dv, item = (at[x] for x in ("B", "H", "M", "N", "D", "Dv", "itemsize"))
    bd, bdv = max(16, _p2(D)), max(16, _p2(Dv))
    work = 0.5 if k.config.get("causal") else 1.0
    ctx = {"B": B, "H": H, "M": M, "N": N, "D": D, "itemsize": item,
           "flops": 2.0 * B * H * M * N * (D + Dv) * work,
           "bytes": float(item * B * H * ((M + N) * D + (N + M) * Dv)), **_target_ctx(t)}
    stages = (1, 2) if t.backend == "hip" else (1, 2, 3, 4)
    knobs: tuple[Any, ...] = (PowerOfTwo("BLOCK_M", 16, 256), PowerOfTwo("BLOCK_N", 16, 256),
                              Choice("num_warps", (2, 4, 8)), Choice("num_stages", stages))
    if t.backend == "hip":
        knobs += (Choice("waves_per_eu", (0, 1, 2, 4)), Choice("matrix_instr_nonkdim", (16, 32)))
        if t.arch != "gfx950":
            knobs += (Choice("kpack", (1, 2)),)
    split = _kc_attention_split_mode(item, t.backend, _KC_ATTN_DOT_PRECISION.get(t.backend, ""),
                                     D, Dv)
    if split:  # fp32 on NVIDIA: pieces of Q, K, V split beforehand (Q and K as scaled fp16,
        # or bf16), of K and V, or none
        knobs += (Choice("SPLIT", (0, 7, 15, 31)),)
    from kernelcraft.codegen.attention_group import tma_on

    tma = tma_on(at, t)
    if tma:  # 16-bit K and V through TMA descriptors or pointers
        knobs += (Choice("TMA", (0, 1)),)
    q_tiles = 0 if t.backend == "hip" else 1  # Q staged in shared memory on NVIDIA

    def fits(c: Config) -> str | None:
        bm, bn = c["BLOCK_M"], c["BLOCK_N"]
        if bm > max(16, _p2(M)) or bn > max(16, _p2(N)):
            return "tile larger than the problem"
        stages = max(1, c["num_stages"])
        if c.get("SPLIT", 0):  # pieces: 3 of Q and K (2 with bit 16), 2 of V
            qk = 2 if c["SPLIT"] & 16 else 3
            need = (stages * bn * (qk * bd + 2 * bdv) + q_tiles * qk * bm * bd) * 2
        elif c.get("TMA", 0):  # K and V stages, Q, the barriers
            need = (stages * (bd + bdv) * bn + bm * bd) * item + 1024
        else:
            need = (stages * 2 * bn + q_tiles * bm) * bd * item
        if need > t.smem_per_block:
            return "K/V stages exceed shared memory"
        if bm * (bn + bd + bdv) / (c["num_warps"] * t.warp_size) > 192:
            return "score, Q and accumulator tiles over 192 values per thread (register spills)"
        return None

    pick = _kc_attention_config(M, N, D, item, t.backend, t.smem_per_block,
                                bool(k.config.get("causal")), split, Dv, tma)
    default = dict(zip(("BLOCK_M", "BLOCK_N", "num_warps", "num_stages"), pick, strict=True))
    default.update(waves_per_eu=0, matrix_instr_nonkdim=16, kpack=1,  # Triton's defaults
                   SPLIT=split, TMA=int(tma))
    return Space("attention", knobs, (fits,), ctx, _default(knobs, default))


def _default(knobs: tuple[Any, ...], values: dict[str, Any]) -> Config | None:
    if any(values.get(kn.name) not in kn.values() for kn in knobs):  # not in this space
        return None
    return Config({kn.name: values[kn.name] for kn in knobs})


def _attention_split(spec: dict[str, Any], consts: dict[str, Any], k: KernelSource,
                     split: int) -> None:
    """The attention spec (emitted unsplit) as launched with ``SPLIT=split``."""
    from kernelcraft.codegen.attention_group import respec

    spec["signature"] = dict(spec["signature"])
    spec["attrs"] = dict(spec.get("attrs") or {})
    respec(spec["signature"], consts, spec["attrs"], k.config["at"], split)


def build_spec(k: KernelSource, family: str, config: Config | None,
               target: Target | None = None) -> dict[str, Any]:
    """The cross-compilation spec of ``k`` (as the module's full-size variant names it)
    launched with ``config`` on ``target`` (None: the target ``k`` was emitted for); config
    None: the template's own representative config."""
    from kernelcraft.export import _rename

    spec = k.build_spec()
    spec["name"] = _rename(k.kernel_name, 0)
    if config is None:
        if family == "attention" and k.config.get("SPLIT"):
            spec["constexprs"] = dict(spec["constexprs"])
            _attention_split(spec, spec["constexprs"], k, int(k.config["SPLIT"]))
        elif family == "attention" and target is not None:
            from kernelcraft.codegen.attention_group import tma_on, tma_spec

            spec["constexprs"] = dict(spec["constexprs"])
            spec["signature"] = dict(spec["signature"])
            spec["attrs"] = dict(spec.get("attrs") or {})
            tma_spec(spec["signature"], spec["constexprs"], spec["attrs"], k.config["at"],
                     int(k.config["BLOCK_N"]), tma_on(k.config["at"], target))
        return spec
    consts = dict(spec["constexprs"])
    spec["num_warps"] = int(config["num_warps"])
    if family == "matmul":
        consts.update(BM=config["BM"], BN=config["BN"], BK=config["BK"],
                      GROUP_M=config["GROUP_M"])
        spec["num_stages"] = int(config["num_stages"])
        spec["options"] = {o: config[o] for o in AMD_OPTIONS if o in config}
    elif family == "conv":
        from kernelcraft.codegen.conv import _kc_conv_tap_major

        at = k.config["at"]
        consts.update(BLOCK_M=config["BLOCK_M"], BLOCK_N=config["BLOCK_N"],
                      BLOCK_K=config["BLOCK_K"])
        if "C" in at:  # the K walk follows BLOCK_K, as in the wrapper
            consts["TAP_MAJOR"] = consts.get("DIRECT", False) or _kc_conv_tap_major(
                at["C"], at["taps"], config["BLOCK_K"], bool(at.get("transposed")))
        spec["num_stages"] = int(config["num_stages"])
    elif family == "attention":
        from kernelcraft.codegen.attention_group import tma_on, tma_spec

        consts.update(BLOCK_M=config["BLOCK_M"], BLOCK_N=config["BLOCK_N"])
        split = int(config.get("SPLIT", k.config.get("SPLIT", 0)))
        _attention_split(spec, consts, k, split)
        at = k.config["at"]
        on = (bool(config.get("TMA", 1)) and not split
              and (tma_on(at, target) if target is not None else bool(consts.get("TMA"))))
        tma_spec(spec["signature"], consts, spec["attrs"], at, config["BLOCK_N"], on)
        spec["num_stages"] = int(config["num_stages"])
        spec["options"] = {o: config[o] for o in AMD_OPTIONS if o in config}
    elif family in ("scan", "topk"):
        consts.update(BLOCK_K=config["BLOCK_K"], BLOCK_R=config["BLOCK_R"])
    elif family == "reduction":
        R = int(k.config["at_capture_sizes"]["R"])
        consts.update(BLOCK_K=config["BLOCK_K"], BLOCK_R=config["BLOCK_R"],
                      ONE_CHUNK=config["BLOCK_R"] >= R)
        if "PARTIAL" in consts:
            consts["PARTIAL"] = int(config.get("SPLIT", 1)) > 1
    elif "XBLOCK" in consts:  # pointwise: a row of the tile (the wrapper splits BLOCK by
        consts["XBLOCK"], consts["YBLOCK"] = config["BLOCK"], 1  # the launch's shape)
        consts["FASTDIV"] = bool(config.get("FASTDIV", False))
    else:
        consts["BLOCK"] = config["BLOCK"]
        if "FASTDIV" in consts:  # pointwise and pool: as the wrapper launches it
            consts["FASTDIV"] = bool(config.get("FASTDIV", False))
    spec["constexprs"] = consts
    return spec
