"""Matrix NMS (SOLOv2 / PP-YOLOE): score sort and gathers, class-aware upper-triangular IoU
matrix, Gaussian decay with max-IoU compensation, min over suppressors; decayed scores and keep."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, sigma=2.0, score_thresh=0.05):
        super().__init__()
        self.sigma = sigma
        self.score_thresh = score_thresh

    def forward(self, boxes, scores, labels):
        # boxes: [B, N, 4] xyxy; scores: [B, N]; labels: [B, N] int64
        n = scores.shape[1]
        scores, order = scores.sort(dim=1, descending=True)
        boxes = boxes.gather(1, order.unsqueeze(-1).expand(-1, -1, 4))
        labels = labels.gather(1, order)
        area = (boxes[..., 2] - boxes[..., 0]) * (boxes[..., 3] - boxes[..., 1])
        x1, y1, x2, y2 = boxes.unbind(-1)
        iw = torch.minimum(x2[:, :, None], x2[:, None, :]) - torch.maximum(x1[:, :, None],
                                                                           x1[:, None, :])
        ih = torch.minimum(y2[:, :, None], y2[:, None, :]) - torch.maximum(y1[:, :, None],
                                                                           y1[:, None, :])
        inter = iw.clamp(min=0) * ih.clamp(min=0)
        iou = inter / (area[:, :, None] + area[:, None, :] - inter + 1e-6)
        upper = torch.ones(n, n, dtype=torch.bool, device=boxes.device).triu(diagonal=1)
        same = labels[:, :, None] == labels[:, None, :]
        decay_iou = torch.where(upper & same, iou, torch.zeros_like(iou))  # [B, i, j], i < j
        compensate = decay_iou.amax(dim=1)  # [B, N]: max IoU of box i with a higher-scored box
        decay = torch.exp(-self.sigma * (decay_iou.square() - compensate.square().unsqueeze(-1)))
        coef = decay.amin(dim=1)
        new_scores = scores * coef
        keep = new_scores > self.score_thresh
        kept_boxes = boxes * keep.unsqueeze(-1).to(boxes.dtype)
        return new_scores, kept_boxes, keep.sum(dim=1)


batch = 16
num_boxes = 1800
num_classes = 80


def get_inputs():
    centres = torch.rand(batch, num_boxes, 2) * 600
    sizes = torch.rand(batch, num_boxes, 2) * 120 + 8
    boxes = torch.cat([centres - sizes / 2, centres + sizes / 2], dim=-1)
    scores = torch.rand(batch, num_boxes)
    labels = torch.randint(0, num_classes, (batch, num_boxes))
    return [boxes, scores, labels]


def get_init_inputs():
    return []
