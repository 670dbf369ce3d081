"""Speech encoder front end in the style of FunASR's Paraformer: a power spectrogram times a
given triangular mel filterbank, log, per-utterance mean/variance normalisation over time
(std floored at 0.01), low-frame-rate stacking of 7 frames every 6 (first frame repeated on
the left, last frame on the right, then unfold and reshape), and the encoder's input
projection."""

import math

import torch
import torch.nn as nn


def _mel_filterbank(n_freqs, n_mels, sample_rate):
    top = 1127.0 * math.log1p(sample_rate / 2 / 700.0)
    centers_mel = torch.linspace(0.0, top, n_mels + 2)
    centers_hz = 700.0 * torch.expm1(centers_mel / 1127.0)
    bins = torch.linspace(0.0, sample_rate / 2, n_freqs)
    lower, mid, upper = centers_hz[:-2], centers_hz[1:-1], centers_hz[2:]
    rising = (bins[:, None] - lower[None, :]) / (mid - lower)[None, :]
    falling = (upper[None, :] - bins[:, None]) / (upper - mid)[None, :]
    return torch.clamp(torch.minimum(rising, falling), min=0.0)  # [n_freqs, n_mels]


class Model(nn.Module):
    def __init__(self, n_freqs, n_mels, d_model, lfr_m=7, lfr_n=6):
        super().__init__()
        self.register_buffer("fbank", _mel_filterbank(n_freqs, n_mels, 16000))
        self.lfr_m = lfr_m
        self.lfr_n = lfr_n
        self.proj = nn.Linear(n_mels * lfr_m, d_model)

    def forward(self, power):
        mel = torch.log(torch.matmul(power, self.fbank).clamp(min=1e-6))  # [B, T, M]
        mean = mel.mean(dim=1, keepdim=True)
        std = mel.std(dim=1, keepdim=True).clamp(min=1e-2)  # floor: a silent mel channel
        mel = (mel - mean) / std

        b, t, m = mel.shape
        out_frames = math.ceil(t / self.lfr_n)
        left = (self.lfr_m - 1) // 2
        right = (out_frames - 1) * self.lfr_n + self.lfr_m - left - t
        padded = torch.cat([
            mel[:, :1].expand(b, left, m),
            mel,
            mel[:, -1:].expand(b, max(right, 0), m),
        ], dim=1)
        stacked = padded.unfold(1, self.lfr_m, self.lfr_n)  # [B, T', M, lfr_m]
        stacked = stacked.transpose(2, 3).reshape(b, out_frames, self.lfr_m * m)
        return self.proj(stacked)


batch = 32
frames = 3000
n_freqs = 201
n_mels = 80
d_model = 512


def get_inputs():
    return [torch.randn(batch, frames, n_freqs).pow(2) + 1e-4]


def get_init_inputs():
    return [n_freqs, n_mels, d_model]
