"""Matmul template (placeholder until written)."""
from kernelcraft.plan import Group


def emit_matmul(g: Group, target):
    raise NotImplementedError("matmul template not written yet")
