"""Faster R-CNN second stage: RoIAlign on a stride-16 feature map, the two-FC box head,
class-specific box-delta decoding and per-RoI class selection (detection post-processing).

RoIAlign (aligned=True, sampling_ratio=2) is written as F.grid_sample over a per-RoI grid
of bin sub-sample points followed by 2x2 average pooling. The head predicts class logits and
per-class (dx, dy, dw, dh) deltas, decoded with BoxCoder weights (10, 10, 5, 5), dw/dh
clamping, exp, and clipping to the image. Outputs softmax scores, the box of the best
foreground class (argmax + take_along_dim gather) and its int64 label.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, channels, pool_size, sampling_ratio, spatial_scale, rep_dim,
                 num_classes, image_h, image_w):
        super().__init__()
        self.pool = pool_size
        self.sr = sampling_ratio
        self.scale = spatial_scale
        self.num_classes = num_classes
        self.image_h = image_h
        self.image_w = image_w
        self.fc6 = nn.Linear(channels * pool_size * pool_size, rep_dim)
        self.fc7 = nn.Linear(rep_dim, rep_dim)
        self.cls_score = nn.Linear(rep_dim, num_classes + 1)
        self.bbox_pred = nn.Linear(rep_dim, num_classes * 4)
        self.register_buffer("weights", torch.tensor([10.0, 10.0, 5.0, 5.0]))
        self.clip = math.log(1000.0 / 16)
        s = pool_size * sampling_ratio
        self.register_buffer("frac", (torch.arange(s, dtype=torch.float32) + 0.5) / s)

    def forward(self, features, proposals):
        # features [B, C, H, W]; proposals [B, R, 4] arbitrary corner pairs in image pixels
        b, c, fh, fw = features.shape
        r = proposals.shape[1]
        x1 = torch.minimum(proposals[..., 0], proposals[..., 2]).clamp(0, self.image_w)
        x2 = torch.maximum(proposals[..., 0], proposals[..., 2]).clamp(0, self.image_w)
        y1 = torch.minimum(proposals[..., 1], proposals[..., 3]).clamp(0, self.image_h)
        y2 = torch.maximum(proposals[..., 1], proposals[..., 3]).clamp(0, self.image_h)

        # RoIAlign via grid_sample: sample points in feature coordinates, normalised.
        xs = x1.unsqueeze(-1) + (x2 - x1).unsqueeze(-1) * self.frac  # [B, R, S]
        ys = y1.unsqueeze(-1) + (y2 - y1).unsqueeze(-1) * self.frac
        gx = xs * self.scale * 2.0 / fw - 1.0
        gy = ys * self.scale * 2.0 / fh - 1.0
        s = gx.shape[-1]
        grid = torch.stack(torch.broadcast_tensors(gx.unsqueeze(2), gy.unsqueeze(3)), dim=-1)
        grid = grid.reshape(b, r * s, s, 2)
        sampled = F.grid_sample(features, grid, mode="bilinear", padding_mode="zeros",
                                align_corners=False)  # [B, C, R*S, S]
        sampled = sampled.view(b, c, r, s, s).permute(0, 2, 1, 3, 4).reshape(b * r, c, s, s)
        pooled = F.avg_pool2d(sampled, self.sr)  # [B*R, C, P, P]

        x = F.relu(self.fc6(pooled.flatten(1)))
        x = F.relu(self.fc7(x))
        logits = self.cls_score(x).view(b, r, -1)
        deltas = self.bbox_pred(x).view(b, r, self.num_classes, 4) / self.weights

        widths = (x2 - x1).unsqueeze(-1)
        heights = (y2 - y1).unsqueeze(-1)
        cx = x1.unsqueeze(-1) + 0.5 * widths
        cy = y1.unsqueeze(-1) + 0.5 * heights
        dw = deltas[..., 2].clamp(max=self.clip)
        dh = deltas[..., 3].clamp(max=self.clip)
        pcx = deltas[..., 0] * widths + cx
        pcy = deltas[..., 1] * heights + cy
        pw = torch.exp(dw) * widths
        ph = torch.exp(dh) * heights
        boxes = torch.stack([
            (pcx - 0.5 * pw).clamp(0, self.image_w), (pcy - 0.5 * ph).clamp(0, self.image_h),
            (pcx + 0.5 * pw).clamp(0, self.image_w), (pcy + 0.5 * ph).clamp(0, self.image_h),
        ], dim=-1)  # [B, R, K, 4]

        scores = torch.softmax(logits, dim=-1)
        best = scores[..., 1:].argmax(dim=-1)  # [B, R]
        best_box = torch.take_along_dim(boxes, best.view(b, r, 1, 1), dim=2).squeeze(2)
        return scores, best_box, best + 1


batch = 2
channels = 64
feat_h = 38
feat_w = 50
stride = 16
num_rois = 64
pool_size = 7
sampling_ratio = 2
rep_dim = 512
num_classes = 20
image_h = feat_h * stride
image_w = feat_w * stride


def get_inputs():
    scale = torch.tensor([image_w, image_h, image_w, image_h], dtype=torch.float32)
    return [
        torch.randn(batch, channels, feat_h, feat_w),
        torch.rand(batch, num_rois, 4) * scale,
    ]


def get_init_inputs():
    return [channels, pool_size, sampling_ratio, 1.0 / stride, rep_dim, num_classes,
            image_h, image_w]
