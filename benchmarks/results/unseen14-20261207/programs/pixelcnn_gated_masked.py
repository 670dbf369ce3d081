"""PixelCNN with RGB-ordered masked convolutions, gated residual layers and a 256-way NLL."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def _colour(n, halves=1):
    # colour group (0 = R, 1 = G, 2 = B) of each channel; for gated convs both halves
    # (tanh and sigmoid parts) repeat the same grouping
    per = n // halves
    return (torch.arange(n) % per) * 3 // per


class MaskedConv2d(nn.Conv2d):
    def __init__(self, mask_type, cin, cout, kernel, out_halves=1, in_halves=1):
        super().__init__(cin, cout, kernel, padding=kernel // 2)
        k = kernel // 2
        mask = torch.ones(cout, cin, kernel, kernel)
        mask[:, :, k, k + 1:] = 0
        mask[:, :, k + 1:, :] = 0
        g_out = _colour(cout, out_halves)[:, None]
        g_in = _colour(cin, in_halves)[None, :]
        centre = g_out > g_in if mask_type == "A" else g_out >= g_in
        mask[:, :, k, k] = centre.float()
        self.register_buffer("mask", mask)

    def forward(self, x):
        return F.conv2d(x, self.weight * self.mask, self.bias, padding=self.padding)


class GatedLayer(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.conv = MaskedConv2d("B", channels, 2 * channels, 3, out_halves=2)
        self.proj = MaskedConv2d("B", channels, channels, 1)

    def forward(self, x):
        value, gate = self.conv(x).chunk(2, dim=1)
        return x + self.proj(torch.tanh(value) * torch.sigmoid(gate))


class Model(nn.Module):
    def __init__(self, hidden, n_levels, n_layers=6):
        super().__init__()
        self.n_levels = n_levels
        self.stem = MaskedConv2d("A", 3, hidden, 7)
        self.layers = nn.ModuleList(GatedLayer(hidden) for _ in range(n_layers))
        self.head1 = MaskedConv2d("B", hidden, hidden, 1)
        # output channel c predicts colour c // n_levels
        self.head2 = MaskedConv2d("B", hidden, 3 * n_levels, 1)

    def forward(self, pixels):
        # pixels: [B, 3, H, W] int64 in [0, n_levels)
        x = pixels.to(self.stem.weight.dtype) * (2.0 / (self.n_levels - 1)) - 1.0
        h = self.stem(x)
        for layer in self.layers:
            h = layer(h)
        h = self.head1(F.relu(h))
        logits = self.head2(F.relu(h))  # [B, 3 * L, H, W]
        b, _, hh, ww = logits.shape
        logits = logits.view(b, 3, self.n_levels, hh, ww).transpose(1, 2)  # [B, L, 3, H, W]
        nll = F.cross_entropy(logits, pixels, reduction="none")  # [B, 3, H, W]
        bits_per_dim = nll.mean(dim=(1, 2, 3)) / math.log(2.0)
        return bits_per_dim.mean(), bits_per_dim


batch = 32
hidden = 120
n_levels = 256
height = 32
width = 32


def get_inputs():
    return [torch.randint(0, n_levels, (batch, 3, height, width))]


def get_init_inputs():
    return [hidden, n_levels]
