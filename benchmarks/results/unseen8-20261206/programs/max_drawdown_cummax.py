"""Portfolio risk statistics as computed for trading agents' reward shaping and evaluation
(FinRL / empyrical style) from per-step log returns: log wealth by cumsum, its running peak
by torch.cummax, the drawdown curve exp(log_wealth - peak) - 1 (computed in log space so it
never overflows), the maximum drawdown, the Ulcer index and the annualised Sharpe ratio."""

import math

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, periods_per_year):
        super().__init__()
        self.annual = math.sqrt(periods_per_year)

    def forward(self, log_returns):
        log_wealth = torch.cumsum(log_returns, dim=1)
        peak = torch.cummax(log_wealth, dim=1).values.clamp(min=0.0)  # wealth starts at 1
        drawdown = torch.expm1(log_wealth - peak)
        max_drawdown = drawdown.amin(dim=1)
        ulcer = drawdown.pow(2).mean(dim=1).sqrt()
        sharpe = log_returns.mean(dim=1) / (log_returns.std(dim=1) + 1e-12) * self.annual
        return drawdown, max_drawdown, ulcer, sharpe


assets = 16384
periods = 2520  # ten years of trading days


def get_inputs():
    return [torch.randn(assets, periods) * 0.015 + 0.0003]


def get_init_inputs():
    return [252]
