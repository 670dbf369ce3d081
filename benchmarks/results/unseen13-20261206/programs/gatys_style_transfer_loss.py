"""Neural style transfer objective (Gatys et al.) with a small VGG-style feature extractor:
the generated, content and style images are ImageNet-normalised, concatenated along the batch
and run through three conv-ReLU-conv-ReLU stages with max pooling; features are chunked back
per image, the content loss is the MSE at the second stage, the style loss sums the MSE of
Gram matrices (view to [B, C, HW], bmm with the transpose, / (C*H*W)) over all stages with
per-layer weights, and a total-variation term on the generated image is added."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, c1, c2, c3, content_weight=1.0, style_weight=1e3, tv_weight=1e-4):
        super().__init__()
        self.register_buffer("mean", torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1))
        self.register_buffer("std", torch.tensor([0.229, 0.224, 0.225]).view(1, 3, 1, 1))
        widths = [3, c1, c2, c3]
        self.stages = nn.ModuleList()
        for i in range(3):
            self.stages.append(nn.Sequential(
                nn.Conv2d(widths[i], widths[i + 1], 3, padding=1), nn.ReLU(inplace=True),
                nn.Conv2d(widths[i + 1], widths[i + 1], 3, padding=1), nn.ReLU(inplace=True)))
        self.style_layer_weights = [1.0, 0.75, 0.5]
        self.content_stage = 1
        self.content_weight, self.style_weight, self.tv_weight = (
            content_weight, style_weight, tv_weight)

    @staticmethod
    def gram_matrix(feat):
        b, c, h, w = feat.shape
        f = feat.view(b, c, h * w)
        return torch.bmm(f, f.transpose(1, 2)) / (c * h * w)

    def forward(self, generated, content_image, style_image):
        x = torch.cat([generated, content_image, style_image], dim=0)
        x = (x - self.mean) / self.std
        content_loss = x.new_zeros(())
        style_loss = x.new_zeros(())
        for i, stage in enumerate(self.stages):
            if i > 0:
                x = F.max_pool2d(x, kernel_size=2, stride=2)
            x = stage(x)
            gen_f, content_f, style_f = x.chunk(3, dim=0)
            if i == self.content_stage:
                content_loss = F.mse_loss(gen_f, content_f)
            style_loss = style_loss + self.style_layer_weights[i] * F.mse_loss(
                self.gram_matrix(gen_f), self.gram_matrix(style_f))
        tv = ((generated[:, :, 1:, :] - generated[:, :, :-1, :]).pow(2).sum()
              + (generated[:, :, :, 1:] - generated[:, :, :, :-1]).pow(2).sum())
        total = (self.content_weight * content_loss + self.style_weight * style_loss
                 + self.tv_weight * tv)
        return total, content_loss, style_loss


batch = 4
height = 128
width = 128
c1 = 32
c2 = 64
c3 = 128


def get_inputs():
    return [torch.rand(batch, 3, height, width), torch.rand(batch, 3, height, width),
            torch.rand(batch, 3, height, width)]


def get_init_inputs():
    return [c1, c2, c3]
