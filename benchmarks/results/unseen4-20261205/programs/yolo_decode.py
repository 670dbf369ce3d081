"""YOLO head decoding: view to [B, A, 5+C, H, W], permute, sigmoid of xy plus a meshgrid
offset, exp of wh times anchors, sigmoid scores, concatenated and flattened."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, num_anchors, num_classes, stride):
        super().__init__()
        self.na = num_anchors
        self.no = num_classes + 5
        self.stride = stride
        self.register_buffer("anchors", torch.tensor([[10.0, 13.0], [16.0, 30.0],
                                                      [33.0, 23.0]])[:num_anchors])

    def forward(self, p):
        b, _, h, w = p.shape
        p = p.view(b, self.na, self.no, h, w).permute(0, 1, 3, 4, 2)
        yv, xv = torch.meshgrid(torch.arange(h, device=p.device),
                                torch.arange(w, device=p.device), indexing="ij")
        grid = torch.stack((xv, yv), 2).view(1, 1, h, w, 2).float()
        xy = (p[..., :2].sigmoid() + grid) * self.stride
        wh = p[..., 2:4].exp() * self.anchors.view(1, self.na, 1, 1, 2)
        rest = p[..., 4:].sigmoid()
        return torch.cat((xy, wh, rest), -1).view(b, -1, self.no)


batch, anchors, classes, size = 16, 3, 80, 80


def get_inputs():
    return [torch.randn(batch, anchors * (classes + 5), size, size)]


def get_init_inputs():
    return [anchors, classes, 8.0]
