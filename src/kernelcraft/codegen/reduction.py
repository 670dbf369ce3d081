"""Reduction template (placeholder until written)."""
from kernelcraft.plan import Group


def emit_reduction(g: Group, target):
    raise NotImplementedError("reduction template not written yet")
