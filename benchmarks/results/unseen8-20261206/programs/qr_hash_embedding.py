"""Hashed multi-hot embedding bag with the quotient-remainder trick (Shi et al., "Compositional
Embeddings Using Complementary Partitions", used in DLRM): raw 64-bit ids are hashed with a
universal hash ((id mod p) * a + b) mod p mod num_buckets, each bucket's vector is the
elementwise product of a quotient-table row (bucket // m) and a remainder-table row
(bucket % m), id 0 is padding, and the bag is mean-pooled over its valid ids."""

import torch
import torch.nn as nn

_PRIME = 2147483647  # 2^31 - 1
_HASH_A = 1103515245
_HASH_B = 12345


class Model(nn.Module):
    def __init__(self, num_buckets, m, dim):
        super().__init__()
        self.num_buckets = num_buckets
        self.m = m
        self.quotient = nn.Embedding((num_buckets + m - 1) // m, dim)
        self.remainder = nn.Embedding(m, dim)

    def forward(self, raw_ids):
        valid = raw_ids != 0
        hashed = ((raw_ids % _PRIME) * _HASH_A + _HASH_B) % _PRIME % self.num_buckets
        emb = self.quotient(hashed // self.m) * self.remainder(hashed % self.m)  # [B, L, D]
        emb = emb * valid.unsqueeze(-1).to(emb.dtype)
        count = valid.sum(dim=1, keepdim=True).clamp(min=1).to(emb.dtype)
        return emb.sum(dim=1) / count


batch = 32768
bag_size = 20
num_buckets = 1000000
m = 1024
dim = 64


def get_inputs():
    ids = torch.randint(1, 1 << 40, (batch, bag_size), dtype=torch.int64)
    lengths = torch.randint(0, bag_size + 1, (batch, 1))
    ids = ids.masked_fill(torch.arange(bag_size).unsqueeze(0) >= lengths, 0)
    return [ids]


def get_init_inputs():
    return [num_buckets, m, dim]
