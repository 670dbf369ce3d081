"""MinHash near-duplicate detection in int64: 3-gram shingle hashes of token ids, universal hashes
(a*h + b) mod (2^31 - 1) with padding masked, min over shingles, LSH band keys, pair Jaccard."""

import torch
import torch.nn as nn

MERSENNE = (1 << 31) - 1


class Model(nn.Module):
    def __init__(self, num_perm, rows_per_band=8, seed=1234):
        super().__init__()
        self.rows_per_band = rows_per_band
        gen = torch.Generator().manual_seed(seed)
        self.register_buffer("hash_a", torch.randint(1, MERSENNE, (num_perm,), generator=gen))
        self.register_buffer("hash_b", torch.randint(0, MERSENNE, (num_perm,), generator=gen))
        self.register_buffer("band_coef",
                             torch.randint(1, MERSENNE, (rows_per_band,), generator=gen))
        self.register_buffer("shingle_mul", torch.tensor([1000003, 8191, 1]))

    def forward(self, tokens, lengths, pair_idx):
        # tokens: [D, T] int64 ids; lengths: [D] int64; pair_idx: [D] int64 candidate partner
        d, t = tokens.shape
        grams = tokens.unfold(1, 3, 1)  # [D, T - 2, 3]
        shingle = (grams * self.shingle_mul).sum(dim=-1) % MERSENNE  # [D, T - 2]
        pos = torch.arange(t - 2, device=tokens.device)
        live = pos[None, :] < (lengths[:, None] - 2)
        hashed = (shingle[:, :, None] * self.hash_a + self.hash_b) % MERSENNE  # [D, T - 2, P]
        hashed = torch.where(live[:, :, None], hashed, torch.full_like(hashed, MERSENNE))
        sig = hashed.amin(dim=1)  # [D, P]
        bands = sig.view(d, -1, self.rows_per_band)
        band_keys = ((bands % 65521) * self.band_coef).sum(dim=-1) % MERSENNE  # [D, P // r]
        partner = sig.index_select(0, pair_idx)
        jaccard = (sig == partner).float().mean(dim=1)
        candidate = (band_keys == band_keys.index_select(0, pair_idx)).any(dim=1)
        return sig, band_keys, jaccard, candidate


num_docs = 1024
doc_len = 400
num_perm = 128
vocab = 50257


def get_inputs():
    tokens = torch.randint(0, vocab, (num_docs, doc_len))
    half = num_docs // 2
    tokens[half:2 * half] = tokens[:half]
    edits = torch.rand(half, doc_len) < torch.rand(half, 1) * 0.3
    tokens[half:2 * half] = torch.where(edits, torch.randint(0, vocab, (half, doc_len)),
                                        tokens[half:2 * half])
    lengths = torch.randint(doc_len // 2, doc_len + 1, (num_docs,))
    pair_idx = (torch.arange(num_docs) + half) % num_docs
    return [tokens, lengths, pair_idx]


def get_init_inputs():
    return [num_perm]
