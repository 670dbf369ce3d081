"""Log-mel spectrogram in decibels: a power spectrogram times a triangular mel filterbank,
floored, 10 * log10, then clipped to 80 dB below each example's peak."""

import torch
import torch.nn as nn


def _hz_to_mel(f):
    return 2595.0 * torch.log10(1.0 + f / 700.0)


def _mel_to_hz(m):
    return 700.0 * (torch.pow(10.0, m / 2595.0) - 1.0)


class Model(nn.Module):
    def __init__(self, n_freqs, n_mels, sample_rate, top_db):
        super().__init__()
        nyquist = sample_rate / 2
        freqs = torch.linspace(0.0, nyquist, n_freqs)
        mel_pts = torch.linspace(0.0, _hz_to_mel(torch.tensor(nyquist)).item(), n_mels + 2)
        hz = _mel_to_hz(mel_pts)
        left, center, right = hz[:-2, None], hz[1:-1, None], hz[2:, None]
        up = (freqs[None, :] - left) / (center - left)
        down = (right - freqs[None, :]) / (right - center)
        fb = torch.clamp(torch.minimum(up, down), min=0.0)
        self.register_buffer("fb", fb)
        self.top_db = top_db

    def forward(self, spec):
        mel = torch.matmul(self.fb, spec)
        db = 10.0 * torch.log10(torch.clamp(mel, min=1e-10))
        return torch.maximum(db, db.amax(dim=(-2, -1), keepdim=True) - self.top_db)


batch, n_freqs, frames, n_mels = 32, 513, 2048, 128


def get_inputs():
    return [torch.randn(batch, n_freqs, frames).pow(2)]


def get_init_inputs():
    return [n_freqs, n_mels, 16000.0, 80.0]
