"""RetinaNet sigmoid focal loss: BCE-with-logits per element, times (1 - p_t)^gamma and an
alpha class weight, mean reduction."""

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
        return (alpha_t * loss).mean()


anchors = 131072
classes = 512
alpha = 0.25
gamma = 2.0


def get_inputs():
    logits = torch.randn(anchors, classes)
    targets = (torch.rand(anchors, classes) < 0.01).float()
    return [logits, targets]


def get_init_inputs():
    return [alpha, gamma]
