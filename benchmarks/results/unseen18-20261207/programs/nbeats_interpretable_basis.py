"""N-BEATS interpretable forecaster (Oreshkin et al.) applied channel-independently to a
multivariate series: [B, L, C] input permuted to [B * C, L], scaled by the mean absolute value
of its window, then a trend stack (polynomial basis of degree 3) and a seasonality stack
(Fourier basis of H / 2 harmonics), each of three blocks with four ReLU linear layers and
theta heads mapped through fixed basis buffers by matmul; doubly residual stacking subtracts
every block's backcast from the running input and adds its forecast. Returns the forecast and
its trend and seasonality parts, each permuted back to [B, H, C] and rescaled."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class BasisBlock(nn.Module):
    def __init__(self, backcast_len, hidden, back_basis, fore_basis):
        super().__init__()
        self.fc = nn.ModuleList([nn.Linear(backcast_len, hidden)]
                                + [nn.Linear(hidden, hidden) for _ in range(3)])
        p = back_basis.shape[0]
        self.theta_b = nn.Linear(hidden, p, bias=False)
        self.theta_f = nn.Linear(hidden, p, bias=False)
        self.register_buffer("back_basis", back_basis)  # [P, L]
        self.register_buffer("fore_basis", fore_basis)  # [P, H]

    def forward(self, x):
        h = x
        for layer in self.fc:
            h = F.relu(layer(h))
        return self.theta_b(h) @ self.back_basis, self.theta_f(h) @ self.fore_basis


def trend_basis(degree, length, offset, span):
    t = (torch.arange(length, dtype=torch.float32) + offset) / span
    return torch.stack([t ** i for i in range(degree + 1)], dim=0)


def season_basis(harmonics, length, offset, span):
    t = (torch.arange(length, dtype=torch.float32) + offset) / span
    k = torch.arange(harmonics, dtype=torch.float32).unsqueeze(1)
    return torch.cat([torch.cos(2.0 * math.pi * k * t), torch.sin(2.0 * math.pi * k * t)], dim=0)


class Model(nn.Module):
    def __init__(self, backcast_len, horizon, hidden, blocks_per_stack):
        super().__init__()
        span = backcast_len + horizon
        tb = trend_basis(3, backcast_len, 0, span)
        tf = trend_basis(3, horizon, backcast_len, span)
        sb = season_basis(horizon // 2, backcast_len, 0, horizon)
        sf = season_basis(horizon // 2, horizon, backcast_len, horizon)
        self.trend = nn.ModuleList([BasisBlock(backcast_len, hidden, tb, tf)
                                    for _ in range(blocks_per_stack)])
        self.season = nn.ModuleList([BasisBlock(backcast_len, hidden, sb, sf)
                                     for _ in range(blocks_per_stack)])

    def forward(self, series):
        # series: [B, L, C]
        b, l, c = series.shape  # noqa: E741
        x = series.permute(0, 2, 1).reshape(b * c, l)
        scale = x.abs().mean(dim=1, keepdim=True) + 1e-3
        resid = x / scale
        parts = []
        for stack in (self.trend, self.season):
            part = 0.0
            for block in stack:
                back, fore = block(resid)
                resid = resid - back
                part = part + fore
            parts.append(part * scale)
        trend, season = parts
        forecast = trend + season
        h = forecast.shape[1]

        def unflatten(y):
            return y.view(b, c, h).permute(0, 2, 1)

        return unflatten(forecast), unflatten(trend), unflatten(season)


batch = 256
horizon = 48
backcast_len = 7 * horizon
channels = 21


def get_inputs():
    t = torch.arange(backcast_len, dtype=torch.float32).view(1, backcast_len, 1)
    phase = torch.rand(batch, 1, channels) * 6.28
    level = torch.randn(batch, 1, channels) * 5.0
    series = level + torch.sin(2.0 * math.pi * t / 24.0 + phase) + 0.01 * t \
        + 0.3 * torch.randn(batch, backcast_len, channels)
    return [series]


def get_init_inputs():
    return [backcast_len, horizon, 512, 3]
