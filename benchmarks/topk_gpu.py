"""The top-k template vs ``torch.topk`` and ``torch.compile`` per shape on the GPU.

For each (rows, length, k) a one-op program goes through ``kernelcraft generate``
(no tuning, no choice: the heuristic config), its module is checked (values equal to
PyTorch's, indices pointing at those values) and timed against eager and
``torch.compile``, then the launch config is swept (BLOCK_K x BLOCK_R at the heuristic's
tile size and warps) through the wrapper's config function. One JSON row per timing.

    python benchmarks/topk_gpu.py --out benchmarks/results/topk-DATE/rows.jsonl
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import textwrap
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from gpu_rows import recorder  # noqa: E402

from kernelcraft.generate import GenerateOptions, generate  # noqa: E402
from kernelcraft.problem import load_module  # noqa: E402

SHAPES = [(4096, 32000, 50), (64, 32000, 50), (32768, 8, 2), (8192, 1000, 40),
          (512, 50257, 1), (16384, 128, 8)]

PROGRAM = """
    import torch, torch.nn as nn

    class Model(nn.Module):
        def forward(self, x):
            return torch.topk(x, {k}, dim=-1)

    def get_inputs(): return [torch.randn({rows}, {length})]
    def get_init_inputs(): return []
"""


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--budget-ms", type=float, default=150.0)
    args = ap.parse_args()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    emit, timed = recorder(args.out, args.budget_ms)
    tmp = Path(tempfile.mkdtemp())
    for rows, length, k in SHAPES:
        name = f"topk_{rows}_{length}_{k}"
        src = tmp / f"{name}.py"
        src.write_text(textwrap.dedent(PROGRAM.format(rows=rows, length=length, k=k)))
        gen = generate(src, GenerateOptions(out_dir=tmp / "out", device="cuda", targets="sm_90",
                                            build=False, judge=False, choose=False, tune=None))
        mod = load_module(gen.module_path, name)
        model, ref = mod.ModelNew().cuda(), mod.Model().cuda()
        x = torch.randn(rows, length, device="cuda")
        with torch.no_grad():
            v, i = model(x)
            want = ref(x)
        ok = bool(torch.equal(v, want.values) and torch.equal(x.gather(-1, i), v))
        base = {"rows": rows, "length": length, "k": k, "correct": ok}
        with torch.no_grad():
            eager = timed(ref, [x])
            compiled = timed(torch.compile(ref), [x])
            kernel = timed(model, [x])
        heur = mod._kc_topk_config(rows, length, mod._kc_next_pow2(k), True, False)
        emit(base | {"what": "heuristic", "config": heur, "ms": kernel, "eager_ms": eager,
                     "compile_ms": compiled, "vs_eager": eager / kernel,
                     "vs_compile": compiled / kernel})
        heuristic = mod._kc_topk_config
        tile = heur[0] * heur[1]
        for br in (32, 64, 128, 256, 512, 1024):
            if br > max(8, mod._kc_next_pow2(length)):
                continue
            bk = max(1, min(mod._kc_next_pow2(rows), tile // br))
            for warps in sorted({1, 4, heur[2]}):
                cfg = (bk, br, warps)
                mod._kc_topk_config = lambda *a, c=cfg: c
                try:
                    with torch.no_grad():
                        ms = timed(model, [x])
                    emit(base | {"what": "sweep", "config": list(cfg), "ms": ms,
                                 "vs_eager": eager / ms})
                except Exception as exc:  # a config the compiler rejects
                    emit(base | {"what": "sweep", "config": list(cfg), "error": str(exc)[:200]})
        mod._kc_topk_config = heuristic


if __name__ == "__main__":
    main()
