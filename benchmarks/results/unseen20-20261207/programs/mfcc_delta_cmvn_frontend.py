"""Kaldi/HTK-style MFCC speech front end with delta features and per-utterance CMVN.

The waveform is reflect-padded, framed with Tensor.unfold, DC-removed and Hamming-windowed;
the power spectrum is computed with a real DFT written as two matmuls against cos/sin bases
(as in ONNX-exportable front ends), then a triangular mel filterbank, log, orthonormal DCT-II
and sinusoidal liftering give the cepstra. Deltas and delta-deltas use the regression formula
as a depthwise conv1d with replicate padding; mean/variance normalisation uses only the
valid frames of each utterance (integer lengths input, masked reductions, masked_fill).
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def _hz_to_mel(f):
    return 1127.0 * math.log(1.0 + f / 700.0)


class Model(nn.Module):
    def __init__(self, sample_rate, n_fft, hop, n_mels, n_mfcc, delta_win, lifter):
        super().__init__()
        self.n_fft = n_fft
        self.hop = hop
        n_bins = n_fft // 2 + 1

        n = torch.arange(n_fft, dtype=torch.float64)
        window = 0.54 - 0.46 * torch.cos(2 * math.pi * n / (n_fft - 1))
        kk = torch.arange(n_bins, dtype=torch.float64)
        ang = 2 * math.pi * n[:, None] * kk[None, :] / n_fft
        self.register_buffer("window", window.float())
        self.register_buffer("dft_cos", torch.cos(ang).float())
        self.register_buffer("dft_sin", -torch.sin(ang).float())

        mel_lo, mel_hi = _hz_to_mel(20.0), _hz_to_mel(sample_rate / 2)
        mel_pts = torch.linspace(mel_lo, mel_hi, n_mels + 2, dtype=torch.float64)
        bin_mel = 1127.0 * torch.log1p(kk * sample_rate / n_fft / 700.0)
        left, center, right = mel_pts[:-2, None], mel_pts[1:-1, None], mel_pts[2:, None]
        up = (bin_mel[None, :] - left) / (center - left)
        down = (right - bin_mel[None, :]) / (right - center)
        fbank = torch.clamp(torch.minimum(up, down), min=0.0)  # [n_mels, n_bins]
        self.register_buffer("mel_fb", fbank.t().contiguous().float())

        m = torch.arange(n_mels, dtype=torch.float64)
        c = torch.arange(n_mfcc, dtype=torch.float64)
        dct = torch.cos(math.pi / n_mels * (m[:, None] + 0.5) * c[None, :])
        dct = dct * math.sqrt(2.0 / n_mels)
        dct[:, 0] *= 1.0 / math.sqrt(2.0)
        lift = 1.0 + 0.5 * lifter * torch.sin(math.pi * c / lifter)
        self.register_buffer("dct_lift", (dct * lift[None, :]).float())

        taps = torch.arange(-delta_win, delta_win + 1, dtype=torch.float32)
        kernel = taps / (2.0 * (taps[delta_win + 1:] ** 2).sum())
        self.register_buffer("delta_kernel", kernel.flip(0).view(1, 1, -1).repeat(n_mfcc, 1, 1))
        self.delta_win = delta_win
        self.n_mfcc = n_mfcc

    def _delta(self, feats):
        padded = F.pad(feats, (self.delta_win, self.delta_win), mode="replicate")
        return F.conv1d(padded, self.delta_kernel, groups=self.n_mfcc)

    def forward(self, wav, lengths):
        # wav: [B, N] float; lengths: [B] int64 number of valid samples
        half = self.n_fft // 2
        x = F.pad(wav.unsqueeze(1), (half, half), mode="reflect").squeeze(1)
        frames = x.unfold(-1, self.n_fft, self.hop)  # [B, T, n_fft]
        frames = frames - frames.mean(dim=-1, keepdim=True)
        frames = frames * self.window
        re = frames @ self.dft_cos
        im = frames @ self.dft_sin
        power = re * re + im * im
        mel = torch.clamp_min(power @ self.mel_fb, 1e-10).log()
        ceps = (mel @ self.dct_lift).transpose(1, 2)  # [B, n_mfcc, T]

        d1 = self._delta(ceps)
        d2 = self._delta(d1)
        feats = torch.cat([ceps, d1, d2], dim=1)  # [B, 3*n_mfcc, T]

        n_frames = feats.shape[-1]
        valid = torch.clamp(lengths // self.hop + 1, min=1, max=n_frames)
        mask = torch.arange(n_frames, device=wav.device)[None, :] < valid[:, None]
        maskf = mask.unsqueeze(1).to(feats.dtype)
        count = valid.to(feats.dtype).view(-1, 1, 1)
        mean = (feats * maskf).sum(dim=-1, keepdim=True) / count
        var = (((feats - mean) * maskf) ** 2).sum(dim=-1, keepdim=True) / count
        normed = (feats - mean) * torch.rsqrt(var + 1e-5)
        return normed.masked_fill(~mask.unsqueeze(1), 0.0)


batch = 4
num_samples = 32000
sample_rate = 16000
n_fft = 400
hop = 160
n_mels = 40
n_mfcc = 13
delta_win = 2
lifter = 22


def get_inputs():
    return [
        torch.randn(batch, num_samples) * 0.1,
        torch.randint(1, num_samples + 1, (batch,)),
    ]


def get_init_inputs():
    return [sample_rate, n_fft, hop, n_mels, n_mfcc, delta_win, lifter]
