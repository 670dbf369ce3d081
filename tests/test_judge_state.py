"""The judge's shared state (parameters, non-persistent buffers, plain tensor attributes)
lands on the device the model instance lives on."""

from __future__ import annotations

import torch
from torch import nn

from kernelcraft.measure.verify import _load_state, _tensor_attributes


class _Rotary(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.randn(4))
        self.register_buffer("cos", torch.randn(8, 4), persistent=False)
        self.h0 = torch.randn(4)  # a plain attribute, not moved by .to()


def test_state_drawn_on_cpu_follows_the_instance_device():
    drawn = _Rotary()
    state = drawn.state_dict() | _tensor_attributes(drawn)
    inst = _Rotary().to("meta")  # stands in for a GPU: a device other than the state's
    inst.h0 = inst.h0.to("meta")
    _load_state(inst, state)
    assert inst.cos.device.type == "meta"
    assert inst.h0.device.type == "meta"
    cpu = _Rotary()
    _load_state(cpu, state)
    assert torch.equal(cpu.cos, drawn.cos) and torch.equal(cpu.h0, drawn.h0)
    assert cpu.cos.data_ptr() != drawn.cos.data_ptr()  # a copy, not the drawn tensor
