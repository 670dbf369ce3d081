"""The launches of a generated module at full size, recorded on meta tensors and compiled as
Triton's launcher specialises them (no GPU)."""

from __future__ import annotations

import torch

from kernelcraft.build import compile_launches
from kernelcraft.generate import GenerateOptions, generate
from kernelcraft.launches import _arg
from kernelcraft.report import launch_lines

# few rows, long ones: at full size the wrapper splits each row over programs and launches
# two passes and a combine, kernels a representative-config build never compiles
BATCHNORM = """
import torch, torch.nn as nn

class Model(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.norm = nn.BatchNorm2d(c)
    def forward(self, x):
        return self.norm(x)

n, c, h, w = 32, 16, 256, 256
def get_inputs(): return [torch.randn(n, c, h, w)]
def get_init_inputs(): return [c]
"""


def test_launch_arguments_are_specialised_as_the_launcher_does():
    x = torch.empty(64, device="meta")
    assert _arg(1) == ("constexpr", 1, False)
    assert _arg(48) == ("i32", None, True) and _arg(50) == ("i32", None, False)
    assert _arg(2**40)[0] == "i64" and _arg(0.5)[0] == "fp32" and _arg(True)[0] == "i1"
    assert _arg(x) == ("*fp32", None, True)
    assert _arg(x[1:]) == ("*fp32", None, False)  # 4 bytes past an aligned start
    assert _arg(x[4:]) == ("*fp32", None, True)


def test_split_passes_are_recorded_and_compiled_for_each_target(write, tmp_path):
    path = write("bn.py", BATCHNORM)
    gen = generate(path, GenerateOptions(out_dir=tmp_path / "out", device="cpu", build=False,
                                         judge=False, targets="sm_90"))
    rows = compile_launches(gen.module_path, path, ["sm_90", "gfx942"])
    names = {r["kernel"] for r in rows}
    assert any(n.endswith("_s1") for n in names) and any(n.endswith("_c1") for n in names), names
    assert {r["target"] for r in rows} == {"sm_90", "gfx942"}
    assert all(r["ok"] and r["launch"] for r in rows), [r for r in rows if not r["ok"]]
    # the size-1 dims of the rank-6 index space become constants, as on the GPU
    assert all(r["constants"] for r in rows if "reduction" in r["kernel"])
    text = "\n".join(launch_lines(rows))
    assert f"sm_90: {len(rows) // 2} of {len(rows) // 2} launches compiled" in text


def test_a_forward_that_cannot_run_on_meta_tensors_is_reported(write, tmp_path):
    path = write("bn.py", BATCHNORM)
    module = write("broken.py", BATCHNORM + "\nclass ModelNew(Model):\n"
                   "    def forward(self, x):\n        return x + float(x.sum().item())\n")
    rows = compile_launches(module, path, ["sm_90"])
    assert len(rows) == 1 and not rows[0]["ok"]
    assert rows[0]["note"].startswith("launches not recorded:")
    assert "- sm_90: launches not recorded: RuntimeError" in "\n".join(launch_lines(rows))
