"""RGB to HSV for an image batch in [0, 1]: value is the channel max, saturation the
max-min spread over the max, hue piecewise by which channel is largest; the saturation is
then scaled by a factor and clipped to [0, 1]."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, saturation):
        super().__init__()
        self.saturation = saturation

    def forward(self, img):
        r, g, b = img.unbind(dim=1)
        maxc = img.amax(dim=1)
        minc = img.amin(dim=1)
        delta = maxc - minc
        safe = torch.where(delta > 0, delta, torch.ones_like(delta))
        hr = torch.remainder((g - b) / safe, 6.0)
        hg = (b - r) / safe + 2.0
        hb = (r - g) / safe + 4.0
        h = torch.where(maxc == r, hr, torch.where(maxc == g, hg, hb))
        h = torch.where(delta > 0, h / 6.0, torch.zeros_like(h))
        s = torch.where(maxc > 0, delta / torch.where(maxc > 0, maxc, torch.ones_like(maxc)),
                        torch.zeros_like(maxc))
        s = torch.clamp(s * self.saturation, 0.0, 1.0)
        return torch.stack([h, s, maxc], dim=1)


batch, height, width = 32, 512, 512


def get_inputs():
    return [torch.rand(batch, 3, height, width)]


def get_init_inputs():
    return [1.3]
