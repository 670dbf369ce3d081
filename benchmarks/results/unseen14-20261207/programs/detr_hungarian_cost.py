"""DETR Hungarian-matcher cost matrices (class probability, L1 box and GIoU costs) per image."""

import torch
import torch.nn as nn


def box_cxcywh_to_xyxy(b):
    cx, cy, w, h = b.unbind(-1)
    return torch.stack((cx - 0.5 * w, cy - 0.5 * h, cx + 0.5 * w, cy + 0.5 * h), dim=-1)


def box_area(b):
    return (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])


def generalized_box_iou(boxes1, boxes2, eps=1e-6):
    area1, area2 = box_area(boxes1), box_area(boxes2)
    lt = torch.max(boxes1[:, None, :2], boxes2[None, :, :2])
    rb = torch.min(boxes1[:, None, 2:], boxes2[None, :, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[..., 0] * wh[..., 1]
    union = (area1[:, None] + area2[None, :] - inter).clamp(min=eps)
    iou = inter / union
    lt_c = torch.min(boxes1[:, None, :2], boxes2[None, :, :2])
    rb_c = torch.max(boxes1[:, None, 2:], boxes2[None, :, 2:])
    wh_c = (rb_c - lt_c).clamp(min=0)
    area_c = (wh_c[..., 0] * wh_c[..., 1]).clamp(min=eps)
    return iou - (area_c - union) / area_c


class Model(nn.Module):
    def __init__(self, cost_class=1.0, cost_bbox=5.0, cost_giou=2.0):
        super().__init__()
        self.cost_class, self.cost_bbox, self.cost_giou = cost_class, cost_bbox, cost_giou

    def forward(self, pred_logits, pred_boxes, tgt_labels, tgt_boxes):
        # pred_logits [B, Q, K+1], pred_boxes [B, Q, 4] (cxcywh, normalised)
        # tgt_labels [B, T] int64, tgt_boxes [B, T, 4]; targets of all images concatenated
        b, nq, _ = pred_logits.shape
        nt = tgt_labels.size(1)
        out_prob = pred_logits.flatten(0, 1).softmax(-1)  # [B*Q, K+1]
        out_bbox = pred_boxes.flatten(0, 1)
        tgt_ids = tgt_labels.flatten()
        tgt_bbox = tgt_boxes.flatten(0, 1)
        cost_class = -out_prob[:, tgt_ids]
        cost_bbox = torch.cdist(out_bbox, tgt_bbox, p=1)
        cost_giou = -generalized_box_iou(box_cxcywh_to_xyxy(out_bbox),
                                         box_cxcywh_to_xyxy(tgt_bbox))
        cost = (self.cost_bbox * cost_bbox + self.cost_class * cost_class
                + self.cost_giou * cost_giou)
        cost = cost.view(b, nq, b, nt)
        image = torch.arange(b, device=cost.device)
        return cost[image, :, image]  # [B, Q, T]: each image's block


batch = 32
num_queries = 300
num_targets = 32
num_classes = 91


def get_inputs():
    pred_logits = torch.randn(batch, num_queries, num_classes + 1)
    pred_boxes = torch.rand(batch, num_queries, 4) * 0.5 + 0.25
    tgt_labels = torch.randint(0, num_classes, (batch, num_targets))
    tgt_boxes = torch.rand(batch, num_targets, 4) * 0.5 + 0.25
    return [pred_logits, pred_boxes, tgt_labels, tgt_boxes]


def get_init_inputs():
    return []
