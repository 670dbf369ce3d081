"""word2vec skip-gram with negative sampling (Mikolov et al.): int64 centre words, a window of
context words (id 0 is padding) and K sampled negatives per context word looked up in separate
input and output embedding tables; positive scores by bmm, negative scores by einsum against
the centre vector, log-sigmoid of positive and negated negative scores, a padding mask and a
masked mean over the real (centre, context) pairs."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, vocab_size, embed_dim):
        super().__init__()
        self.in_embed = nn.Embedding(vocab_size, embed_dim)
        self.out_embed = nn.Embedding(vocab_size, embed_dim)
        bound = 0.5 / embed_dim
        nn.init.uniform_(self.in_embed.weight, -bound, bound)
        nn.init.normal_(self.out_embed.weight, std=0.1)

    def forward(self, center, context, negatives):
        # center: [B]; context: [B, C]; negatives: [B, C, K]; all int64 word ids
        v = self.in_embed(center)  # [B, D]
        u_pos = self.out_embed(context)  # [B, C, D]
        u_neg = self.out_embed(negatives)  # [B, C, K, D]
        pos = torch.bmm(u_pos, v.unsqueeze(2)).squeeze(2)  # [B, C]
        neg = torch.einsum("bckd,bd->bck", u_neg, v)
        loss = -(F.logsigmoid(pos) + F.logsigmoid(-neg).sum(dim=-1))  # [B, C]
        valid = (context != 0).to(loss.dtype)
        return (loss * valid).sum() / valid.sum().clamp(min=1.0)


batch = 4096
window = 10
num_negatives = 5
vocab_size = 100000
embed_dim = 128


def get_inputs():
    center = torch.randint(0, vocab_size, (batch,))
    context = torch.randint(0, vocab_size, (batch, window))
    negatives = torch.randint(0, vocab_size, (batch, window, num_negatives))
    return [center, context, negatives]


def get_init_inputs():
    return [vocab_size, embed_dim]
