"""Enformer's DNA stem and first conv-tower stage (genomics: predicting gene expression from
sequence): int64 nucleotide ids turned into a one-hot [B, 4, L] map with F.one_hot (N bases
become all-zero columns), a width-15 convolution, residual pointwise conv blocks with
Enformer's sigmoid-approximated GELU (batch norms folded into the convolutions as at
inference), and attention pooling by a softmax over each pair of positions."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def enformer_gelu(x):
    return x * torch.sigmoid(1.702 * x)


class SoftmaxPool1d(nn.Module):
    """Pool width 2: per-channel logits (a 1x1 conv initialised to 2 * identity) weigh the pair."""

    def __init__(self, channels, pool):
        super().__init__()
        self.pool = pool
        self.logit = nn.Conv1d(channels, channels, 1, bias=False)
        with torch.no_grad():
            self.logit.weight.copy_(2.0 * torch.eye(channels).unsqueeze(2)
                                    + 0.01 * torch.randn(channels, channels, 1))

    def forward(self, x):  # [B, C, L]
        B, C, L = x.shape
        xs = x.view(B, C, L // self.pool, self.pool)
        w = self.logit(x).view(B, C, L // self.pool, self.pool).softmax(dim=-1)
        return (xs * w).sum(dim=-1)


class ConvBlock(nn.Module):
    def __init__(self, cin, cout, k):
        super().__init__()
        self.conv = nn.Conv1d(cin, cout, k, padding=k // 2)

    def forward(self, x):
        return self.conv(enformer_gelu(x))


class Model(nn.Module):
    def __init__(self, stem_channels, tower_channels, pool):
        super().__init__()
        self.stem = nn.Conv1d(4, stem_channels, 15, padding=7)
        self.stem_res = ConvBlock(stem_channels, stem_channels, 1)
        self.pool1 = SoftmaxPool1d(stem_channels, pool)
        self.tower_conv = ConvBlock(stem_channels, tower_channels, 5)
        self.tower_res = ConvBlock(tower_channels, tower_channels, 1)
        self.pool2 = SoftmaxPool1d(tower_channels, pool)

    def forward(self, seq):  # [B, L] int64 in 0..4 (A, C, G, T, N)
        onehot = F.one_hot(seq, num_classes=5)[..., :4]
        x = onehot.permute(0, 2, 1).to(self.stem.weight.dtype)
        x = self.stem(x)
        x = x + self.stem_res(x)
        x = self.pool1(x)
        x = self.tower_conv(x)
        x = x + self.tower_res(x)
        return self.pool2(x)


batch = 2
seq_len = 65536
stem_channels = 256
tower_channels = 320
pool = 2


def get_inputs():
    seq = torch.randint(0, 4, (batch, seq_len))
    n_runs = torch.rand(batch, seq_len) < 0.002
    return [torch.where(n_runs, torch.full_like(seq, 4), seq)]


def get_init_inputs():
    return [stem_channels, tower_channels, pool]
