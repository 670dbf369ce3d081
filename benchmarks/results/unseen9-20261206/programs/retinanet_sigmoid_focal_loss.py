"""RetinaNet classification loss (Lin et al., "Focal Loss for Dense Object Detection"; the
torchvision / detectron2 sigmoid_focal_loss): per-anchor matched labels (-1 = ignored
between the IoU thresholds, num_classes = background) become a one-hot target over the
foreground classes, the element-wise BCE-with-logits is weighted by (1 - p_t)^gamma and
alpha_t, ignored anchors are masked out, and the sum is normalised by the number of
foreground anchors (clamped to 1). Interesting: one_hot of a clamped index with the
background column sliced off, a bool mask broadcast over classes, and a global reduction
divided by a count taken from the same labels."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, num_classes, alpha, gamma):
        super().__init__()
        self.num_classes = num_classes
        self.alpha = alpha
        self.gamma = gamma

    def forward(self, cls_logits, labels):
        # cls_logits: [B, A, C]; labels: [B, A] in {-1 (ignore), 0..C-1 (fg), C (bg)}
        valid = labels >= 0
        foreground = valid & (labels != self.num_classes)
        target = F.one_hot(labels.clamp(min=0), self.num_classes + 1)[..., : self.num_classes]
        target = target.to(cls_logits.dtype)
        p = torch.sigmoid(cls_logits)
        ce = F.binary_cross_entropy_with_logits(cls_logits, target, reduction="none")
        p_t = p * target + (1 - p) * (1 - target)
        loss = ce * (1 - p_t) ** self.gamma
        alpha_t = self.alpha * target + (1 - self.alpha) * (1 - target)
        loss = alpha_t * loss * valid.unsqueeze(-1).to(loss.dtype)
        return loss.sum() / foreground.sum().clamp(min=1).to(loss.dtype)


batch = 8
num_anchors = 49104  # 9 anchors per location on P3-P7 of a 512 x 512 image
num_classes = 80


def get_inputs():
    logits = torch.randn(batch, num_anchors, num_classes) * 2.0 - 4.0  # prior-biased init
    u = torch.rand(batch, num_anchors)
    fg = torch.randint(0, num_classes, (batch, num_anchors), dtype=torch.int64)
    labels = torch.full((batch, num_anchors), num_classes, dtype=torch.int64)
    labels = torch.where(u < 0.02, fg, labels)
    labels = torch.where((u >= 0.02) & (u < 0.07), torch.full_like(labels, -1), labels)
    return [logits, labels]


def get_init_inputs():
    return [num_classes, 0.25, 2.0]
