"""DeBERTa (He et al.) disentangled self-attention: content-to-content, content-to-position
and position-to-content scores, the two positional terms computed against a projected
relative-position embedding table of 2k rows and then picked per (query, key) pair with
torch.gather of the relative distance clamped to [-k, k) (the p2c one gathered on the
key side and transposed), all scaled by 1/sqrt(3 d), a key padding mask, softmax, and the
BERT-style output projection with a residual LayerNorm."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, hidden, heads, att_span):
        super().__init__()
        self.heads = heads
        self.head_dim = hidden // heads
        self.span = att_span
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.rel_embeddings = nn.Parameter(torch.randn(2 * att_span, hidden) * 0.1)
        self.rel_norm = nn.LayerNorm(hidden)
        self.dense = nn.Linear(hidden, hidden)
        self.out_norm = nn.LayerNorm(hidden)
        self.scale = (3 * self.head_dim) ** -0.5

    def _split(self, x):
        return x.view(*x.shape[:-1], self.heads, self.head_dim).transpose(-2, -3)

    def forward(self, hidden_states, attention_mask):
        b, t, c = hidden_states.shape
        q = self._split(self.query(hidden_states))  # [b, h, t, d]
        k = self._split(self.key(hidden_states))
        v = self._split(self.value(hidden_states))

        rel = self.rel_norm(self.rel_embeddings)
        pos_q = self._split(self.query(rel))  # [h, 2k, d] (shared projections)
        pos_k = self._split(self.key(rel))

        idx = torch.arange(t, device=hidden_states.device)
        rel_pos = idx[:, None] - idx[None, :]  # query - key
        c2p_idx = (rel_pos + self.span).clamp(0, 2 * self.span - 1)
        p2c_idx = (-rel_pos + self.span).clamp(0, 2 * self.span - 1)

        scores = torch.matmul(q, k.transpose(-1, -2))
        c2p = torch.matmul(q, pos_k.transpose(-1, -2))  # [b, h, t, 2k]
        scores = scores + torch.gather(c2p, -1, c2p_idx.expand(b, self.heads, t, t))
        p2c = torch.matmul(k, pos_q.transpose(-1, -2))  # [b, h, t_key, 2k]
        p2c = torch.gather(p2c, -1, p2c_idx.expand(b, self.heads, t, t))
        scores = (scores + p2c.transpose(-1, -2)) * self.scale

        scores = scores.masked_fill(~attention_mask[:, None, None, :], float("-inf"))
        probs = torch.softmax(scores, dim=-1)
        ctx = torch.matmul(probs, v).transpose(1, 2).reshape(b, t, c)
        return self.out_norm(hidden_states + self.dense(ctx))


batch = 16
seq_len = 512
hidden = 768
heads = 12
att_span = 256


def get_inputs():
    x = torch.randn(batch, seq_len, hidden)
    lengths = torch.randint(seq_len // 4, seq_len + 1, (batch,))
    mask = torch.arange(seq_len).unsqueeze(0) < lengths.unsqueeze(1)
    return [x, mask]


def get_init_inputs():
    return [hidden, heads, att_span]
