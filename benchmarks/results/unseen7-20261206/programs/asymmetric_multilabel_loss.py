"""Asymmetric Loss (ASL, Ridnik et al. 2021) for multi-label classification as used for
OpenImages / MS-COCO tagging: sigmoid probabilities, probability shifting (clip) of the
negatives, clamped logs, and asymmetric focusing weights (1 - p_t) ** gamma with separate
gammas for positives and negatives, summed."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, gamma_pos, gamma_neg, clip, eps):
        super().__init__()
        self.gamma_pos = gamma_pos
        self.gamma_neg = gamma_neg
        self.clip = clip
        self.eps = eps

    def forward(self, logits, targets):
        xs_pos = torch.sigmoid(logits)
        xs_neg = (1 - xs_pos + self.clip).clamp(max=1)
        los_pos = targets * torch.log(xs_pos.clamp(min=self.eps))
        los_neg = (1 - targets) * torch.log(xs_neg.clamp(min=self.eps))
        loss = los_pos + los_neg
        pt = xs_pos * targets + xs_neg * (1 - targets)
        gamma = self.gamma_pos * targets + self.gamma_neg * (1 - targets)
        loss = loss * torch.pow(1 - pt, gamma)
        return -loss.sum()


batch = 4096
classes = 8192


def get_inputs():
    logits = torch.randn(batch, classes) * 2 - 3
    targets = (torch.rand(batch, classes) < 0.02).float()
    return [logits, targets]


def get_init_inputs():
    return [0.0, 4.0, 0.05, 1e-8]
