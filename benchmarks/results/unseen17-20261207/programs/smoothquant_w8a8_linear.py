"""SmoothQuant (Xiao et al.) W8A8 linear layer, simulated: per-input-channel smoothing factors
s = max|X|^a / max|W|^(1-a) from an amax over the batch and token dims of bf16 activations and
over the output dim of the weight, X / s and W * s, dynamic per-token int8 activation and
per-output-channel int8 weight quantisation (round, clamp), an integer-valued matmul, rescaling
by both scales, bias; returns the bf16 output and the int8 weights."""

import math

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features, alpha, qmax):
        super().__init__()
        self.weight = nn.Parameter(torch.randn(out_features, in_features) / math.sqrt(in_features))
        self.bias = nn.Parameter(torch.randn(out_features) * 0.01)
        self.alpha = alpha
        self.qmax = qmax

    def forward(self, x):
        # x: [B, T, in_features] bf16
        xf = x.float()
        act_max = xf.abs().amax(dim=(0, 1)).clamp(min=1e-5)  # [in]
        w_max = self.weight.abs().amax(dim=0).clamp(min=1e-5)  # [in]
        smooth = act_max.pow(self.alpha) / w_max.pow(1.0 - self.alpha)
        xs = xf / smooth
        ws = self.weight * smooth
        x_scale = xs.abs().amax(dim=-1, keepdim=True).clamp(min=1e-8) / self.qmax  # per token
        xq = torch.clamp(torch.round(xs / x_scale), -self.qmax, self.qmax)
        w_scale = ws.abs().amax(dim=1, keepdim=True).clamp(min=1e-8) / self.qmax  # per channel
        wq = torch.clamp(torch.round(ws / w_scale), -self.qmax, self.qmax)
        acc = torch.matmul(xq, wq.t())  # integer-valued products, fp32 accumulation
        y = acc * x_scale * w_scale.t() + self.bias
        return y.to(x.dtype), wq.to(torch.int8)


batch = 8
seq_len = 256
in_features = 2048
out_features = 2048


def get_inputs():
    x = torch.randn(batch, seq_len, in_features)
    # a few outlier channels, as in real LLM activations
    x[..., ::97] *= 20.0
    return [x.bfloat16()]


def get_init_inputs():
    return [in_features, out_features, 0.5, 127.0]
