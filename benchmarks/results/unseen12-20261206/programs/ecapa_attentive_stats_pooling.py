"""ECAPA-TDNN speaker-embedding head: channel- and context-dependent attentive statistics
pooling over variable-length utterances (length mask from an arange comparison, masked global
mean and standard deviation broadcast back over time and concatenated to the frames, 1x1
Conv1d + ReLU (its batch norm folded) + tanh + 1x1 Conv1d attention logits, masked_fill(-inf)
and softmax over time, attention-weighted mean and standard deviation), then the linear
embedding layer."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def masked_stats(x, w, eps):
    # w [B, 1 or C, T] sums to 1 over T
    mean = (x * w).sum(dim=2)
    var = (w * (x - mean.unsqueeze(2)) ** 2).sum(dim=2)
    return mean, torch.sqrt(var.clamp_min(eps))


class Model(nn.Module):
    def __init__(self, channels, attn_hidden, embed_dim):
        super().__init__()
        self.eps = 1e-12
        self.tdnn = nn.Conv1d(3 * channels, attn_hidden, 1)
        self.attn = nn.Conv1d(attn_hidden, channels, 1)
        self.fc = nn.Linear(2 * channels, embed_dim)

    def forward(self, x, lengths):  # x [B, C, T] frame features, lengths [B] int64 frames
        B, C, T = x.shape
        mask = torch.arange(T, device=x.device).view(1, 1, T) < lengths.view(B, 1, 1)
        uniform = mask.to(x.dtype) / lengths.view(B, 1, 1).to(x.dtype)
        mean, std = masked_stats(x, uniform, self.eps)
        context = torch.cat((x, mean.unsqueeze(2).expand(B, C, T),
                             std.unsqueeze(2).expand(B, C, T)), dim=1)
        logits = self.attn(torch.tanh(F.relu(self.tdnn(context))))
        logits = logits.masked_fill(~mask, float("-inf"))
        alpha = F.softmax(logits, dim=2)
        mu, sg = masked_stats(x, alpha, self.eps)
        return self.fc(torch.cat((mu, sg), dim=1))


batch = 64
channels = 1536
frames = 400
attn_hidden = 128
embed_dim = 192


def get_inputs():
    x = torch.randn(batch, channels, frames)
    lengths = torch.randint(frames // 2, frames + 1, (batch,))
    return [x, lengths]


def get_init_inputs():
    return [channels, attn_hidden, embed_dim]
