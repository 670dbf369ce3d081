"""MLP-Mixer (Tolstikhin et al.) image classifier: 8x8 patch embedding by a strided
conv, flatten to tokens, two Mixer layers (token mixing: LayerNorm, transpose to
[B, C, S], an MLP over the patch axis, transpose back, residual; channel mixing:
LayerNorm, MLP, residual), a final LayerNorm, mean over tokens and a linear head."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class MixerLayer(nn.Module):
    def __init__(self, tokens, dim, token_hidden, channel_hidden):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim, eps=1e-6)
        self.token_fc1 = nn.Linear(tokens, token_hidden)
        self.token_fc2 = nn.Linear(token_hidden, tokens)
        self.norm2 = nn.LayerNorm(dim, eps=1e-6)
        self.chan_fc1 = nn.Linear(dim, channel_hidden)
        self.chan_fc2 = nn.Linear(channel_hidden, dim)

    def forward(self, x):  # [B, S, C]
        y = self.norm1(x).transpose(1, 2)  # [B, C, S]
        y = self.token_fc2(F.gelu(self.token_fc1(y)))
        x = x + y.transpose(1, 2)
        y = self.chan_fc2(F.gelu(self.chan_fc1(self.norm2(x))))
        return x + y


class Model(nn.Module):
    def __init__(self, image_size, patch, dim, token_hidden, channel_hidden, num_classes):
        super().__init__()
        tokens = (image_size // patch) ** 2
        self.patch_embed = nn.Conv2d(3, dim, patch, stride=patch)
        self.layers = nn.ModuleList(
            MixerLayer(tokens, dim, token_hidden, channel_hidden) for _ in range(2))
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.head = nn.Linear(dim, num_classes)

    def forward(self, img):
        x = self.patch_embed(img).flatten(2).transpose(1, 2)  # [B, S, C]
        for layer in self.layers:
            x = layer(x)
        return self.head(self.norm(x).mean(dim=1))


batch = 64
image_size = 128
patch = 8
dim = 256
token_hidden = 128
channel_hidden = 1024
num_classes = 100


def get_inputs():
    return [torch.randn(batch, 3, image_size, image_size)]


def get_init_inputs():
    return [image_size, patch, dim, token_hidden, channel_hidden, num_classes]
