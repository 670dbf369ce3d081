"""Weighted boxes fusion for detector ensembles (Solovyev et al.), one-pass parallel form: fp16
boxes (cx, cy, w, h) and scores from several models, argsort by score and gather, the [B, N, N]
corner IoU by broadcasting, each box's cluster leader = the highest-scoring box overlapping it
above the threshold (a masked amin over an arange), score-weighted coordinate averages and
counts by scatter_add, the count-rescaled fused score, and a top-k of the fused detections."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, iou_thr, num_models, max_det):
        super().__init__()
        self.iou_thr = iou_thr
        self.num_models = num_models
        self.max_det = max_det

    def forward(self, boxes, scores):
        # boxes: [B, N, 4] fp16 normalised (cx, cy, w, h); scores: [B, N] fp16
        b, n, _ = boxes.shape
        s = scores.float()
        order = s.argsort(dim=1, descending=True)
        s = s.gather(1, order)
        bx = boxes.float().gather(1, order.unsqueeze(-1).expand(b, n, 4))
        xy1 = bx[..., :2] - 0.5 * bx[..., 2:]
        xy2 = bx[..., :2] + 0.5 * bx[..., 2:]
        corners = torch.cat([xy1, xy2], dim=-1)
        lt = torch.maximum(xy1.unsqueeze(2), xy1.unsqueeze(1))
        rb = torch.minimum(xy2.unsqueeze(2), xy2.unsqueeze(1))
        inter = (rb - lt).clamp(min=0.0).prod(dim=-1)  # [B, N, N]
        area = bx[..., 2] * bx[..., 3]
        iou = inter / (area.unsqueeze(2) + area.unsqueeze(1) - inter).clamp(min=1e-9)
        idx = torch.arange(n, device=boxes.device)
        earlier = idx.unsqueeze(1) >= idx.unsqueeze(0)  # j <= i (j is higher scoring)
        overlap = ((iou > self.iou_thr) & earlier) | (idx.unsqueeze(1) == idx.unsqueeze(0))
        leader = torch.where(overlap, idx, n).amin(dim=-1)  # [B, N] int64
        weighted = corners * s.unsqueeze(-1)
        num = torch.zeros_like(corners).scatter_add(1, leader.unsqueeze(-1).expand(b, n, 4),
                                                    weighted)
        den = torch.zeros_like(s).scatter_add(1, leader, s)
        count = torch.zeros_like(s).scatter_add(1, leader, torch.ones_like(s))
        fused = num / den.clamp(min=1e-9).unsqueeze(-1)
        fused_score = den / count.clamp(min=1.0) * count.clamp(max=self.num_models)
        fused_score = torch.where(count > 0, fused_score / self.num_models, 0.0)
        k = min(self.max_det, n)
        top_scores, top_idx = fused_score.topk(k, dim=1)
        top_boxes = fused.gather(1, top_idx.unsqueeze(-1).expand(b, k, 4))
        return top_boxes.to(boxes.dtype), top_scores.to(scores.dtype), leader


batch = 16
num_boxes = 1024


def get_inputs():
    centers = torch.rand(batch, num_boxes, 2)
    sizes = torch.rand(batch, num_boxes, 2) * 0.3 + 0.01
    boxes = torch.cat([centers, sizes], dim=-1).half()
    scores = torch.rand(batch, num_boxes).half()
    return [boxes, scores]


def get_init_inputs():
    return [0.55, 4, 100]
