"""ArcFace logits: normalised embeddings times normalised class weights, the target
class's angle widened by a margin (acos, cos), scaled, then cross entropy."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, dim, classes, scale, margin):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(classes, dim))
        self.s = scale
        self.m = margin

    def forward(self, emb, label):
        cos = F.linear(F.normalize(emb), F.normalize(self.weight))
        cos = cos.clamp(-1 + 1e-6, 1 - 1e-6)
        theta = torch.acos(cos)
        target = torch.cos(theta + self.m)
        onehot = F.one_hot(label, cos.shape[1]).to(cos.dtype)
        logits = self.s * (onehot * target + (1 - onehot) * cos)
        return F.cross_entropy(logits, label)


batch, dim, classes = 1024, 512, 8192


def get_inputs():
    return [torch.randn(batch, dim), torch.randint(0, classes, (batch,))]


def get_init_inputs():
    return [dim, classes, 64.0, 0.5]
