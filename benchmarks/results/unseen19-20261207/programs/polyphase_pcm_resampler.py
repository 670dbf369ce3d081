"""Rational-ratio (L/M, e.g. 44.1 kHz -> 48 kHz) polyphase resampling of int16 PCM audio, as an
audio-pipeline data-loader step: samples are cast to float and scaled, each output sample n maps
to input position n * M / L with phase p = (n M) mod L, every output gathers its window of
input samples from a zero-copy unfold view of the padded signal (advanced indexing with
int64 positions computed from aranges), and multiplies it by the p-th row of a Kaiser-windowed
sinc polyphase filter bank (a buffer built in __init__, gathered per output) before summing over
taps. The result is peak-normalised per clip across channels (amax over two dims), soft-limited
with tanh, and requantised to int16 with round and clamp; returns both the float and the int16
signals."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, up, down, taps_per_phase, beta, headroom):
        super().__init__()
        self.up = up
        self.down = down
        self.taps = taps_per_phase
        self.headroom = headroom
        total = up * taps_per_phase
        cutoff = 0.95 / max(up, down)  # in cycles per upsampled sample, below both Nyquists
        t = torch.arange(total, dtype=torch.float64) - (total - 1) / 2.0
        h = 2.0 * cutoff * torch.sinc(2.0 * cutoff * t)
        h = h * torch.kaiser_window(total, periodic=False, beta=beta, dtype=torch.float64)
        h = h * up / h.sum()
        # bank[p, k] multiplies x[base - k + taps // 2] for phase p
        bank = h.view(taps_per_phase, up).t().contiguous().float()
        self.register_buffer("bank", bank)  # [L, taps]

    def forward(self, pcm):
        # pcm: [B, C, T] int16
        b, c, t = pcm.shape
        taps = self.taps
        x = pcm.float() / 32768.0
        x = F.pad(x.reshape(b * c, t), (taps - 1, taps))
        windows = x.unfold(1, taps, 1)  # [BC, T + taps, taps]; row j holds x[j - taps + 1 ...]
        t_out = (t * self.up) // self.down
        n = torch.arange(t_out, device=pcm.device)
        pos = n * self.down
        phase = pos % self.up
        base = pos // self.up + taps // 2
        win = windows[:, base, :].flip(-1)  # [BC, T_out, taps], tap k -> x[base - k]
        coef = self.bank[phase]  # [T_out, taps]
        y = (win * coef).sum(-1).view(b, c, t_out)
        peak = y.abs().amax(dim=(1, 2), keepdim=True).clamp(min=1e-4)
        y = torch.tanh(y * (self.headroom / peak))
        q = torch.clamp(torch.round(y * 32767.0), -32768.0, 32767.0).to(torch.int16)
        return y, q


batch = 32
channels = 2
samples = 88200
up = 160
down = 147
taps_per_phase = 24


def get_inputs():
    tt = torch.arange(samples, dtype=torch.float32)
    freq = torch.rand(batch, channels, 1) * 0.2
    tone = torch.sin(2.0 * math.pi * freq * tt) * 12000.0
    noise = torch.randn(batch, channels, samples) * 2000.0
    pcm = (tone + noise).clamp(-32768, 32767).to(torch.int16)
    return [pcm]


def get_init_inputs():
    return [up, down, taps_per_phase, 8.6, 0.9]
