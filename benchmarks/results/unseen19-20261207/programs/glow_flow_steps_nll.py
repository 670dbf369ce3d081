"""Glow (Kingma & Dhariwal) negative log-likelihood in bits per dimension for one flow level:
uint8 images are dequantised with given uniform noise and centred, squeezed 2x2 space-to-depth by
view/permute, then pass through K flow steps, each an ActNorm (per-channel log-scale and bias),
an invertible 1x1 convolution with an LU-decomposed weight rebuilt every call from a permutation
buffer, a strictly lower factor with unit diagonal, a strictly upper factor and a
sign * exp(log_s) diagonal (masks by tril/triu, logdet = H W sum(log_s)), and an affine coupling
whose conv network sees one half of the channels and emits interleaved shift / scale channels
(strided channel slicing, scale = sigmoid(raw + 2)). The log-determinants are accumulated per
image and combined with a standard-normal prior; returns the latent z and bits per dim."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class FlowStep(nn.Module):
    def __init__(self, channels, hidden, seed):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        self.an_loc = nn.Parameter(torch.randn(channels, generator=g) * 0.1)
        self.an_logs = nn.Parameter(torch.randn(channels, generator=g) * 0.1)
        q, _ = torch.linalg.qr(torch.randn(channels, channels, generator=g))
        lu, piv = torch.linalg.lu_factor(q)
        p, lower, upper = torch.lu_unpack(lu, piv)
        s = torch.diagonal(upper)
        self.register_buffer("perm", p)
        self.register_buffer("sign_s", torch.sign(s))
        self.register_buffer("l_mask", torch.tril(torch.ones(channels, channels), -1))
        self.register_buffer("eye", torch.eye(channels))
        self.lower = nn.Parameter(lower)
        self.upper = nn.Parameter(torch.triu(upper, 1))
        self.log_s = nn.Parameter(torch.log(s.abs()))
        half = channels // 2
        self.nn1 = nn.Conv2d(half, hidden, 3, padding=1)
        self.nn2 = nn.Conv2d(hidden, hidden, 1)
        self.nn3 = nn.Conv2d(hidden, 2 * (channels - half), 3, padding=1)
        with torch.no_grad():
            self.nn3.weight.mul_(0.05)
            self.nn3.bias.zero_()

    def forward(self, x, logdet):
        hw = x.shape[2] * x.shape[3]
        x = (x + self.an_loc.view(1, -1, 1, 1)) * torch.exp(self.an_logs).view(1, -1, 1, 1)
        logdet = logdet + hw * self.an_logs.sum()

        lower = self.lower * self.l_mask + self.eye
        upper = self.upper * self.l_mask.t() + torch.diag(self.sign_s * torch.exp(self.log_s))
        weight = self.perm @ lower @ upper
        x = F.conv2d(x, weight.view(weight.shape[0], weight.shape[1], 1, 1))
        logdet = logdet + hw * self.log_s.sum()

        half = self.nn1.in_channels
        xa, xb = x[:, :half], x[:, half:]
        hid = F.relu(self.nn2(F.relu(self.nn1(xa))))
        raw = self.nn3(hid)
        shift, scale_raw = raw[:, 0::2], raw[:, 1::2]
        scale = torch.sigmoid(scale_raw + 2.0)
        xb = (xb + shift) * scale
        logdet = logdet + torch.log(scale).flatten(1).sum(-1)
        return torch.cat([xa, xb], dim=1), logdet


class Model(nn.Module):
    def __init__(self, in_channels, hidden, num_steps, n_bits):
        super().__init__()
        self.n_bins = 2 ** n_bits
        c = in_channels * 4
        self.steps = nn.ModuleList([FlowStep(c, hidden, 1234 + i) for i in range(num_steps)])

    def forward(self, image, noise):
        # image: [B, C, H, W] uint8; noise: [B, C, H, W] uniform in [0, 1)
        b, c, h, w = image.shape
        x = (image.float() + noise) / self.n_bins - 0.5
        x = x.view(b, c, h // 2, 2, w // 2, 2).permute(0, 1, 3, 5, 2, 4)
        x = x.reshape(b, c * 4, h // 2, w // 2)
        dims = c * h * w
        logdet = torch.full((b,), -dims * math.log(self.n_bins), device=x.device)
        for step in self.steps:
            x, logdet = step(x, logdet)
        log_pz = (-0.5 * (x * x + math.log(2.0 * math.pi))).flatten(1).sum(-1)
        bpd = -(log_pz + logdet) / (dims * math.log(2.0))
        return x, bpd


batch = 128
channels = 3
height = 128
width = 128
hidden = 128
flow_steps = 4


def get_inputs():
    image = torch.randint(0, 256, (batch, channels, height, width), dtype=torch.uint8)
    noise = torch.rand(batch, channels, height, width)
    return [image, noise]


def get_init_inputs():
    return [channels, hidden, flow_steps, 8]
