"""DLinear long-horizon time-series forecaster with RevIN (multivariate electricity-load
forecasting): reversible instance normalisation over the look-back window, series
decomposition by a moving average over edge-replicated padding (repeat + cat, avg_pool1d),
per-channel ("individual") linear maps from the look-back to the horizon for the seasonal and
trend parts as batched einsums, and RevIN's inverse affine and de-normalisation."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, channels, lookback, horizon, kernel):
        super().__init__()
        self.kernel = kernel
        self.revin_weight = nn.Parameter(torch.ones(channels))
        self.revin_bias = nn.Parameter(torch.zeros(channels))
        bound = lookback ** -0.5
        self.w_seasonal = nn.Parameter(
            torch.empty(channels, horizon, lookback).uniform_(-bound, bound))
        self.w_trend = nn.Parameter(torch.full((channels, horizon, lookback), 1.0 / lookback))
        self.b_seasonal = nn.Parameter(torch.zeros(channels, horizon))
        self.b_trend = nn.Parameter(torch.zeros(channels, horizon))

    def forward(self, x):  # [B, lookback, C]
        eps = 1e-5
        mean = x.mean(dim=1, keepdim=True)
        std = torch.sqrt(x.var(dim=1, keepdim=True, unbiased=False) + eps)
        x = (x - mean) / std * self.revin_weight + self.revin_bias

        front = (self.kernel - 1) // 2
        back = self.kernel - 1 - front
        padded = torch.cat((x[:, :1, :].repeat(1, front, 1), x,
                            x[:, -1:, :].repeat(1, back, 1)), dim=1)
        trend = F.avg_pool1d(padded.permute(0, 2, 1), self.kernel, stride=1)  # [B, C, L]
        seasonal = x.permute(0, 2, 1) - trend

        y = (torch.einsum("bcl,chl->bch", seasonal, self.w_seasonal) + self.b_seasonal
             + torch.einsum("bcl,chl->bch", trend, self.w_trend) + self.b_trend)
        y = y.permute(0, 2, 1)  # [B, horizon, C]
        y = (y - self.revin_bias) / (self.revin_weight + eps * eps)
        return y * std + mean


batch = 64
channels = 321
lookback = 512
horizon = 336
kernel = 25


def get_inputs():
    t = torch.arange(lookback, dtype=torch.float32).view(1, lookback, 1)
    phase = torch.rand(batch, 1, channels) * 6.28
    level = torch.randn(batch, 1, channels) * 2
    daily = torch.sin(2 * torch.pi * t / 24 + phase)
    return [level + daily + 0.3 * torch.randn(batch, lookback, channels)]


def get_init_inputs():
    return [channels, lookback, horizon, kernel]
