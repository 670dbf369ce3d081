"""Decoder skip connection: concatenate upsampled features with an encoder map along the
channels (a U-Net / DenseNet pattern), then scale and ReLU."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, decoder, skip):
        return torch.relu(torch.cat([decoder, skip * self.scale], dim=1))


batch = 32
decoder_channels = 128
skip_channels = 64
height = 64
width = 64
scale = 0.5


def get_inputs():
    return [torch.randn(batch, decoder_channels, height, width),
            torch.randn(batch, skip_channels, height, width)]


def get_init_inputs():
    return [scale]
