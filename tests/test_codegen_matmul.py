"""The matmul template: generated modules judged correct, and kernels that build for GPUs.

The judge runs the emitted module under Triton's interpreter (CPU); the cross-compile
tests build the same kernels for sm_90 and gfx942 with fp32 emulated on tensor cores
(``input_precision="bf16x3"``), in this process, so they skip under TRITON_INTERPRET.
"""

from __future__ import annotations

import importlib.util
import os
import re
from pathlib import Path
from typing import Any

import pytest
import torch

from kernelcraft.generate import GenerateOptions, build, generate
from kernelcraft.problem import load_problem
from tests.test_gather_reduction import _runs

LINEAR_GELU = """
    import torch, torch.nn as nn, torch.nn.functional as F

    class Model(nn.Module):
        def __init__(self, d_in, d_out):
            super().__init__()
            self.fc = nn.Linear(d_in, d_out)
        def forward(self, x, r):
            return F.gelu(self.fc(x)) * 0.5 + r

    batch, d_in, d_out = 67, 45, 37
    def get_inputs(): return [torch.randn(batch, d_in), torch.randn(batch, d_out)]
    def get_init_inputs(): return [d_in, d_out]
"""

TRANSPOSED_A = """
    import torch, torch.nn as nn

    class Model(nn.Module):
        def forward(self, a_km, b):
            return a_km.T @ b

    m, k, n = 53, 71, 29
    def get_inputs(): return [torch.randn(k, m), torch.randn(k, n)]
    def get_init_inputs(): return []
"""

BMM_SCALE = """
    import torch, torch.nn as nn

    class Model(nn.Module):
        def forward(self, q, kt):
            return torch.bmm(q, kt.transpose(1, 2)) * 0.125

    batch, q_len, kv_len, dim = 3, 35, 41, 19
    def get_inputs(): return [torch.randn(batch, q_len, dim), torch.randn(batch, kv_len, dim)]
    def get_init_inputs(): return []
"""


def _judged(write: Any, tmp_path: Path, name: str, source: str) -> Any:
    path = write(f"{name}.py", source)
    gen = generate(path, GenerateOptions(out_dir=tmp_path / "out", device="cpu",
                                         build=False))
    assert any(g.kind == "matmul" for g in gen.plan.groups)
    assert not gen.extern_reasons, gen.extern_reasons
    return gen


def test_linear_bias_gelu_residual(write: Any, tmp_path: Path) -> None:
    gen = _judged(write, tmp_path, "linear_gelu", LINEAR_GELU)
    assert gen.judge.correct, (gen.judge.reason, gen.judge.detail)
    (k,) = gen.kernels.values()  # addmm, gelu, scale and residual in one kernel
    assert "tl.dot(a, b, acc=acc, input_precision=PREC)" in k.source
    assert "erf" in k.source and k.config["BM"] > 0


def test_transposed_a_odd_sizes(write: Any, tmp_path: Path) -> None:
    gen = _judged(write, tmp_path, "mm_ta", TRANSPOSED_A)
    assert gen.judge.correct, (gen.judge.reason, gen.judge.detail)
    text = gen.module_path.read_text()
    assert ".contiguous()" not in text  # the transposed view is read through its strides


def test_bmm_scale(write: Any, tmp_path: Path) -> None:
    gen = _judged(write, tmp_path, "bmm_scale", BMM_SCALE)
    assert gen.judge.correct, (gen.judge.reason, gen.judge.detail)
    (k,) = gen.kernels.values()
    assert "tl.program_id(1)" in k.source


BATCH_SPLIT = """
    import torch, torch.nn as nn

    class Model(nn.Module):
        def forward(self, q, w, k):
            # [B, 1, S, D] @ [H, D, E]: both broadcast to [B, H, ...], copied by PyTorch to
            # merge the batch dims; a key transposed in a middle dim ([B, S, H, D] -> heads)
            p = torch.matmul(q, w) * 0.5  # (the epilogue of the [B, H, ..] view)
            s = torch.matmul(q.expand(-1, w.shape[0], -1, -1), k.permute(0, 2, 3, 1))
            return p, s

    b, h, s, d, e = 2, 3, 37, 19, 13
    def get_inputs():
        return [torch.randn(b, 1, s, d), torch.randn(h, d, e), torch.randn(b, s, h, d)]
    def get_init_inputs(): return []
"""


def test_bmm_operands_read_through_their_batch_strides(write: Any, tmp_path: Path) -> None:
    """A bmm operand PyTorch copies only to merge its batch dims (a broadcast or permuted
    4-D operand) is read in place: no copy kernel, the batch index split in the kernel; the
    scale after the product's 4-D view is its epilogue."""
    gen = _judged(write, tmp_path, "batch_split", BATCH_SPLIT)
    assert gen.judge.correct, (gen.judge.reason, gen.judge.detail)
    kinds = sorted(g.kind for g in gen.plan.kernels)
    assert kinds == ["matmul", "matmul"], kinds
    split = [k for k in gen.kernels.values() if "s_ab1" in k.source]
    assert split and all("s_bb1" in k.source for k in split)
    # other batch sizes, through the same module (run-time arguments of the kernels)
    cases = [f"[torch.randn({b}, 1, {s}, 19), torch.randn({h}, 19, 13), "
             f"torch.randn({b}, {s}, {h}, 19)]" for b, h, s in ((1, 5, 8), (3, 2, 70))]
    assert _runs(gen, [], cases) == {2}


DECAY_WINDOW = """
    import torch, torch.nn as nn
    class Model(nn.Module):
        def __init__(self, d_in, d_out):
            super().__init__()
            self.fc = nn.Linear(d_in, d_out)
            self.rate = nn.Parameter(torch.linspace(0.5, 2.0, d_out))
        def forward(self, x, t):
            # t: [L, 1] positions; -t is computed on its own shape, then broadcast
            return self.fc(x) * torch.exp(-t * self.rate.abs())
    length, d_in, d_out = 67, 13, 37
    def get_inputs(): return [torch.randn(length, d_in), torch.rand(length, 1)]
    def get_init_inputs(): return [d_in, d_out]
"""


def test_epilogue_node_on_a_broadcast_shape(write: Any, tmp_path: Path) -> None:
    """A pointwise node of the epilogue on a smaller shape that broadcasts to the output
    ([L, 1] here) is computed on the tile from its broadcast loads: the matmul stays a
    kernel (it was left to PyTorch whole)."""
    gen = _judged(write, tmp_path, "decay_window", DECAY_WINDOW)
    assert gen.judge.correct, (gen.judge.reason, gen.judge.detail)
    (g,) = [g for g in gen.plan.groups if g.kind == "matmul"]
    assert {"neg", "exp"} <= {str(n.target).split(".")[-2] for n in g.nodes}


LEARNED_SCALE = """
    import torch, torch.nn as nn, torch.nn.functional as F
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.logit_scale = nn.Parameter(torch.tensor(2.6592))
        def forward(self, img, txt):
            return F.normalize(img, dim=-1) @ F.normalize(txt, dim=-1).t() * self.logit_scale.exp()
    n, d = 45, 24
    def get_inputs(): return [torch.randn(n, d), torch.randn(n + 3, d)]
    def get_init_inputs(): return []
"""


def test_a_learned_scalar_is_computed_in_the_epilogue(write: Any, tmp_path: Path) -> None:
    """``logit_scale.exp()`` (one value) joins the matmul's epilogue: no launch of its own."""
    gen = _judged(write, tmp_path, "learned_scale", LEARNED_SCALE)
    assert gen.judge.correct, (gen.judge.reason, gen.judge.detail)
    (g,) = [g for g in gen.plan.groups if g.kind == "matmul"]
    assert "exp" in {str(n.target).split(".")[-2] for n in g.nodes}
    assert len(gen.kernels) == 3  # the two normalisations and the matmul


# ------------------------------------------------------------------ cross-compile
def _matmul_launch(path: Path, tmp_path: Path) -> tuple[Any, Any, dict[str, Any], Any]:
    """Emit the problem's first matmul group as a module, run its wrapper on CPU tensors
    with the kernel replaced by a recorder; returns (kernel, args, kwargs, config fn)."""
    from kernelcraft.codegen.ops import HELPERS
    from kernelcraft.export import _runtime_source

    problem = load_problem(path)
    variant = build(problem, GenerateOptions(out_dir=tmp_path, judge=False))
    plan, kernels = variant.plan, variant.kernels
    g = next(g for g in plan.groups if g.kind == "matmul")
    ks = kernels[g.id]
    text = "\n".join([
        "import math, torch, triton", "import triton.language as tl", _runtime_source(),
        "_KC_DOT_PRECISION = {'cuda': 'bf16x3', 'hip': 'bf16x3'}", HELPERS,
        ks.source, "", ks.wrapper, "",
    ])
    mod_path = tmp_path / f"{g.name}_module.py"
    mod_path.write_text(text)
    spec = importlib.util.spec_from_file_location(mod_path.stem, mod_path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    log: list[Any] = []

    class Recorder:
        def __getitem__(self, grid: Any) -> Any:
            return lambda *a, **kw: log.append((a, kw))

    kernel = getattr(mod, ks.kernel_name)
    setattr(mod, ks.kernel_name, Recorder())
    torch.manual_seed(0)
    args = []
    for n in ks.inputs:  # what the wrapper receives at the captured sizes and strides
        v = n.meta["val"]
        size, stride = [int(s) for s in v.shape], [int(s) for s in v.stride()]
        extent = 1 + sum((z - 1) * t for z, t in zip(size, stride, strict=True))
        args.append(torch.randn(extent).as_strided(size, stride))  # (broadcast: stride 0)
    getattr(mod, ks.wrapper_name)(*args)
    (a, kw), = log
    return kernel, a, kw, getattr(mod, ks.wrapper_name + "_config")


def _compile(kernel: Any, args: Any, kw: dict[str, Any], target: Any, config: Any,
             launch_signature: Any) -> Any:
    import triton

    sig, consts, attrs = launch_signature(kernel, args)
    names = kernel.arg_names
    M, N, K = (args[names.index(x)] for x in ("M", "N", "K"))
    bm, bn, bk, gm, nw, ns = config(M, N, K, 4, target.backend, target.sm_count,
                                    target.smem_per_block)
    for name, value in dict(BM=bm, BN=bn, BK=bk, GROUP_M=gm, PREC="bf16x3").items():
        sig[name], consts[name] = "constexpr", value
    src = triton.compiler.ASTSource(fn=kernel, signature=sig, constexprs=consts, attrs=attrs)
    return triton.compile(src, target=target.gpu_target(),
                          options={"num_warps": nw, "num_stages": ns})


@pytest.mark.skipif(
    os.environ.get("TRITON_INTERPRET", "0") not in ("", "0"),
    reason="@triton.jit functions are not compilable under TRITON_INTERPRET=1",
)
@pytest.mark.parametrize("arch", ["sm_90", "gfx942"])
@pytest.mark.parametrize("case", ["linear_gelu", "bmm_scale", "batch_split"])
def test_cross_compiles(arch: str, case: str, write: Any, tmp_path: Path,
                        monkeypatch: pytest.MonkeyPatch, launch_signature: Any) -> None:
    from kernelcraft.target import resolve

    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path / "triton"))
    monkeypatch.setenv("TRITON_DEFAULT_FP_FUSION", "1")
    source = {"linear_gelu": LINEAR_GELU, "bmm_scale": BMM_SCALE,
              "batch_split": BATCH_SPLIT}[case]
    # sizes big enough that the GPU heuristic picks its large tiles
    source = source.replace("67, 45, 37", "4096, 1024, 1024").replace(
        "3, 35, 41, 19", "8, 1024, 1024, 64").replace("2, 3, 37, 19, 13", "4, 8, 1024, 64, 64")
    path = write(f"{case}.py", source)
    kernel, args, kw, config = _matmul_launch(path, tmp_path)
    target = resolve(arch)
    compiled = _compile(kernel, args, kw, target, config, launch_signature)
    if target.backend == "cuda":
        ptx = compiled.asm["ptx"]
        assert ".target sm_90" in ptx
        assert re.search(r"wgmma\.mma_async\S*bf16", ptx)  # fp32 as bf16x3 on tensor cores
    else:
        gcn = compiled.asm["amdgcn"]
        assert "mfma" in gcn
        spills = re.findall(r"\.(?:s|v)gpr_spill_count:\s+(\d+)", gcn)
        assert spills and all(int(s) == 0 for s in spills), spills
