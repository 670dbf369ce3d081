"""A 4-D tensor times a matrix over its last dim (einsum 'bijl,lk->bijk'), plus a
symmetric matrix product A @ A.T."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, t, m, a):
        return (
            torch.einsum("bijl,lk->bijk", t, m).sum(dim=(1, 2))
            + (a @ a.T)[: t.shape[0], : m.shape[1]]
        )


b, i, j, inner, k = 16, 32, 64, 256, 384


def get_inputs():
    return [torch.randn(b, i, j, inner), torch.randn(inner, k), torch.randn(k, k)]


def get_init_inputs():
    return []
