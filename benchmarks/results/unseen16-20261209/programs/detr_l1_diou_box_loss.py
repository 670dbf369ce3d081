"""DETR-style box regression loss with DIoU instead of GIoU: sigmoid cxcywh predictions of every
decoder layer against matched targets, L1 + (1 - IoU + centre distance^2 / enclosing diag^2)."""

import torch
import torch.nn as nn


def cxcywh_to_xyxy(b):
    cx, cy, w, h = b.unbind(-1)
    return torch.stack([cx - 0.5 * w, cy - 0.5 * h, cx + 0.5 * w, cy + 0.5 * h], dim=-1)


class Model(nn.Module):
    def __init__(self, l1_weight=5.0, diou_weight=2.0, eps=1e-7):
        super().__init__()
        self.l1_weight = l1_weight
        self.diou_weight = diou_weight
        self.eps = eps

    def forward(self, pred_logits_boxes, target_boxes, matched):
        # pred_logits_boxes: [L, B, Q, 4] raw; target_boxes: [B, Q, 4] cxcywh; matched: [B, Q] bool
        pred = pred_logits_boxes.sigmoid()
        tgt = target_boxes.unsqueeze(0)
        weight = matched.unsqueeze(0).to(pred.dtype)
        num_boxes = matched.sum().clamp(min=1).to(pred.dtype)

        l1 = ((pred - tgt).abs().sum(dim=-1) * weight).sum(dim=(1, 2)) / num_boxes

        p = cxcywh_to_xyxy(pred)
        t = cxcywh_to_xyxy(tgt)
        lt = torch.maximum(p[..., :2], t[..., :2])
        rb = torch.minimum(p[..., 2:], t[..., 2:])
        inter = (rb - lt).clamp(min=0).prod(dim=-1)
        area_p = (p[..., 2:] - p[..., :2]).prod(dim=-1)
        area_t = (t[..., 2:] - t[..., :2]).prod(dim=-1)
        iou = inter / (area_p + area_t - inter + self.eps)
        enc_lt = torch.minimum(p[..., :2], t[..., :2])
        enc_rb = torch.maximum(p[..., 2:], t[..., 2:])
        diag2 = (enc_rb - enc_lt).square().sum(dim=-1) + self.eps
        centre2 = (pred[..., :2] - tgt[..., :2]).square().sum(dim=-1)
        diou = 1.0 - iou + centre2 / diag2
        diou = (diou * weight).sum(dim=(1, 2)) / num_boxes

        total = (self.l1_weight * l1 + self.diou_weight * diou).sum()
        mean_iou = (iou[-1] * weight[0]).sum() / num_boxes
        return total, l1, diou, mean_iou


num_layers = 6
batch = 256
num_queries = 900


def get_inputs():
    pred = torch.randn(num_layers, batch, num_queries, 4)
    centres = torch.rand(batch, num_queries, 2) * 0.8 + 0.1
    sizes = torch.rand(batch, num_queries, 2) * 0.3 + 0.02
    target = torch.cat([centres, sizes], dim=-1)
    matched = torch.rand(batch, num_queries) < 0.1
    return [pred, target, matched]


def get_init_inputs():
    return []
