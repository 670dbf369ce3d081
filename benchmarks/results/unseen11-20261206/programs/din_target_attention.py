"""Deep Interest Network (Zhou et al., Alibaba) CTR model: item and category embeddings
of a padded behaviour sequence and of the target ad, an activation unit on
[q, k, q - k, q * k] (target expanded over the sequence) with Dice activations, un-normalised
attention weights masked by sequence length (where + sum pooling), a masked mean of the
behaviours, and a Dice MLP to a click probability."""

import torch
import torch.nn as nn


class Dice(nn.Module):
    def __init__(self, dim, eps=1e-8):
        super().__init__()
        self.alpha = nn.Parameter(torch.full((dim,), 0.25))
        self.register_buffer("mean", torch.empty(dim).uniform_(-0.1, 0.1))
        self.register_buffer("var", torch.empty(dim).uniform_(0.5, 1.5))
        self.eps = eps

    def forward(self, x):
        p = torch.sigmoid((x - self.mean) / torch.sqrt(self.var + self.eps))
        return p * x + (1.0 - p) * self.alpha * x


class Model(nn.Module):
    def __init__(self, num_items, num_cats, emb_dim, att_hidden, mlp_hidden):
        super().__init__()
        self.item = nn.Embedding(num_items, emb_dim)
        self.cat = nn.Embedding(num_cats, emb_dim)
        d = 2 * emb_dim
        self.att = nn.Sequential(
            nn.Linear(4 * d, att_hidden), Dice(att_hidden),
            nn.Linear(att_hidden, att_hidden // 2), Dice(att_hidden // 2),
            nn.Linear(att_hidden // 2, 1))
        self.mlp = nn.Sequential(
            nn.Linear(3 * d, mlp_hidden), Dice(mlp_hidden),
            nn.Linear(mlp_hidden, mlp_hidden // 2), Dice(mlp_hidden // 2),
            nn.Linear(mlp_hidden // 2, 1))

    def forward(self, hist_items, hist_cats, target_item, target_cat, lengths):
        b, t = hist_items.shape
        keys = torch.cat((self.item(hist_items), self.cat(hist_cats)), dim=-1)  # [B, T, D]
        query = torch.cat((self.item(target_item), self.cat(target_cat)), dim=-1)  # [B, D]
        q = query[:, None, :].expand(-1, t, -1)
        scores = self.att(torch.cat((q, keys, q - keys, q * keys), dim=-1)).squeeze(-1)
        valid = torch.arange(t, device=keys.device)[None, :] < lengths[:, None]
        scores = torch.where(valid, scores, 0.0)
        interest = (scores.unsqueeze(-1) * keys).sum(dim=1)
        vf = valid.to(keys.dtype).unsqueeze(-1)
        mean_hist = (keys * vf).sum(dim=1) / vf.sum(dim=1).clamp_min(1.0)
        logit = self.mlp(torch.cat((interest, query, mean_hist), dim=-1))
        return torch.sigmoid(logit).squeeze(-1)


batch = 4096
seq_len = 100
num_items = 200000
num_cats = 1000
emb_dim = 32
att_hidden = 80
mlp_hidden = 200


def get_inputs():
    hist_items = torch.randint(0, num_items, (batch, seq_len))
    hist_cats = torch.randint(0, num_cats, (batch, seq_len))
    target_item = torch.randint(0, num_items, (batch,))
    target_cat = torch.randint(0, num_cats, (batch,))
    lengths = torch.randint(1, seq_len + 1, (batch,))
    return [hist_items, hist_cats, target_item, target_cat, lengths]


def get_init_inputs():
    return [num_items, num_cats, emb_dim, att_hidden, mlp_hidden]
