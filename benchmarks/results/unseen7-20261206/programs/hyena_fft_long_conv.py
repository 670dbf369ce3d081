"""Hyena operator's long convolution: an implicit filter produced by a small MLP (sine
activations) over positional features of the sequence, modulated by a per-channel
exponential decay window, applied as a causal convolution through FFTs (rfft of input and
filter zero-padded to 2L, product, irfft, crop to L), plus a skip term, gated by v."""

import math

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, channels, filter_hidden, emb_bands):
        super().__init__()
        self.bands = emb_bands
        self.fc1 = nn.Linear(1 + 2 * emb_bands, filter_hidden)
        self.freq = nn.Parameter(torch.ones(1, filter_hidden))
        self.fc2 = nn.Linear(filter_hidden, channels)
        self.decay = nn.Parameter(torch.linspace(0.3, 1.5, channels) * 4.0)
        self.skip = nn.Parameter(torch.linspace(-0.5, 0.5, channels))

    def implicit_filter(self, length, device):
        t = torch.linspace(0, 1, length, device=device)[:, None]  # [L, 1]
        bands = torch.arange(1, self.bands + 1, device=device, dtype=torch.float32)
        z = torch.cat([t, torch.sin(2 * math.pi * t * bands), torch.cos(2 * math.pi * t * bands)],
                      dim=-1)
        h = torch.sin(self.freq * self.fc1(z))
        k = self.fc2(h)  # [L, D]
        k = k * torch.exp(-t * self.decay.abs())
        return k.transpose(0, 1)  # [D, L]

    def forward(self, u, v):
        # u, v: [B, D, L]
        length = u.shape[-1]
        n = 2 * length
        k = self.implicit_filter(length, u.device)
        k_f = torch.fft.rfft(k, n=n) / n
        u_f = torch.fft.rfft(u, n=n)
        y = torch.fft.irfft(u_f * k_f, n=n, norm="forward")[..., :length]
        return (y + u * self.skip[:, None]) * v


batch = 4
channels = 512
length = 8192
filter_hidden = 64


def get_inputs():
    return [torch.randn(batch, channels, length), torch.randn(batch, channels, length)]


def get_init_inputs():
    return [channels, filter_hidden, 4]
