"""wav2vec 2.0 feature encoder front (Baevski et al.; fairseq "default" extractor mode): the
raw waveform goes through a bias-free conv1d (kernel 10, stride 5) with GroupNorm(512, 512),
i.e. a per-channel norm over time, and GELU, then two bias-free conv1d layers (kernel 3,
stride 2) with GELU, then the feature projection (transpose to [B, T', C], LayerNorm,
Linear to the model width). Interesting: a 1-input-channel strided conv with a long output,
a GroupNorm with one channel per group (a reduction over the full time axis), exact GELU,
and a transpose feeding a row norm and a GEMM."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, conv_dim, embed_dim):
        super().__init__()
        self.conv0 = nn.Conv1d(1, conv_dim, kernel_size=10, stride=5, bias=False)
        self.norm0 = nn.GroupNorm(conv_dim, conv_dim, affine=True)
        self.conv1 = nn.Conv1d(conv_dim, conv_dim, kernel_size=3, stride=2, bias=False)
        self.conv2 = nn.Conv1d(conv_dim, conv_dim, kernel_size=3, stride=2, bias=False)
        self.layer_norm = nn.LayerNorm(conv_dim)
        self.projection = nn.Linear(conv_dim, embed_dim)

    def forward(self, wav):
        x = wav.unsqueeze(1)  # [B, 1, T]
        x = F.gelu(self.norm0(self.conv0(x)))
        x = F.gelu(self.conv1(x))
        x = F.gelu(self.conv2(x))
        x = x.transpose(1, 2)  # [B, T', C]
        return self.projection(self.layer_norm(x))


batch = 16
samples = 16000  # one second at 16 kHz
conv_dim = 512
embed_dim = 768


def get_inputs():
    return [torch.randn(batch, samples) * 0.5]


def get_init_inputs():
    return [conv_dim, embed_dim]
