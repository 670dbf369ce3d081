"""YIN pitch tracking: framed audio, FFT autocorrelation difference function, cumulative-mean
normalisation,
first trough under a threshold, parabolic interpolation."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, sample_rate, frame_length, hop_length, fmin=60.0, fmax=500.0,
                 threshold=0.1):
        super().__init__()
        self.sr, self.frame_length, self.hop = sample_rate, frame_length, hop_length
        self.win = frame_length // 2
        self.tau_min = int(sample_rate // fmax)
        self.tau_max = min(int(sample_rate // fmin), self.win)
        self.threshold = threshold

    def difference(self, frames):
        # d(tau) = sum_j (x_j - x_{j+tau})^2 over a window of length `win`, for tau <= tau_max
        w, n = self.win, self.frame_length
        spec = torch.fft.rfft(frames, n=2 * n)
        acf = torch.fft.irfft(spec * torch.fft.rfft(frames[..., :w].flip(-1), n=2 * n), n=2 * n)
        acf = acf[..., w - 1: w + self.tau_max]  # lags 0 .. tau_max
        energy = torch.cumsum(frames.square(), dim=-1)
        energy = F.pad(energy, (1, 0))
        e0 = energy[..., w: w + 1]  # sum of the first window
        e_tau = energy[..., w: w + self.tau_max + 1] - energy[..., : self.tau_max + 1]
        return (e0 + e_tau - 2 * acf).clamp_min(0.0)

    def forward(self, audio):
        pad = self.frame_length // 2
        x = F.pad(audio, (pad, pad))  # centred frames, zero padding
        frames = x.unfold(-1, self.frame_length, self.hop)  # [B, F, N]
        d = self.difference(frames)
        taus = torch.arange(1, self.tau_max + 1, device=audio.device, dtype=d.dtype)
        cmean = torch.cumsum(d[..., 1:], dim=-1) / taus
        cmnd = d[..., 1:] / cmean.clamp_min(1e-8)  # lags 1 .. tau_max
        cmnd = F.pad(cmnd, (1, 0), value=1.0)  # d'(0) = 1

        search = cmnd[..., self.tau_min: self.tau_max]
        trough = (search[..., 1:-1] < search[..., :-2]) & (search[..., 1:-1] <= search[..., 2:])
        trough = trough & (search[..., 1:-1] < self.threshold)
        has_trough = trough.any(dim=-1)
        first = torch.argmax(trough.int(), dim=-1) + 1
        fallback = torch.argmin(search, dim=-1)
        best = torch.where(has_trough, first, fallback).clamp(1, search.shape[-1] - 2)
        tau = best + self.tau_min

        neighbours = torch.stack((tau - 1, tau, tau + 1), dim=-1)
        y = cmnd.gather(-1, neighbours)
        den = y[..., 0] - 2 * y[..., 1] + y[..., 2]
        shift = torch.where(den.abs() > 1e-6, 0.5 * (y[..., 0] - y[..., 2]) / den,
                            torch.zeros_like(den)).clamp(-1.0, 1.0)
        f0 = self.sr / (tau.to(audio.dtype) + shift)
        aperiodicity = y[..., 1]
        return f0, has_trough, aperiodicity


batch = 16
num_samples = 64000
_SAMPLE_RATE = 16000
_FRAME_LENGTH = 1024
_HOP_LENGTH = 160


def get_inputs():
    t = torch.arange(num_samples, dtype=torch.float32) / _SAMPLE_RATE
    f0 = 90.0 + 250.0 * torch.rand(batch, 1)
    vibrato = 1.0 + 0.02 * torch.sin(2 * torch.pi * 5.0 * t)[None]
    phase = 2 * torch.pi * torch.cumsum(f0 * vibrato, dim=-1) / _SAMPLE_RATE
    audio = torch.sin(phase) + 0.5 * torch.sin(2 * phase + 0.3) + 0.25 * torch.sin(3 * phase)
    audio = audio + 0.05 * torch.randn(batch, num_samples)
    return [audio]


def get_init_inputs():
    return [_SAMPLE_RATE, _FRAME_LENGTH, _HOP_LENGTH]
