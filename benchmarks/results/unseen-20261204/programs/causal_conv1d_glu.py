"""Causal 1-D convolution as in WaveNet / Mamba: left padding with F.pad, conv1d, GLU."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, channels, kernel):
        super().__init__()
        self.kernel = kernel
        self.conv = nn.Conv1d(channels, 2 * channels, kernel)

    def forward(self, x):
        return F.glu(self.conv(F.pad(x, (self.kernel - 1, 0))), dim=1)


batch, channels, length, kernel = 16, 256, 4096, 4


def get_inputs():
    return [torch.randn(batch, channels, length)]


def get_init_inputs():
    return [channels, kernel]
