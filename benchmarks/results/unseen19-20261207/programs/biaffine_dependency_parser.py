"""Deep biaffine dependency-parser scorer and loss (Dozat & Manning) on top of contextual word
states: four LeakyReLU MLPs give arc-dependent, arc-head, label-dependent and label-head
representations; arc scores are a biaffine product dep W head^T plus a head-only bias term
(einsum), masked with the most negative float for padding heads (int64 sentence lengths) and the
diagonal; label scores are a per-label bilinear form over every (dependent, head) pair, giving a
[B, L, L, R] tensor with a bias column appended to both sides. The loss is the masked mean of the
cross-entropy of the gold head (log_softmax over heads, gather) plus that of the gold label read
at the gold head (gather on dim 2 of the label tensor). Returns the loss, the predicted heads
(argmax) and the labels predicted at those heads."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    def __init__(self, din, dout):
        super().__init__()
        self.lin = nn.Linear(din, dout)

    def forward(self, x):
        return F.leaky_relu(self.lin(x), 0.1)


class Model(nn.Module):
    def __init__(self, hidden, arc_dim, rel_dim, num_rels):
        super().__init__()
        self.arc_dep = MLP(hidden, arc_dim)
        self.arc_head = MLP(hidden, arc_dim)
        self.rel_dep = MLP(hidden, rel_dim)
        self.rel_head = MLP(hidden, rel_dim)
        self.arc_w = nn.Parameter(torch.randn(arc_dim, arc_dim) * arc_dim ** -0.5)
        self.arc_u = nn.Parameter(torch.randn(arc_dim) * arc_dim ** -0.5)
        self.rel_w = nn.Parameter(torch.randn(num_rels, rel_dim + 1, rel_dim + 1) * rel_dim ** -0.5)

    def forward(self, states, lengths, gold_heads, gold_rels):
        # states: [B, L, H] (token 0 is ROOT); lengths: [B] int64; gold_*: [B, L] int64
        b, seq, _ = states.shape
        pos = torch.arange(seq, device=states.device)
        valid = pos[None, :] < lengths[:, None]  # [B, L]
        neg = torch.finfo(states.dtype).min

        ad, ah = self.arc_dep(states), self.arc_head(states)
        s_arc = torch.einsum("bid,de,bje->bij", ad, self.arc_w, ah)
        s_arc = s_arc + (ah @ self.arc_u).unsqueeze(1)
        head_mask = valid[:, None, :] & (pos[:, None] != pos[None, :])[None]
        s_arc = s_arc.masked_fill(~head_mask, neg)

        ones = torch.ones(b, seq, 1, device=states.device, dtype=states.dtype)
        rd = torch.cat([self.rel_dep(states), ones], dim=-1)
        rh = torch.cat([self.rel_head(states), ones], dim=-1)
        s_rel = torch.einsum("bid,rde,bje->bijr", rd, self.rel_w, rh)  # [B, L, L, R]
        r = s_rel.shape[-1]

        tok = valid & (pos[None, :] > 0)  # dependents: real words, not ROOT
        arc_ll = torch.log_softmax(s_arc, dim=-1).gather(2, gold_heads.unsqueeze(-1)).squeeze(-1)
        idx = gold_heads.view(b, seq, 1, 1).expand(b, seq, 1, r)
        rel_gold = s_rel.gather(2, idx).squeeze(2)  # [B, L, R]
        rel_ll = torch.log_softmax(rel_gold, dim=-1).gather(2, gold_rels.unsqueeze(-1)).squeeze(-1)
        denom = tok.sum().clamp(min=1)
        loss = -torch.where(tok, arc_ll + rel_ll, 0.0).sum() / denom

        pred_heads = s_arc.argmax(dim=-1)
        pidx = pred_heads.view(b, seq, 1, 1).expand(b, seq, 1, r)
        pred_rels = s_rel.gather(2, pidx).squeeze(2).argmax(dim=-1)
        pred_heads = pred_heads.masked_fill(~tok, 0)
        pred_rels = pred_rels.masked_fill(~tok, 0)
        return loss, pred_heads, pred_rels


batch = 96
seq_len = 128
hidden = 800
arc_dim = 500
rel_dim = 100
num_rels = 40


def get_inputs():
    states = torch.randn(batch, seq_len, hidden)
    lengths = torch.randint(2, seq_len + 1, (batch,))
    # a gold head for every position: any real token of the sentence except the position itself
    heads = (torch.rand(batch, seq_len) * (lengths[:, None] - 1).float()).long()
    pos = torch.arange(seq_len)[None, :]
    gold_heads = heads + (heads >= pos).long()
    gold_rels = torch.randint(0, num_rels, (batch, seq_len))
    return [states, lengths, gold_heads, gold_rels]


def get_init_inputs():
    return [hidden, arc_dim, rel_dim, num_rels]
