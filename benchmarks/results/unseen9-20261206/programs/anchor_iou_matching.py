"""Anchor-to-ground-truth matching for a single-stage detector (torchvision's box_iou +
Matcher(0.5, 0.4, allow_low_quality_matches=True) + BoxCoder): anchors and per-image gt
boxes come as centre/size, are converted to corners, the [B, A, G] IoU matrix is built by
broadcasting, each anchor takes its best gt (max + argmax over G), anchors below 0.4 become
background and those in [0.4, 0.5) ignored, every gt's best anchor(s) are re-admitted (an
equality test against the max over A), and the matched boxes and labels are gathered by the
argmax to produce labels and (dx, dy, log dw, log dh) regression targets. Interesting:
argmax + gather along a middle dim, max reductions over both axes of the same matrix, an
equality against a reduction, and an int64 output."""

import torch
import torch.nn as nn


def _corners(centers, sizes):
    return torch.cat([centers - 0.5 * sizes, centers + 0.5 * sizes], dim=-1)


class Model(nn.Module):
    def __init__(self, num_classes, high, low):
        super().__init__()
        self.num_classes = num_classes
        self.high = high
        self.low = low

    def forward(self, anchor_centers, anchor_sizes, gt_centers, gt_sizes, gt_labels):
        # anchors [A, 2] + [A, 2]; gt [B, G, 2] + [B, G, 2]; gt_labels [B, G]
        a = _corners(anchor_centers, anchor_sizes).unsqueeze(0).unsqueeze(2)  # [1, A, 1, 4]
        g = _corners(gt_centers, gt_sizes).unsqueeze(1)  # [B, 1, G, 4]
        lt = torch.maximum(a[..., :2], g[..., :2])
        rb = torch.minimum(a[..., 2:], g[..., 2:])
        wh = (rb - lt).clamp(min=0)
        inter = wh[..., 0] * wh[..., 1]
        area_a = anchor_sizes[:, 0] * anchor_sizes[:, 1]
        area_g = gt_sizes[..., 0] * gt_sizes[..., 1]
        iou = inter / (area_a.view(1, -1, 1) + area_g.unsqueeze(1) - inter)  # [B, A, G]

        best_iou, best_gt = iou.max(dim=2)  # [B, A]
        labels = torch.gather(gt_labels, 1, best_gt)
        labels = torch.where(best_iou < self.low, torch.full_like(labels, self.num_classes),
                             labels)
        labels = torch.where((best_iou >= self.low) & (best_iou < self.high),
                             torch.full_like(labels, -1), labels)
        best_per_gt = iou.max(dim=1, keepdim=True).values  # [B, 1, G]
        low_quality = ((iou == best_per_gt) & (best_per_gt > 0)).any(dim=2)
        labels = torch.where(low_quality, torch.gather(gt_labels, 1, best_gt), labels)

        idx = best_gt.unsqueeze(-1).expand(-1, -1, 2)
        m_centers = torch.gather(gt_centers, 1, idx)
        m_sizes = torch.gather(gt_sizes, 1, idx)
        d_xy = (m_centers - anchor_centers.unsqueeze(0)) / anchor_sizes.unsqueeze(0)
        d_wh = torch.log(m_sizes / anchor_sizes.unsqueeze(0))
        return labels, torch.cat([d_xy, d_wh], dim=-1)


batch = 16
num_anchors = 49104  # RetinaNet anchors of a 512 x 512 image
num_gt = 64
num_classes = 80


def get_inputs():
    anchor_centers = torch.rand(num_anchors, 2) * 512.0
    anchor_sizes = 32.0 * 2.0 ** (torch.rand(num_anchors, 2) * 3.0)
    gt_centers = torch.rand(batch, num_gt, 2) * 512.0
    gt_sizes = 16.0 + torch.rand(batch, num_gt, 2) * 240.0
    gt_labels = torch.randint(0, num_classes, (batch, num_gt), dtype=torch.int64)
    return [anchor_centers, anchor_sizes, gt_centers, gt_sizes, gt_labels]


def get_init_inputs():
    return [num_classes, 0.5, 0.4]
