"""Trainable Per-Channel Energy Normalisation (PCEN, Wang et al.) speech front end: a
triangular mel filterbank (built in __init__ as a buffer) applied by matmul to a power
spectrogram, then the PCEN smoother M[t] = (1 - s) M[t - 1] + s E[t] with a learned per-channel
s, evaluated as a two-level chunked linear scan (time padded to whole chunks, an intra-chunk
lower-triangular decay matrix exp((t - k) log(1 - s)) applied by einsum, a second triangular
decay matrix across chunk carries, the state initialised from the first frame), followed by the
gain/offset/root compression (E / (eps + M)^alpha + delta)^r - delta^r with per-channel
exp-parametrised alpha, delta and r, and a crop back to the original length."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def _hz_to_mel(f):
    return 2595.0 * math.log10(1.0 + f / 700.0)


class Model(nn.Module):
    def __init__(self, n_bins, n_mels, sample_rate, chunk, eps=1e-6):
        super().__init__()
        self.chunk = chunk
        self.eps = eps
        mels = torch.linspace(_hz_to_mel(20.0), _hz_to_mel(sample_rate / 2.0), n_mels + 2)
        hz = 700.0 * (torch.pow(10.0, mels / 2595.0) - 1.0)
        freqs = torch.linspace(0.0, sample_rate / 2.0, n_bins)
        lo, ce, hi = hz[:-2, None], hz[1:-1, None], hz[2:, None]
        up = (freqs[None, :] - lo) / (ce - lo)
        down = (hi - freqs[None, :]) / (hi - ce)
        fb = torch.clamp(torch.minimum(up, down), min=0.0)
        fb = fb * (2.0 / (hi - lo))  # Slaney-style area normalisation
        self.register_buffer("fb", fb)  # [n_mels, n_bins]
        self.s_logit = nn.Parameter(torch.linspace(-4.0, -2.0, n_mels))
        self.log_alpha = nn.Parameter(torch.full((n_mels,), math.log(0.98)))
        self.log_delta = nn.Parameter(torch.full((n_mels,), math.log(2.0)))
        self.log_r = nn.Parameter(torch.full((n_mels,), math.log(0.5)))

    def forward(self, spec):
        # spec: [B, n_bins, T] power spectrogram
        b, _, t = spec.shape
        energy = torch.matmul(self.fb, spec)  # [B, F, T]
        f = energy.shape[1]
        L = self.chunk
        nc = (t + L - 1) // L
        e = F.pad(energy, (0, nc * L - t)).view(b, f, nc, L)

        s = torch.sigmoid(self.s_logit)  # [F]
        log_decay = torch.log1p(-s)  # [F], negative
        idx = torch.arange(L, device=spec.device, dtype=spec.dtype)
        diff = idx[:, None] - idx[None, :]  # [L, L]
        tri = diff >= 0
        w_in = torch.exp(log_decay[:, None, None] * diff.clamp(min=0)) * tri * s[:, None, None]
        local = torch.einsum("fij,bfcj->bfci", w_in, e)  # scan inside each chunk from zero

        # carries across chunks: h_c = a^L h_{c-1} + local[c, L-1], h_{-1} = E[0]
        cidx = torch.arange(nc, device=spec.device, dtype=spec.dtype)
        cdiff = cidx[:, None] - cidx[None, :]
        ctri = cdiff >= 0
        w_c = torch.exp(log_decay[:, None, None] * L * cdiff.clamp(min=0)) * ctri  # [F, nc, nc]
        last = local[..., L - 1]  # [B, F, nc]
        h0 = energy[..., :1]  # [B, F, 1]
        carry = torch.einsum("fcj,bfj->bfc", w_c, last)
        carry = carry + torch.exp(log_decay[:, None] * L * (cidx + 1.0)) * h0
        prev = torch.cat([h0, carry[..., :-1]], dim=-1)  # state entering each chunk
        decay_in = torch.exp(log_decay[:, None] * (idx + 1.0))  # [F, L]
        smooth = local + decay_in[None, :, None, :] * prev.unsqueeze(-1)
        smooth = smooth.reshape(b, f, nc * L)[..., :t]

        alpha = self.log_alpha.exp()[:, None]
        delta = self.log_delta.exp()[:, None]
        r = self.log_r.exp()[:, None]
        gain = torch.exp(-alpha * torch.log(self.eps + smooth))
        return torch.pow(energy * gain + delta, r) - torch.pow(delta, r)


batch = 32
n_bins = 513
frames = 2000
n_mels = 128
sample_rate = 16000
chunk = 64


def get_inputs():
    spec = torch.randn(batch, n_bins, frames).pow(2) * 10.0
    return [spec]


def get_init_inputs():
    return [n_bins, n_mels, sample_rate, chunk]
