"""Graphormer encoder layer on padded molecular graphs: degree (centrality) embeddings added to
the atom features, a virtual graph token prepended, per-head attention biases looked up from
shortest-path distances (clamped int64 ids, unreachable pairs mapped to their own bucket) and
padded with the learned graph-token distance bias, key padding by masked_fill, then pre-norm
attention and FFN residuals."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, dim, heads, ffn_hidden, max_dist, max_degree):
        super().__init__()
        self.heads, self.max_dist, self.max_degree = heads, max_dist, max_degree
        self.degree_emb = nn.Embedding(max_degree + 1, dim)
        self.spatial_emb = nn.Embedding(max_dist + 2, heads)  # last id: unreachable
        self.graph_token = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.graph_token_dist = nn.Parameter(torch.randn(1, heads, 1, 1))
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, ffn_hidden)
        self.fc2 = nn.Linear(ffn_hidden, dim)

    def forward(self, nodes, spd, degree, num_nodes):
        # nodes [B, N, D]; spd [B, N, N] int64 (-1: unreachable); degree [B, N]; num_nodes [B]
        B, N, D = nodes.shape
        h = self.heads
        x = nodes + self.degree_emb(degree.clamp(0, self.max_degree))
        x = torch.cat((self.graph_token.expand(B, 1, D), x), dim=1)  # [B, N+1, D]
        dist = torch.where(spd < 0, torch.full_like(spd, self.max_dist + 1),
                           spd.clamp(0, self.max_dist))
        bias = self.spatial_emb(dist).permute(0, 3, 1, 2)  # [B, h, N, N]
        bias = F.pad(bias, (1, 0, 1, 0))  # graph-token row and column
        is_token = torch.zeros(N + 1, dtype=torch.bool, device=nodes.device)
        is_token[0] = True
        token_pair = is_token.view(-1, 1) | is_token.view(1, -1)
        bias = bias + torch.where(token_pair, self.graph_token_dist,
                                  torch.zeros((), dtype=bias.dtype, device=bias.device))
        keep = torch.arange(N + 1, device=nodes.device).view(1, -1) <= num_nodes.view(-1, 1)

        y = self.norm1(x)
        q, k, v = self.qkv(y).view(B, N + 1, 3, h, D // h).permute(2, 0, 3, 1, 4).unbind(0)
        scores = q @ k.transpose(-2, -1) * (D // h) ** -0.5 + bias
        scores = scores.masked_fill(~keep.view(B, 1, 1, N + 1), float("-inf"))
        att = scores.softmax(dim=-1) @ v
        x = x + self.out(att.transpose(1, 2).reshape(B, N + 1, D))
        x = x + self.fc2(F.gelu(self.fc1(self.norm2(x))))
        return x


batch = 128
max_nodes = 128
heads = 8
head_dim = 96
ffn_hidden = 3072
max_dist = 20
max_degree = 64


def get_inputs():
    nodes = torch.randn(batch, max_nodes, heads * head_dim)
    spd = torch.randint(-1, max_dist + 4, (batch, max_nodes, max_nodes))
    spd = torch.minimum(spd, spd.transpose(1, 2))
    spd.diagonal(dim1=1, dim2=2).zero_()
    degree = torch.randint(1, 12, (batch, max_nodes))
    num_nodes = torch.randint(max_nodes // 4, max_nodes + 1, (batch,))
    return [nodes, spd, degree, num_nodes]


def get_init_inputs():
    return [heads * head_dim, heads, ffn_hidden, max_dist, max_degree]
