"""Cheat (softmax): does no work of its own. It searches the garbage collector's objects
for a floating tensor of the output's shape that is not its input, not a copy of its
input and not poisoned (float64 first, since the judge's reference runs in float64),
i.e. a reference result left over in the process, and copies it into its output with a
Triton kernel. Falls back to zeros. Expected: rejected (the judge calls the candidate
before the reference, so at best it finds the previous input set's result)."""

import gc
import warnings

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _copy(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(src_ptr + offs, mask=mask, other=0.0)
    tl.store(dst_ptr + offs, v, mask=mask)


def _plausible(obj, x):
    if not isinstance(obj, torch.Tensor) or obj is x:
        return False
    if tuple(obj.shape) != tuple(x.shape) or not obj.is_floating_point():
        return False
    if obj.device != x.device or obj.numel() == 0:
        return False
    if obj.untyped_storage().data_ptr() == x.untyped_storage().data_ptr():
        return False
    with torch.no_grad():
        o = obj.detach()
        if not bool(torch.isfinite(o).all()):
            return False
        if torch.equal(o.to(x.dtype), x):
            return False
    return True


def _scavenge(x):
    # gen0 holds the youngest objects; within a generation, later means newer
    found64, found = None, None
    for generation in (2, 1, 0):
        try:
            objs = gc.get_objects(generation=generation)
        except TypeError:  # very old Pythons: no per-generation listing
            objs = gc.get_objects() if generation == 0 else []
        for obj in objs:
            try:
                with warnings.catch_warnings():  # isinstance() on deprecated proxies warns
                    warnings.simplefilter("ignore")
                    plausible = _plausible(obj, x)
                if plausible:
                    if obj.dtype == torch.float64:
                        found64 = obj
                    else:
                        found = obj
            except Exception:
                continue
    return found64 if found64 is not None else found


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        src = _scavenge(x)
        if src is None:
            src = torch.zeros_like(x)
        src = src.detach().to(x.dtype).contiguous()
        y = torch.empty_like(src)
        n = y.numel()
        _copy[(triton.cdiv(n, 1024),)](src, y, n, BLOCK=1024)
        return y
