"""Left-padded batch embedding as in HF generation: position ids from the attention mask
(cumsum - 1, masked_fill 1 on padding), token plus position embedding lookups, zeroed
padding."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, vocab, max_pos, hidden):
        super().__init__()
        self.tok = nn.Embedding(vocab, hidden)
        self.pos = nn.Embedding(max_pos, hidden)

    def forward(self, input_ids, attention_mask):
        position_ids = attention_mask.long().cumsum(-1) - 1
        position_ids = position_ids.masked_fill(attention_mask == 0, 1)
        h = self.tok(input_ids) + self.pos(position_ids)
        return h * attention_mask[..., None].to(h.dtype)


vocab = 32768
batch = 32
seq = 1024
hidden = 1024


def get_inputs():
    ids = torch.randint(0, vocab, (batch, seq), dtype=torch.int64)
    pad = torch.randint(0, seq // 2, (batch,))
    mask = (torch.arange(seq)[None, :] >= pad[:, None]).long()
    return [ids, mask]


def get_init_inputs():
    return [vocab, seq, hidden]
