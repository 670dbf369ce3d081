"""Set Transformer point-cloud classifier: two induced set attention blocks (learned inducing
points attend to the padded set with a key mask, then the set attends back to the m induced
summaries) and pooling by multihead attention with a learned seed vector under the same mask.
The multihead attention blocks split heads the way the reference code does
(torch.cat(Q.split(dim_split, 2), 0)), scale by sqrt(dim_V), add the query residual, merge
heads by split/cat along the batch, and apply LayerNorm, a ReLU row-wise FF and LayerNorm."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class MAB(nn.Module):
    def __init__(self, dim_Q, dim_K, dim_V, num_heads):
        super().__init__()
        self.dim_V, self.num_heads = dim_V, num_heads
        self.fc_q = nn.Linear(dim_Q, dim_V)
        self.fc_k = nn.Linear(dim_K, dim_V)
        self.fc_v = nn.Linear(dim_K, dim_V)
        self.ln0 = nn.LayerNorm(dim_V)
        self.ln1 = nn.LayerNorm(dim_V)
        self.fc_o = nn.Linear(dim_V, dim_V)

    def forward(self, Q, K, key_mask=None):
        Q = self.fc_q(Q)
        K, V = self.fc_k(K), self.fc_v(K)
        dim_split = self.dim_V // self.num_heads
        Q_ = torch.cat(Q.split(dim_split, 2), 0)
        K_ = torch.cat(K.split(dim_split, 2), 0)
        V_ = torch.cat(V.split(dim_split, 2), 0)
        scores = Q_.bmm(K_.transpose(1, 2)) / math.sqrt(self.dim_V)
        if key_mask is not None:  # [B, N] True for real elements
            mask = key_mask.repeat(self.num_heads, 1).unsqueeze(1)
            scores = scores.masked_fill(~mask, float("-inf"))
        A = torch.softmax(scores, 2)
        out = torch.cat((Q_ + A.bmm(V_)).split(Q.size(0), 0), 2)
        out = self.ln0(out)
        out = out + F.relu(self.fc_o(out))
        return self.ln1(out)


class ISAB(nn.Module):
    def __init__(self, dim_in, dim_out, num_heads, num_inds):
        super().__init__()
        self.I = nn.Parameter(torch.empty(1, num_inds, dim_out))
        nn.init.xavier_uniform_(self.I)
        self.mab0 = MAB(dim_out, dim_in, dim_out, num_heads)
        self.mab1 = MAB(dim_in, dim_out, dim_out, num_heads)

    def forward(self, X, key_mask):
        H = self.mab0(self.I.repeat(X.size(0), 1, 1), X, key_mask)
        return self.mab1(X, H)


class PMA(nn.Module):
    def __init__(self, dim, num_heads, num_seeds):
        super().__init__()
        self.S = nn.Parameter(torch.empty(1, num_seeds, dim))
        nn.init.xavier_uniform_(self.S)
        self.mab = MAB(dim, dim, dim, num_heads)

    def forward(self, X, key_mask):
        return self.mab(self.S.repeat(X.size(0), 1, 1), X, key_mask)


class Model(nn.Module):
    def __init__(self, dim_input, dim_hidden, num_heads, num_inds, num_classes):
        super().__init__()
        self.isab1 = ISAB(dim_input, dim_hidden, num_heads, num_inds)
        self.isab2 = ISAB(dim_hidden, dim_hidden, num_heads, num_inds)
        self.pma = PMA(dim_hidden, num_heads, 1)
        self.out = nn.Linear(dim_hidden, num_classes)

    def forward(self, points, lengths):
        n = points.size(1)
        key_mask = torch.arange(n, device=points.device)[None, :] < lengths[:, None]
        h = self.isab1(points, key_mask)
        h = self.isab2(h, key_mask)
        pooled = self.pma(h, key_mask).squeeze(1)
        return self.out(pooled)


batch = 32
set_size = 1024
dim_input = 3
dim_hidden = 128
num_heads = 4
num_inds = 32
num_classes = 40


def get_inputs():
    points = torch.randn(batch, set_size, dim_input)
    lengths = torch.randint(set_size // 2, set_size + 1, (batch,))
    return [points, lengths]


def get_init_inputs():
    return [dim_input, dim_hidden, num_heads, num_inds, num_classes]
