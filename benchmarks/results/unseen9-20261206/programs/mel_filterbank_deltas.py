"""Log-mel features with delta and delta-delta (Kaldi / torchaudio ComputeDeltas style) from
a precomputed STFT: the power spectrum re^2 + im^2 of [B, F, T] real and imaginary parts is
projected by a triangular HTK mel filterbank buffer [n_mels, F] (a batched matmul), clamped
at 1e-10 and logged, mean-normalised over time (CMN), and first and second order deltas are
computed along time by replicate padding and a grouped conv1d with the regression kernel
[-2, -1, 0, 1, 2] / 10; the three are concatenated over channels. Interesting: a filterbank
GEMM over the frequency axis, a per-row mean over time, and two chained depthwise convs
along time after replicate padding."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def _mel_filterbank(n_freqs, n_mels, sample_rate):
    hz_to_mel = lambda f: 2595.0 * math.log10(1.0 + f / 700.0)
    m_pts = torch.linspace(hz_to_mel(20.0), hz_to_mel(sample_rate / 2), n_mels + 2,
                           dtype=torch.float64)
    f_pts = 700.0 * (10 ** (m_pts / 2595.0) - 1.0)
    all_freqs = torch.linspace(0, sample_rate / 2, n_freqs, dtype=torch.float64)
    f_diff = f_pts[1:] - f_pts[:-1]
    slopes = f_pts.unsqueeze(0) - all_freqs.unsqueeze(1)  # [F, n_mels + 2]
    down = -slopes[:, :-2] / f_diff[:-1]
    up = slopes[:, 2:] / f_diff[1:]
    fb = torch.clamp(torch.minimum(down, up), min=0.0)  # [F, n_mels]
    return fb.t().contiguous().to(torch.float32)


class Model(nn.Module):
    def __init__(self, n_freqs, n_mels, sample_rate, win):
        super().__init__()
        self.n_mels = n_mels
        self.win = win
        self.register_buffer("fb", _mel_filterbank(n_freqs, n_mels, sample_rate))
        kernel = torch.arange(-win, win + 1, dtype=torch.float32)
        kernel = kernel / (2 * sum(i * i for i in range(1, win + 1)))
        self.register_buffer("delta_kernel", kernel.repeat(n_mels, 1, 1))  # [M, 1, 2w+1]

    def _deltas(self, x):
        x = F.pad(x, (self.win, self.win), mode="replicate")
        return F.conv1d(x, self.delta_kernel, groups=self.n_mels)

    def forward(self, real, imag):
        power = real * real + imag * imag  # [B, F, T]
        mel = torch.matmul(self.fb, power)  # [B, n_mels, T]
        logmel = torch.log(mel.clamp(min=1e-10))
        logmel = logmel - logmel.mean(dim=-1, keepdim=True)
        d1 = self._deltas(logmel)
        d2 = self._deltas(d1)
        return torch.cat([logmel, d1, d2], dim=1)


batch = 64
n_freqs = 201  # n_fft = 400 (25 ms at 16 kHz)
frames = 1000  # 10 s at a 10 ms hop
n_mels = 80


def get_inputs():
    # a speech-like spectrum: energy falling with frequency, random phase
    mag = torch.exp(-torch.linspace(0, 4, n_freqs)).view(1, n_freqs, 1)
    mag = mag * (0.5 + torch.rand(batch, 1, frames)) * 20.0
    real = mag * torch.randn(batch, n_freqs, frames)
    imag = mag * torch.randn(batch, n_freqs, frames)
    return [real, imag]


def get_init_inputs():
    return [n_freqs, n_mels, 16000, 2]
