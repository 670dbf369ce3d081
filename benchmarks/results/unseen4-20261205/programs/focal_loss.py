"""Sigmoid focal loss (RetinaNet) with alpha weighting, summed over classes, mean over
anchors with a positive count normaliser."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, alpha, gamma):
        super().__init__()
        self.alpha = alpha
        self.gamma = gamma

    def forward(self, logits, targets):
        p = torch.sigmoid(logits)
        ce = F.binary_cross_entropy_with_logits(logits, targets, reduction="none")
        p_t = p * targets + (1 - p) * (1 - targets)
        loss = ce * ((1 - p_t) ** self.gamma)
        alpha_t = self.alpha * targets + (1 - self.alpha) * (1 - targets)
        loss = alpha_t * loss
        num_pos = targets.sum().clamp(min=1.0)
        return loss.sum() / num_pos


anchors, classes = 120000, 80


def get_inputs():
    logits = torch.randn(anchors, classes)
    targets = (torch.rand(anchors, classes) < 0.01).float()
    return [logits, targets]


def get_init_inputs():
    return [0.25, 2.0]
