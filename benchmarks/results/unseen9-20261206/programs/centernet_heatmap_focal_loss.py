"""CenterNet / CornerNet penalty-reduced pixel-wise focal loss (Zhou et al., "Objects as
Points"): predicted class heatmaps are sigmoid(logits) clamped to [1e-4, 1 - 1e-4]; the
ground-truth heatmap is a splat of Gaussians with exact 1.0 at object centres; positives
(gt == 1) contribute log(p) (1 - p)^2, negatives log(1 - p) p^2 down-weighted by (1 - gt)^4,
and the sum is divided by the number of positives (clamped to 1). Interesting: a float
equality test building the positive mask, pow with integer exponents, clamp before log, and
a normaliser that is itself a reduction over the same data."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, alpha, beta):
        super().__init__()
        self.alpha = alpha
        self.beta = beta

    def forward(self, logits, gaussian_heat, centers):
        gt = torch.where(centers, torch.ones_like(gaussian_heat), gaussian_heat)
        pred = torch.sigmoid(logits).clamp(min=1e-4, max=1 - 1e-4)
        pos = gt.eq(1).to(pred.dtype)
        neg = gt.lt(1).to(pred.dtype)
        neg_weights = torch.pow(1 - gt, self.beta)
        pos_loss = torch.log(pred) * torch.pow(1 - pred, self.alpha) * pos
        neg_loss = torch.log(1 - pred) * torch.pow(pred, self.alpha) * neg_weights * neg
        num_pos = pos.sum()
        return -(pos_loss.sum() + neg_loss.sum()) / num_pos.clamp(min=1.0)


batch = 32
num_classes = 80
height = 128  # stride-4 output of a 512 x 512 image
width = 128


def get_inputs():
    logits = torch.randn(batch, num_classes, height, width) - 2.19  # focal prior bias
    heat = torch.rand(batch, num_classes, height, width).pow(6) * 0.98
    centers = torch.rand(batch, num_classes, height, width) < 2e-4
    return [logits, heat, centers]


def get_init_inputs():
    return [2, 4]
