"""Onset-strength envelopes for beat tracking (spectral flux and SuperFlux, Boeck &
Widmer): log compression log1p(gamma * |X|), first-order flux with torch.diff (prepend the
first frame), SuperFlux against a frequency max filter of the frame two hops back,
half-wave rectification, sum over frequency, local-mean removal with avg_pool1d, and
normalisation by each envelope's maximum."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, gamma, lag, mean_window):
        super().__init__()
        self.gamma = gamma
        self.lag = lag
        self.mean_window = mean_window

    def forward(self, mag):  # [B, F, T] STFT magnitudes
        s = torch.log1p(self.gamma * mag)
        flux = torch.diff(s, dim=-1, prepend=s[..., :1]).clamp_min(0.0).sum(dim=1)

        maxed = F.max_pool2d(s.unsqueeze(1), kernel_size=(3, 1), stride=1,
                             padding=(1, 0)).squeeze(1)
        sf = (s[..., self.lag:] - maxed[..., :-self.lag]).clamp_min(0.0).sum(dim=1)
        sf = F.pad(sf, (self.lag, 0))

        env = torch.stack((flux, sf), dim=1)  # [B, 2, T]
        local = F.avg_pool1d(env, self.mean_window, stride=1, padding=self.mean_window // 2,
                             count_include_pad=False)
        env = (env - local).clamp_min(0.0)
        return env / (env.amax(dim=-1, keepdim=True) + 1e-6)


batch = 16
freq_bins = 513
frames = 1024
gamma = 100.0
lag = 2
mean_window = 11


def get_inputs():
    return [torch.randn(batch, freq_bins, frames).abs() * torch.rand(batch, 1, frames)]


def get_init_inputs():
    return [gamma, lag, mean_window]
