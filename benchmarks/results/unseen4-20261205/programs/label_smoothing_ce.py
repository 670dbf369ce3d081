"""Cross entropy with label smoothing and an ignore index, as a classifier head trains."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, smoothing):
        super().__init__()
        self.smoothing = smoothing

    def forward(self, logits, target):
        return F.cross_entropy(logits, target, label_smoothing=self.smoothing, ignore_index=-100)


tokens, vocab = 4096, 32000


def get_inputs():
    target = torch.randint(0, vocab, (tokens,))
    target[::7] = -100
    return [torch.randn(tokens, vocab), target]


def get_init_inputs():
    return [0.1]
