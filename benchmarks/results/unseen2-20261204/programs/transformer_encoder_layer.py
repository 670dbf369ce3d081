"""Two nn.TransformerEncoderLayer blocks (batch_first, GELU, dropout 0) over patch tokens
with a class token, as a small ViT classifier head reads them."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim, heads, mlp, depth, classes):
        super().__init__()
        layer = nn.TransformerEncoderLayer(
            dim, heads, mlp, dropout=0.0, activation="gelu", batch_first=True
        )
        self.encoder = nn.TransformerEncoder(layer, depth)
        self.cls = nn.Parameter(torch.randn(1, 1, dim))
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1)
        return self.head(self.encoder(x)[:, 0])


batch, tokens, dim, heads, mlp, depth, classes = 8, 196, 256, 8, 512, 2, 10


def get_inputs():
    return [torch.randn(batch, tokens, dim)]


def get_init_inputs():
    return [dim, heads, mlp, depth, classes]
