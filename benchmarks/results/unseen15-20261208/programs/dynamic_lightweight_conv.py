"""DynamicConv decoder block (Wu et al. 2019): GLU input, per-step softmax kernels over a causal
window."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, channels, heads=8, kernel_size=15, ffn_mult=4):
        super().__init__()
        self.heads, self.kernel_size = heads, kernel_size
        self.norm1 = nn.LayerNorm(channels)
        self.in_proj = nn.Linear(channels, 2 * channels)
        self.weight_proj = nn.Linear(channels, heads * kernel_size, bias=False)
        self.conv_bias = nn.Parameter(torch.randn(channels) * 0.02)
        self.out_proj = nn.Linear(channels, channels)
        self.norm2 = nn.LayerNorm(channels)
        self.ffn = nn.Sequential(nn.Linear(channels, ffn_mult * channels), nn.ReLU(),
                                 nn.Linear(ffn_mult * channels, channels))

    def dynamic_conv(self, x):
        b, t, c = x.shape
        k, h = self.kernel_size, self.heads
        # kernels predicted from the current step, shared by the C/H channels of a head
        weights = self.weight_proj(x).view(b, t, h, 1, k).softmax(dim=-1)
        padded = F.pad(x, (0, 0, k - 1, 0))  # causal: the window ends at step t
        windows = padded.unfold(1, k, 1)  # [B, T, C, K]
        windows = windows.reshape(b, t, h, c // h, k)
        out = (windows * weights).sum(dim=-1).reshape(b, t, c)
        return out + self.conv_bias

    def forward(self, x):
        residual = x
        y = F.glu(self.in_proj(self.norm1(x)), dim=-1)
        x = residual + self.out_proj(self.dynamic_conv(y))
        x = x + self.ffn(self.norm2(x))
        return x


batch = 8
seq_len = 256
channels = 512


def get_inputs():
    return [torch.randn(batch, seq_len, channels)]


def get_init_inputs():
    return [channels]
