"""FCOS (Tian et al.) training-target assignment over five FPN levels: anchor-point centres and
per-level regression ranges are built once as buffers, then for every (point, ground-truth box)
pair the left/top/right/bottom distances, a centre-sampling region of radius 1.5 strides clipped
to the box, the regression-range test on the largest distance, and padding validity give a
[B, P, M] candidate mask; the smallest-area candidate is picked by a masked min over boxes
(torch.where with inf, then min with indices), labels and stride-normalised regression targets
are gathered with the int64 index, and the centerness target is
sqrt(min(l, r) / max(l, r) * min(t, b) / max(t, b)). Returns int64 labels, regression targets,
centerness and the int64 number of positives per image."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, image_h, image_w, strides, ranges, num_classes, radius):
        super().__init__()
        self.num_classes = num_classes
        self.radius = radius
        pts, strd, lo, hi = [], [], [], []
        for s, (r_lo, r_hi) in zip(strides, ranges):  # noqa: B905
            h = (image_h + s - 1) // s
            w = (image_w + s - 1) // s
            ys = torch.arange(h, dtype=torch.float32) * s + s // 2
            xs = torch.arange(w, dtype=torch.float32) * s + s // 2
            yy, xx = torch.meshgrid(ys, xs, indexing="ij")
            pts.append(torch.stack((xx.reshape(-1), yy.reshape(-1)), dim=1))
            n = h * w
            strd.append(torch.full((n,), float(s)))
            lo.append(torch.full((n,), float(r_lo)))
            hi.append(torch.full((n,), float(r_hi)))
        self.register_buffer("points", torch.cat(pts))  # [P, 2]
        self.register_buffer("point_stride", torch.cat(strd))
        self.register_buffer("range_lo", torch.cat(lo))
        self.register_buffer("range_hi", torch.cat(hi))

    def forward(self, gt_boxes, gt_labels, gt_valid):
        # gt_boxes: [B, M, 4] (x1, y1, x2, y2); gt_labels: [B, M] int64; gt_valid: [B, M] bool
        px = self.points[:, 0].view(1, -1, 1)
        py = self.points[:, 1].view(1, -1, 1)
        x1, y1, x2, y2 = (gt_boxes[..., i].unsqueeze(1) for i in range(4))  # [B, 1, M]
        left, top = px - x1, py - y1
        right, bottom = x2 - px, y2 - py
        ltrb = torch.stack((left, top, right, bottom), dim=-1)  # [B, P, M, 4]

        stride = self.point_stride.view(1, -1, 1)
        cx, cy = (x1 + x2) * 0.5, (y1 + y2) * 0.5
        rad = stride * self.radius
        cx1 = torch.maximum(cx - rad, x1)
        cy1 = torch.maximum(cy - rad, y1)
        cx2 = torch.minimum(cx + rad, x2)
        cy2 = torch.minimum(cy + rad, y2)
        in_center = (px > cx1) & (px < cx2) & (py > cy1) & (py < cy2)

        max_dist = ltrb.amax(dim=-1)
        in_range = (max_dist >= self.range_lo.view(1, -1, 1)) & (
            max_dist <= self.range_hi.view(1, -1, 1))
        cand = in_center & in_range & gt_valid.unsqueeze(1)

        area = ((x2 - x1) * (y2 - y1)).expand_as(max_dist)
        masked_area = torch.where(cand, area, torch.full_like(area, float("inf")))
        min_area, best = masked_area.min(dim=2)  # [B, P]
        positive = torch.isfinite(min_area)

        labels = gt_labels.gather(1, best)
        labels = torch.where(positive, labels, torch.full_like(labels, self.num_classes))
        idx = best.view(best.shape[0], best.shape[1], 1, 1).expand(-1, -1, 1, 4)
        reg = ltrb.gather(2, idx).squeeze(2)  # [B, P, 4]
        reg = torch.where(positive.unsqueeze(-1), reg / self.point_stride.view(1, -1, 1),
                          torch.zeros_like(reg))

        lr = reg[..., 0::2].clamp(min=0.0)
        tb = reg[..., 1::2].clamp(min=0.0)
        ctr = (lr.amin(-1) / (lr.amax(-1) + 1e-6)) * (tb.amin(-1) / (tb.amax(-1) + 1e-6))
        centerness = torch.where(positive, ctr.clamp(min=0.0).sqrt(), torch.zeros_like(ctr))
        num_pos = positive.sum(dim=1)
        return labels, reg, centerness, num_pos


batch = 8
max_boxes = 50
image_h = 800
image_w = 1024
num_classes = 80
strides = [8, 16, 32, 64, 128]
ranges = [(0.0, 64.0), (64.0, 128.0), (128.0, 256.0), (256.0, 512.0), (512.0, 100000.0)]


def get_inputs():
    w = torch.exp(torch.empty(batch, max_boxes).uniform_(2.5, 6.5))
    h = w * torch.exp(torch.randn(batch, max_boxes) * 0.4)
    w = w.clamp(max=image_w - 2.0)
    h = h.clamp(max=image_h - 2.0)
    x1 = torch.rand(batch, max_boxes) * (image_w - 1.0 - w)
    y1 = torch.rand(batch, max_boxes) * (image_h - 1.0 - h)
    gt_boxes = torch.stack((x1, y1, x1 + w, y1 + h), dim=-1)
    gt_labels = torch.randint(0, num_classes, (batch, max_boxes))
    counts = torch.randint(5, max_boxes + 1, (batch, 1))
    gt_valid = torch.arange(max_boxes).unsqueeze(0) < counts
    return [gt_boxes, gt_labels, gt_valid]


def get_init_inputs():
    return [image_h, image_w, strides, ranges, num_classes, 1.5]
