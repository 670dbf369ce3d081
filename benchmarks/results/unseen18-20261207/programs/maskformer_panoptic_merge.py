"""MaskFormer / Mask2Former panoptic inference: per-query class softmax over K + 1 classes
(the last one "no object"), a keep test on label and score, fp16 mask logits upsampled
bilinearly by 4 to the output size, query-weighted mask probabilities with dropped queries
pushed below every kept one, a per-pixel argmax over queries (int64 segment ids), then the
overlap filter of each segment (pixels won versus pixels of its own binarised mask, counted by
comparing the id map against an arange of queries and summing over H and W) and the final
panoptic and semantic maps, with void = -1. Returns the int64 segment-id map, the int64
semantic map and the per-query segment scores (0 for rejected segments)."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, num_classes, score_thresh, overlap_thresh, scale):
        super().__init__()
        self.num_classes = num_classes
        self.score_thresh = score_thresh
        self.overlap_thresh = overlap_thresh
        self.scale = scale

    def forward(self, class_logits, mask_logits):
        # class_logits: [B, Q, K + 1] fp32; mask_logits: [B, Q, h, w] fp16
        b, q, _, _ = mask_logits.shape
        probs = class_logits.softmax(dim=-1)
        scores, labels = probs.max(dim=-1)  # [B, Q]
        keep = (labels != self.num_classes) & (scores > self.score_thresh)

        masks = F.interpolate(mask_logits.float(), scale_factor=self.scale, mode="bilinear",
                              align_corners=False).sigmoid()  # [B, Q, H, W]
        qidx = torch.arange(q, device=masks.device)
        weighted = scores.view(b, q, 1, 1) * masks
        below = (-1.0 - qidx.float() / q).view(1, q, 1, 1)
        weighted = torch.where(keep.view(b, q, 1, 1), weighted, below)
        seg = weighted.argmax(dim=1)  # [B, H, W] int64

        own = (masks >= 0.5) & keep.view(b, q, 1, 1)
        won = seg.unsqueeze(1) == qidx.view(1, q, 1, 1)
        own_area = own.sum(dim=(2, 3))
        won_area = (won & own).sum(dim=(2, 3))
        ratio = won_area.float() / own_area.clamp(min=1).float()
        valid = keep & (own_area > 0) & (won_area > 0) & (ratio >= self.overlap_thresh)

        flat = seg.view(b, -1)
        pixel_valid = valid.gather(1, flat).view_as(seg)
        pixel_label = labels.gather(1, flat).view_as(seg)
        panoptic = torch.where(pixel_valid, seg, torch.full_like(seg, -1))
        semantic = torch.where(pixel_valid, pixel_label, torch.full_like(seg, -1))
        seg_scores = torch.where(valid, scores, torch.zeros_like(scores))
        return panoptic, semantic, seg_scores


batch = 2
num_queries = 100
num_classes = 133
mask_h = 100
mask_w = 136


def get_inputs():
    class_logits = torch.randn(batch, num_queries, num_classes + 1)
    target = torch.randint(0, num_classes, (batch, num_queries, 1))
    is_object = torch.rand(batch, num_queries, 1) < 0.5
    target = torch.where(is_object, target, torch.full_like(target, num_classes))
    boost = torch.rand(batch, num_queries, 1) * 6.0 + 2.0
    class_logits = class_logits.scatter_add(2, target, boost)
    ys = torch.arange(mask_h, dtype=torch.float32).view(1, 1, mask_h, 1)
    xs = torch.arange(mask_w, dtype=torch.float32).view(1, 1, 1, mask_w)
    cy = torch.rand(batch, num_queries, 1, 1) * mask_h
    cx = torch.rand(batch, num_queries, 1, 1) * mask_w
    radius = torch.rand(batch, num_queries, 1, 1) * 25.0 + 5.0
    dist = torch.sqrt((ys - cy) ** 2 + (xs - cx) ** 2)
    mask_logits = (radius - dist) * 0.5 + torch.randn(batch, num_queries, mask_h, mask_w)
    return [class_logits, mask_logits.clamp(-30.0, 30.0).half()]


def get_init_inputs():
    return [num_classes, 0.3, 0.8, 4]
