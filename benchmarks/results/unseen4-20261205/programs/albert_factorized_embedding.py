"""ALBERT's factorised embeddings: word, position and token-type lookups of a small width,
summed, LayerNorm, then a Linear up to the hidden size."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, vocab, max_pos, emb, hidden):
        super().__init__()
        self.word = nn.Embedding(vocab, emb)
        self.pos = nn.Embedding(max_pos, emb)
        self.token_type = nn.Embedding(2, emb)
        self.norm = nn.LayerNorm(emb, eps=1e-12)
        self.proj = nn.Linear(emb, hidden)

    def forward(self, ids, types):
        pos = torch.arange(ids.shape[1], device=ids.device)[None, :]
        e = self.word(ids) + self.pos(pos) + self.token_type(types)
        return self.proj(self.norm(e))


vocab, max_pos, emb, hidden, batch, seq = 30000, 512, 128, 768, 64, 512


def get_inputs():
    return [torch.randint(0, vocab, (batch, seq)), torch.randint(0, 2, (batch, seq))]


def get_init_inputs():
    return [vocab, max_pos, emb, hidden]
