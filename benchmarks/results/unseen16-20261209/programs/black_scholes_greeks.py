"""Black-Scholes European option pricing with Greeks: per-currency rate gather by int64 id, erf
normal CDF, where on a call/put flag; returns price, delta, gamma, vega and theta."""

import math

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, spot, strike, expiry, vol, is_call, currency, rate_curve):
        rate = rate_curve[currency]
        sqrt_t = torch.sqrt(expiry)
        vol_t = vol * sqrt_t
        d1 = (torch.log(spot / strike) + (rate + 0.5 * vol * vol) * expiry) / vol_t
        d2 = d1 - vol_t
        cdf_d1 = 0.5 * (1.0 + torch.erf(d1 * (1.0 / math.sqrt(2.0))))
        cdf_d2 = 0.5 * (1.0 + torch.erf(d2 * (1.0 / math.sqrt(2.0))))
        pdf_d1 = torch.exp(-0.5 * d1 * d1) * (1.0 / math.sqrt(2.0 * math.pi))
        disc_strike = strike * torch.exp(-rate * expiry)
        call = spot * cdf_d1 - disc_strike * cdf_d2
        put = call - spot + disc_strike  # put-call parity
        price = torch.where(is_call, call, put)
        delta = torch.where(is_call, cdf_d1, cdf_d1 - 1.0)
        gamma = pdf_d1 / (spot * vol_t)
        vega = spot * pdf_d1 * sqrt_t
        theta_common = -spot * pdf_d1 * vol / (2.0 * sqrt_t)
        theta = torch.where(is_call,
                            theta_common - rate * disc_strike * cdf_d2,
                            theta_common + rate * disc_strike * (1.0 - cdf_d2))
        return price, delta, gamma, vega, theta


num_options = 4999999
num_currencies = 24


def get_inputs():
    spot = torch.rand(num_options) * 100 + 50
    strike = spot * (torch.rand(num_options) * 0.6 + 0.7)
    expiry = torch.rand(num_options) * 3 + 0.02
    vol = torch.rand(num_options) * 0.7 + 0.08
    is_call = torch.rand(num_options) < 0.5
    currency = torch.randint(0, num_currencies, (num_options,))
    rate_curve = torch.rand(num_currencies) * 0.08
    return [spot, strike, expiry, vol, is_call, currency, rate_curve]


def get_init_inputs():
    return []
