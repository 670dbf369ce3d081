"""BERT's input stage: word, token-type and position embeddings summed, then LayerNorm
(the position ids are a buffer sliced to the sequence, as the model keeps them)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, vocab, max_positions, hidden):
        super().__init__()
        self.words = nn.Embedding(vocab, hidden)
        self.positions = nn.Embedding(max_positions, hidden)
        self.token_types = nn.Embedding(2, hidden)
        self.norm = nn.LayerNorm(hidden, eps=1e-12)
        self.register_buffer("position_ids", torch.arange(max_positions)[None])

    def forward(self, input_ids, token_type_ids):
        where = self.position_ids[:, : input_ids.shape[1]]
        e = self.words(input_ids) + self.token_types(token_type_ids) + self.positions(where)
        return self.norm(e)


vocab = 30522
max_positions = 512
batch = 64
seq = 512
hidden = 768


def get_inputs():
    return [torch.randint(0, vocab, (batch, seq)), torch.randint(0, 2, (batch, seq))]


def get_init_inputs():
    return [vocab, max_positions, hidden]
